"""The answer's side of a PyTorch module harness (engine/verify/module/suite.py).

Runs in the answer's sandboxed process only (``engine.runner.answer_server``,
op ``torch_module``): it imports the answer's file, which may build inline
CUDA (``torch.utils.cpp_extension.load_inline``) or Triton kernels, builds
its module, and serves calls on it. The checker holds a proxy to the
:class:`ModuleHost` and never imports the answer.

Everything here runs beside untrusted code, so what it reports (its own CUDA
event times, whether an input changed, the aten ops a call dispatched) is
labelled as coming from the answer's side. The checker verifies outputs
itself, against its own reference on its own copy of the inputs.

Inputs persist between calls: each call's fresh values are written into the
same storage (same tensor objects, same data pointers, same version
counters), so a module that memoises on identity, pointer or version returns
a stale result, which the checker sees. On the CPU that storage is the
checker's own pages (``share``): the checker writes each call's values and
reads them back after the call itself.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from benchtui.verify.module import tensors as T

# Bigger than any L2 the decks target (Blackwell's 96 MB), as the decks' own timers flush.
L2_FLUSH_BYTES = 128 << 20


class BuildTimeout(TimeoutError):
    """Importing (and building) the answer ran past its own build limit."""


def build_cache(spec: dict) -> Path:
    """The answer's build and Triton caches: the folder the runner keeps for this
    answer between its GPU runs (``$BENCHTUI_BUILD_CACHE``, engine/runner/bundle.py),
    else in its private scratch; either way keyed by the answer's hash."""
    kept = os.environ.get("BENCHTUI_BUILD_CACHE")
    if kept:
        folder = Path(kept)
    else:
        root = Path(spec.get("cache_dir") or os.environ.get("TMPDIR") or "/tmp")
        folder = root / "benchtui-build" / str(spec.get("answer_hash") or "unhashed")[:16]
    for sub in ("torch_extensions", "triton", "inductor"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return folder


def serve_module(folder: Path, spec: dict) -> ModuleHost:
    """Import the answer's file (building what it builds at import) within the
    build limit and return its host. Raises what the import raised."""
    from benchtui.verify.binding import import_file

    if not isinstance(spec, dict):
        raise TypeError("torch_module takes a dict")
    rel = str(spec.get("file", "solution.py"))
    path = (folder / rel).resolve()
    if not path.is_relative_to(folder) or path.suffix != ".py" or not path.is_file():
        raise ImportError(f"{rel} is not a Python file of the answer")
    cache = build_cache(spec)
    os.environ["TORCH_EXTENSIONS_DIR"] = str(cache / "torch_extensions")
    os.environ["TRITON_CACHE_DIR"] = str(cache / "triton")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache / "inductor")
    os.environ.setdefault("MAX_JOBS", str(max(1, min(8, os.cpu_count() or 1))))
    limit = float(spec.get("build_timeout_s") or 600.0)
    start = time.perf_counter()
    with _limit(limit, f"importing {rel}"):
        module = import_file(folder, path)
    import_s = time.perf_counter() - start
    name = str(spec.get("cls", "Model"))
    cls = getattr(module, name, None)
    if cls is None:
        raise AttributeError(f"{rel} defines no {name}")
    return ModuleHost(cls, str(spec.get("device", "cpu")), limit, import_s, cache)


def _limit(seconds: float, what: str):
    from benchtui.verify.check import alarm

    return alarm(seconds, lambda: BuildTimeout(f"{what} ran past the build limit of {seconds:g} s"))


