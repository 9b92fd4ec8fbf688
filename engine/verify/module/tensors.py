"""torch tensors on the wire between the checker and the answer's process.

The wire (engine/verify/wire.py) carries NumPy arrays only, and NumPy has no
bfloat16 or float8. A tensor crosses as plain data: its raw bytes as a uint8
array, its torch dtype's name and its shape; the receiver rebuilds it with
``view``. float16, bfloat16, float8 (e4m3fn, e5m2), bool and integer tensors
cross bit for bit, in one sealed memfd per message, so arrays of a few hundred
MB cost one copy each way. Nothing is pickled; a dtype name outside
``DTYPES`` is refused on arrival.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

TAG = "benchtui_tensor"
# Every dtype a deck's tensors use; anything else is refused (no object dtypes, no pickles).
DTYPES = ("float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
          "float8_e5m2fnuz", "int64", "int32", "int16", "int8", "uint8", "bool", "complex64")


def torch_dtype(name: str):
    import torch

    if name not in DTYPES or not isinstance(getattr(torch, name, None), torch.dtype):
        raise ValueError(f"refused tensor dtype {name!r}")
    return getattr(torch, name)


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def encode(t) -> dict:
    """A tensor as plain data: {TAG: dtype, "shape": [...], "data": uint8 array}."""
    import torch

    if not isinstance(t, torch.Tensor):
        raise TypeError(f"not a tensor: {type(t).__name__}")
    plain = plain_tensor(t).detach()
    name = dtype_name(plain.dtype)
    torch_dtype(name)
    flat = plain.to("cpu").contiguous().reshape(-1)
    data = flat.view(torch.uint8).numpy() if flat.numel() else np.zeros(0, dtype=np.uint8)
    return {TAG: name, "shape": list(plain.shape), "data": data}


def is_encoded(x: Any) -> bool:
    return isinstance(x, dict) and TAG in x


def announced(d: Any) -> tuple[str, list[int]]:
    """An encoded tensor's dtype name and shape, read from its plain fields
    without touching its bytes (the sizes a reply is checked on before
    anything of it is decoded)."""
    if not is_encoded(d):
        raise ValueError(f"not an encoded tensor: {type(d).__name__}")
    name, shape = d[TAG], d.get("shape")
    if not isinstance(name, str) or name not in DTYPES:
        raise ValueError(f"refused tensor dtype {str(name)[:40]!r}")
    if type(shape) is not list or len(shape) > 16 or not all(type(s) is int and s >= 0 for s in shape):
        raise ValueError(f"bad tensor shape {str(shape)[:80]}")
    return name, shape


def decode(d: dict, device: Any = "cpu", share: bool = False):
    """The tensor back, on ``device``: a private copy, never a view of the
    wire's pages, unless ``share`` asks for a CPU tensor that is a view of
    them (the answer's side: its inputs are then pages the checker reads)."""
    import torch

    if not is_encoded(d):
        raise ValueError("not an encoded tensor")
    dtype = torch_dtype(str(d[TAG]))
    shape = [int(s) for s in d["shape"]]
    if any(s < 0 for s in shape):
        raise ValueError(f"bad tensor shape {shape}")
    data = np.asarray(d["data"])
    itemsize = torch.empty(0, dtype=dtype).element_size()
    if data.dtype != np.uint8 or data.size != math.prod(shape) * itemsize:
        raise ValueError(f"tensor of {data.size} bytes for {dtype_name(dtype)}{shape}")
    if data.size == 0:
        return torch.empty(shape, dtype=dtype, device=device)
    if share and torch.device(device).type == "cpu" and data.flags.writeable:
        return torch.from_numpy(data).view(dtype).reshape(shape)
    # a tensor kept on the CPU gets its own copy; one bound for a GPU is copied there anyway
    private = torch.device(device).type == "cpu" or not data.flags.writeable
    raw = torch.from_numpy(np.array(data, copy=True) if private else data)
    return raw.view(dtype).reshape(shape).to(device)


def encode_tree(x: Any, depth: int = 0) -> Any:
    """Tensors inside lists, tuples and dicts encoded; other plain values as they are."""
    import torch

    if depth > 20:
        raise ValueError("value nested too deeply")
    if isinstance(x, torch.Tensor):
        return encode(x)
    if type(x) in (list, tuple):
        return type(x)(encode_tree(v, depth + 1) for v in x)
    if type(x) is dict:
        return {k: encode_tree(v, depth + 1) for k, v in x.items()}
    return x


def decode_tree(x: Any, device: Any = "cpu", depth: int = 0, share: bool = False) -> Any:
    if depth > 20:
        raise ValueError("value nested too deeply")
    if is_encoded(x):
        return decode(x, device, share)
    if type(x) in (list, tuple):
        return type(x)(decode_tree(v, device, depth + 1, share) for v in x)
    if type(x) is dict:
        return {k: decode_tree(v, device, depth + 1, share) for k, v in x.items()}
    return x


def plain_tensor(t):
    """``t`` as a plain torch.Tensor sharing its storage, bypassing a subclass's
    ``__torch_function__`` (what the answer's subclass would make of it is not read)."""
    import torch

    if type(t) is torch.Tensor:
        return t
    with torch._C.DisableTorchFunctionSubclass():
        return torch.Tensor.as_subclass(t, torch.Tensor)
