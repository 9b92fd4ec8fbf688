"""The judge's calls through the ``llm`` library (the ``judge`` extra): which
model, whether it can be used here, one call, many at once with a limit and a
time limit each, and every failure said in one line.

``llm`` is imported only here and only when a judge is asked for, so the rest
of benchtui works without the extra.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchtui.host.config import read_table

INSTALL_HINT = 'the judge needs the llm library: pip install "benchtui[judge]" (or: pip install llm)'


class JudgeError(Exception):
    """No judge to ask (no llm, an unknown model, no key); one line for the user."""


def llm_module() -> Any:
    try:
        import llm
    except ImportError as exc:
        raise JudgeError(INSTALL_HINT) from exc
    return llm


def configured_model() -> str | None:
    """The config file's ``[judge] model`` (engine/host/config.py), else None."""
    name = read_table("judge").get("model")
    return name.strip() if isinstance(name, str) and name.strip() else None


def configured_mode() -> str:
    """The config file's ``[judge] mode`` (``blind`` or ``evidence``), else ``evidence``."""
    mode = read_table("judge").get("mode")
    return mode if mode in ("blind", "evidence") else "evidence"


def configured_rubric() -> str | None:
    """The config file's ``[judge] rubric`` (a rubric file's path), else None (the bundled one)."""
    path = read_table("judge").get("rubric")
    return path.strip() if isinstance(path, str) and path.strip() else None


def find_model(name: str | None) -> Any:
    """The llm model ``name`` names (an id or alias); else the config file's
    ``[judge] model``, else llm's default model."""
    llm = llm_module()
    name = name or configured_model() or llm.get_default_model()
    try:
        return llm.get_model(name)
    except llm.UnknownModelError as exc:
        raise JudgeError(f"unknown judge model {name!r}: `llm models` lists the models llm can reach; a plugin "
                         "adds more (llm install llm-anthropic, llm-gemini, llm-openrouter, llm-ollama, llm-mlx)") from exc


def key_problem(model: Any) -> str | None:
    """Why ``model`` cannot be called for want of a key, else None (it needs none, or has one)."""
    llm = llm_module()
    if getattr(model, "needs_key", None) is None:
        return None
    try:
        model.get_key()
    except llm.NeedsKeyException as exc:
        return f"{model.model_id}: {exc}"
    return None


def usable_models() -> dict[str, Any]:
    """For ``doctor``: llm's version, and each model it can reach with whether
    its key is there ({"llm": None} without the library)."""
    try:
        llm = llm_module()
    except JudgeError:
        return {"llm": None, "models": [], "default": None, "configured": configured_model()}
    from importlib.metadata import PackageNotFoundError, version

    try:
        llm_version: str | None = version("llm")
    except PackageNotFoundError:
        llm_version = "unknown version"
    rows = []
    try:
        models = llm.get_models()
    except Exception as exc:  # a broken plugin: say it, the rest of doctor carries on
        return {"llm": llm_version, "models": [], "default": None, "configured": configured_model(),
                "problem": one_line(exc)}
    for model in models:
        problem = key_problem(model)
        rows.append({"id": model.model_id, "needs_key": getattr(model, "needs_key", None), "usable": problem is None})
    return {"llm": llm_version, "models": rows, "default": llm.get_default_model(), "configured": configured_model()}


# -- one call -------------------------------------------------------------------
@dataclass
class Answered:
    text: str
    input_tokens: int | None
    output_tokens: int | None


def ask(model: Any, system: str, body: str) -> Answered:
    """One prompt, the whole reply (no streaming)."""
    response = model.prompt(body, system=system, stream=False)
    text = response.text()
    try:
        usage = response.usage()
        return Answered(text, usage.input, usage.output)
    except Exception:  # a model that keeps no usage: the reply still counts
        return Answered(text, None, None)


# What the providers' client libraries name their errors (openai, anthropic,
# google, httpx), by kind: the kind decides whether to go on asking.
_KINDS = (("key", ("NeedsKey", "Authentication", "PermissionDenied", "Unauthorized", "InvalidApiKey")),
          ("quota", ("RateLimit", "Quota", "ResourceExhausted", "InsufficientQuota", "TooManyRequests")),
          ("timeout", ("Timeout", "TimedOut")),
          ("network", ("Connection", "Network", "ConnectError", "ServiceUnavailable", "InternalServerError",
                       "APIStatusError", "gaierror")))
STOPPING_KINDS = ("key", "quota")  # every further call would fail the same way


def error_kind(exc: BaseException) -> str:
    names = " ".join(c.__name__ for c in type(exc).__mro__)
    text = str(exc).lower()
    for kind, words in _KINDS:
        if any(w.lower() in names.lower() for w in words):
            return kind
    if "quota" in text or "rate limit" in text:
        return "quota"
    if "api key" in text or "no key" in text:
        return "key"
    return "error"


def one_line(exc: BaseException) -> str:
    """An exception as one line: its kind, its type and its message's first line."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    kind = error_kind(exc)
    words = {"key": "no usable key", "quota": "quota or rate limit", "timeout": "timed out",
             "network": "network", "error": "failed"}[kind]
    return f"{words}: {type(exc).__name__}" + (f": {first[:300]}" if first else "")


# -- many calls -----------------------------------------------------------------
@dataclass
class Outcome:
    index: int
    answered: Answered | None
    problem: str | None = None     # one line: why there is no reply
    kind: str | None = None        # error_kind, or "timeout"


def run_calls(jobs: list[Callable[[], Answered]], *, limit: int, timeout: float,
              on_done: Callable[[Outcome], None], should_stop: Callable[[], bool] = lambda: False) -> int:
    """Run ``jobs`` at most ``limit`` at a time, each in a daemon thread, and
    hand each outcome to ``on_done`` in this thread (which holds the store) as
    it comes. A job still running after ``timeout`` seconds is given up (its
    thread left to finish unheard). Ctrl-C (KeyboardInterrupt) stops at once,
    every outcome already handed over kept; a key or quota failure, or
    ``should_stop()``, stops starting new jobs. Returns the jobs not started."""
    results: queue.Queue[Outcome] = queue.Queue()
    waiting = list(range(len(jobs)))
    deadlines: dict[int, float] = {}
    stopped = False

    def work(index: int) -> None:
        try:
            results.put(Outcome(index, jobs[index]()))
        except Exception as exc:
            results.put(Outcome(index, None, one_line(exc), error_kind(exc)))

    while (waiting and not stopped) or deadlines:
        while waiting and not stopped and len(deadlines) < max(1, limit):
            if should_stop():
                stopped = True
                break
            index = waiting.pop(0)
            deadlines[index] = time.monotonic() + timeout
            threading.Thread(target=work, args=(index,), daemon=True, name=f"judge-call-{index}").start()
        if not deadlines:
            break
        try:
            outcome = results.get(timeout=max(0.01, min(deadlines.values()) - time.monotonic()))
        except queue.Empty:
            now = time.monotonic()
            for index in [i for i, at in deadlines.items() if at <= now]:
                del deadlines[index]
                on_done(Outcome(index, None, f"timed out: no reply within {timeout:g} s", "timeout"))
            continue
        if outcome.index not in deadlines:
            continue  # given up already: its time ran out
        del deadlines[outcome.index]
        on_done(outcome)
        if outcome.kind in STOPPING_KINDS:
            stopped = True
    return len(waiting)
