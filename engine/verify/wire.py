"""The wire between the checker's process and the answer's process.

The checks never import answer code: the answer lives in its own sandboxed
process and serves calls over a Unix socket. Each message is a length-prefixed
JSON header; the arrays it carries travel in one sealed memfd sent with the
message (SCM_RIGHTS), never as pickles, so decoding runs no code. Anything
that is not plain data (numbers, strings, bytes, lists, tuples, dicts,
numeric ndarrays) crosses as a handle: the receiver gets a :class:`Proxy`
whose calls and attribute reads travel back to the owner. Calls nest: while
the checker waits for an answer, the answer may call back into objects the
checker handed it (a target model), and the checker serves those.

Trust runs one way. The checker may do anything with the answer's objects;
the answer may only call what it was given and read its public attributes
(no dunders, no modules), so it cannot reach the checker's globals.
"""
from __future__ import annotations

import builtins
import contextlib
import fcntl
import itertools
import json
import math
import mmap
import os
import select
import signal
import socket
import struct
import time
import traceback
import types
import weakref
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

MAX_HEADER = 64 << 20
MAX_PAYLOAD = 16 << 30
MAX_DEPTH = 100
ALIGN = 64
NUMERIC_KINDS = "biufc"
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
_LEN = struct.Struct("<Q")
# Builtin exceptions the answer may raise that are rebuilt as themselves, so
# a conformance suite can still `except ValueError` an answer's validation.
_REBUILT = {name: obj for name, obj in vars(builtins).items()
            if isinstance(obj, type) and issubclass(obj, Exception) and not issubclass(obj, Warning)}


class WireError(Exception):
    """The other side broke the protocol (bad header, bad array, bad handle)."""


class NotPlain(WireError):
    """A reply the checker reads by value held something other than plain data
    (a handle to an object left in the other process)."""


class TooLarge(WireError):
    """A message past the size the checker allowed for the reply it awaited.
    ``in_sync``: the rest of the message was not left on the socket."""

    def __init__(self, message: str, in_sync: bool):
        super().__init__(message)
        self.in_sync = in_sync


class PeerGone(Exception):
    """The other process closed the connection or died."""


class Deadline(Exception):
    """No reply before the caller's deadline (the answer is still busy)."""


class RemoteError(Exception):
    """An exception raised on the other side that is not rebuilt as a builtin."""

    def __init__(self, type_name: str, message: str, where: str = "", remote_traceback: str = ""):
        super().__init__(message)
        self.type_name, self.where, self.remote_traceback = type_name, where, remote_traceback

    def __str__(self) -> str:
        return super().__str__()


# ------------------------------------------------------------------ framing

def _read_exact(sock: socket.socket, n: int, buf: bytearray, fds: list[int]) -> None:
    while len(buf) < n:
        data, anc, _flags, _addr = sock.recvmsg(min(n - len(buf), 1 << 20), socket.CMSG_SPACE(4 * 4))
        for level, kind, raw in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(struct.unpack(f"{len(raw) // 4}i", raw[: len(raw) - len(raw) % 4]))
        if not data:
            raise PeerGone("the other process closed the connection")
        buf += data


def _bytes_of(a: np.ndarray) -> memoryview:
    return memoryview(np.ascontiguousarray(a).reshape(-1).view(np.uint8))


