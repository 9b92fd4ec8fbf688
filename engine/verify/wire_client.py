"""The client half of a peer: requests to the other process, and their replies.

A request is sent, then the other side is served (its calls back into objects
this side handed it: the server half, wire_server.py) until the reply comes;
a reply the checker times or judges is read by value (``plain``), under a size
limit and a deadline, with SIGALRM held off mid-frame.
"""
from __future__ import annotations

import builtins
import contextlib
import itertools
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from benchtui.verify.wire_frames import (
    Deadline,
    Limit,
    Payload,
    PeerGone,
    RemoteError,
    SharedPages,
    WireError,
    bytes_of,
)
from benchtui.verify.wire_values import Codec, Proxy

# Builtin exceptions the answer may raise that are rebuilt as themselves, so
# a conformance suite can still `except ValueError` an answer's validation.
_REBUILT = {name: obj for name, obj in vars(builtins).items()
            if isinstance(obj, type) and issubclass(obj, Exception) and not issubclass(obj, Warning)}



class Client(Codec):
    """Requests from this side, each awaited while the other side's requests are served."""

    def _client_state(self) -> None:
        self.watch = False  # keep sent arrays mapped and log the ones changed in place
        self.probing = False  # Suite.probing: an audit leaves what this returns out of its trace
        self.mutated_log: list[str] = []
        self._req = itertools.count(1)
        self._waiting: list[int] = []
        self._abandoned: set[int] = set()
        self.by_reference = False  # results stay on the owner's side as handles
        self.deadline: float | None = None
        self.round_trips = 0

    # -- requests
    def request(self, header: dict[str, Any], payload: Any = None, by_value: bool = False, plain: bool = False,
                limit: Limit | None = None, keep: list[Any] | None = None) -> Any:
        """Send one request and serve the other side until its reply comes.

        While ``watch`` is set, sent arrays stay mapped here and any the other
        side changed in place are appended to ``mutated_log``. ``plain``: the
        reply is read by value, decoded whole before this returns; a handle
        anywhere in it raises :class:`NotPlain` naming it. ``limit``: every
        message received meanwhile is refused past its sizes. ``keep``: the
        pages of the arrays sent are kept, as one :class:`SharedPages`
        appended to it."""
        if self.closed:
            raise PeerGone(self.closed)
        rid = next(self._req)
        header = {**header, "id": rid}
        if self.by_reference and not (by_value or plain):
            header["ref"] = True
        if self.watch:
            header["watch"] = True
        if self.released:
            header["free"], self.released = self.released, []
        arrays: list[np.ndarray[Any, Any]] = []
        header["v"] = self._encode(payload, arrays)
        self._waiting.append(rid)
        try:
            with _alarm_blocked():
                kept = self.conn.send(header, arrays, keep=self.watch or keep is not None)
                self.round_trips += 1
                if keep is not None and kept is not None:
                    keep.append(SharedPages(kept, arrays, header.get("arrays", [])))
                    kept = None
                try:
                    result = self._await(rid, plain, limit)
                finally:
                    if kept is not None:
                        for i in _changed(kept, arrays, header.get("arrays", [])):
                            a = arrays[i]
                            self.mutated_log.append(f"array {a.dtype}{list(a.shape)} sent to {header.get('op')}")
                        os.close(kept)
            return result
        except BaseException:
            self._abandoned.add(rid)
            raise
        finally:
            self._waiting.pop()

    def _await(self, rid: int, plain: bool = False, limit: Limit | None = None) -> Any:
        while True:
            if self.deadline is not None:
                left = self.deadline - time.monotonic()
                if left <= 0 or not self.conn.wait_readable(left):
                    raise Deadline("no reply before the deadline")
            msg, mm = self._recv(limit)
            op = msg.get("op")
            if op in ("reply", "raise"):
                if msg.get("id") == rid:
                    if msg.get("mutated") and self.watch:
                        self.mutated_log.append("a list or dict argument of the call "
                                                "(reported by the answer's process)")
                    return self._result(msg, mm, plain)
                if msg.get("id") in self._abandoned:
                    self._abandoned.discard(msg.get("id"))
                    continue
                raise WireError(f"reply to request {msg.get('id')!r} while waiting for {rid}")
            self.round_trips += 1  # a call back into this side: its wire cost is the answer's too
            self._serve(msg, mm)

    def _result(self, msg: dict[str, Any], mm: Payload | None, plain: bool = False) -> Any:
        offsets = msg.get("arrays", [])
        try:
            if msg["op"] == "reply":
                if plain:
                    return self._decode_plain(msg.get("v"), mm, offsets)
                return self._decode(msg.get("v"), mm, offsets)
        finally:
            if mm is not None:
                mm.close()
        raise rebuild_exception(msg)


    @contextmanager
    def reference(self) -> Iterator[None]:
        """Results of requests made inside stay with the owner as handles."""
        was, self.by_reference = self.by_reference, True
        try:
            yield
        finally:
            self.by_reference = was

    def ping(self) -> None:
        self.request({"op": "ping"})

    def call_op(self, op: str, value: Any = None) -> Any:
        return self.request({"op": op}, value)

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(PeerGone, OSError):
                self.conn.send({"op": "bye"})
            self.closed = "closed"



