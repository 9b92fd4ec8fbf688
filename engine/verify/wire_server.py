"""The server half of a peer: the other process's requests, answered.

Each request names an op of the peer's own (``ops``) or an object this side
exported; a non-trusting peer (the checker's) lets the answer only call what
it was given and read public attributes (no dunders, no modules). What the
call raised goes back as evidence: with its traceback from the answer's side,
as a bare type and message from the checker's.
"""
from __future__ import annotations

import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from benchtui.verify.wire_frames import Payload, PeerGone, WireError
from benchtui.verify.wire_values import Codec


class Server(Codec):
    """Answers the other side's requests, in ``serve_forever`` or while this side awaits a reply."""

    def _server_state(self, ops: dict[str, Callable[[Any], Any]] | None) -> None:
        self.ops = ops or {}
        self.finish: Callable[[Any], None] | None = None  # forces lazy results kept by reference

    # -- serving
    def serve_forever(self) -> None:
        while True:
            try:
                msg, mm = self._recv()
            except PeerGone:
                return
            if msg.get("op") == "bye":
                return
            try:
                self._serve(msg, mm)
            except PeerGone:  # the other side went away (or shut the socket) before the reply
                return

    def _serve(self, msg: dict[str, Any], mm: Payload | None) -> None:
        for oid in msg.get("free", ()):
            self.objects.pop(oid, None)
        rid = msg.get("id")
        try:
            try:
                value = self._decode(msg.get("v"), mm, msg.get("arrays", []))
            finally:
                if mm is not None:
                    mm.close()
            before = _plain_snapshot(value) if msg.get("watch") and self.trusting else None
            result = self._dispatch(msg, value)
            arrays: list[np.ndarray[Any, Any]] = []
            if msg.get("ref") and not _small_plain(result):
                if self.finish is not None:
                    self.finish(result)
                encoded = self.export(result)
            else:
                encoded = self._encode(result, arrays)
            reply: dict[str, Any] = {"op": "reply", "id": rid, "v": encoded}
            if before is not None and _plain_snapshot(value) != before:
                reply["mutated"] = True
            self.conn.send(reply, arrays)
        except PeerGone:
            raise
        except BaseException as exc:  # noqa: BLE001 - whatever the code raised goes back as evidence
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and not self.trusting:
                raise
            self.conn.send(describe_raise(rid, exc, details=self.trusting))

    def _dispatch(self, msg: dict[str, Any], value: Any) -> Any:
        op: Any = msg.get("op")  # the other side's word: checked below, never trusted to be a str
        if op in self.ops:
            return self.ops[op](value)
        if op == "ping":
            return None
        try:
            target = self.objects[int(msg["t"])]
        except (KeyError, ValueError, TypeError):
            raise WireError(f"{op} on an unknown object") from None
        name: Any = msg.get("name")
        if not self.trusting:
            _guard(op, target, name)
        if op == "call":
            args, kwargs = value
            result = target(*args, **kwargs)
        elif op == "getattr":
            result = getattr(target, name)
        elif op == "setattr":
            setattr(target, name, value)
            result = None
        elif op == "getitem":
            result = target[value]
        elif op == "len":
            result = len(target)
        elif op == "iter":
            result = iter(target)
        elif op == "next":
            result = next(target)
        elif op == "bool":
            result = bool(target)
        elif op == "array":
            result = np.asarray(target)
        elif op == "signature":
            result = signature_spec(target)
        else:
            raise WireError(f"unknown operation {op!r}")
        if not self.trusting and isinstance(result, types.ModuleType):
            raise AttributeError(f"{name!r} is a module; modules are not handed to the answer")
        return result

    # -- helpers for the checker

_CHECKER_OPS = {"call", "getattr", "getitem", "len", "iter", "next", "bool", "signature"}


def _guard(op: str, target: Any, name: Any) -> None:
    """What the answer may do with the checker's objects."""
    if op not in _CHECKER_OPS:
        raise PermissionError(f"{op} on the checker's objects is not allowed")
    if op == "getattr":
        if not isinstance(name, str) or name.startswith("_"):
            raise AttributeError(f"{name!r}: only public attributes of the checker's objects are readable")
        if isinstance(target, (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.ModuleType)):
            raise AttributeError(f"{name!r}: attributes of the checker's functions are not readable")



def _plain_snapshot(x: Any, depth: int = 0) -> Any:
    """A copy of the Python containers in a call's arguments (arrays are
    watched through shared memory instead), to see in-place changes."""
    if depth > 20:
        return None
    if type(x) in (list, tuple):
        return (type(x).__name__, [_plain_snapshot(v, depth + 1) for v in x])
    if type(x) is dict:
        return ("dict", [(repr(k), _plain_snapshot(v, depth + 1)) for k, v in x.items()])
    if x is None or type(x) in (bool, int, float, str, bytes):
        return x
    return ("obj", id(x))



def _small_plain(x: Any, budget: list[int] | None = None, depth: int = 0) -> bool:
    """Sent by value even when results are kept by reference: Python data
    without arrays or objects (a shape, a flag, token lists), up to 100,000
    items. Arrays and objects stay behind as handles."""
    budget = budget if budget is not None else [100_000]
    budget[0] -= 1
    if budget[0] < 0 or depth > 8:
        return False
    if x is None or type(x) in (bool, int, float, str):
        return True
    if type(x) in (tuple, list):
        return all(_small_plain(v, budget, depth + 1) for v in x)
    if type(x) is dict:
        return all(_small_plain(k, budget, depth + 1) and _small_plain(v, budget, depth + 1) for k, v in x.items())
    return False


def signature_spec(obj: Any) -> list[list[Any]] | None:
    import inspect

    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, p.default is not inspect.Parameter.empty] for p in sig.parameters.values()]


def where_raised(exc: BaseException, frames: list[traceback.FrameSummary]) -> str:
    """``file:line`` of the last frame; for a file that does not parse, that file and
    line first, then the import that read it (``kv_cache.py:35 (imported at adapter.py:2)``)."""
    at = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        bad = f"{Path(exc.filename).name}:{exc.lineno}"
        return f"{bad} (imported at {at})" if at and at != bad else bad
    return at


def _in_wire(filename: str) -> bool:
    """A frame of the wire's own modules (wire.py and its parts), left out of where a call raised."""
    path = Path(filename)
    return path.parent == Path(__file__).parent and path.name.startswith("wire")


def describe_raise(rid: Any, exc: BaseException, details: bool = True) -> dict[str, Any]:
    """The exception as a message; ``details=False`` (the checker's side)
    sends no traceback and no location, so nothing of the checks leaks."""
    if not details:
        return {"op": "raise", "id": rid, "type": type(exc).__name__, "module": type(exc).__module__,
                "message": str(exc)[:500]}
    tb = traceback.extract_tb(exc.__traceback__)
    where = where_raised(exc, [f for f in tb if not _in_wire(f.filename)])
    text = exc.msg if isinstance(exc, SyntaxError) and exc.msg and exc.filename else str(exc)
    out = {"op": "raise", "id": rid, "type": type(exc).__name__, "module": type(exc).__module__,
           "message": text[:4000], "where": where,
           "tb": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-8))[-6000:]}
    if isinstance(exc, ImportError) and getattr(exc, "name", None):
        out["name"] = exc.name
    return out


