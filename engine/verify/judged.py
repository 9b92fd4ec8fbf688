"""Whether a run judged its answer, and every rate said over what it counts.

A run judged nothing when its checks could not reach the answer: ``skipped`` (a backend
this machine lacks, e.g. no GPU), ``missing_dependency`` (a package the sandbox lacks),
``unbound`` (nothing could be called), or a run the run's time limit stopped before its
checks finished (a ``run`` check of verdict ``timeout``; a check that failed before then
makes the verdict ``fail`` instead). Such a run neither passes nor fails: a pass rate
counts it apart, and a comparison with a deck's verdict calls it "not judged here"."""
from __future__ import annotations

from collections.abc import Mapping

from benchtui.records.verdicts import MISSING_DEPENDENCY, SKIPPED, TIMEOUT, UNBOUND

NOT_JUDGING = {SKIPPED, MISSING_DEPENDENCY, UNBOUND}


def not_judged(verdict: str | None, message: str | None = None, ran_out: str | None = None) -> str | None:
    """Why a run judged nothing, in a few words ("skipped: no GPU"); None when it judged.
    ``ran_out``: the message of its ``run`` check when the run's time limit stopped it."""
    message = message or ""
    if verdict == SKIPPED:
        if "too slow for this CPU" in message:
            return "skipped: too slow for this CPU"
        return "skipped: no GPU" if "GPU" in message or "cuda" in message.lower() else "skipped"
    if verdict == MISSING_DEPENDENCY:
        return "missing dependency"
    if verdict == UNBOUND:
        return "unbound: nothing to call"
    if verdict == TIMEOUT and ran_out:
        return "time limit hit before the checks finished"
    return None


def over(passed: int, judged: int, apart: Mapping[str, int] | None = None) -> str:
    """What a pass rate is over: "8 of 8 judged; 2 skipped: no GPU"."""
    text = f"{passed} of {judged} judged"
    rest = "; ".join(f"{n} {why}" for why, n in sorted((apart or {}).items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{text}; {rest}" if rest else text
