"""The answer's host and the inputs it is called on (a piece of ModuleRun).

The answer's module is built and served in the answer's sandboxed process
(engine/verify/module/host.py); this side holds a proxy to that host, calls it
only by value (a handle in a reply is refused), and writes each call's inputs
into pages both processes map: in place where the slot's layout is unchanged,
so a module that memoises on identity, pointer or version returns a stale
result, and read back after the call, whatever the answer's process says.
"""
from __future__ import annotations

from typing import Any

from benchtui.records.verdicts import COMPILE_ERROR, ERROR, TIMEOUT
from benchtui.verify import wire
from benchtui.verify.module.spec import INTERFACE
from benchtui.verify.module.state import RunState, cast, encode
from benchtui.verify.suite import SkipCheck, describe_exception, missing_package


class Staging(RunState):
    # -- the answer's host ------------------------------------------------------------
    def build_host(self) -> Any:
        """The answer's host (a proxy), its file imported in the answer's process, or None
        where the build check failed (recorded)."""
        suite, spec = self.suite, self.spec
        from benchtui.verify.module.host import answer_hash

        limit = float(suite.threshold("build_timeout_s", 600.0))
        spec_wire = {"file": spec.answer_file, "cls": spec.answer_class, "device": self.answer_device,
                     "build_timeout_s": limit, "answer_hash": answer_hash(suite.answer_dir)}
        with suite.check("build", timeout_s=limit + 60, requires=spec.requires(INTERFACE)) as c:
            try:
                host = suite.peer.call_op("torch_module", spec_wire)
            except Exception as exc:
                reason = self._why_this_machine_cannot_run_it(exc)
                if reason:
                    raise SkipCheck(reason) from None
                if getattr(exc, "remote_type", type(exc).__name__) in ("BuildTimeout", "TimeoutError"):
                    c.verdict, c.message = TIMEOUT, describe_exception(exc)
                    return None
                if getattr(exc, "remote_type", "") == "SystemExit":
                    suite.info("deck_rule", value="exit status", message=(
                        "the deck's check.py would end at `import solution` with the answer's exit status "
                        f"({str(exc) or 'None'}): SystemExit is not an Exception there, so a harness reading the exit "
                        "status or a printed PASS would count it"))
                    c.verdict, c.message = ERROR, f"{describe_exception(exc)} (the answer exits while being imported)"
                    return None
                if "Error building extension" in str(exc) or "CalledProcessError" in str(exc):
                    c.verdict, c.message = COMPILE_ERROR, describe_exception(exc)
                    return None
                raise
            c.value = round(float(host.import_s), 3)
            c.message = f"imported {spec.answer_file} in the answer's process ({c.value:g} s, build cache {host.cache})"
            return host
        return None

    def _why_this_machine_cannot_run_it(self, exc: BaseException) -> str | None:
        """Why an answer cannot run on this machine (not its fault), or None."""
        text = str(exc)
        package = missing_package(exc) if "ModuleNotFoundError" in (getattr(exc, "remote_type", "") or type(exc).__name__) \
            or isinstance(exc, ModuleNotFoundError) else None
        if package == "triton":
            return "the answer uses Triton, which is not installed here (Triton kernels need a GPU)"
        if self.answer_device == "cpu" and any(s in text for s in ("not compiled with CUDA", "no NVIDIA driver",
                                                                     "CUDA_HOME", "Found no NVIDIA", "CUDA driver")):
            return f"the answer needs an NVIDIA GPU, and this run is on the CPU ({text.splitlines()[0][:160]})"
        return None

    def _host(self, name: str, *args: Any, limit: wire.Limit | None = None, keep: list[Any] | None = None,
              **kwargs: Any) -> Any:
        """A call of the answer's host whose reply is read by value (a handle in
        it is refused), within ``limit``."""
        methods = self.__dict__.setdefault("_methods", {})
        if name not in methods:
            methods[name] = getattr(self.host, name)
        ledger = self.__dict__.get("_ledger")  # a shape's timing: the answer's CPU time read around it
        if ledger is None:
            return wire.call_plain(methods[name], *args, limit=limit, keep=keep, **kwargs)
        with ledger.request():
            return wire.call_plain(methods[name], *args, limit=limit, keep=keep, **kwargs)

    # -- inputs -----------------------------------------------------------------------
    def inputs(self, ref: Any, seed: int, deck: bool = False) -> list[Any]:
        """``get_inputs()`` under a seed: on the CPU for the deck's seeds (its
        exact inputs, seeded as the deck seeds them), on this side's GPU for
        benchtui's own (fresh values, made fast at the decks' sizes), whose
        128-bit secrets seed torch's generators with every bit (module_seeds)."""
        from benchtui.verify.module.seeds import seed_torch

        torch = self.torch
        if deck:
            torch.manual_seed(int(seed) % (2**63))
            return [cast(x, self.dtype) for x in ref.get_inputs()]
        seed_torch(int(seed), cuda=self.device.type == "cuda")
        if self.device.type == "cpu":
            return [cast(x, self.dtype) for x in ref.get_inputs()]
        with self.device:
            return [cast(x, self.dtype) for x in ref.get_inputs()]

    def expect(self, inputs: list[Any]) -> Any:
        """The reference's outputs for ``inputs``, computed on this side."""
        torch = self.torch
        with torch.no_grad():
            return self.ref_model(*[x.to(self.device) if isinstance(x, torch.Tensor) else x for x in inputs])

    def _secret(self, *label: object) -> int:
        """A 128-bit secret for one purpose, from the run's seed (engine/verify/seeds.py)."""
        from benchtui.verify import seeds

        return seeds.derive(int(self.suite.seed), "module:" + ":".join(str(x) for x in label))

    # -- the pages both processes map -----------------------------------------------------
    def put(self, inputs: list[Any], in_place: bool, slot: int = 0) -> dict[str, Any]:
        """A call's inputs into the answer's slot ``slot``. In place: this side
        writes the values into the pages the slot already reads (same objects,
        pointers and versions there), when their layout is the same; else
        they go as new pages, which this side keeps. Returns the slot's record
        (the pages, where each tensor lies in them, the bytes written, and
        ``reused``: whether this side wrote into the pages the last call read)."""
        from benchtui.verify.module import tensors as T

        enc = encode(list(inputs))
        layout = [(x[T.TAG], x["shape"]) if T.is_encoded(x) else ("value", repr(x)) for x in enc]
        held: dict[str, Any] | None = getattr(self, "_slots", {}).get(slot)
        if in_place and held is not None and held["layout"] == layout:
            for i, x in enumerate(enc):
                if T.is_encoded(x):
                    held["pages"].write(held["index"][i], x["data"])
            held.update(data={i: x["data"] for i, x in enumerate(enc) if T.is_encoded(x)}, reused=True)
            return held
        return self._share(enc, slot, layout)

    def reserve(self, inputs: list[Any], slot: int) -> dict[str, Any]:
        """A timed call's slot made ready for ``inputs`` without handing any of their
        values to the answer's process: its pages (those the slot's last call read,
        or new ones of the same layout holding zeros) and, under ``writes``, what
        ``hand_over`` writes into them once the window's clock runs. A thread of the
        answer's process watching the pages finds nothing of the call before its
        clock starts, so cannot have its output ready when the call comes."""
        import numpy as np
        from benchtui.verify.module import tensors as T

        enc = encode(list(inputs))
        layout = [(x[T.TAG], x["shape"]) if T.is_encoded(x) else ("value", repr(x)) for x in enc]
        held: dict[str, Any] | None = getattr(self, "_slots", {}).get(slot)
        reused = held is not None and held["layout"] == layout
        if held is None or not reused:
            blank = [{**x, "data": np.zeros_like(x["data"])} if T.is_encoded(x) else x for x in enc]
            held = self._share(blank, slot, layout)
        data = {i: x["data"] for i, x in enumerate(enc) if T.is_encoded(x)}
        held.update(reused=reused, pending=data, writes=[(held["index"][i], d) for i, d in data.items()])
        return held

    @staticmethod
    def hand_over(record: dict[str, Any]) -> None:
        """Write a reserved call's values into its pages (inside the timed window)."""
        record["pages"].write_many(record["writes"])
        record["data"] = record.pop("pending")

    def _share(self, enc: list[Any], slot: int, layout: list[Any]) -> dict[str, Any]:
        """``enc`` sent to the answer's host as slot ``slot``'s new pages, which this side keeps."""
        from benchtui.verify.module import tensors as T

        keep: list[Any] = []
        staged = self._host("share", enc, slot, keep=keep)
        pages: Any = keep[0] if keep else None
        record = {"pages": pages, "layout": layout, "reused": False, "staged": staged,
                  "index": {i: pages.slot(x["data"]) for i, x in enumerate(enc) if T.is_encoded(x)},
                  "data": {i: x["data"] for i, x in enumerate(enc) if T.is_encoded(x)}}
        slots = self.__dict__.setdefault("_slots", {})
        held = slots.get(slot)
        if held is not None and held["pages"] is not None:
            held["pages"].close()
        slots[slot] = record
        return record

    def drop_pages(self) -> None:
        for record in self.__dict__.pop("_slots", {}).values():
            if record["pages"] is not None:
                record["pages"].close()

    @staticmethod
    def changed_pages(record: dict[str, Any]) -> list[int]:
        """The inputs whose pages no longer hold the bytes this side wrote, read
        by this side after the call."""
        pages = record["pages"]
        return [i for i, at in record["index"].items() if pages.read(at) != record["data"][i].tobytes()]

    def output_limit(self, want: list[Any]) -> wire.Limit:
        """The most a reply may carry: the reference's outputs' elements at the
        widest dtype a tensor may cross in (8 bytes)."""
        torch = self.torch
        numel = [w.numel() if isinstance(w, torch.Tensor) else 0 for w in want]
        return wire.Limit("the answer's reply", wire.aligned_bytes([8 * n for n in numel]) + wire.ALIGN,
                          payload_is="bytes the reference's outputs allow (their elements at 8 bytes each)")

