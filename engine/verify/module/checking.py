"""Calling the answer and verifying each call (a piece of ModuleRun).

Each call's inputs are written into the answer's pages (staging.py), the
reference's outputs computed here on this side's own copy, and the answer's
reply read by value: its count, shapes and dtypes checked against the
reference's before any tensor is decoded, its values compared after (the
deck's rule for its figure first, then benchtui's), its inputs read back from
the pages this side wrote. A wrong result fails its check naming the
requirement, shape, seed and case; the answer raising is an error.
"""
from __future__ import annotations

import hashlib
import time
from typing import Any

from benchtui.records.verdicts import ERROR, INFO, PASS, SKIPPED, TIMEOUT
from benchtui.verify import wire
from benchtui.verify.module import rules as R
from benchtui.verify.module.cpu_budget import CpuBudget
from benchtui.verify.module.spec import CORRECT
from benchtui.verify.module.state import BadReply, CallFailed, as_list
from benchtui.verify.module.trace import Tracing
from benchtui.verify.suite import CheckTimeout, SkipCheck, describe_exception


class Checking(Tracing):
    def cpu_budget(self, calls_now: int, calls_per_shape: int) -> CpuBudget | None:
        """On the CPU, the first shape's first ``calls_now`` calls' share of what is left of the
        run's limit, over the calls the checks make at every shape (engine/verify/module/cpu_budget.py)."""
        if self.answer_device != "cpu":
            return None
        return CpuBudget.for_run(getattr(self.suite, "run_limit_s", None),
                                 getattr(self.suite, "run_started", time.monotonic()), calls_now, calls_per_shape,
                                 getattr(self, "n_shapes", 1))

    def calls(self, ref: Any, name: str, label: str, seeds: list[int], cases: list[dict[str, Any]], deck: bool,
              budget: CpuBudget | None = None) -> bool:
        """``budget``: on the CPU, the first calls are stopped as too slow once those that
        finished project past the run's limit; one that does not return is a timeout."""
        suite = self.suite
        done = 0
        with suite.check(name, timeout_s=budget.call_s if budget else None, requires=self.spec.requires(CORRECT)) as c:
            c.details["seeds"] = seeds
            c.details["cases"] = [case.get("name", "?") for case in cases]
            try:
                for seed in seeds:
                    inputs = self.inputs(ref, seed, deck=deck)
                    for case in cases:
                        if not self.checked_call(c, inputs, case, deck, label, seed):
                            return False
                        done += 1
                        why = budget.too_slow(done, label) if budget else None
                        if budget and why:
                            c.details.update(budget.details(done, budget.elapsed()))
                            self.too_slow = True
                            raise SkipCheck(why)
            except (CheckTimeout, wire.Deadline):
                if budget is None:
                    raise
                c.details.update(budget.details(done, budget.elapsed()))
                self.stalled = True
                # the answer's process still holds the call: nothing more can be asked of it, and the
                # goodbye lets the run end now rather than at its limit
                suite.peer.close()
                c.verdict, c.message = TIMEOUT, budget.stalled(done, label)
                return False
            c.value = done
            c.message = (f"{label}: {done} calls right ({len(seeds)} {'deck' if deck else 'fresh secret'} seeds x "
                         f"{len(cases)} cases: {', '.join(c.details['cases'])})")
        return bool(c.verdict == PASS)

    def checked_call(self, c: Any, inputs: list[Any], case: dict[str, Any], deck: bool, label: str, seed: object,
                     in_place: bool | None = None) -> bool:
        """One verified call inside check ``c``: a wrong result fails ``c`` with the
        requirement, shape, seed and case named; the answer raising makes ``c`` an
        error and returns False (the check's calls stop there)."""
        where = {"shape": label, "seed": seed, "case": case.get("name", "?")}
        try:
            self.one_call(inputs, case, deck=deck, in_place=in_place, where=where)
        except CallFailed as exc:
            c.details["requirement"], c.details["where"] = exc.requirement, where
            c.fail(f"{exc.requirement}: {label}, seed {seed}, case {case.get('name', '?')}: {exc}")
        except (CheckTimeout, wire.Deadline, wire.PeerGone):
            raise
        except (BadReply, wire.NotPlain, wire.TooLarge) as exc:  # not the host's plain reply: an error naming it
            c.details["requirement"], c.details["where"] = "reply", where
            c.verdict = ERROR
            c.message = f"reply: {label}, seed {seed}, case {case.get('name', '?')}: {exc}"
            return False
        except Exception as exc:  # the answer raised: an error, named where
            self._deck_fail_if(deck, describe_exception(exc))
            c.details["requirement"], c.details["where"] = "runs", where
            c.verdict = ERROR
            c.message = f"runs: {label}, seed {seed}, case {case.get('name', '?')}: {describe_exception(exc)}"
            return False
        return True

    def one_call(self, inputs: list[Any], case: dict[str, Any], deck: bool, in_place: bool | None = None,
                 where: dict[str, Any] | None = None) -> float:
        """Put, run, fetch and verify one call (untimed, traced where the deck forbids a
        torch op); returns the answer's own ms."""
        torch = self.torch
        scaled = _scale_inputs(inputs, case.get("input_scales", {}))
        state_scales = case.get("state_scales", {})
        backups = _scale_state(self.ref_model, state_scales, torch)
        if state_scales:
            self._host("scale_state", dict(state_scales))
        try:
            expected = self.expect(scaled)
            # the deck's seeds get new tensors each call, as the deck's check.py makes them; benchtui's
            # own calls overwrite the same storage in place
            in_place = (not deck) if in_place is None else in_place
            record = self.put(scaled, in_place)
            got = self._host("cycle", 0, self.tracing, limit=self.output_limit(as_list(expected)))
        finally:
            if state_scales:
                self._host("restore_state")
            for tensor, original in backups:
                with torch.no_grad():
                    tensor.copy_(original)
        return self.judge(scaled, expected, got, record, case, deck, where=where)

    def judge(self, inputs: list[Any], expected: Any, got: Any, record: dict[str, Any], case: dict[str, Any], deck: bool,
              where: dict[str, Any] | None = None, traced: bool | None = None) -> float:
        """Verify one cycle's reply (and read its trace, before its values); returns
        the answer's own ms (its word, a figure only)."""
        staged, own, out, reported = _cycle_reply(got)
        if self.tracing if traced is None else traced:
            self.note_trace(got, where or {})
        seen = self.changed_pages(record) if self.answer_device == "cpu" else []
        last = record.get("staged") if record["reused"] else None
        record["staged"] = staged
        same_reported = last is not None and last == staged
        self.verify(inputs, expected, out, case, deck, reused=record["reused"], same_reported=same_reported)
        if seen:
            raise CallFailed("inputs_unchanged", f"the answer changed input(s) {seen} in place (read by the checker "
                                                 "from the pages it wrote them into)")
        if reported:
            raise CallFailed("inputs_unchanged", f"the answer changed input(s) {reported} in place (as the answer's "
                                                 "process reports it" + (", on the GPU where the checker holds no copy"
                                                                         if self.answer_device == "cuda" else "") + ")")
        return own

    def verify(self, inputs: list[Any], expected: Any, out: dict[str, Any], case: dict[str, Any], deck: bool,
               reused: bool = False, same_reported: bool = False) -> None:
        """Judge one call's output on what this side decoded: count, shapes and
        dtypes read from the reply's plain fields and checked against the
        reference's before any tensor is decoded, values compared after."""
        from benchtui.verify.module import tensors as T

        spec = self.spec
        want = as_list(expected)
        facts, values = out["facts"], out["values"]
        if len(values) != len(want):
            self._deck_fail_if(deck, "output count")
            raise CallFailed("output_shape", f"{len(values)} outputs, the reference returns {len(want)}")
        announced = []
        for w, v, f in zip(want, values, facts):
            if v is None:
                self._deck_fail_if(deck, "not a tensor")
                raise CallFailed("output_type", f"the output is a {_said_type(f)}, not a tensor")
            try:
                name, shape = T.announced(v)
            except (ValueError, TypeError) as exc:
                raise BadReply(f"an output is not a tensor the wire carries: {exc}") from None
            if tuple(shape) != tuple(w.shape):
                self._deck_fail_if(deck, f"shape {tuple(shape)}")
                raise CallFailed("output_shape", f"output shape {tuple(shape)}, the reference's is {tuple(w.shape)}")
            announced.append(name)
        got = [T.decode(v) for v in values]
        # the deck's rule on these values first (its figure), then benchtui's
        for i, (w, g) in enumerate(zip(want, got)):
            if spec.deck == R.KB and g.dtype != w.dtype:
                ok_deck, msg_deck = False, f"dtype {T.dtype_name(g.dtype)} (allclose refuses mixed dtypes)"
            else:
                ok_deck, msg_deck = self.compare_output(i, inputs, want, g, case, deck_rule=True)
            if not ok_deck:
                self._deck_fail_if(deck, msg_deck)
        for i, (w, g, f) in enumerate(zip(want, got, facts)):
            # the dtype is the one this side decoded the bytes as, never the answer's word
            if g.dtype != w.dtype:
                raise CallFailed("output_dtype", f"output dtype {T.dtype_name(g.dtype)}, the reference's is "
                                                 f"{T.dtype_name(w.dtype)}")
            # what only the answer's process can tell (its tensor's exact type, its device) can fail a
            # call by its own admission, never pass one: the values judged are the bytes decoded here
            if type(f) is dict and f.get("exact_tensor") is False:
                raise CallFailed("output_type", f"the output is a {_said_type(f)}, not exactly torch.Tensor "
                                                "(a subclass could change how it compares; as the answer's process "
                                                "reports it)")
            if type(f) is dict and f.get("device") not in (None, self.answer_device):
                raise CallFailed("output_device", f"output on {str(f.get('device'))[:40]}, expected "
                                                  f"{self.answer_device} (as the answer's process reports it)")
            ok, msg = self.compare_output(i, inputs, want, g, case, deck_rule=False)
            if not ok:
                if _fingerprint(g) in self.right_outputs:
                    # what was seen, not why: the bytes equal a right output of an earlier call
                    if reused:
                        how = (" (the checker wrote these inputs into the pages the previous call read; the answer's "
                               "process reports " + ("the same pointers and versions)" if same_reported
                                                     else "other pointers or versions)"))
                    else:
                        how = " (on new input pages)"
                    raise CallFailed("fresh_result", "the output equals an earlier call's right output, for other "
                                                     "inputs" + how + "; " + msg)
                raise CallFailed("output_values", msg)
        self.right_outputs.update(_fingerprint(g) for g in got)

    def compare_output(self, i: int, inputs: list[Any], want: list[Any], g: Any, case: dict[str, Any],
                       deck_rule: bool) -> tuple[bool, str]:
        """Output ``i`` against the reference's, as the deck compares it: by value at the
        tolerance of its dtype, or, for the index output the deck's check.py gathers, by the
        input's values at the returned indices (any tie-break passes). benchtui's own
        verdict (``deck_rule`` False) also refuses an index named twice in a row."""
        from benchtui.verify.module import tensors as T

        spec, rule = self.spec, self.spec.indices
        w = want[i]
        if rule and i == rule["output"] and rule["values"] < len(want) and rule["input"] < len(inputs):
            ref_values = want[rule["values"]].detach().cpu()
            x = inputs[rule["input"]]
            x = x.detach().cpu() if isinstance(x, self.torch.Tensor) else x
            atol, rtol = spec.tol(rule.get("dtype") or T.dtype_name(ref_values.dtype), case)
            ok, msg = R.gathered_indices(x, ref_values, g, rule["dim"], atol, rtol, spec.deck, distinct=not deck_rule)
            return ok, msg if ok or len(want) == 1 else f"output {i} (indices): {msg}"
        atol, rtol = spec.tol(T.dtype_name(w.dtype), case)
        ok, msg = R.compare(w.detach().cpu(), g, atol, rtol, spec.deck)
        return ok, msg if ok or len(want) == 1 else f"output {i}: {msg}"

    def failing(self) -> Any:
        """The first check so far that did not pass (an info or a skip is neither), or None."""
        return next((c for c in self.suite.checks if c.verdict not in (None, PASS, INFO, SKIPPED)), None)

    def _deck_fail_if(self, deck: bool, message: str) -> None:
        if deck:
            self._deck_fail(message)

    def _deck_fail(self, message: str) -> None:
        if self.deck_ok:
            self.deck_ok, self.deck_failure = False, message