def _seal_payload(arrays: list[np.ndarray], keep: bool = False):
    """All arrays of one message in one memfd: (fd to send, offsets, fd kept or None).

    Written with pwrite (no page faults in this process). A kept fd lets the
    checker see, after the call, whether the answer wrote into its inputs:
    the answer maps the same pages."""
    if not arrays:
        return None, [], None
    offsets, total = [], 0
    for a in arrays:
        offsets.append(total)
        total += -(-a.nbytes // ALIGN) * ALIGN
    fd = os.memfd_create("benchtui-wire", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, max(total, 1))
    for a, off in zip(arrays, offsets):
        view = _bytes_of(a)
        done = 0
        while done < len(view):
            done += os.pwrite(fd, view[done:done + (1 << 30)], off + done)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
    return fd, offsets, (os.dup(fd) if keep else None)


class Payload:
    """The arrays of one received message. ``mapped`` (the answer's side):
    views of the sender's shared pages, so in-place writes are seen by the
    sender. Otherwise (the checker's side): private copies read with pread,
    nothing the sender can change afterwards."""

    def __init__(self, fd: int, mapped: bool):
        try:
            seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        except OSError:
            os.close(fd)
            raise WireError("received an fd that is not a memfd") from None
        if seals & fcntl.F_SEAL_SHRINK == 0:
            os.close(fd)  # else the sender could truncate it under us: SIGBUS here
            raise WireError("received memfd is not sealed against shrinking")
        self.size = os.fstat(fd).st_size
        if self.size > MAX_PAYLOAD:
            os.close(fd)
            raise WireError(f"payload of {self.size} bytes")
        self.mm = None
        self.fd: int | None = fd
        if mapped:
            try:
                self.mm = mmap.mmap(fd, self.size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
            finally:
                os.close(fd)
                self.fd = None
            # Touch every page now, so inputs count in the process's memory
            # before, not during, the call being measured.
            self.mm[::mmap.PAGESIZE]

    def __len__(self) -> int:
        return self.size

    def array(self, start: int, dtype: np.dtype, count: int) -> np.ndarray:
        if self.mm is not None:
            return np.frombuffer(self.mm, dtype=dtype, count=count, offset=start)
        out = np.empty(count, dtype=dtype)
        view = memoryview(out.reshape(-1).view(np.uint8))
        done = 0
        while done < len(view):
            n = os.preadv(self.fd, [view[done:done + (1 << 30)]], start + done)
            if n <= 0:
                raise WireError("payload shorter than announced")
            done += n
        return out

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Limit:
    """The most a reply may carry: ``header`` bytes of JSON and ``payload``
    bytes of arrays (``payload_is`` says where that figure comes from)."""

    def __init__(self, what: str, payload: int, header: int = 1 << 20, payload_is: str = "allowed"):
        self.what, self.payload, self.header, self.payload_is = what, int(payload), int(header), payload_is


def aligned_bytes(nbytes: list[int]) -> int:
    """The payload that carries arrays of these sizes (each aligned as sent)."""
    return sum(-(-int(n) // ALIGN) * ALIGN for n in nbytes)


class SharedPages:
    """The pages of arrays the checker sent, kept after the call: the checker
    writes later values into them (the other side maps the same pages, so it
    sees them at the same addresses) and reads back what is there after a
    call, whatever the other side says it did."""

    def __init__(self, fd: int, arrays: list, offsets: list[int]):
        self.fd, self.arrays, self.offsets = fd, list(arrays), list(offsets)

    def slot(self, array: np.ndarray) -> int:
        """Where ``array`` (one of those sent, by identity) lies among them."""
        return next(i for i, a in enumerate(self.arrays) if a is array)

    def write(self, i: int, data: np.ndarray) -> None:
        view = _bytes_of(data)
        if len(view) != self.arrays[i].nbytes:
            raise ValueError(f"{len(view)} bytes into a slot of {self.arrays[i].nbytes}")
        done = 0
        while done < len(view):
            done += os.pwrite(self.fd, view[done:done + (1 << 30)], self.offsets[i] + done)

    def read(self, i: int) -> bytes:
        n, off, parts = self.arrays[i].nbytes, self.offsets[i], []
        while n > 0:
            chunk = os.pread(self.fd, min(n, 1 << 30), off)
            if not chunk:
                raise WireError("shared pages shorter than sent")
            parts.append(chunk)
            n, off = n - len(chunk), off + len(chunk)
        return b"".join(parts)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self):
        with contextlib.suppress(Exception):
            self.close()


class Connection:
    """One end of the socket: framed messages, each with at most one memfd."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._buf = bytearray()
        self._fds: list[int] = []
        self.sent = 0

    def send(self, header: dict, arrays: list[np.ndarray] = (), keep: bool = False) -> mmap.mmap | None:
        fd, offsets, kept = _seal_payload(list(arrays), keep)
        if arrays:
            header["arrays"] = offsets
        data = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
        frame = _LEN.pack(len(data)) + data
        try:
            if fd is None:
                self.sock.sendall(frame)
            else:
                sent = self.sock.sendmsg([frame], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))])
                if sent < len(frame):
                    self.sock.sendall(frame[sent:])
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise PeerGone(f"the other process is gone ({exc.__class__.__name__})") from None
        finally:
            if fd is not None:
                os.close(fd)
        self.sent += 1
        return kept

    def recv(self, mapped: bool = False, limit: Limit | None = None) -> tuple[dict, Payload | None]:
        """One message. With a ``limit``, a header or payload past it is refused
        from its announced size, before any of it is read or mapped."""
        try:
            _read_exact(self.sock, _LEN.size, self._buf, self._fds)
            (length,) = _LEN.unpack(self._buf[:_LEN.size])
            if length > MAX_HEADER:
                raise WireError(f"header of {length} bytes")
            if limit is not None and length > limit.header:
                raise TooLarge(f"{limit.what}: a header of {length} bytes, over the {limit.header} allowed", False)
            _read_exact(self.sock, _LEN.size + length, self._buf, self._fds)
        except ConnectionResetError:
            raise PeerGone("the other process reset the connection") from None
        raw = bytes(self._buf[_LEN.size:_LEN.size + length])
        del self._buf[:_LEN.size + length]
        try:
            header = json.loads(raw)
        except ValueError as exc:
            raise WireError(f"undecodable header: {exc}") from None
        if not isinstance(header, dict):
            raise WireError("header is not an object")
        mm = None
        if "arrays" in header:
            if not self._fds:
                raise WireError("arrays announced but no memfd received")
            fd = self._fds.pop(0)
            if limit is not None:
                size = os.fstat(fd).st_size
                if size > limit.payload:
                    for extra in [fd, *self._fds]:
                        os.close(extra)
                    self._fds.clear()
                    raise TooLarge(f"{limit.what}: {size} bytes of arrays, over the {limit.payload} "
                                   f"{limit.payload_is}", True)
            mm = Payload(fd, mapped)
        for extra in self._fds:  # a sender may attach at most one fd per message
            os.close(extra)
        self._fds.clear()
        return header, mm

    def wait_readable(self, timeout: float | None) -> bool:
        if self._buf:
            return True
        ready, _, _ = select.select([self.sock], [], [], timeout)
        return bool(ready)


# ----------------------------------------------------------------- values

class Proxy:
    """An object that lives in the other process."""

    __slots__ = ("_peer", "_id", "_kind", "_label", "__weakref__")

    def __init__(self, peer: Peer, oid: int, kind: str, label: str):
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_id", oid)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_label", label)

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._peer.request({"op": "getattr", "t": self._id, "name": name})

    def __setattr__(self, name: str, value) -> None:
        self._peer.request({"op": "setattr", "t": self._id, "name": name}, value)

    def __call__(self, *args, **kwargs):
        return self._peer.request({"op": "call", "t": self._id}, [list(args), kwargs])

    def __getitem__(self, key):
        return self._peer.request({"op": "getitem", "t": self._id}, key)

    def __len__(self) -> int:
        return int(self._peer.request({"op": "len", "t": self._id}))

    def __iter__(self):
        return self._peer.request({"op": "iter", "t": self._id})

    def __next__(self):
        return self._peer.request({"op": "next", "t": self._id})

    def __bool__(self) -> bool:
        return bool(self._peer.request({"op": "bool", "t": self._id}))

    def __array__(self, dtype=None, copy=None):
        out = np.asarray(self._peer.request({"op": "array", "t": self._id}, by_value=True))
        return out.astype(dtype) if dtype is not None else out

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __reduce__(self):
        raise TypeError("a proxy for an object in another process cannot be pickled")

    @property
    def __signature__(self):
        import inspect

        spec = self._peer.request({"op": "signature", "t": self._id})
        if spec is None:
            return None
        try:
            params = [inspect.Parameter(str(name), getattr(inspect.Parameter, str(kind)),
                                        **({"default": None} if has_default else {}))
                      for name, kind, has_default in spec]
            return inspect.Signature(params)
        except (TypeError, ValueError, AttributeError):
            return None

    @property
    def __name__(self) -> str:
        return self._label.rsplit(".", 1)[-1]

    def __repr__(self) -> str:
        return f"<remote {self._kind} {self._label}>"

    def __del__(self):
        with contextlib.suppress(Exception):
            self._peer.released.append(self._id)


def is_proxy(x: Any) -> bool:
    return type(x) is Proxy


def _label(obj: Any) -> tuple[str, str]:
    if isinstance(obj, types.ModuleType):
        return "module", obj.__name__
    if isinstance(obj, type):
        return "class", obj.__qualname__
    if callable(obj):
        return "function", getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return "object", type(obj).__qualname__


class Peer:
    """Requests to and requests from the other process over one Connection.

    ``exported`` policy: ``trusting`` peers (the answer's side) let the other
    side do anything with their objects; the checker's peer is not trusting.
    """

    def __init__(self, conn: Connection, *, trusting: bool, ops: dict[str, Callable] | None = None):
        self.conn = conn
        self.trusting = trusting
        self.ops = ops or {}
        self.objects: dict[int, Any] = {}
        self._proxies: weakref.WeakValueDictionary[int, Proxy] = weakref.WeakValueDictionary()
        self.watch = False  # keep sent arrays mapped and log the ones changed in place
        self.probing = False  # Suite.probing: an audit leaves what this returns out of its trace
        self.mutated_log: list[str] = []
        self._ids = itertools.count(1)
        self._req = itertools.count(1)
        self._waiting: list[int] = []
        self._abandoned: set[int] = set()
        self.released: list[int] = []
        self.by_reference = False  # results stay on the owner's side as handles
        self.deadline: float | None = None
        self.round_trips = 0
        self.closed: str | None = None
        self.finish: Callable[[Any], None] | None = None  # forces lazy results kept by reference

    # -- encoding
    def _encode(self, value: Any, arrays: list, depth: int = 0):
        if depth > MAX_DEPTH:
            raise WireError("value nested too deeply (or cyclic)")
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and type(value) in (int, bool):
            return value
        if isinstance(value, float) and type(value) is float:
            return value if math.isfinite(value) else {"$f": repr(value)}
        if isinstance(value, complex):
            return {"$c": [self._encode(value.real, arrays), self._encode(value.imag, arrays)]}
        if isinstance(value, np.generic) and value.dtype.kind in NUMERIC_KINDS:
            arrays.append(np.asarray(value).reshape(1))
            return {"$s": len(arrays) - 1, "dt": value.dtype.str}
        if isinstance(value, np.ndarray) and value.dtype.kind in NUMERIC_KINDS:
            arrays.append(value)
            return {"$a": len(arrays) - 1, "dt": value.dtype.str, "sh": list(value.shape)}
        if isinstance(value, (bytes, bytearray)):
            arrays.append(np.frombuffer(bytes(value), dtype=np.uint8))
            return {"$b": len(arrays) - 1, "n": len(value)}
        if type(value) is list:
            return [self._encode(v, arrays, depth + 1) for v in value]
        if type(value) is tuple:
            return {"$t": [self._encode(v, arrays, depth + 1) for v in value]}
        if type(value) is dict:
            return {"$d": [[self._encode(k, arrays, depth + 1), self._encode(v, arrays, depth + 1)] for k, v in value.items()]}
        if type(value) is Proxy and value._peer is self:
            return {"$r": value._id}
        mlx = _mlx_to_numpy(value)
        if mlx is not None:
            arrays.append(mlx)
            return {"$a": len(arrays) - 1, "dt": mlx.dtype.str, "sh": list(mlx.shape), "mlx": True}
        return self.export(value)

    def export(self, obj: Any) -> dict:
        oid = next(self._ids)
        self.objects[oid] = obj
        kind, label = _label(obj)
        return {"$h": oid, "k": kind, "l": label}

    def _decode(self, node: Any, mm: mmap.mmap | None, offsets: list[int], depth: int = 0):
        if depth > MAX_DEPTH:
            raise WireError("value nested too deeply")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self._decode(v, mm, offsets, depth + 1) for v in node]
        if not isinstance(node, dict) or len(node) == 0:
            raise WireError(f"bad value node {str(node)[:80]}")
        if "$t" in node:
            return tuple(self._decode(v, mm, offsets, depth + 1) for v in node["$t"])
        if "$d" in node:
            return {self._decode(k, mm, offsets, depth + 1): self._decode(v, mm, offsets, depth + 1) for k, v in node["$d"]}
        if "$f" in node:
            if node["$f"] not in ("nan", "inf", "-inf"):
                raise WireError("bad float")
            return float(node["$f"])
        if "$c" in node:
            re_, im = node["$c"]
            return complex(float(re_), float(im))
        if "$a" in node or "$s" in node or "$b" in node:
            return self._decode_array(node, mm, offsets)
        if "$r" in node:
            try:
                return self.objects[int(node["$r"])]
            except (KeyError, ValueError, TypeError):
                raise WireError(f"reference to an unknown object {node['$r']!r}") from None
        if "$h" in node:
            oid = int(node["$h"])
            proxy = self._proxies.get(oid)
            if proxy is None:
                proxy = Proxy(self, oid, str(node.get("k", "object")), str(node.get("l", "?"))[:200])
                self._proxies[oid] = proxy
            return proxy
        raise WireError(f"bad value node {str(node)[:80]}")

    def _decode_plain(self, node: Any, mm, offsets: list[int]):
        """``_decode`` for a reply read by value: a handle (``$h``) or a
        reference to an object of this side (``$r``) anywhere is refused,
        named, before any of it is used."""
        bad = _first_handle(node)
        if bad is not None:
            kind, label = bad
            article = "an" if kind[:1] in "aeiou" else "a"
            raise NotPlain(f"the reply holds a handle to {article} {kind} {label!r} in the answer's process, not plain data "
                           "(a reply the checker times or judges is read by value only)")
        return self._decode(node, mm, offsets)

    def _decode_array(self, node: dict, mm: mmap.mmap | None, offsets: list[int]):
        key = "$a" if "$a" in node else "$s" if "$s" in node else "$b"
        try:
            index = int(node[key])
            dtype = np.dtype("u1") if key == "$b" else np.dtype(str(node["dt"]))
            shape = (int(node["n"]),) if key == "$b" else (1,) if key == "$s" else tuple(int(s) for s in node["sh"])
        except (TypeError, ValueError, KeyError) as exc:
            raise WireError(f"bad array header: {exc}") from None
        if dtype.kind not in NUMERIC_KINDS or dtype.hasobject or any(s < 0 for s in shape):
            raise WireError(f"refused array of dtype {dtype} shape {shape}")
        if mm is None or not 0 <= index < len(offsets):
            raise WireError("array without payload")
        count = math.prod(shape)
        start = offsets[index]
        if not isinstance(start, int) or start < 0 or start + count * dtype.itemsize > len(mm):
            raise WireError("array outside its payload")
        arr = mm.array(start, dtype, count).reshape(shape)
        if key == "$b":
            return arr.tobytes()
        if key == "$s":
            return arr[0]
        if node.get("mlx"):
            return _numpy_to_mlx(arr)
        return arr

    # -- requests
    def request(self, header: dict, payload: Any = None, by_value: bool = False, plain: bool = False,
                limit: Limit | None = None, keep: list | None = None):
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
        arrays: list = []
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

    def _await(self, rid: int, plain: bool = False, limit: Limit | None = None):
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

    def _recv(self, limit: Limit | None = None):
        try:
            return self.conn.recv(mapped=self.trusting, limit=limit)
        except PeerGone as exc:
            self.closed = str(exc)
            raise
        except TooLarge as exc:
            if not exc.in_sync:  # the rest of that message is still on the socket: this connection is done
                self.closed = str(exc)
                with contextlib.suppress(OSError):
                    self.conn.sock.shutdown(socket.SHUT_RDWR)  # the sender's write fails, rather than waits
            raise

    def _result(self, msg: dict, mm, plain: bool = False):
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

    def _serve(self, msg: dict, mm) -> None:
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
            arrays: list = []
            if msg.get("ref") and not _small_plain(result):
                if self.finish is not None:
                    self.finish(result)
                encoded = self.export(result)
            else:
                encoded = self._encode(result, arrays)
            reply = {"op": "reply", "id": rid, "v": encoded}
            if before is not None and _plain_snapshot(value) != before:
                reply["mutated"] = True
            self.conn.send(reply, arrays)
        except PeerGone:
            raise
        except BaseException as exc:  # noqa: BLE001 - whatever the code raised goes back as evidence
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and not self.trusting:
                raise
            self.conn.send(describe_raise(rid, exc, details=self.trusting))

    def _dispatch(self, msg: dict, value: Any):
        op = msg.get("op")
        if op in self.ops:
            return self.ops[op](value)
        if op == "ping":
            return None
        try:
            target = self.objects[int(msg["t"])]
        except (KeyError, ValueError, TypeError):
            raise WireError(f"{op} on an unknown object") from None
        name = msg.get("name")
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
    @contextmanager
    def reference(self):
        """Results of requests made inside stay with the owner as handles."""
        was, self.by_reference = self.by_reference, True
        try:
            yield
        finally:
            self.by_reference = was

    def ping(self) -> None:
        self.request({"op": "ping"})

    def call_op(self, op: str, value: Any = None):
        return self.request({"op": op}, value)

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(PeerGone, OSError):
                self.conn.send({"op": "bye"})
            self.closed = "closed"


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


def _first_handle(node: Any, depth: int = 0):
    """(kind, label) of the first handle or reference in an undecoded value, or None."""
    if depth > MAX_DEPTH:
        return ("value", "nested too deeply")
    if isinstance(node, list):
        for v in node:
            found = _first_handle(v, depth + 1)
            if found:
                return found
        return None
    if not isinstance(node, dict):
        return None
    if "$h" in node:
        return (str(node.get("k", "object"))[:40], str(node.get("l", "?"))[:200])
    if "$r" in node:
        return ("reference", "an object of the checker's")
    for key in ("$t", "$d", "$c"):
        if key in node:
            return _first_handle(node[key], depth + 1)
    return None


def call_plain(proxy: Proxy, *args, limit: Limit | None = None, keep: list | None = None, **kwargs):
    """Call ``proxy`` and read its reply by value (:meth:`Peer.request`'s ``plain``)."""
    return proxy._peer.request({"op": "call", "t": proxy._id}, [list(args), kwargs], by_value=True, plain=True,
                               limit=limit, keep=keep)


def _plain_snapshot(x: Any, depth: int = 0):
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


def _changed(fd: int, arrays: list, offsets: list[int]) -> list[int]:
    """Sent arrays whose bytes in the shared memfd differ from what was sent."""
    out = []
    for i, (a, off) in enumerate(zip(arrays, offsets)):
        if a.nbytes and os.pread(fd, a.nbytes, off) != _bytes_of(a):
            out.append(i)
    return out


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


def signature_spec(obj: Any):
    import inspect

    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, p.default is not inspect.Parameter.empty] for p in sig.parameters.values()]


def where_raised(exc: BaseException, frames: list) -> str:
    """``file:line`` of the last frame; for a file that does not parse, that file and
    line first, then the import that read it (``kv_cache.py:35 (imported at adapter.py:2)``)."""
    at = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        bad = f"{Path(exc.filename).name}:{exc.lineno}"
        return f"{bad} (imported at {at})" if at and at != bad else bad
    return at


def describe_raise(rid: Any, exc: BaseException, details: bool = True) -> dict:
    """The exception as a message; ``details=False`` (the checker's side)
    sends no traceback and no location, so nothing of the checks leaks."""
    if not details:
        return {"op": "raise", "id": rid, "type": type(exc).__name__, "module": type(exc).__module__,
                "message": str(exc)[:500]}
    tb = traceback.extract_tb(exc.__traceback__)
    where = where_raised(exc, [f for f in tb if f.filename != __file__])
    text = exc.msg if isinstance(exc, SyntaxError) and exc.msg and exc.filename else str(exc)
    out = {"op": "raise", "id": rid, "type": type(exc).__name__, "module": type(exc).__module__,
           "message": text[:4000], "where": where,
           "tb": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-8))[-6000:]}
    if isinstance(exc, ImportError) and getattr(exc, "name", None):
        out["name"] = exc.name
    return out


def rebuild_exception(msg: dict) -> BaseException:
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
def _alarm_blocked():
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


def _mlx_to_numpy(value: Any):
    mod = type(value).__module__ or ""
    if not mod.startswith("mlx"):
        return None
    try:
        out = np.asarray(value)
    except Exception:
        return None
    return out if out.dtype.kind in NUMERIC_KINDS else None


def _numpy_to_mlx(arr: np.ndarray):
    try:
        import mlx.core as mx
    except ImportError:
        return arr
    return mx.array(arr)


def socket_from_fd(fd: int) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=fd)
    sock.setblocking(True)
    return sock


