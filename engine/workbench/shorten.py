"""Names shortened to a width from the middle, keeping what tells them apart:
"KernelBench L1 P10: 3D tensor matrix multiplication" among its siblings reads
"Kern…P10: 3D tensor m…", not "KernelBench L1 P…"; "claude_claude-fable-5" beside
"claude_claude-opus-4-8" reads "claude…fable-5", not "claude_claude-"."""
from __future__ import annotations

import os

SEPARATORS = " _-/:."
ELLIPSIS = "…"


def shorten_all(names: list[str], width: int) -> dict[str, str]:
    """Each name as it fits in ``width`` characters beside the others."""
    ordered = sorted(set(names))
    return {name: shorten(name, width, _most_shared(ordered, i)) for i, name in enumerate(ordered)}


def _most_shared(ordered: list[str], i: int) -> int:
    """The longest prefix ``ordered[i]`` shares with another name (its sorted neighbours hold it)."""
    name = ordered[i]
    return max((len(os.path.commonprefix([name, ordered[j]])) for j in (i - 1, i + 1) if 0 <= j < len(ordered)),
               default=0)


def shorten(name: str, width: int, shared: int = 0) -> str:
    """``name`` in at most ``width`` characters; ``shared``: how many of its first characters
    another name shows too (skipped first, from just after their last separator)."""
    if len(name) <= width:
        return name
    if width < 4:
        return name[:width]
    tail_min = width // 2  # the end is kept: what often tells runs of one model apart (_max, -4-8)
    cut = min(shared, len(name) - tail_min)
    cut = max((i + 1 for i in range(cut) if name[i] in SEPARATORS), default=0)  # back to a word's start
    head = max(3, width // 4)
    if cut > head + 1:
        rest = name[cut:]
        room = width - 1 - len(rest)
        if room >= head:  # all that differs fits: the head gets what is left over
            return name[:min(room, cut - 1)] + ELLIPSIS + rest
        if len(name) - shared <= width - head - 1:  # all that differs is in the end ("…-4-8_max"): keep it
            return name[:head] + ELLIPSIS + name[-(width - head - 1):]
        return name[:head] + ELLIPSIS + rest[:width - head - 2] + ELLIPSIS
    tail = (width - 1) // 2
    return name[:width - 1 - tail] + ELLIPSIS + name[-tail:]
