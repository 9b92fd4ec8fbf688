"""Entry point of the answer's own sandboxed process.

    python -m engine.runner.answer_server FD ANSWER_DIR [ADAPTER]

Imports answer modules (and the reviewer's adapter) when the checker asks,
and serves calls on them over the socket inherited as FD. It never sees the
checks, the reference, the seed or the results file: those live in the
checker's process. Everything here runs beside untrusted code, so nothing it
reports is trusted by the checker except what the checker can verify.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print("usage: python -m engine.runner.answer_server FD ANSWER_DIR [ADAPTER]", file=sys.stderr)
        return 2
    from benchtui.runner import reach
    from benchtui.verify import wire
    from benchtui.verify.binding import ADAPTER_MODULE, import_file

    fd, folder = int(argv[1]), Path(argv[2]).resolve()
    adapter = Path(argv[3]) if len(argv) == 4 and argv[3] else None
    os.chdir(folder)
    sys.path.insert(0, str(folder))

    def load(rel: object) -> ModuleType:
        path = (folder / str(rel)).resolve()
        if not path.is_relative_to(folder) or path.suffix != ".py":
            raise ImportError(f"{rel} is not a Python file of the answer")
        return import_file(folder, path)

    def load_adapter(_: object) -> ModuleType:
        if adapter is None:
            raise ImportError("no adapter was given for this run")
        spec = importlib.util.spec_from_file_location(ADAPTER_MODULE, adapter)
        if spec is None or spec.loader is None:
            raise ImportError(f"{adapter.name} cannot be loaded as a module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[ADAPTER_MODULE] = module
        spec.loader.exec_module(module)
        return module

    ops: dict[str, Callable[[Any], Any]] = {"import": load, "adapter": load_adapter, "keep": lambda v: v, "fetch": lambda v: v,
           "module_of": _module_of, "source": _source,
           "instances": _instances, "mlx_vjp": _mlx_vjp,
           "to_mlx": _to_mlx, "forget": lambda _: _forget(folder),
           "reach_start": lambda _: reach.start(folder, adapter), "reach_stop": lambda _: reach.stop(),
           "probe_start": lambda _: _probing(True), "probe_end": lambda _: _probing(False),
           "cuda_library": lambda spec: _cuda_library(folder, adapter, spec),
           "torch_module": lambda spec: _torch_module(folder, spec)}
    peer = wire.Peer(wire.Connection(wire.socket_from_fd(fd)), trusting=True, ops=ops)
    peer.finish = _evaluate_mlx
    peer.serve_forever()
    return 0


def _cuda_library(folder: Path, adapter: Path | None, spec: object) -> Any:
    """Build the reviewer's .cu adapter with the answer here, in the answer's
    sandbox, and serve its entry point (benchtui.verify.cuda.device)."""
    from benchtui.verify.cuda import device as cuda_device

    if not isinstance(spec, dict):
        raise TypeError("cuda_library takes a dict")
    return cuda_device.serve_library(folder, adapter, spec)


def _torch_module(folder: Path, spec: Any) -> Any:
    """Import (and build) the answer's PyTorch module here, in the answer's
    sandbox, and serve it (benchtui.verify.module.host)."""
    from benchtui.verify.module import host as module_host

    return module_host.serve_module(folder, spec)


# Called with True / False around a harness's probing of the answer (the
# suite's ``probing()``); the audit's line tracer listens (engine.audit.answer_lines).
PROBE_HOOKS: list[Callable[[bool], None]] = []


def _probing(on: bool) -> None:
    for hook in PROBE_HOOKS:
        hook(on)


def _evaluate_mlx(result: object) -> None:
    """MLX is lazy: a result kept by reference is evaluated before the reply,
    so a timed call includes its work."""
    mx = sys.modules.get("mlx.core")
    if mx is None:
        return
    stack: list[object] = [result]
    leaves: list[Any] = []
    while stack and len(leaves) < 10_000:
        item = stack.pop()
        if isinstance(item, mx.array):
            leaves.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    if leaves:
        mx.eval(*leaves)


# Introspection the checker asks for. It runs beside the answer, so what it
# returns only steers how the answer is called; it is never a verdict.
def _module_of(obj: object) -> ModuleType | None:
    return sys.modules.get(getattr(obj, "__module__", None) or "")


def _source(obj: Any) -> str:
    import inspect

    return inspect.getsource(obj)


def _instances(value: tuple[ModuleType, tuple[type, ...]]) -> list[tuple[str, object, str]]:
    """Module globals that are instances of the given classes: [(name, object, class name)]."""
    module, classes = value
    return [(k, v, type(v).__name__) for k, v in vars(module).items()
            if not k.startswith("__") and any(type(v) is c for c in classes)]


def _forget(folder: Path) -> None:
    """Drop modules imported from the answer folder, so another implementation's
    imports (``from dflash import ...``) load afresh."""
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        try:
            if file and Path(file).resolve().is_relative_to(folder):
                del sys.modules[name]
        except (OSError, ValueError):
            continue


def _to_mlx(x: Any) -> Any:
    import mlx.core as mx

    return mx.array(x)


def _mlx_vjp(value: tuple[Callable[..., Any], Any, Any, dict[str, Any]]) -> Any:
    """Gradient of the answer's MLX function at x for an upstream gradient (the
    straight-through check); computed here because autodiff needs the function."""
    import mlx.core as mx
    import numpy as np

    fn, x, upstream, kwargs = value

    def f(a: Any) -> Any:
        out = fn(a, **kwargs)
        return out[0] if isinstance(out, (tuple, list)) else out

    _, (grad,) = mx.vjp(f, [mx.array(np.asarray(x))], [mx.array(np.asarray(upstream))])
    return np.array(grad)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
