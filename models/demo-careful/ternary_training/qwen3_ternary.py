"""A tiny Qwen3-style decoder with ternary projections (MLX).

Qwen3 ingredients kept: pre-norm RMSNorm blocks, rotary position embeddings,
grouped-query attention with RMSNorm on queries and keys (QK-norm), SwiGLU
MLP, no biases, tied input/output embeddings. Every projection inside the
blocks is a BitLinear; embeddings and norms stay full precision, as in
BitNet b1.58.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlx.core as mx
import mlx.nn as nn

from bitlinear import BitLinear


@dataclass
class ModelConfig:
    vocab_size: int
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    d_ff: int = 384
    rope_theta: float = 10000.0
    group_size: int = 128


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_heads, self.n_kv = cfg.n_heads, cfg.n_kv_heads
        self.head_dim = cfg.d_model // cfg.n_heads
        g = cfg.group_size
        self.q_proj = BitLinear(cfg.d_model, cfg.n_heads * self.head_dim, g)
        self.k_proj = BitLinear(cfg.d_model, cfg.n_kv_heads * self.head_dim, g)
        self.v_proj = BitLinear(cfg.d_model, cfg.n_kv_heads * self.head_dim, g)
        self.o_proj = BitLinear(cfg.n_heads * self.head_dim, cfg.d_model, g)
        self.q_norm = nn.RMSNorm(self.head_dim)
        self.k_norm = nn.RMSNorm(self.head_dim)
        self.rope = nn.RoPE(self.head_dim, base=cfg.rope_theta)

    def __call__(self, x: mx.array, mask: mx.array) -> mx.array:
        b, t, _ = x.shape
        q = self.q_norm(self.q_proj(x).reshape(b, t, self.n_heads, self.head_dim)).transpose(0, 2, 1, 3)
        k = self.k_norm(self.k_proj(x).reshape(b, t, self.n_kv, self.head_dim)).transpose(0, 2, 1, 3)
        v = self.v_proj(x).reshape(b, t, self.n_kv, self.head_dim).transpose(0, 2, 1, 3)
        q, k = self.rope(q), self.rope(k)
        out = mx.fast.scaled_dot_product_attention(q, k, v, scale=self.head_dim ** -0.5, mask=mask)
        return self.o_proj(out.transpose(0, 2, 1, 3).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.gate_proj = BitLinear(cfg.d_model, cfg.d_ff, cfg.group_size)
        self.up_proj = BitLinear(cfg.d_model, cfg.d_ff, cfg.group_size)
        self.down_proj = BitLinear(cfg.d_ff, cfg.d_model, cfg.group_size)

    def __call__(self, x: mx.array) -> mx.array:
        return self.down_proj(nn.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.attn_norm, self.mlp_norm = nn.RMSNorm(cfg.d_model), nn.RMSNorm(cfg.d_model)
        self.attn, self.mlp = Attention(cfg), MLP(cfg)

    def __call__(self, x: mx.array, mask: mx.array) -> mx.array:
        x = x + self.attn(self.attn_norm(x), mask)
        return x + self.mlp(self.mlp_norm(x))


class TernaryQwen(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = [Block(cfg) for _ in range(cfg.n_layers)]
        self.norm = nn.RMSNorm(cfg.d_model)

    def __call__(self, tokens: mx.array) -> mx.array:
        t = tokens.shape[1]
        mask = nn.MultiHeadAttention.create_additive_causal_mask(t).astype(mx.float32)
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, mask)
        return self.embed.as_linear(self.norm(x))

    def bit_layers(self) -> list[tuple[str, BitLinear]]:
        return [(name, m) for name, m in self.named_modules() if isinstance(m, BitLinear)]