class ModuleHost:
    """The answer's module and its persistent inputs, served to the checker."""

    def __init__(self, cls, device: str, build_limit_s: float, import_s: float, cache: Path):
        import torch

        self._torch = torch
        self._cls = cls
        self._device = torch.device(device)
        self._build_limit_s = build_limit_s
        self.import_s = import_s
        self.cache = str(cache)
        self._model = None
        self._inputs: list = []
        self._slots: dict = {}  # slot -> (the pages' tensors, the tensors the module is called on)
        self._clones: list = []
        self._out = None
        self._backups: list = []
        self._scratch = None
        warm_profiler(torch, self._device.type == "cuda")

    # -- building ------------------------------------------------------------------
    def build(self, init_inputs, seed=None, state=None, dtype=None) -> dict:
        """Construct the answer's module: seeded construction (``seed``) and/or
        the checker's weights loaded with ``load_state_dict(strict=True)``."""
        torch = self._torch
        init = T.decode_tree(init_inputs, "cpu")
        start = time.perf_counter()
        with _limit(self._build_limit_s, "building the module"), torch.no_grad():
            if seed is not None:
                torch.manual_seed(int(seed))
                if self._device.type == "cuda":
                    torch.cuda.manual_seed(int(seed))
            model = self._cls(*init)
            model = model.to(self._device)
            if dtype:
                model = model.to(T.torch_dtype(str(dtype)))
            if state is not None:
                model.load_state_dict(T.decode_tree(state, self._device), strict=True)
            model.eval()
            self._sync()
        self._model = model
        self._inputs, self._clones, self._out, self._slots = [], [], None, {}
        return {"build_s": round(time.perf_counter() - start, 4), "import_s": round(self.import_s, 4),
                "class": f"{type(model).__module__}.{type(model).__qualname__}"}

    # -- staging -------------------------------------------------------------------
    def share(self, inputs, slot: int = 0) -> dict:
        """Take a call's inputs as slot ``slot``'s storage. On the CPU they stay
        views of the wire's pages, which the checker keeps: it writes later
        calls' values into them (same objects, pointers and version counters)
        and reads them back after each call. On a GPU they are copied to the
        device, and the pages are where each call's values are copied from."""
        torch = self._torch
        pages = list(T.decode_tree(inputs, "cpu", share=True))
        if self._device.type == "cpu":
            tensors = pages
        else:
            tensors = [t.to(self._device) if isinstance(t, torch.Tensor) else t for t in pages]
        self._slots[int(slot)] = (pages, tensors)
        return self.stage(slot, False)

    def stage(self, slot: int = 0, flush: bool = True, keep_copy: bool = True) -> dict:
        """Make slot ``slot``'s inputs the ones the next call reads: on a GPU,
        this call's values copied from the pages into the same device storage;
        a copy kept to report whether the call changed them (``keep_copy``); L2
        flushed (``flush``)."""
        torch = self._torch
        pages, tensors = self._slots[int(slot)]
        if self._device.type != "cpu":
            for page, tensor in zip(pages, tensors):
                if isinstance(tensor, torch.Tensor):
                    tensor.data.copy_(page)  # .data: the version counter stays as it was
        self._inputs = tensors
        self._clones = [t.detach().clone() if isinstance(t, torch.Tensor) else None for t in tensors] if keep_copy else []
        self._out = None
        if flush:
            self._flush_l2()
        self._sync()
        return {"pointers": [t.data_ptr() if isinstance(t, torch.Tensor) else None for t in tensors],
                "versions": [t._version if isinstance(t, torch.Tensor) else None for t in tensors]}

    # -- calling -------------------------------------------------------------------
    def run(self) -> float:
        """One forward on the staged inputs, synchronised; the output is kept here.
        Returns the answer's side's own time in ms (CUDA events on a GPU)."""
        torch = self._torch
        if self._model is None:
            raise RuntimeError("the module was not built")
        if self._device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            with torch.no_grad():
                out = self._model(*self._inputs)
            end.record()
            torch.cuda.synchronize()
            self._out = out
            return float(start.elapsed_time(end))
        began = time.perf_counter()
        with torch.no_grad():
            out = self._model(*self._inputs)
        self._out = out
        return (time.perf_counter() - began) * 1e3

    def cycle(self, slot: int = 0, trace: bool = False, compare: bool = True) -> dict:
        """One whole cycle in one round trip, on slot ``slot``'s inputs (their
        values already written by the checker): staged, L2 flushed, the call,
        the output, and what this process says of its inputs. The checker's
        clock brackets all of it, so work moved into staging or into the
        output's fetch is timed too. With ``trace`` (the checker's untimed
        calls, and untimed calls it slips between its timed windows), the
        staging and the call run under :class:`OpTrace`: the reply adds the aten
        ops they dispatched and, on a GPU, the kernels they launched. Without
        ``compare`` (the checker's timed calls, and the empty window's) no copy of
        the inputs is kept to compare and no L2 is flushed here: what a host may
        skip is not done by the one the empty window runs either, so nothing of
        it is subtracted; the checker flushes L2 itself between timed calls and,
        on the CPU, reads the pages back after every call."""
        if not trace:
            staged = self.stage(slot, flush=compare, keep_copy=compare)
            ms = self.run()
            return {"staged": staged, "ms": ms, "out": self.output(), "changed": self.inputs_changed() if compare else []}
        with OpTrace(self._torch, self._device.type == "cuda") as seen:
            staged = self.stage(slot, True)
            ms = self.run()
        return {"staged": staged, "ms": ms, "out": self.output(), "changed": self.inputs_changed(),
                "ops": sorted(seen.ops), "kernels": sorted(seen.kernels)}

    def output(self) -> dict:
        """The last output: each tensor's facts (its exact type, dtype, device)
        and its bytes."""
        torch = self._torch
        leaves = _leaves(self._out)
        facts = []
        for leaf in leaves:
            if isinstance(leaf, torch.Tensor):
                plain = T.plain_tensor(leaf)
                facts.append({"type": f"{type(leaf).__module__}.{type(leaf).__qualname__}",
                              "exact_tensor": type(leaf) is torch.Tensor, "dtype": T.dtype_name(plain.dtype),
                              "device": plain.device.type, "shape": list(plain.shape)})
            else:
                facts.append({"type": f"{type(leaf).__module__}.{type(leaf).__qualname__}", "exact_tensor": False})
        values = [T.encode(leaf) if isinstance(leaf, torch.Tensor) else None for leaf in leaves]
        return {"container": type(self._out).__name__, "facts": facts, "values": values}

    def inputs_changed(self) -> list[int]:
        """Indices of the tensor inputs whose bytes the last call changed."""
        torch = self._torch
        changed = []
        for i, (now, was) in enumerate(zip(self._inputs, self._clones)):
            if was is None or not isinstance(now, torch.Tensor):
                continue
            a, b = T.plain_tensor(now).detach().reshape(-1), was.reshape(-1)
            if a.shape != b.shape or not torch.equal(a.view(torch.uint8), b.view(torch.uint8)):
                changed.append(i)
        return changed

    # -- the decks' numeric stress -------------------------------------------------
    def scale_state(self, scales: dict) -> None:
        """Scale named parameters or buffers (a stress case); ``restore_state`` undoes it."""
        torch = self._torch
        state = dict(self._model.named_parameters())
        state.update(dict(self._model.named_buffers()))
        with torch.no_grad():
            for name, scale in scales.items():
                if name not in state:
                    raise KeyError(f"state scale target {name!r} not found in the answer's module")
                tensor = state[name]
                self._backups.append((tensor, tensor.detach().clone()))
                tensor.copy_((tensor.float() * float(scale)).to(dtype=tensor.dtype))

    def restore_state(self) -> None:
        with self._torch.no_grad():
            for tensor, original in reversed(self._backups):
                tensor.copy_(original)
        self._backups.clear()

    # -- the deck's own timing, as published -----------------------------------------
    def published_times(self, warmup: int, iters: int, flush: bool = True) -> list[float]:
        """The deck's timing loop on the staged inputs, unchanged between calls:
        warm-ups, then per call an L2 flush and CUDA events (a perf counter on
        the CPU). Milliseconds per call; the checker takes the deck's statistic."""
        torch = self._torch
        with torch.no_grad():
            for _ in range(int(warmup)):
                self._model(*self._inputs)
        self._sync()
        times = []
        for _ in range(int(iters)):
            if flush:
                self._flush_l2()
            self._sync()
            if self._device.type == "cuda":
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                with torch.no_grad():
                    self._model(*self._inputs)
                e.record()
                torch.cuda.synchronize()
                times.append(float(s.elapsed_time(e)))
            else:
                began = time.perf_counter()
                with torch.no_grad():
                    self._model(*self._inputs)
                times.append((time.perf_counter() - began) * 1e3)
        return times

    def device_name(self) -> str:
        if self._device.type == "cuda":
            return self._torch.cuda.get_device_name(self._device)
        return "cpu"

    # -- helpers ---------------------------------------------------------------------
    def _sync(self) -> None:
        if self._device.type == "cuda":
            self._torch.cuda.synchronize()

    def _flush_l2(self) -> None:
        if self._device.type != "cuda":
            return
        if self._scratch is None:
            self._scratch = self._torch.empty(L2_FLUSH_BYTES // 4, dtype=self._torch.float32, device=self._device)
        self._scratch.zero_()


class OpTrace:
    """The aten ops a block dispatched, recorded twice: by a torch dispatch mode
    (below the torch-function layer: ``DisableTorchFunction``, TorchScript and
    ``torch.ops.aten`` calls land here too), which sees this thread only and not
    the ops inside a ``torch.library.custom_op``'s Python body; and by torch's
    profiler set to record every thread of the process (its RecordFunction
    callbacks run in the dispatcher, so an op a worker thread or a custom op's
    body dispatches is seen, composite ones such as ``aten::linear`` too), with
    on a GPU the kernels the block launched. What runs below the dispatcher (an
    extension's ``at::cpu::mm``, NumPy's BLAS) neither sees: the sources are
    read for it (engine/verify/module/rules.py). It runs in the answer's
    process, which can detect it or switch it off: what it reports is the
    answer's word."""

    def __init__(self, torch, kernels: bool):
        from torch.utils._python_dispatch import TorchDispatchMode

        self.ops: set[str] = set()
        self.kernels: set[str] = set()
        ops = self.ops

        class Record(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls) -> bool:
                # torch wraps a mode's handler to keep its compiler out of it, importing the
                # compiler (torch._dynamo: a minute on a loaded machine) on the first dispatch;
                # where the answer has not loaded it, nothing can compile inside the handler
                return sys.modules.get("torch._dynamo") is not None

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                ops.add(str(getattr(getattr(func, "_schema", None), "name", None) or func))
                return func(*args, **(kwargs or {}))

        self._torch = torch
        self._cuda = kernels
        self._mode = Record()
        self._profiler: Any = every_thread_profiler(torch, kernels)

    def __enter__(self) -> OpTrace:
        self._profiler.__enter__()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)
        if self._cuda:
            self._torch.cuda.synchronize()
        self._profiler.__exit__(*exc)
        cuda = self._torch.autograd.DeviceType.CUDA
        for event in self._profiler.function_events or ():
            if event.device_type == cuda:
                self.kernels.add(event.name)
            else:  # the op that launched them (the profiler's own record of the dispatcher's ops)
                self.kernels.update(k.name for k in getattr(event, "kernels", ()) or ())
                if event.name.startswith("aten::"):
                    self.ops.add(event.name)


