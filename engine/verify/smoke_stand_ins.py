"""Stand-ins that ternary_training adapters hand an answer's own training loop
in the answer's process (the smoke run, challenges/ternary_training/ADAPTER.md):
the checkpoint the loop would download, which the sandbox cannot reach, and
the checker's tokenisation; and a checkpoint holding given weights, for the
comparison of an answer's model with the architecture its prompt names. Adapters import ``checkpoint`` (as
``benchtui.api.smoke_checkpoint`` and ``benchtui.api.weights_checkpoint``) because the challenges folder is hidden
from the answer's sandbox; benchtui's package is not."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# The smoke run's model size, the same for every adapter (its vocabulary: bytes).
SMOKE = dict(hidden_size=128, num_hidden_layers=2, intermediate_size=256, num_attention_heads=2,
             num_key_value_heads=1, head_dim=64, vocab_size=256)


class ByteTokenizer:
    """UTF-8 bytes as token ids (vocabulary 256): the checker's tokenisation."""
    eos_token_id, eos_token, bos_token, chat_template = 0, "\x00", None, None

    def encode(self, text: str, add_special_tokens: bool = True, **kwargs: Any) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: Iterable[int], **kwargs: Any) -> str:
        return bytes(int(i) % 256 for i in ids).decode("utf-8", errors="replace")


def checkpoint(name: str, *args: Any, **kwargs: Any) -> tuple[Any, ByteTokenizer]:
    """What mlx_lm.load(name) returns, for a checkpoint the sandbox cannot reach:
    mlx_lm's Qwen3 at the smoke size, randomly initialised by mlx_lm, and bytes as tokens."""
    from mlx_lm.models import qwen3

    args = qwen3.ModelArgs(model_type="qwen3", rms_norm_eps=1e-6, max_position_embeddings=512, rope_theta=10000.0,
                           tie_word_embeddings=True, **SMOKE)
    return qwen3.Model(args), ByteTokenizer()


def weights_checkpoint(weights: Mapping[str, Any], config: Mapping[str, Any]) -> tuple[Any, ByteTokenizer]:
    """What mlx_lm.load returns for a Qwen3 checkpoint of ``config`` (mlx_lm's
    ModelArgs fields) holding ``weights`` ({checkpoint name: array}, every
    parameter named): mlx_lm's Qwen3 with those weights, and bytes as tokens."""
    import mlx.core as mx
    import numpy as np
    from mlx_lm.models import qwen3

    model = qwen3.Model(qwen3.ModelArgs(model_type="qwen3", **config))
    model.load_weights([(name, mx.array(np.asarray(value))) for name, value in weights.items()], strict=True)
    return model, ByteTokenizer()
