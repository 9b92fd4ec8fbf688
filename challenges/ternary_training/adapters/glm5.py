"""ternary_training adapter for glm5 (published benchmark): its
ternary_projection (ternary_linear.py, an mx.custom_function whose VJP is
the straight-through estimator, the projection TernaryLinear uses).

Translation only: ternary_quantize and ste_quantize both call
ternary_projection unchanged. Its group size is its own constant
GROUP_SIZE = 128 (the prompt's), so no group size is passed.
ternary_layers() builds its TernaryModel (ternary_model.py, Qwen3 with tied
embeddings as in its training) at a small size and names the prompt's layers.

smoke_run drives main() of run_rerun.py, its loop on train_data.txt (the
rerun prompt), unchanged: its own conversion, AdamW, schedule, gradient
clipping, loss, verification and save. What the adapter supplies, as
arguments and stand-ins only:
- its command line: --steps N, --batch-size 4, --seq-len 64, --warmup N/10
  (its default is 25 of 250 steps), --lr 1e-3 (the smoke learning rate every
  adapter uses: its 1e-4, chosen for fine-tuning Qwen3-0.6B, moves a random
  tiny model too little in 30 steps to tell a working loop from a broken
  one), no mid-run evaluation, --data-path a file holding the checker's
  text, --save-path a temporary folder;
- mlx_lm.load("Qwen/Qwen3-0.6B"), which the sandbox cannot reach, answers with
  mlx_lm's own Qwen3 at the smoke size (hidden 128, 2 blocks, 256 byte ids)
  with mlx_lm's random initialisation (no pretrained weights) and a byte
  tokenizer (ids are UTF-8 bytes: the checker's tokenisation);
- its generate_text (sample text after training) answers "": it never
  touches the weights and the checker measures the model itself.
main() returns nothing: the trained model is its own saved
weights.safetensors loaded into its own TernaryModel. steps=0 runs main()
with --steps 0 (no training step).
architecture_model runs main()'s first two steps on the checker's stand-in
checkpoint holding the checker's weights: its ModelArgs from the
checkpoint's config (run_rerun.py:446-461), its TernaryModel and its
convert_weights. architecture_cache gives the mlx_lm KV cache its
TernaryAttention is written for (cache.offset, cache.update_and_fetch).
smoke_evaluate: its validation loss is computed inside main()
(run_rerun.py:594-611), not by a function of its own, so main() itself is run
for it, with --steps 0, on the model to evaluate (its weights in the
stand-in checkpoint main() converts) and on a data file whose validation
tenth (its split: the last 10% of the tokens, run_rerun.py:490) is the text
to evaluate; the figure is the "Val loss" line main() prints.
"""
from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import warnings
from pathlib import Path

from benchtui.api import smoke_checkpoint as checkpoint
from benchtui.api import weights_checkpoint
from ternary_linear import ternary_projection

ANSWER_SHA256 = {
    "ternary_linear.py": "83ef0cb5a65af04171e6d6f9ed013bfef07699b3d912b05b8bcfddbec91f6112",
    "ternary_model.py": "43595afd7c050324910d842b8e8b0304bb4f2d50c0464e89a009ea0765af3357",
    "run_rerun.py": "b5a67dde8838883bca0d6a2eabd77bdda303e0811cb2de659c08a62ffd35f147",
}
BATCH, SEQ_LEN, LR = 4, 64, 1e-3
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def ternary_quantize(w):
    """Projected weights {-s, 0, +s} per group of 128 along the input axis."""
    return ternary_projection(w)


def ste_quantize(w):
    """The same projection; its gradient is glm5's custom VJP (identity)."""
    return ternary_projection(w)


def _package_module(name):
    """ternary_model.py imports its siblings relatively (the folder is a package,
    __init__.py): import it as part of that package, under a private name."""
    import importlib
    import importlib.util
    import sys
    from pathlib import Path

    folder = Path(sys.modules["ternary_linear"].__file__).resolve().parent  # the answer's folder
    if "glm5_answer" not in sys.modules:
        spec = importlib.util.spec_from_file_location("glm5_answer", folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        package = importlib.util.module_from_spec(spec)
        sys.modules["glm5_answer"] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"glm5_answer.{name}")


def ternary_layers():
    m = _package_module("ternary_model")
    ModelArgs, TernaryModel = m.ModelArgs, m.TernaryModel

    return _prompt_layers(TernaryModel(ModelArgs(hidden_size=128, num_hidden_layers=1, intermediate_size=256, num_attention_heads=2, num_key_value_heads=1, vocab_size=256, head_dim=64)))


def _prompt_layers(model):
    """{name: (kind, layer, module holding its latent weight)} of the layers the prompt names,
    found by name in the answer's own module tree (no logic of its own); a
    tied head is the embedding's as_linear."""
    mods = dict(model.named_modules())

    def find(suffix):
        return next((m for n, m in mods.items() if n.split(".")[-1] == suffix), None)

    out = {}
    for name in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"):
        m = find(name)
        if m is not None:
            out[name] = ("linear", m, m)
    embed, head = find("embed_tokens"), find("lm_head")
    if embed is not None:
        out["embed_tokens"] = ("embedding", embed, embed)
    if head is not None:
        out["lm_head"] = ("linear", head, head)
    elif embed is not None and hasattr(embed, "as_linear"):
        out["lm_head"] = ("linear", embed.as_linear, embed)
    return out


