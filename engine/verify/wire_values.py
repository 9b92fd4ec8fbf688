"""Values on the wire: plain data by value, arrays as views of the message's
memfd, anything else as a handle (``$h``) the receiver holds as a
:class:`Proxy` whose calls and attribute reads travel back to the owner.
:class:`Codec` is what both halves of a peer (wire_client.py,
wire_server.py) share: the objects it exported, the proxies it holds, and
encoding and decoding by those rules.
"""
from __future__ import annotations

import contextlib
import itertools
import math
import socket
import types
import weakref
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from benchtui.verify.wire_frames import (
    MAX_DEPTH,
    NUMERIC_KINDS,
    Connection,
    Limit,
    NotPlain,
    Payload,
    PeerGone,
    TooLarge,
    WireError,
)

if TYPE_CHECKING:
    from benchtui.verify.wire_client import Client


# ----------------------------------------------------------------- values

class Proxy:
    """An object that lives in the other process."""

    __slots__ = ("_peer", "_id", "_kind", "_label", "__weakref__")
    _peer: Client
    _id: int
    _kind: str
    _label: str

    def __init__(self, peer: Client, oid: int, kind: str, label: str):
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_id", oid)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_label", label)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._peer.request({"op": "getattr", "t": self._id, "name": name})

    def __setattr__(self, name: str, value: Any) -> None:
        self._peer.request({"op": "setattr", "t": self._id, "name": name}, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._peer.request({"op": "call", "t": self._id}, [list(args), kwargs])

    def __getitem__(self, key: Any) -> Any:
        return self._peer.request({"op": "getitem", "t": self._id}, key)

    def __len__(self) -> int:
        return int(self._peer.request({"op": "len", "t": self._id}))

    def __iter__(self) -> Any:
        return self._peer.request({"op": "iter", "t": self._id})

    def __next__(self) -> Any:
        return self._peer.request({"op": "next", "t": self._id})

    def __bool__(self) -> bool:
        return bool(self._peer.request({"op": "bool", "t": self._id}))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        out = np.asarray(self._peer.request({"op": "array", "t": self._id}, by_value=True))
        return out.astype(dtype) if dtype is not None else out

    def __deepcopy__(self, memo: Any) -> Proxy:
        return self

    def __copy__(self) -> Proxy:
        return self

    def __reduce__(self) -> Any:
        raise TypeError("a proxy for an object in another process cannot be pickled")

    @property
    def __signature__(self) -> Any:
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

    def __del__(self) -> None:
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



class Codec:
    """The state both halves of a peer share, and the encoding of values by the wire's rules.

    ``trusting`` peers (the answer's side) let the other side do anything with
    their objects; the checker's peer is not trusting.
    """

    def __init__(self, conn: Connection, *, trusting: bool):
        self.conn = conn
        self.trusting = trusting
        self.objects: dict[int, Any] = {}
        self._proxies: weakref.WeakValueDictionary[int, Proxy] = weakref.WeakValueDictionary()
        self._ids = itertools.count(1)
        self.released: list[int] = []
        self.closed: str | None = None  # why the connection is done, once it is

    # -- the connection both halves read from
    def _recv(self, limit: Limit | None = None) -> tuple[dict[str, Any], Payload | None]:
        """The next message; a connection that broke, or was left mid-message, is marked closed."""
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

    def _serve(self, msg: dict[str, Any], mm: Payload | None) -> None:
        """Answer one request of the other side: the server half's (wire_server.py)."""
        raise NotImplementedError

    # -- encoding
    def _encode(self, value: Any, arrays: list[np.ndarray[Any, Any]], depth: int = 0) -> Any:
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

    def export(self, obj: Any) -> dict[str, Any]:
        oid = next(self._ids)
        self.objects[oid] = obj
        kind, label = _label(obj)
        return {"$h": oid, "k": kind, "l": label}

    def _decode(self, node: Any, mm: Payload | None, offsets: list[int], depth: int = 0) -> Any:
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
                proxy = Proxy(cast("Client", self), oid, str(node.get("k", "object")), str(node.get("l", "?"))[:200])
                self._proxies[oid] = proxy
            return proxy
        raise WireError(f"bad value node {str(node)[:80]}")

    def _decode_plain(self, node: Any, mm: Payload | None, offsets: list[int]) -> Any:
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

    def _decode_array(self, node: dict[str, Any], mm: Payload | None, offsets: list[int]) -> Any:
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



def _first_handle(node: Any, depth: int = 0) -> tuple[str, str] | None:
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



def _mlx_to_numpy(value: Any) -> np.ndarray[Any, Any] | None:
    mod = type(value).__module__ or ""
    if not mod.startswith("mlx"):
        return None
    try:
        out = np.asarray(value)
    except Exception:
        return None
    return out if out.dtype.kind in NUMERIC_KINDS else None


def _numpy_to_mlx(arr: np.ndarray[Any, Any]) -> Any:
    try:
        import mlx.core as mx
    except ImportError:
        return arr
    return mx.array(arr)