def every_thread_profiler(torch, cuda: bool) -> Any:
    """torch's profiler recording the ops of every thread of this process (and on a GPU its
    kernels); on a torch without that option, this thread's. The autograd profiler itself,
    not ``torch.profiler.profile``: that wrapper's first start imports ``torch._inductor``
    (hundreds of modules: tens of seconds on a loaded machine) to read one setting of its
    own, which this trace does not use; the recording underneath is the same."""
    from torch.autograd import profiler

    device = "cuda" if cuda else None
    try:
        config = torch._C._profiler._ExperimentalConfig(profile_all_threads=True)
        return profiler.profile(use_cpu=True, use_device=device, use_kineto=True, experimental_config=config)
    except (AttributeError, TypeError):
        return profiler.profile(use_cpu=True, use_device=device, use_kineto=True)


def warm_profiler(torch, cuda: bool) -> None:
    """Start and stop the profiler once, so its one-time start-up is paid while the
    module is built, not in the first traced call."""
    with every_thread_profiler(torch, cuda):
        pass


def _leaves(out: Any, depth: int = 0) -> list:
    """The tensors of a forward's result: a tuple or list (a named one too, as torch.topk
    returns; the decks accept any) read by the base type's own slicing, whatever its class says."""
    if depth < 4 and isinstance(out, (list, tuple)):
        items = list.__getitem__(out, slice(None)) if isinstance(out, list) else tuple.__getitem__(out, slice(None))
        return [leaf for item in items for leaf in _leaves(item, depth + 1)]
    return [out]


def answer_hash(folder: Path) -> str:
    """sha256 over the answer's files (names and bytes; a .cu source a module loads counts):
    the build cache's key."""
    h = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()
