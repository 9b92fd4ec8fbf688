"""Adapter for demo-careful (MLX, path A): a short smoke run of its own
training loop on a tiny configuration, weights handed back as NumPy."""
from __future__ import annotations

import numpy as np
from train_ternary import train  # the answer folder is on sys.path

SMOKE_CONFIG = dict(d_model=128, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=256)


def smoke_run(text: str, steps: int, seed: int) -> dict:
    model, _, losses = train(text, cfg_overrides=SMOKE_CONFIG, steps=steps, seed=seed, batch=8, seq_len=32,
                             lr=3e-3, log=None)
    weights = [(np.array(layer.weight), np.array(layer.projected())) for _, layer in model.bit_layers()]
    return {"losses": losses, "weights": weights}