# -- helpers ------------------------------------------------------------------------------

def _said_type(fact: Any) -> str:
    """The output's type as the answer's process names it (its word)."""
    return str(fact.get("type", "?"))[:120] if type(fact) is dict else "?"


def _cycle_reply(got: Any) -> tuple[dict[str, Any], float, dict[str, Any], list[int]]:
    """(staged, own ms, output, reported changes) of a cycle's reply, checked
    to be the plain shape the host sends; anything else is a BadReply naming it."""
    if type(got) is not dict or not {"staged", "ms", "out", "changed"} <= set(got):
        raise BadReply(f"the cycle replied a {type(got).__name__}"
                       + (f" with keys {sorted(map(str, got))[:6]}" if type(got) is dict else "")
                       + ", not the host's plain dict")
    staged, ms, out, changed = got["staged"], got["ms"], got["out"], got["changed"]
    if type(ms) not in (int, float):
        raise BadReply(f"the cycle's own time is a {type(ms).__name__}, not a number")
    if type(out) is not dict or type(out.get("facts")) is not list or type(out.get("values")) is not list \
            or len(out["facts"]) != len(out["values"]):
        raise BadReply("the cycle's output is not the host's plain facts and values")
    if type(changed) is not list or not all(type(i) is int for i in changed):
        raise BadReply("the cycle's input report is not a list of indices")
    if type(staged) is not dict:
        raise BadReply(f"the cycle's staging report is a {type(staged).__name__}, not a dict")
    return staged, float(ms), out, changed


def _fingerprint(t: Any) -> str:
    """A tensor's dtype, shape and up to 4,096 evenly spaced elements, hashed."""
    import torch

    flat = t.reshape(-1)
    step = max(1, flat.numel() // 4096)
    sample = flat[::step].contiguous()
    data = sample.view(torch.uint8).numpy().tobytes() if sample.numel() else b""
    return hashlib.sha256(f"{t.dtype}{tuple(t.shape)}".encode() + data).hexdigest()


def _scale_inputs(inputs: list[Any], scales: dict[str, Any]) -> list[Any]:
    out = list(inputs)
    for idx, scale in (scales or {}).items():
        i = int(idx)
        out[i] = (out[i].float() * float(scale)).to(out[i].dtype)
    return out


def _scale_state(model: Any, scales: dict[str, Any], torch: Any) -> list[tuple[Any, Any]]:
    backups: list[tuple[Any, Any]] = []
    if not scales:
        return backups
    state = dict(model.named_parameters())
    state.update(dict(model.named_buffers()))
    for name, scale in scales.items():
        tensor = state[name]
        backups.append((tensor, tensor.detach().clone()))
        with torch.no_grad():
            tensor.copy_((tensor.float() * float(scale)).to(tensor.dtype))
    return backups
