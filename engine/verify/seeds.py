"""Secret seeds: 128 bits wherever a seed picks inputs or the samples checked.

A run's seed decides every input the checker draws and which rows of a
timed call it verifies. With a small seed an answer could recover it from
the first input it is given (by trying every seed) and then compute only
the rows that will be checked. At 128 bits that search is out of reach.

- ``secret_seed()``: a fresh run seed.
- ``derive(seed, label)``: a 128-bit seed for one purpose (a timed call's
  inputs), from the run's seed and a label; the run's seed cannot be
  recovered from it.
- ``split(seed)``: the two 64-bit words a C generator takes (low, high).
- ``for_store`` / ``from_store``: SQLite integers stop at 63 bits, so a seed
  past that is kept as ``0x...`` text (never a decimal, which SQLite would
  turn into a lossy REAL) and read back as the same int.
"""
from __future__ import annotations

import hashlib
import secrets

SEED_BITS = 128
_MASK = (1 << SEED_BITS) - 1


def secret_seed() -> int:
    return secrets.randbits(SEED_BITS)


def derive(seed: int, label: str) -> int:
    digest = hashlib.sha256(int(seed).to_bytes(32, "little", signed=False) + b"\0" + label.encode()).digest()
    return int.from_bytes(digest[:SEED_BITS // 8], "little")


def split(seed: int) -> tuple[int, int]:
    seed = int(seed) & _MASK
    return seed & 0xFFFFFFFFFFFFFFFF, seed >> 64


def for_store(seed: int | None) -> int | str | None:
    if seed is None or 0 <= seed < 2**63:
        return seed
    return hex(seed)


def from_store(value: int | str | None) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return int(value, 16) if value.lower().startswith("0x") else int(value)
    return int(value)
