"""torch's generators seeded from every bit of a 128-bit secret seed.

A deck's ``get_inputs()`` draws from torch's default generators, and
``torch.manual_seed`` keeps only the low 32 bits of a seed on the CPU (its
Mersenne Twister is seeded with one 32-bit word): calls seeded with secrets
equal modulo 2^32 would get the same inputs. Here the CPU generator's whole
state (624 words) and the CUDA generator's seed and offset are drawn from a
NumPy generator seeded with the whole seed, so every bit of it picks the
inputs, as engine/verify/seeds.py promises wherever a seed picks inputs.
"""
from __future__ import annotations

import numpy as np

MT_WORDS = 624
# torch's CPU generator state as get_rng_state() lays it out: the initial seed
# (uint64), left and seeded (int32 each), next (uint64), then the 624 state words
# (one uint64 each, 32 bits used), then the normal-sampling cache.
_STATE_OFFSET = 24
_STATE_BYTES = 5056


def seed_torch(seed: int, cuda: bool = False) -> None:
    """Seed torch's default CPU generator (and the current CUDA device's when
    ``cuda``) from ``seed``, every bit of it."""
    import torch

    words = np.random.default_rng(int(seed) & ((1 << 128) - 1))
    torch.manual_seed(int(seed) & 0xFFFFFFFF)  # a valid state to fill: left = 1, so the words are used next
    state = torch.get_rng_state().clone()
    if state.numel() != _STATE_BYTES:
        raise RuntimeError(f"torch's CPU generator state is {state.numel()} bytes, not the {_STATE_BYTES} this "
                           "version of benchtui knows: cannot seed it from 128 bits")
    mt = words.integers(0, 2**32, MT_WORDS, dtype=np.uint64)
    mt[0] |= 1  # never the all-zero state
    state[_STATE_OFFSET:_STATE_OFFSET + MT_WORDS * 8] = torch.from_numpy(mt.view(np.uint8).copy())
    torch.set_rng_state(state)
    if cuda:
        gen = torch.cuda.default_generators[torch.cuda.current_device()]
        philox_seed = int(words.integers(0, 2**64, dtype=np.uint64))
        offset = int(words.integers(0, 2**62, dtype=np.uint64))
        gen.manual_seed(philox_seed)
        try:  # noqa: SIM105 - a best-effort step: try/except keeps the skipped failure visible where it is
            gen.set_offset(offset * 4)  # the Philox offset advances in steps of 4
        except (AttributeError, RuntimeError):  # a torch without it: the 64-bit seed, still drawn from every bit
            pass