def call_plain(proxy: Proxy, *args: Any, limit: Limit | None = None, keep: list[Any] | None = None, **kwargs: Any) -> Any:
    """Call ``proxy`` and read its reply by value (:meth:`Peer.request`'s ``plain``)."""
    return proxy._peer.request({"op": "call", "t": proxy._id}, [list(args), kwargs], by_value=True, plain=True,
                               limit=limit, keep=keep)



# Bytes compared at a time: a piece stays in the CPU's cache between its read and its
# comparison, and both sides are ``bytes`` (one memcmp). A whole 34 MB array read at
# once and compared with its memoryview (byte by byte) took 9 times as long.
COMPARE_CHUNK = 1 << 16


def _changed(fd: int, arrays: list[np.ndarray[Any, Any]], offsets: list[int]) -> list[int]:
    """Sent arrays whose bytes in the shared memfd differ from what was sent."""
    return [i for i, (a, off) in enumerate(zip(arrays, offsets)) if a.nbytes and _differs(fd, bytes_of(a), off)]


def _differs(fd: int, sent: memoryview, offset: int) -> bool:
    """Whether the memfd's bytes from ``offset`` differ from ``sent`` anywhere."""
    for lo in range(0, len(sent), COMPARE_CHUNK):
        piece = sent[lo:lo + COMPARE_CHUNK]
        if os.pread(fd, len(piece), offset + lo) != bytes(piece):
            return True
    return False



def rebuild_exception(msg: dict[str, Any]) -> BaseException:
    type_name, message = str(msg.get("type", "Exception")), str(msg.get("message", ""))
    cls = _REBUILT.get(type_name) if msg.get("module") == "builtins" else None
    exc: BaseException
    if cls is not None:
        try:
            exc = cls(message) if not issubclass(cls, ImportError) else cls(message, name=msg.get("name"))
        except Exception:
            exc = RemoteError(type_name, message)
    else:
        exc = RemoteError(type_name, message)
    exc.remote_where = str(msg.get("where", ""))  # type: ignore[attr-defined]
    exc.remote_type = type_name  # type: ignore[attr-defined]
    exc.remote_traceback = str(msg.get("tb", ""))  # type: ignore[attr-defined]
    return exc


@contextmanager
def _alarm_blocked() -> Iterator[None]:
    """SIGALRM (a check's time limit) must not land mid-frame: hold it while a
    request is on the wire; it is delivered, and raises, once we are between
    messages. The wire's own deadline bounds the wait meanwhile."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    except (ValueError, OSError):  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