_checkpoint = checkpoint  # the stand-in for mlx_lm.load (engine/verify/smoke_stand_ins.py)


def smoke_run(text, steps, seed):
    """run_rerun.main() for `steps` steps on `text` from the stand-in checkpoint;
    its saved weights in its own TernaryModel."""
    import mlx.core as mx
    import mlx_lm
    import numpy as np
    import run_rerun

    mx.random.seed(seed)
    np.random.seed(seed)  # its batch order: np.random.permutation
    folder = Path(tempfile.mkdtemp(prefix="glm5-smoke-"))
    (folder / "train_data.txt").write_text(text, encoding="utf-8")
    argv = ["run_rerun.py", "--steps", str(steps), "--batch-size", str(BATCH), "--seq-len", str(SEQ_LEN), "--lr", str(LR),
            "--warmup", str(max(1, steps // 10)), "--eval-every", str(10**9), "--log-every", "10",
            "--data-path", str(folder / "train_data.txt"), "--save-path", str(folder / "trained")]
    saved = mlx_lm.load, run_rerun.generate_text, sys.argv
    mlx_lm.load, run_rerun.generate_text, sys.argv = _checkpoint, (lambda *a, **k: ""), argv
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # its summary takes the mean of no losses when steps=0
            run_rerun.main()
    finally:
        mlx_lm.load, run_rerun.generate_text, sys.argv = saved
    source = _checkpoint("Qwen/Qwen3-0.6B")[0].args
    config = run_rerun.ModelArgs(**{k: getattr(source, k) for k in run_rerun.ModelArgs.__dataclass_fields__})
    model = run_rerun.TernaryModel(config)
    model.load_weights(str(folder / "trained" / "weights.safetensors"))
    return model


def smoke_layers(model):
    """{name: ("linear", layer, layer)}: every block's projections of the trained model."""
    return {n: ("linear", m, m) for n, m in model.named_modules() if n.split(".")[-1] in PROJECTIONS}


def smoke_evaluate(model, text):
    """main()'s own validation loss of `model` on `text` (see the docstring)."""
    import re

    import mlx_lm
    import numpy as np
    import run_rerun
    from mlx.utils import tree_flatten

    held = len(text.encode("utf-8"))
    fill = next(n for n in range(9 * held - 8, 9 * held + 9) if int(0.9 * (n + held)) == n)  # its split point
    folder = Path(tempfile.mkdtemp(prefix="glm5-eval-"))
    (folder / "train_data.txt").write_text("a" * fill + text, encoding="utf-8")
    weights = dict(tree_flatten(model.parameters()))
    config = {k: getattr(model.args, k) for k in ("hidden_size", "num_hidden_layers", "intermediate_size",
                                                   "num_attention_heads", "rms_norm_eps", "vocab_size",
                                                   "num_key_value_heads", "max_position_embeddings", "head_dim",
                                                   "tie_word_embeddings", "rope_theta")}
    argv = ["run_rerun.py", "--steps", "0", "--batch-size", str(BATCH), "--seq-len", str(SEQ_LEN),
            "--eval-every", str(10**9), "--data-path", str(folder / "train_data.txt"),
            "--save-path", str(folder / "trained")]
    out = io.StringIO()
    saved = mlx_lm.load, run_rerun.generate_text, sys.argv
    mlx_lm.load = lambda name, *args, **kwargs: weights_checkpoint(weights, config)
    run_rerun.generate_text, sys.argv = (lambda *a, **k: ""), argv
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            run_rerun.main()
    finally:
        mlx_lm.load, run_rerun.generate_text, sys.argv = saved
    return float(re.findall(r"Val loss: ([-+0-9.eEnaif]+)", out.getvalue())[-1])


def architecture_model(weights, config):
    """main()'s conversion (run_rerun.py:444-465) of a checkpoint holding `weights` at `config`."""
    import run_rerun

    src_model = weights_checkpoint(weights, config)[0]
    src_args = src_model.args
    model = run_rerun.TernaryModel(run_rerun.ModelArgs(
        model_type=src_args.model_type, hidden_size=src_args.hidden_size,
        num_hidden_layers=src_args.num_hidden_layers, intermediate_size=src_args.intermediate_size,
        num_attention_heads=src_args.num_attention_heads, rms_norm_eps=src_args.rms_norm_eps,
        vocab_size=src_args.vocab_size, num_key_value_heads=src_args.num_key_value_heads,
        max_position_embeddings=src_args.max_position_embeddings, rope_theta=src_args.rope_theta,
        head_dim=src_args.head_dim, tie_word_embeddings=src_args.tie_word_embeddings,
        rope_scaling=src_args.rope_scaling))
    with contextlib.redirect_stdout(io.StringIO()):
        run_rerun.convert_weights(src_model, model)
    return model


def architecture_cache(model):
    """An empty mlx_lm KV cache per block, the cache its TernaryAttention takes."""
    from mlx_lm.models.cache import KVCache

    return [KVCache() for _ in model.layers]
