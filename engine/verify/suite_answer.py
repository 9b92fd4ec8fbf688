"""The suite's second job: reaching the answer, which lives in a process of its
own. Binding finds the answer's objects (proxies: this process never imports
answer code); calling them watches the inputs for writes; ``probing`` and
``contract_only`` tell an audit what a call's values are for; the GPU lock and
a CUDA answer's library are taken and built on the answer's side."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any

from benchtui.verify import gpu_lock
from benchtui.verify.binding import Binder, Unbound, load_module
from benchtui.verify.check import InputMutated
from benchtui.verify.suite_checks import CheckLog
from benchtui.verify.wire import is_proxy


class AnswerReach(CheckLog):
    """Binding and calling the answer for a ``Suite``."""

    binder: Binder
    gpu_lock_fd: int | None
    _adapter: Any = None
    _reference: ModuleType | None = None

    def _import(self, relpath: str) -> Any:
        if self.peer is None:
            raise RuntimeError("no answer process: the checker never imports answer code itself")
        return self.peer.call_op("import", relpath)

    # -- binding --------------------------------------------------------------
    def bind(self, *names: str, kind: str | None = None, methods: Iterable[str] = ()) -> Any:
        """The answer's object for the first of ``names`` found (exact, then loose)."""
        return self.binder.bind(names, kind=kind, methods=methods)

    def find(self, *names: str, kind: str | None = None, methods: Iterable[str] = ()) -> Any:
        """Like ``bind`` but returns None when absent."""
        d = self.binder.find(names, kind=kind, methods=methods)
        return self.binder.load(d) if d else None

    def adapter(self) -> Any:
        """The reviewer's adapter module for this model, imported, or None."""
        if self.adapter_path is None:
            return None
        if self._adapter is None:
            if self.adapter_path.suffix != ".py":
                return None  # a .cu adapter is compiled, not imported (fuse)
            if self.peer is None:
                raise RuntimeError("no answer process: the checker never imports adapters itself")
            self._adapter = self.peer.call_op("adapter")
        return self._adapter

    def unbound(self, looked_for: list[str], detail: str = "") -> Unbound:
        """The exception to raise when the answer has none of what a suite looked for."""
        return Unbound(looked_for, self.binder.searched(), detail)

    def reference(self) -> ModuleType:
        """The challenge's trusted ``reference.py``, imported under a private name
        (an answer may ship its own ``reference.py``)."""
        if self._reference is None:
            self._reference = load_module(self.challenge_dir / "reference.py", f"benchtui_reference_{self.challenge_id}")
        return self._reference

    def answer_side(self, op: str, value: Any = None) -> Any:
        """Introspection run in the answer's process (``module_of``, ``source``,
        ``instances``, ``mlx_vjp``): it steers binding; anything it measures
        is labelled as coming from the answer's side."""
        if self.peer is None:
            raise RuntimeError("no answer process")
        return self.peer.call_op(op, value)

    # -- calling --------------------------------------------------------------
    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call the answer; fail if it changed an input array in place.

        Arrays reach the answer's process in shared memory that this process
        still maps, so a write into an input is seen here, whatever the
        answer's process claims. ``fn`` may be a proxy or a local wrapper
        that calls proxies."""
        peer = self.peer
        if peer is None:
            raise RuntimeError("no answer process")
        was, peer.watch = peer.watch, True
        before = len(peer.mutated_log)
        try:
            result = fn(*args, **kwargs)
        finally:
            peer.watch = was
        changed = peer.mutated_log[before:]
        del peer.mutated_log[before:]
        if changed:
            raise InputMutated(f"the answer modified its input in place ({changed[0]})")
        return result

    def fetch(self, value: Any) -> Any:
        """The value behind a proxy returned by reference, copied here."""
        if is_proxy(value):
            if self.peer is None:
                raise RuntimeError("no answer process")
            return self.peer.request({"op": "fetch"}, value, by_value=True)
        return value

    # -- what an audit compares -------------------------------------------------
    @contextlib.contextmanager
    def probing(self) -> Iterator[None]:
        """Around a harness's look at the answer that only shapes what the suite
        injects (beam search probes the answer's model class, then replaces the
        model with its own): an audit neither mutates the lines this reaches
        nor compares the values it returns."""
        peer = self.peer
        if peer is None:
            yield
            return
        peer.call_op("probe_start")
        peer.probing = True
        try:
            yield
        finally:
            peer.probing = False
            with contextlib.suppress(Exception):
                peer.call_op("probe_end")

    @contextlib.contextmanager
    def contract_only(self) -> Iterator[None]:
        """Around a check's calls of a component the answer wrote for itself
        (beam search's own language model, dflash's own target) that the check
        judges only by the contract its prompt states, the internals being the
        answer's choice: an audit mutates the lines these calls reach, so a
        mutant that breaks the contract is killed by the check, but leaves the
        values they return out of its comparison, so one that keeps the
        contract counts as equivalent."""
        peer = self.peer
        if peer is None:
            yield
            return
        was, peer.probing = peer.probing, True
        try:
            yield
        finally:
            peer.probing = was

    # -- the GPU (the CUDA steps of engine/verify/cuda/suite.py call these) -------
    def hold_gpu(self) -> None:
        """Take this run's GPU lock (engine/verify/gpu_lock.py) and keep it for
        the rest of the run: one GPU job at a time per device. A no-op
        without one (a CPU run, a local run)."""
        if self.gpu_lock_fd is not None:
            gpu_lock.hold(self.gpu_lock_fd)

    def cuda_library(self, symbol: str, params: list[str], timeout_s: float = 300.0) -> Any:
        """The .cu adapter built with the answer by nvcc inside the answer's
        sandbox and loaded there: (build facts, a proxy for its
        ``cuda_device.KernelHost`` or None, why it could not be loaded). This
        process never loads the answer's library. ``params`` names the entry
        point's arguments (``cuda_device.PARAM_KINDS``: "in" and "out" buffers
        of any ``cuda_device.DTYPES`` type, "int", "int64" and "float"
        scalars); timed cycles take seeded inputs of those types, made on both
        sides bit for bit (``cuda_device.seeded_values``), and several
        launches per timed window (``KernelHost.timing_setup``)."""
        if self.peer is None:
            raise RuntimeError("no answer process: the checker never loads answer code itself")
        self.hold_gpu()  # from before the answer's library loads until the run ends
        return self.peer.call_op("cuda_library", {"symbol": symbol, "params": list(params), "timeout_s": timeout_s})