@contextmanager
def echo_peer(reply: Any):
    """A peer served by a thread of this process whose ``echo`` op answers
    ``reply``: the wire's own cost for a request and a reply of given sizes,
    without the other process (which could slow its own empty calls to
    enlarge what is subtracted)."""
    import threading

    here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server = Peer(Connection(there), trusting=True, ops={"echo": lambda _: reply})
    thread = threading.Thread(target=server.serve_forever, name="benchtui-wire-echo", daemon=True)
    thread.start()
    client = Peer(Connection(here), trusting=False)
    try:
        yield client
    finally:
        client.close()
        thread.join(timeout=5)
        here.close()
        there.close()


def echo_round_trips(reply: Any, samples: int = 15, request: Any = None) -> list[float]:
    """Seconds of each of ``samples`` round trips carrying ``request`` whose
    answer is ``reply``, read by value as a timed reply is (``echo_peer``)."""
    with echo_peer(reply) as client:
        times = []
        for _ in range(max(1, samples)):
            start = time.perf_counter()
            client.request({"op": "echo"}, request, by_value=True, plain=True)
            times.append(time.perf_counter() - start)
        return times


def echo_round_trip_s(reply: Any, samples: int = 15, request: Any = None) -> float:
    """Median seconds of ``echo_round_trips``."""
    import statistics

    return statistics.median(echo_round_trips(reply, samples, request))
