"""The wire's frames: one length-prefixed JSON header per message, its arrays in
one sealed memfd sent with it (SCM_RIGHTS), never pickles, so reading a
message runs no code. Also the errors the wire raises, the size limit a reply
is read under, and the pages of sent arrays the checker keeps
(:class:`SharedPages`). The peers that talk over it: engine/verify/wire.py.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import select
import socket
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

MAX_HEADER = 64 << 20
MAX_PAYLOAD = 16 << 30
MAX_DEPTH = 100
ALIGN = 64
NUMERIC_KINDS = "biufc"
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
_LEN = struct.Struct("<Q")


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


def bytes_of(a: np.ndarray[Any, Any]) -> memoryview:
    """An array's bytes, contiguous, as the memfd holds them."""
    flat: Any = np.ascontiguousarray(a).reshape(-1).view(np.uint8)  # numpy's stubs: no Buffer
    return memoryview(flat)


def seal_payload(arrays: list[np.ndarray[Any, Any]], keep: bool = False) -> tuple[int | None, list[int], int | None]:
    """All arrays of one message in one memfd: (fd to send, offsets, fd kept or None).

    Written with pwrite (no page faults in this process). A kept fd lets the
    checker see, after the call, whether the answer wrote into its inputs:
    the answer maps the same pages."""
    if not arrays:
        return None, [], None
    offsets: list[int] = []
    total = 0
    for a in arrays:
        offsets.append(total)
        total += -(-a.nbytes // ALIGN) * ALIGN
    fd = os.memfd_create("benchtui-wire", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, max(total, 1))
    for a, off in zip(arrays, offsets):
        view = bytes_of(a)
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

    def array(self, start: int, dtype: np.dtype[Any], count: int) -> np.ndarray[Any, Any]:
        if self.mm is not None:
            return np.frombuffer(self.mm, dtype=dtype, count=count, offset=start)
        out = np.empty(count, dtype=dtype)
        flat: Any = out.reshape(-1).view(np.uint8)
        view = memoryview(flat)
        done = 0
        if self.fd is None:
            raise WireError("the payload is closed")
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

    def __init__(self, fd: int, arrays: list[np.ndarray[Any, Any]], offsets: list[int]):
        self.fd: int | None = fd
        self.arrays, self.offsets = list(arrays), list(offsets)

    def slot(self, array: np.ndarray) -> int:
        """Where ``array`` (one of those sent, by identity) lies among them."""
        return next(i for i, a in enumerate(self.arrays) if a is array)

    def write(self, i: int, data: np.ndarray[Any, Any]) -> None:
        view = bytes_of(data)
        if len(view) != self.arrays[i].nbytes:
            raise ValueError(f"{len(view)} bytes into a slot of {self.arrays[i].nbytes}")
        fd = self._open()
        done = 0
        while done < len(view):
            done += os.pwrite(fd, view[done:done + (1 << 30)], self.offsets[i] + done)

    def write_many(self, writes: list[tuple[int, np.ndarray[Any, Any]]]) -> None:
        """``write`` each (slot, values) in turn: one call's inputs handed over."""
        for i, data in writes:
            self.write(i, data)

    def read(self, i: int) -> bytes:
        n, off, parts = self.arrays[i].nbytes, self.offsets[i], []
        fd = self._open()
        while n > 0:
            chunk = os.pread(fd, min(n, 1 << 30), off)
            if not chunk:
                raise WireError("shared pages shorter than sent")
            parts.append(chunk)
            n, off = n - len(chunk), off + len(chunk)
        return b"".join(parts)

    def _open(self) -> int:
        if self.fd is None:
            raise WireError("the shared pages were closed")
        return self.fd

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


class Connection:
    """One end of the socket: framed messages, each with at most one memfd."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._buf = bytearray()
        self._fds: list[int] = []
        self.sent = 0

    def send(self, header: dict[str, Any], arrays: Sequence[np.ndarray[Any, Any]] = (), keep: bool = False) -> int | None:
        """Send one message; with ``keep``, return a duplicate of its memfd (the caller closes it)."""
        fd, offsets, kept = seal_payload(list(arrays), keep)
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

    def recv(self, mapped: bool = False, limit: Limit | None = None) -> tuple[dict[str, Any], Payload | None]:
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


def socket_from_fd(fd: int) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=fd)
    sock.setblocking(True)
    return sock

