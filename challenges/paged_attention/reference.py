"""Trusted reference for the paged_attention challenge: decode attention over
a paged KV cache, in float64.

``paged_attention`` gathers each sequence's keys and values through its block
table (token t is slot t % block_size of block block_tables[s][t // block_size]),
takes a max-subtracted softmax of the scaled scores and averages the values;
query head h reads key/value head h // (num_heads // num_kv_heads).
``relative_error`` is the accuracy measure the prompt names: each output's
error relative to the largest |V| entry its sequence attends to (an output is
a convex combination of those values). ``bytes_read`` is the least a kernel
must move: every distinct cached (key, value) row attended to, the queries,
the tables and the output.
"""
from __future__ import annotations

import numpy as np


def gather(cache: np.ndarray, table: np.ndarray, context_len: int) -> np.ndarray:
    """[context_len, num_kv_heads, head_dim]: the sequence's tokens in order."""
    block_size = cache.shape[1]
    t = np.arange(int(context_len))
    return cache[np.asarray(table)[t // block_size], t % block_size]


def paged_attention(q: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray, block_tables: np.ndarray,
                    context_lens: np.ndarray, scale: float) -> np.ndarray:
    """[num_seqs, num_heads, head_dim] float64."""
    q = np.asarray(q, dtype=np.float64)
    num_seqs, num_heads, head_dim = q.shape
    group = num_heads // k_cache.shape[2]
    out = np.empty((num_seqs, num_heads, head_dim))
    for s in range(num_seqs):
        k = np.repeat(gather(k_cache, block_tables[s], context_lens[s]).astype(np.float64), group, axis=1)
        v = np.repeat(gather(v_cache, block_tables[s], context_lens[s]).astype(np.float64), group, axis=1)
        scores = np.einsum("hd,thd->ht", q[s], k) * float(scale)
        p = np.exp(scores - scores.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        out[s] = np.einsum("ht,thd->hd", p, v)
    return out


def value_scale(v_cache: np.ndarray, block_tables: np.ndarray, context_lens: np.ndarray) -> np.ndarray:
    """[num_seqs]: the largest |V| entry each sequence attends to (1 where all are 0)."""
    m = np.array([np.abs(gather(v_cache, block_tables[s], context_lens[s]).astype(np.float64)).max()
                  for s in range(len(context_lens))])
    return np.where(m > 0, m, 1.0)


def relative_error(out: np.ndarray, want: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """[num_seqs, num_heads]: max |out - want| over head_dim, over the sequence's
    value scale; inf where the output is not finite."""
    out = np.asarray(out, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        err = np.abs(out - want).max(axis=-1) / np.asarray(scale)[:, None]
    return np.where(np.isfinite(out).all(axis=-1), err, np.inf)


def bytes_read(block_tables: np.ndarray, context_lens: np.ndarray, block_size: int, num_heads: int,
               num_kv_heads: int, head_dim: int) -> int:
    """The least a decode kernel moves: each distinct cached (block, slot) key
    and value row once (bfloat16), the queries (bfloat16), the block-table
    entries and lengths used (int32), the float32 output."""
    slots = []
    for s, n in enumerate(np.asarray(context_lens)):
        t = np.arange(int(n))
        slots.append(np.asarray(block_tables[s], dtype=np.int64)[t // block_size] * block_size + t % block_size)
    distinct = len(np.unique(np.concatenate(slots))) if slots else 0
    num_seqs = len(context_lens)
    tables = sum(-(-int(n) // block_size) for n in context_lens)
    return (2 * distinct * num_kv_heads * head_dim * 2 + num_seqs * num_heads * head_dim * (2 + 4)
            + 4 * (tables + num_seqs))
