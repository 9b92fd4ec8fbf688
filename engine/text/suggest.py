"""Did you mean: the one rule every "unknown name" message follows (commands,
options, models, challenges), as git and pytest do: the closest known names
first, else the names known, never a bare "unknown"."""
from __future__ import annotations

import difflib
from collections.abc import Iterable

SHOWN = 12  # past this many known names, the list is cut (and says how many more)


def close_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known names closest to ``name``: by spelling (difflib), and any that holds it
    or that it holds once case and ``_-`` are set aside (``atention`` -> ``flash_attention``)."""
    known = list(dict.fromkeys(known))
    key = name.lower().replace("-", "_")
    close = difflib.get_close_matches(name, known, n=n, cutoff=0.6)
    close += difflib.get_close_matches(key, known, n=n, cutoff=0.6)
    close += [k for k in known if key and (key in k.lower().replace("-", "_") or k.lower().replace("-", "_") in key)]
    return list(dict.fromkeys(close))[:n]


def suggest(name: str, known: Iterable[str], what: str = "") -> str:
    """"did you mean 'flash_attention'?" or "known: a, b, c" (``what``: the words before the
    list, e.g. "known models"), for a message about an unknown ``name``."""
    known = sorted(set(known))
    close = close_names(name, known)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    if not known:
        return f"{what or 'known'}: none"
    more = f" (and {len(known) - SHOWN} more)" if len(known) > SHOWN else ""
    return f"{what or 'known'}: {', '.join(known[:SHOWN])}{more}"
