"""kv adapter for minimax-m2.7 (published benchmark): its own highest-level
path, BatchedInferenceEngine.step_inference over a one-layer
TransformerBlockStack, bound to prefill / decode.

An adapter drives the answer's engine where it has one, and never glues its
parts together itself (an earlier adapter looped over the sequences, read
FlatKVCache and wrote it back around MultiHeadAttention.forward: that
batching and caching were the adapter's, not the answer's). Here the
answer's engine loops over its batch, its stack keeps its K / V cache, its
attention attends. What that path does with a cache is what gets judged.

Translation only (constructing the answer's objects, converting inputs):
- TransformerBlockStack(1 layer, d_model = 3 * heads * head_dim + 1): the
  attention's projections are selection matrices (W_q / W_k / W_v pick the
  step's q, k, v out of x = [q, k, v, c]; W_o writes the attention output
  into the first third), the FFN weights are zero;
- its pre-norms divide x by |x|: the last coordinate c pads every x to the
  same norm R and norm1_weight is R, so the attention sees q, k, v as given;
  the final norm's scale s = |x + attention| is read back from c (y_c = c / s)
  to return the attention output, s * y_q - q;
- prefill: the stack has no prefill, so each prompt row goes through its
  forward(x, batch_idx=b) one row at a time (k stands in for the query: the
  contract asks for no prompt outputs); BatchedInferenceEngine.add_to_batch
  registers each sequence with its prompt length;
- decode: one BatchedInferenceEngine.step_inference with the whole batch.
"""
from __future__ import annotations

import numpy as np
from kv_cache import BatchedInferenceEngine, CacheConfig, TransformerBlockStack

ANSWER_SHA256 = {
    "kv_cache.py": "0868cdabc992045069c9da018b83864c0f6d99d38bcafd62749a296ce73ce74c",
}

DECODE_CAPACITY = 1024


class Session:
    def prefill(self, k, v, lengths):
        batch, heads, t, dim = k.shape
        hd = heads * dim
        self.hd, self.d = hd, 3 * hd + 1
        self.stack = TransformerBlockStack(num_layers=1, d_model=self.d, num_heads=heads, head_dim=dim, hidden_dim=1)
        layer = self.stack.layers[0]
        attn = layer.attention
        pick = lambda i: np.vstack([np.eye(hd) if j == i else np.zeros((hd, hd)) for j in range(3)] + [np.zeros((1, hd))])
        attn.W_q, attn.W_k, attn.W_v = pick(0), pick(1), pick(2)
        attn.W_o = np.hstack([np.eye(hd), np.zeros((hd, 2 * hd + 1))])
        layer.W_up, layer.W_down = np.zeros((self.d, 1)), np.zeros((1, self.d))
        self.engine = BatchedInferenceEngine(CacheConfig(max_batch_size=batch, max_seq_len=t + DECODE_CAPACITY,
                                                         num_heads=heads, head_dim=dim, num_layers=1), self.stack)
        k, v = np.asarray(k, dtype=np.float64), np.asarray(v, dtype=np.float64)
        for b, n in enumerate(int(x) for x in lengths):
            self.engine.add_to_batch(b, n)
            for pos in range(n):
                x = self._inputs(k[b:b + 1, :, pos], k[b:b + 1, :, pos], v[b:b + 1, :, pos])
                self.stack.forward(x[:1], use_kv_cache=True, batch_idx=b)

    def _inputs(self, q, k_new, v_new):
        """x = [q, k, v, c] per sequence, every row of norm R; sets the pre-norm to R."""
        batch = q.shape[0]
        qkv = np.concatenate([np.asarray(a, dtype=np.float64).reshape(batch, self.hd) for a in (q, k_new, v_new)], axis=1)
        norms = np.linalg.norm(qkv, axis=1)
        self.radius = 2.0 * float(norms.max()) + 1.0
        self.c = np.sqrt(self.radius ** 2 - norms ** 2)
        self.stack.layers[0].norm1_weight = np.full(self.d, self.radius + 1e-8)
        return np.concatenate([qkv, self.c[:, None]], axis=1)[:, None, :]

    def decode(self, q, k_new, v_new):
        batch, heads, dim = q.shape
        x = self._inputs(q, k_new, v_new)
        outs = self.engine.step_inference(x, use_kv_cache=True)
        out = np.empty((batch, self.hd))
        for b, y in enumerate(outs):
            y = np.asarray(y, dtype=np.float64).reshape(-1)
            scale = self.c[b] / y[-1]  # |x + attention|, from the padding coordinate
            out[b] = scale * y[:self.hd] - x[b, 0, :self.hd]
        return out.reshape(batch, heads, dim)


def make_session():
    return Session()
