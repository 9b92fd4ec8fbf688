"""Hidden checks for beam_search: the answer runs on the suite's mock LM,
presented in the answer's own calling convention, and is compared with the
reference beam search on the same mock."""
from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from benchtui.api import InputMutated, V, load_module

NAMES = ("batched_beam_search", "beam_search_batched", "batch_beam_search", "beam_search", "batched_beam_search_numpy")
SYNONYMS = {
    "prompts": {"prompts", "prompt", "prompt_tokens", "prompt_ids", "input_ids", "inputs", "batch", "batch_prompts", "sequences", "tokens"},
    "beam_width": {"beam_width", "k", "num_beams", "beam_size", "width", "n_beams", "beams"},
    "max_new_tokens": {"max_new_tokens", "max_tokens", "max_new", "max_len", "max_length", "max_steps", "steps", "n_new", "max_gen"},
    "alpha": {"alpha", "length_penalty", "lp_alpha", "length_alpha", "len_penalty"},
    "eos_token_id": {"eos_token_id", "eos_id", "eos", "eos_token", "end_token", "eos_idx"},
}
ORDER = ("prompts", "beam_width", "max_new_tokens", "alpha", "eos_token_id")


def _harness(suite):
    return load_module(Path(suite.challenge_dir) / "harness.py", "benchtui_beam_harness")


CLASS_METHODS = ("batched_beam_search", "beam_search", "search", "batch_search", "decode", "generate")


class Answer:
    """Calls the answer's search with the mock injected the way it expects:
    a function, or a class built around the model with a search method."""

    def __init__(self, suite, fn, h, cls=None):
        self.suite, self.fn, self.h, self.cls = suite, fn, h, cls
        self.module = suite.answer_side("module_of", cls or fn)
        with suite.probing():  # the suite's own model replaces the one probed
            self.conv, self.holders = h.detect_convention(suite, self.module, int(suite.threshold("vocab", 1000)))
        self.ctor_plan: list[tuple[str, str]] = []
        self.ctor_model = None
        taken: set[str] = set()
        if cls is not None:
            ctor = [p for p in _params(cls) if p.name != "self"]
            self.ctor_model = next((p.name for p in ctor if p.name.lower() in h.MODEL_PARAM_NAMES), None)
            for p in ctor:
                role = next((r for r in ORDER if p.name.lower() in SYNONYMS[r]), None)
                if role:
                    self.ctor_plan.append((p.name, role))
                    taken.add(role)
                elif p.name != self.ctor_model and p.default is inspect.Parameter.empty:
                    raise suite.unbound([cls.__name__], f"cannot fill constructor parameter {p.name!r}")
        params = _params(fn)
        self.model_param = next((p.name for p in params if p.name.lower() in h.MODEL_PARAM_NAMES), None)
        self.plan = self._plan([p for p in params if p.name != self.model_param], taken)
        self.factories = []
        if self.model_param is None and self.ctor_model is None and not self.holders:
            # The search builds its own model: swap the class for a factory.
            src = suite.answer_side("source", cls or fn)
            self.factories = [d.name for d in h.model_classes(suite.binder) if d.name in src and hasattr(self.module, d.name)]
            if not self.factories:
                raise suite.unbound(list(NAMES), "no model parameter, module-level model or model class to replace")

    def _plan(self, params, taken: set[str]) -> list[tuple[str, str]]:
        taken, plan = set(taken), []
        for p in params:
            role = next((r for r in ORDER if r not in taken and p.name.lower() in SYNONYMS[r]), None)
            if role is None:
                role = next((r for r in ORDER if r not in taken), None)
                if role is None:
                    if p.default is inspect.Parameter.empty:
                        raise self.suite.unbound(list(NAMES), f"unexpected required parameter {p.name!r}")
                    continue
            taken.add(role)
            plan.append((p.name, role))
        if "prompts" not in {r for _, r in plan}:
            raise self.suite.unbound(list(NAMES), "no parameter takes the prompts")
        return plan

    def describe(self) -> str:
        via = (f"parameter {self.model_param!r}" if self.model_param else
               f"constructor parameter {self.ctor_model!r} of {self.cls.__name__}" if self.ctor_model else
               f"module global(s) {', '.join(k for k, *_ in self.holders)}" if self.holders else
               f"class factory {', '.join(self.factories)}")
        return f"mock injected via {via}; {self.conv.describe()}"

    def __call__(self, core, prompts, beam_width, max_new_tokens, alpha, eos):
        values = dict(prompts=prompts, beam_width=beam_width, max_new_tokens=max_new_tokens, alpha=alpha, eos_token_id=eos)
        mock = self.h.MockLM(core, self.conv)
        for name, *_ in self.holders:
            setattr(self.module, name, mock)
        for name in self.factories:
            setattr(self.module, name, lambda *a, **k: mock)
        fn = self.fn
        if self.cls is not None:
            ctor = {name: values[role] for name, role in self.ctor_plan}
            if self.ctor_model:
                ctor[self.ctor_model] = mock
            fn = getattr(self.cls(**ctor), self.fn.__name__)
        kwargs = {name: values[role] for name, role in self.plan}
        if self.model_param:
            kwargs[self.model_param] = mock
        prompt_param = next(name for name, role in self.plan if role == "prompts")

        def invoke(p):
            snapshot = copy.deepcopy(p)
            out = self.suite.fetch(fn(**{**kwargs, prompt_param: p}))  # token lists: by value, even when timing
            if p != snapshot:
                raise InputMutated("the answer modified its input (prompts) in place")
            return out

        return self.h.normalise(self.suite.call(invoke, prompts), len(prompts))


def _params(obj) -> list[inspect.Parameter]:
    params = inspect.signature(obj).parameters.values()
    return [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]


def bind_answer(suite, h) -> Answer:
    """A search function (adapter first), else a searcher class with a search method."""
    adapter = suite.adapter()
    fn = getattr(adapter, "batched_beam_search", None) if adapter else None
    if fn is not None:
        return Answer(suite, fn, h)
    if suite.binder.find(NAMES, kind="function") is not None:
        return Answer(suite, suite.bind(*NAMES, kind="function"), h)
    for d in suite.binder.defs:
        if d.kind == "class" and "beam" in d.name.lower():
            method = next((m for m in CLASS_METHODS if m in d.methods), None)
            if method:
                cls = suite.binder.load(d)
                return Answer(suite, getattr(cls, method), h, cls=cls)
    raise suite.unbound(list(NAMES) + ["class *Beam* with " + " / ".join(CLASS_METHODS)])


@dataclass
class Scene:
    """What the checks of one run share: the harness, the reference, the bound
    answer, the vocabulary and EOS token the mock follows, the per-check time limit."""
    suite: Any
    h: Any
    ref: Any
    answer: Answer
    vocab: int
    eos: int
    timeout: float

    def core(self, label: str, **kw: Any) -> Any:
        """The mock LM, seeded per label."""
        rng = self.suite.rng("core-" + label)
        return self.h.MockCore(self.vocab, int(rng.integers(2**31)), self.eos, **kw)

    def prompts(self, label: str, lengths: tuple[int, ...]) -> list[list[int]]:
        """Prompts of the given lengths, without EOS, seeded per label."""
        rng = self.suite.rng("prompts-" + label)
        return [[int(t) for t in rng.choice([i for i in range(self.vocab) if i != self.eos], size=n)] for n in lengths]

    def ref_run(self, c: Any, ps: list[list[int]], k: int, n: int, alpha: float, count_eos: bool = True) -> Any:
        return self.ref.batched_beam_search(self.h.ReferenceView(c), ps, k, n, alpha, self.eos, count_eos=count_eos)

    def seqs(self, beams: Any) -> list[list[int]]:
        return [self.h.strip_eos(b.tokens, self.eos)[0] for b in beams]

    def matches_reference(self, c: Any, ps: list[list[int]], got: Any, k: int, n: int, alpha: float) -> tuple[bool, Any]:
        """True if the answer's beams equal the reference (EOS in the length or not)."""
        h, eos, seqs = self.h, self.eos, self.seqs
        want = [[h.strip_eos(t, eos)[0] for t, _ in item] for item in self.ref_run(c, ps, k, n, alpha)]
        if [seqs(item) for item in got] == want:
            return True, want
        alt = [[h.strip_eos(t, eos)[0] for t, _ in item] for item in self.ref_run(c, ps, k, n, alpha, count_eos=False)]
        return [seqs(item) for item in got] == alt, want


def scene(suite) -> Scene:
    """The answer bound, with what every check of a run shares."""
    h = _harness(suite)
    ref = suite.reference()
    answer = bind_answer(suite, h)
    vocab = answer.conv.vocab
    # the vocabulary of the answer's own toy model is the answer's choice: the mock follows it
    suite.reading("model_convention", vocab, message=answer.describe())
    # EOS is fixed, never drawn: an edge it meets is built (eos_id_edges), not met on some seeds
    return Scene(suite, h, ref, answer, vocab, vocab // 2, float(suite.threshold("check_timeout_s", 20)))


def run(suite) -> None:
    s = scene(suite)
    h, answer, vocab, timeout = s.h, s.answer, s.vocab, s.timeout
    tol = float(suite.threshold("score_rel_tol", 1e-9))

    greedy_k1(s)
    batch_independence(s)
    eos_retention(s)
    eos_in_prompt(s)
    eos_id_edges(s)
    ragged_finish(s)
    ranking = ranking_runner(s)
    ranking_alpha(s, ranking)
    prompt_not_in_output(s, ranking)
    scores_recomputed(s, ranking, tol)
    normalisation_case(suite, answer, s.core, s.prompts, s.eos, vocab, timeout, s.seqs)
    max_new_tokens_unfinished(s)
    long_beams_log_space(s)
    length_penalty_order(suite, answer, s.core, s.prompts, s.eos, vocab, timeout, s.seqs)
    selection_new_tokens_length(s)
    smallest_inputs(suite, answer, s.core, s.prompts, s.eos, vocab, timeout, s.seqs, s.matches_reference)
    own_model_contract(suite, h, answer.conv, timeout)
    large_vocabulary(s)
    logits_row_spread(s)
    vocab_at_and_below_2k(s)

    def make_inputs(trial):
        return s.core(f"time{trial}"), s.prompts(f"time{trial}", (4, 6, 3, 5))

    suite.time("speed", lambda a: answer(a[0], a[1], 4, 10, 0.6, s.eos),
               lambda a: s.ref_run(a[0], a[1], 4, 10, 0.6), make_inputs,
               budget_s=float(suite.threshold("timing_budget_s", 1.0)))


def greedy_k1(s: Scene) -> None:
    """K=1 at alpha=0 is greedy decoding, including a case where EOS is the
    runner-up at every step."""
    suite, h, ref, answer, core, prompts, seqs, eos, vocab = s.suite, s.h, s.ref, s.answer, s.core, s.prompts, s.seqs, s.eos, s.vocab
    with suite.check("greedy_k1", threshold="K=1, alpha=0 equals greedy", timeout_s=s.timeout,
                     requires=("expand_top_2k",)) as c:
        n = int(suite.threshold("greedy_max_new", 10))
        cr, ps = core("greedy"), prompts("greedy", (4, 6, 2))
        got = answer(cr, ps, 1, n, 0.0, eos)
        want = [h.strip_eos(ref.greedy_decode(h.ReferenceView(cr), p, n, eos), eos)[0] for p in ps]
        wrong = [i for i, (g, w) in enumerate(zip(got, want)) if not g or seqs(g)[0] != w]
        c.value = f"{len(ps) - len(wrong)}/{len(ps)} items greedy"
        c.expect(not wrong, f"item {wrong[0]}: got {seqs(got[wrong[0]])[:1]}, greedy gives {want[wrong[0]]}" if wrong else "")
        # fixed: EOS is the runner-up at every step (log-prob -3 against -0.1), so
        # greedy never stops early; a search that scores EOS as free, or ranks a
        # finished beam by a shorter length, stops on the first step whatever the seed
        rng = suite.rng("greedy-eos")
        p = prompts("greedy-eos", (3,))[0]
        path = [int(t) for t in rng.choice([i for i in range(vocab) if i != eos], size=4, replace=False)]
        pinned = {tuple(p + path[:i]): {path[i]: -0.1, eos: -3.0} for i in range(len(path))}
        got = answer(core("greedy-eos", overrides=pinned), [p], 1, len(path), 0.0, eos)[0]
        c.details["eos_runner_up"] = {"got": seqs(got)[:1], "greedy": path}
        c.expect(bool(got) and seqs(got)[0] == path,
                 f"with EOS the runner-up at every step: got {seqs(got)[:1]}, greedy gives {path}")


def batch_independence(s: Scene) -> None:
    """Each prompt's beams are the same batched as alone."""
    suite, answer, core, prompts, seqs, eos = s.suite, s.answer, s.core, s.prompts, s.seqs, s.eos
    with suite.check("batch_independence", threshold="batch == each prompt alone", timeout_s=s.timeout,
                     requires=("independent_items",)) as c:
        cr, ps = core("indep"), prompts("indep", (3, 5))
        k, n, alpha = 3, 6, float(suite.threshold("ranking_alpha", 0.6))
        together = answer(cr, ps, k, n, alpha, eos)
        alone = [answer(cr, [p], k, n, alpha, eos)[0] for p in ps]
        diff = [i for i in range(2) if seqs(together[i]) != seqs(alone[i])]
        c.value = f"{2 - len(diff)}/2 items identical"
        c.expect(not diff, f"item {diff[0]} (prompt length {len(ps[diff[0]])}) differs when batched" if diff else "")


def eos_in_prompt(s: Scene) -> None:
    """EOS inside a prompt (last, and mid-prompt): a prompt is a list of token ids, any id; only
    a beam that emits EOS is finished. A search that reads the prompt's last token as the
    beam's last emitted one returns nothing (or stops at once) for such an item."""
    suite, answer, core, prompts, seqs, eos = s.suite, s.answer, s.core, s.prompts, s.seqs, s.eos
    with suite.check("eos_in_prompt", threshold="equals reference with EOS inside the prompts", timeout_s=s.timeout,
                     requires=("finished_beams_compete", "stopping")) as c:
        cr, (a, b) = core("eosprompt", eos_mean=-60.0), prompts("eosprompt", (3, 4))
        ps = [a + [eos], b[:2] + [eos] + b[2:]]
        k, n = 2, 4
        got = answer(cr, ps, k, n, 0.6, eos)
        ok, want = s.matches_reference(cr, ps, got, k, n, 0.6)
        c.value = "equal" if ok else "differs"
        c.expect(ok, f"with EOS as a prompt's last token and inside another: got {[seqs(i) for i in got]}, "
                     f"reference {want} (an EOS in the prompt does not finish a beam)")


def eos_id_edges(s: Scene) -> None:
    """EOS at the first and at the last id of the vocabulary, the two edges of the
    ids the prompt allows: a search that tests EOS by truth value (``if
    eos_token_id and ...``) never finishes a beam on id 0, one that cuts the last
    logit off never sees id V - 1. On each, item 0's prompt puts EOS first beside
    two clear runners-up, and no other context ever favours EOS: one beam of item 0
    finishes at its first step and must stay finished, on every run."""
    suite, h, answer = s.suite, s.h, s.answer
    k, n, alpha = 2, 4, 0.6
    with suite.check("eos_id_edges", threshold="equals reference with EOS = 0 and EOS = V - 1", timeout_s=s.timeout,
                     requires=("finished_beams_compete", "stopping")) as c:
        for eos in (0, s.vocab - 1):
            edge = Scene(suite, h, s.ref, answer, s.vocab, eos, s.timeout)
            ps = edge.prompts(f"eos-edge-{'first' if eos == 0 else 'last'}", (3, 4))
            a, b = [t for t in (1, 2, 3) if t != eos][:2]
            cr = edge.core(f"eos-edge-{eos}", eos_mean=-60.0, overrides={tuple(ps[0]): {eos: -0.4, a: -1.6, b: -2.5}})
            what = f"EOS = {eos}, the {'first' if eos == 0 else 'last'} id of a {s.vocab}-token vocabulary"
            try:
                got = answer(cr, ps, k, n, alpha, eos)
            except Exception as exc:
                _answer_failed(c, exc, what)
            ok, want = edge.matches_reference(cr, ps, got, k, n, alpha)
            c.details[f"eos={eos}"] = {"got": [edge.seqs(item) for item in got], "reference": want}
            c.expect(ok, f"{what} (item 0 ends at its first step): got {[edge.seqs(item) for item in got]}, "
                         f"reference {want}")
        c.value = f"EOS = 0 and EOS = {s.vocab - 1}"


def ragged_finish(s: Scene) -> None:
    """A batch where one item finishes at once and the other never does, built so on every
    run (random models make it only on some seeds): the first item's prompt gives EOS all
    the mass, every other context gives EOS none. Stopping the batch when one item is done
    (or never for a done item) shows here."""
    suite, answer, core, prompts, seqs, eos = s.suite, s.answer, s.core, s.prompts, s.seqs, s.eos
    with suite.check("ragged_finish", threshold="one item done at step 1, the other runs to max_new_tokens",
                     timeout_s=s.timeout, requires=("stopping", "independent_items")) as c:
        done, running = prompts("ragged", (3, 4))
        # EOS first and one token second, clear of the rest (no tie for the second beam to settle)
        second = next(t for t in (int(x) for x in suite.rng("ragged-second").permutation(s.vocab)) if t != eos)
        cr = core("ragged", eos_mean=-60.0, overrides={tuple(done): {eos: -1e-3, second: -8.0}})
        for k in (1, 2):
            got = answer(cr, [done, running], k, 5, 0.6, eos)
            ok, want = s.matches_reference(cr, [done, running], got, k, 5, 0.6)
            c.value = f"K={k}: {[len(b.tokens) for item in got for b in item]} tokens per beam"
            c.expect(ok, f"with K={k}, item 0 finished at its first step and item 1 never finishing: got "
                         f"{[seqs(i) for i in got]}, reference {want} (one item's end is not the batch's)")
            if not ok:
                break


def eos_retention(s: Scene) -> None:
    """A beam that finished early stays in the pool and wins over a longer, worse one."""
    suite, answer, core, prompts, seqs, eos, vocab = s.suite, s.answer, s.core, s.prompts, s.seqs, s.eos, s.vocab
    with suite.check("eos_retention", threshold="EOS beam at -3.0 beats -5.0", timeout_s=s.timeout,
                     requires=("finished_beams_compete", "stopping")) as c:
        rng = suite.rng("eos-scenario")
        p = prompts("eos", (4,))[0]
        x1, y1, z, w = (int(t) for t in rng.choice([i for i in range(vocab) if i != eos], size=4, replace=False))
        # Every context a top-2 beam can reach is pinned; the rest are far below.
        overrides = {tuple(p): {x1: -1.0, y1: -1.5}, tuple(p + [y1]): {}, tuple(p + [x1]): {eos: -2.0, z: -3.0},
                     tuple(p + [x1, z]): {w: -1.0}, tuple(p + [x1, z, w]): {eos: -0.01}}
        cr = core("eos", overrides=overrides)
        got = answer(cr, [p], 2, 6, 0.0, eos)[0]
        best = seqs(got)[0] if got else None
        c.value = f"best {best}"
        c.expect(best == [x1], f"best beam {best}; the beam [{x1}, EOS] finished at log-prob -3.0 must win "
                 f"over [{x1}, {z}, {w}, EOS] at -5.01 (finished beams must stay in the pool)")
        c.expect(seqs(got) == [[x1], [x1, z, w]], f"beams {seqs(got)}, expected [[{x1}], [{x1}, {z}, {w}]] (+EOS)")


def ranking_runner(s: Scene) -> Callable[[], dict[str, Any]]:
    """The answer on the ranking case, run once (on first use) for the three
    checks that read it; its error, if it raised, is raised again to each."""
    suite, answer, core, prompts, eos = s.suite, s.answer, s.core, s.prompts, s.eos
    ranking: dict = {}

    def ranking_run():
        if "error" in ranking:
            raise ranking["error"]
        if not ranking:
            cr, ps = core("rank"), prompts("rank", (3, 5, 4))
            k = int(suite.threshold("ranking_beam_width", 4))
            n, alpha = int(suite.threshold("ranking_max_new", 8)), float(suite.threshold("ranking_alpha", 0.6))
            try:
                ranking.update(core=cr, prompts=ps, k=k, n=n, alpha=alpha, got=answer(cr, ps, k, n, alpha, eos))
            except Exception as exc:
                ranking["error"] = exc
                raise
        return ranking

    return ranking_run


def ranking_alpha(s: Scene, ranking_run: Callable[[], dict[str, Any]]) -> None:
    """K beams per item, equal to the reference's at the ranking alpha."""
    suite, seqs = s.suite, s.seqs
    with suite.check("ranking_alpha", threshold=f"alpha={suite.threshold('ranking_alpha', 0.6)}, equals reference",
                     timeout_s=s.timeout, requires=("expand_top_2k", "penalty_for_ranking_only", "new_tokens_only")) as c:
        r = ranking_run()
        ok, want = s.matches_reference(r["core"], r["prompts"], r["got"], r["k"], r["n"], r["alpha"])
        counts = [len(item) for item in r["got"]]
        c.value = f"{sum(seqs(g) == w for g, w in zip(r['got'], want))}/{len(want)} items match"
        c.expect(counts == [r["k"]] * len(want), f"beams per item {counts}, expected {r['k']} each")
        bad = next((i for i, (g, w) in enumerate(zip(r["got"], want)) if seqs(g) != w), 0)
        c.expect(ok, f"item {bad}: got {seqs(r['got'][bad])}, reference {want[bad]}")


def prompt_not_in_output(s: Scene, ranking_run: Callable[[], dict[str, Any]]) -> None:
    """The returned sequences hold the new tokens only."""
    with s.suite.check("prompt_not_in_output", threshold="no prompt tokens in new tokens", timeout_s=s.timeout,
                       requires=("new_tokens_only",)) as c:
        r = ranking_run()
        echoed = sum(1 for p, item in zip(r["prompts"], r["got"]) for b in item if b.tokens[: len(p)] == p)
        c.value = echoed
        c.expect(echoed == 0, f"{echoed} returned sequences start with their prompt")


def scores_recomputed(s: Scene, ranking_run: Callable[[], dict[str, Any]], tol: float) -> None:
    """The reported scores, recomputed from the mock's log-probs: logprob / len**alpha."""
    suite, h, eos = s.suite, s.h, s.eos
    with suite.check("scores_recomputed", threshold=tol, timeout_s=s.timeout, requires=("penalty_for_ranking_only",)) as c:
        r = ranking_run()
        scored = [(p, b) for p, item in zip(r["prompts"], r["got"]) for b in item if b.score is not None]
        if not scored:
            c.verdict, c.message = "info", "the answer returns no scores"
        # the prompt's rule, logprob / len**alpha (EOS in the length or not: len(new_tokens)
        # leaves it open), and the raw accumulated log-prob, which only a prompt that
        # states no rule leaves open
        worst = worst_raw = 0.0
        for p, b in scored:
            toks, had_eos = h.strip_eos(b.tokens, eos)
            ctx, logp = list(p), 0.0
            for t in toks:
                logp += float(r["core"].logprobs(ctx)[t])
                ctx.append(t)
            penalised, raw = {logp / max(len(toks), 1) ** r["alpha"]}, {logp}
            if had_eos or len(toks) < r["n"]:  # finished: EOS log-prob, length with or without EOS
                lp_e = logp + float(r["core"].logprobs(ctx)[eos])
                penalised |= {lp_e / (len(toks) + 1) ** r["alpha"], lp_e / max(len(toks), 1) ** r["alpha"]}
                raw |= {lp_e}
            worst = max(worst, min(abs(b.score - o) / max(1.0, abs(o)) for o in penalised))
            worst_raw = max(worst_raw, min(abs(b.score - o) / max(1.0, abs(o)) for o in raw))
        c.value = worst
        c.details["raw_logprob_error"] = worst_raw
        rule_stated = suite.threshold("score_rule", "open") == "penalised"
        if worst > tol and worst_raw <= tol:
            if rule_stated:
                c.fail(f"the reported scores are the raw accumulated log-prob ({worst:.3g} relative from "
                       f"logprob / len**alpha at alpha={r['alpha']:g}): the prompt says a sequence's score is "
                       "accumulated_logprob / len(seq)**alpha")
            c.verdict = "info"
            c.message = ("reading: the reported scores are the raw accumulated log-prob, not logprob / len**alpha "
                         "(this answer's prompt states no rule for the reported score)")
        c.expect(worst <= tol or c.verdict == "info",
                 f"a reported score is {worst:.3g} (relative) away from logprob / len**alpha")


def max_new_tokens_unfinished(s: Scene) -> None:
    """With EOS far below every step, K beams of exactly max_new_tokens, as the reference."""
    suite, answer, core, prompts, seqs, eos = s.suite, s.answer, s.core, s.prompts, s.seqs, s.eos
    with suite.check("max_new_tokens_unfinished", threshold="K beams of exactly max_new_tokens", timeout_s=s.timeout,
                     requires=("stopping", "expand_top_2k")) as c:
        cr, ps = core("maxnew", eos_mean=-60.0), prompts("maxnew", (3, 4))
        k, n = 3, 5
        got = answer(cr, ps, k, n, 0.6, eos)
        lengths = sorted({len(b.tokens) for item in got for b in item})
        c.value = f"lengths {lengths}"
        c.expect(lengths == [n] and all(len(item) == k for item in got), f"expected {k} beams of {n} tokens, lengths {lengths}")
        ok, want = s.matches_reference(cr, ps, got, k, n, 0.6)
        c.expect(ok, f"got {[seqs(i) for i in got]}, reference {want}")


def long_beams_log_space(s: Scene) -> None:
    """Beams long enough that their probability underflows float64 still rank as the reference's."""
    suite, answer, core, prompts, seqs, eos = s.suite, s.answer, s.core, s.prompts, s.seqs, s.eos
    with suite.check("long_beams_log_space", threshold="equals reference past exp underflow", timeout_s=s.timeout,
                     requires=("log_space", "penalty_for_ranking_only")) as c:
        # a near-uniform model: about -6.9 per token, so after ~110 tokens a
        # beam's probability is below float64's smallest (exp(-745) == 0); a
        # search that multiplies probabilities ranks every beam as a tie there
        n = int(suite.threshold("log_space_max_new", 140))
        cr, ps = core("logspace", eos_mean=-60.0, spread=0.05), prompts("logspace", (3,))
        got = answer(cr, ps, 2, n, 0.6, eos)
        ok, want = s.matches_reference(cr, ps, got, 2, n, 0.6)
        c.value = f"{sum(seqs(g) == w for g, w in zip(got, want))}/{len(want)} items match after {n} tokens"
        bad = next((i for i, (g, w) in enumerate(zip(got, want)) if seqs(g) != w), 0)
        c.expect(ok, f"item {bad}: beams {[b[:8] for b in seqs(got[bad])] if bad < len(got) else None}... differ from "
                 "the reference once their log-probability passes -745, where exp() underflows to 0 in float64")


def length_penalty_order(suite, answer, core, prompts, eos, vocab, timeout, seqs) -> None:
    """A fixed two-beam case where the length penalty decides the order: a
    short beam [a, EOS] at log-prob log(0.5) and a long one [b, c, d, EOS] at
    about log(0.22). Raw log-prob puts the short one first; logprob / len**alpha
    puts the long one first once alpha passes 1.13 (EOS counted in the length)
    or 0.71 (not counted). Run at a low and a high alpha, the right order
    flips, so an answer that ignores alpha (or uses a constant) or orders its
    result by the raw total fails one of the two on every run. Between the
    two readings' crossovers the order tells which one the answer follows:
    a figure, since len(new_tokens) leaves EOS open."""
    rng = suite.rng("penalty-scenario")
    p = prompts("penalty", (3,))[0]
    a, b, c_, d = (int(t) for t in rng.choice([i for i in range(vocab) if i != eos], size=4, replace=False))
    sure = -1e-3  # near-certain steps: every other token sits ~13.8 below
    overrides = {tuple(p): {a: float(np.log(0.5)), b: float(np.log(0.22))}, tuple(p + [a]): {eos: sure},
                 tuple(p + [b]): {c_: sure}, tuple(p + [b, c_]): {d: sure}, tuple(p + [b, c_, d]): {eos: sure}}
    short, long_ = [a], [b, c_, d]
    lo, hi = float(suite.threshold("penalty_alpha_low", 0.25)), float(suite.threshold("penalty_alpha_high", 2.0))
    with suite.check("length_penalty_order", threshold=f"alpha={lo:g}: short first; alpha={hi:g}: long first",
                     timeout_s=timeout, requires=("penalty_for_ranking_only", "new_tokens_only",
                                                  "finished_beams_compete")) as c:
        results = {}
        for alpha, want in ((lo, [short, long_]), (hi, [long_, short])):
            got = answer(core("penalty", overrides=overrides), [p], 2, 6, alpha, eos)[0]
            results[alpha] = seqs(got)
            c.details[f"alpha={alpha:g}"] = {"got": seqs(got), "expected": want}
            c.expect(seqs(got) == want, f"alpha={alpha:g}: beams {seqs(got)}, expected {want} best first "
                     f"([a, EOS] at log-prob {np.log(0.5):.3f} vs [b, c, d, EOS] at {np.log(0.22) + 3 * sure:.3f}, "
                     "ranked by logprob / len**alpha)")
        c.value = f"alpha={lo:g}: {results[lo]}; alpha={hi:g}: {results[hi]}"
    mid = float(suite.threshold("penalty_alpha_mid", 0.9))
    try:
        got = seqs(answer(core("penalty", overrides=overrides), [p], 2, 6, mid, eos)[0])
    except Exception as exc:  # a figure: never a verdict
        got, reading = None, f"not measured ({type(exc).__name__})"
    else:
        # alpha between the crossovers: counted -> short first, not counted -> long first
        reading = ("EOS counted in the length" if got == [short, long_] else
                   "EOS not counted in the length" if got == [long_, short] else "neither reading")
    suite.reading("eos_in_length", reading, message=f"at alpha={mid:g} the answer ranks {got}: {reading}",
                  accepted=reading.startswith("EOS"))


def selection_new_tokens_length(s: Scene) -> None:
    """The length penalty's length is the number of new tokens wherever beams are
    compared: in the selection of each step's K, not only in the returned order.
    A fixed case, K=3 at alpha=1, on prompts of 3, 8 and 5 tokens in one batch, each
    item built alike: the prompt offers g (-1.6), a (-2.0) and b (-4.0); [g] and [a]
    then end (EOS near-certain: finished beams G and F of 2 new tokens, or 1 without
    EOS), [b] runs on with near-certain tokens to a fork at its 6th token, u1 (total
    -4.48) and u2 (-5.2), which both end next. At that step, by new tokens,
    U1 (-0.75) and U2 (-0.87) beat G (-0.8 or -1.6) and F (-1.0 or -2.0): G, U1 and U2
    are kept, F is dropped, and U1 ranks above G. With the prompt's P tokens counted
    (P + 6 against P + 2 or P + 1) the window closes: F outscores U2, so a search that
    counts them while selecting keeps F and drops U2, and one that counts them while
    ordering ranks G first. Every context a kept beam reaches, under either reading
    of EOS in the length and either place of the bug, is pinned; a pinned context's
    other tokens sit 3.3 nats below its least pinned one at the first step (all
    candidates there are of one length) and 8 or more after."""
    suite, answer, seqs, eos, vocab = s.suite, s.answer, s.seqs, s.eos, s.vocab
    k, n, alpha, lengths = 3, 8, 1.0, (3, 8, 5)
    sure = -1e-3  # near-certain steps: every other token sits ~13.8 below
    ps = s.prompts("selection-length", lengths)
    rng = suite.rng("selection-length-ids")
    overrides: dict[tuple[int, ...], dict[int, float]] = {}
    for p in ps:
        g, a, b, *line = (int(t) for t in rng.choice([i for i in range(vocab) if i != eos], size=9, replace=False))
        u1, u2 = line[4:]
        trunk = [b] + line[:4]  # b and four near-certain tokens: the fork comes at the 6th new token
        overrides[tuple(p)] = {g: -1.6, a: -2.0, b: -4.0}
        overrides[tuple(p + [g])] = overrides[tuple(p + [a])] = {eos: sure}
        for i in range(1, len(trunk)):
            overrides[tuple(p + trunk[:i])] = {trunk[i]: sure}
        fork = -4.48 - (-4.0 + (len(trunk) - 1) * sure)  # U1's total: -4.48; U2's: 0.72 below
        overrides[tuple(p + trunk)] = {u1: fork, u2: fork - 0.72}
        overrides[tuple(p + trunk + [u1])] = overrides[tuple(p + trunk + [u2])] = {eos: sure}
    with suite.check("selection_new_tokens_length", threshold=f"equals reference (K={k}, alpha={alpha:g}, prompts of "
                     f"{', '.join(map(str, lengths))} tokens)", timeout_s=s.timeout,
                     requires=("penalty_for_ranking_only", "finished_beams_compete", "new_tokens_only")) as c:
        core = s.core("selection-length", overrides=overrides)
        what = (f"finished beams competing with longer unfinished ones (K={k}, alpha={alpha:g}, prompts of "
                f"{', '.join(map(str, lengths))} tokens)")
        try:
            got = answer(core, ps, k, n, alpha, eos)
        except Exception as exc:
            _answer_failed(c, exc, what)
        ok, want = s.matches_reference(core, ps, got, k, n, alpha)
        c.value = f"{sum(seqs(g) == w for g, w in zip(got, want))}/{len(want)} items match"
        c.details.update(got=[seqs(item) for item in got], reference=want)
        c.expect(ok, f"{what}: got {[seqs(item) for item in got]}, reference {want}; the length penalty's length "
                 "is the new tokens alone (the prompt's tokens never count), in each step's selection of the K "
                 "kept as in the returned order")


def normalisation_case(suite, answer, core, prompts, eos, vocab, timeout, seqs) -> None:
    """A fixed two-step case where normalising the model's output decides the
    beams. The mock's logits are log-probs plus a constant per context, pinned
    here: +5 on [a]'s context, -5 on [b]'s. By log-probability [b, y] (-1.5)
    beats [a, x] (-2.5); summing the logits instead puts [a, x] first (+2.5
    against -6.5). Where the answer's model hands out log-probs (as its own
    model does when probed) the mock does too, and the case is plain."""
    rng = suite.rng("normalisation-scenario")
    p = prompts("normalisation", (3,))[0]
    a, b, x, y = (int(t) for t in rng.choice([i for i in range(vocab) if i != eos], size=4, replace=False))
    overrides = {tuple(p): {a: -0.5, b: -1.0}, tuple(p + [a]): {x: -2.0}, tuple(p + [b]): {y: -0.5}}
    offsets = {tuple(p + [a]): 5.0, tuple(p + [b]): -5.0}
    want = [[b, y], [a, x]]
    with suite.check("logits_normalised", threshold=f"beams {want} (by log-probability)", timeout_s=timeout,
                     requires=("expand_top_2k",)) as c:
        got = seqs(answer(core("normalisation", overrides=overrides, offsets=offsets), [p], 2, 2, 0.0, eos)[0])
        c.value = f"beams {got}"
        c.details.update(expected=want, got=got)
        c.expect(got == want, f"beams {got}, expected {want} best first: [b, y] has log-prob -1.5, [a, x] -2.5; "
                 "the model's logits carry a constant of +5 on [a]'s context and -5 on [b]'s, which log_softmax "
                 "removes: a search that sums logits without normalising them ranks [a, x] first"
                 if got[:1] == [[a, x]] else f"beams {got}, expected {want} best first ([b, y] at log-prob -1.5, "
                 "[a, x] at -2.5, alpha=0)")


def own_model_contract(suite, h, conv, timeout) -> None:
    """The answer's own model, which every other check replaces with the
    suite's mock, held to what the prompt says a model returns: next-token
    scores of one row per position (or for the last position), for every
    vocabulary entry, finite, the same for the same tokens, and, from a
    method whose name promises log-probabilities, rows whose probabilities
    sum to 1. Lengths 1 and 5; each method the search calls (and forward)."""
    if conv.instance is None and conv.unusable:
        suite.record("own_model_contract", V.FAIL, message=f"its own model returns no scores: {conv.unusable}",
                     requires=("own_model",))
        return
    if conv.instance is None:
        # not a skip (a missing backend): nothing of the answer's own to hold to the contract
        suite.not_exercised("own_model_contract", f"no model of the answer's own could be called "
                            f"({conv.detected_from})", ("own_model",))
        return
    with suite.check("own_model_contract", threshold=f"finite (T, V) or (V,) scores, deterministic; log-prob "
                     f"methods: |logsumexp| <= {h.NORMALISED_TOL:g}", timeout_s=timeout, requires=("own_model",)) as c, \
            suite.contract_only():
        rng = suite.rng("own-model")
        found, worst_lse = [], 0.0
        for name, all_pos in conv.all_positions.items():
            fn = conv.instance if name == "__call__" else getattr(conv.instance, name)
            for length in (1, 5):
                tokens = rng.integers(0, conv.vocab, size=length)
                if conv.token_rank.get(name, 1) == 2:
                    tokens = tokens[None, :]
                extra = h.extra_arguments(fn, tokens)
                out = np.asarray(suite.call(fn, tokens, **extra))
                again = np.asarray(suite.call(fn, tokens, **extra))
                want = tokens.shape + (conv.vocab,) if all_pos else tokens.shape[:-1] + (conv.vocab,)
                what = f"{conv.detected_from}: {name}(tokens of shape {tokens.shape})"
                c.expect(out.shape == want, f"{what} returns shape {out.shape}, expected {want} "
                         f"({'one row per position' if all_pos else 'the last position'}, {conv.vocab} scores)")
                c.expect(bool(np.all(np.isfinite(out))), f"{what} returns non-finite scores")
                c.expect(again.shape == out.shape and bool(np.array_equal(again, out)),
                         f"{what} is not deterministic: two calls on the same tokens differ by "
                         f"{float(np.max(np.abs(again - out))) if again.shape == out.shape else 'shape'}")
                if name in h.LOG_PROB_METHODS:
                    lse = max((h.logsumexp(r) for r in out.reshape(-1, out.shape[-1])), key=abs)
                    worst_lse = max(worst_lse, abs(lse))
                    c.expect(abs(lse) <= h.NORMALISED_TOL,
                             f"{what}: its name promises log-probabilities, but exp() of a row sums to "
                             f"{float(np.exp(lse)):.4g}, not 1 (logsumexp {lse:.3g}): the model's own "
                             "log-probs are not normalised (log_softmax missing)")
            found.append(name)
        c.value = worst_lse
        c.message = f"{conv.detected_from}: {', '.join(found)} at lengths 1 and 5"


def smallest_inputs(suite, answer, core, prompts, eos, vocab, timeout, seqs, matches_reference) -> None:
    """The smallest inputs the contract allows, smallest first, each against
    the reference: a prompt of one token (the model sees a single position),
    one new token, and EOS near-certain at the first step beside one clear
    runner-up (a finished beam with no token but EOS, K=2, alpha=0: no
    length reading matters). An empty batch
    and max_new_tokens=0 are left open by the prompts: readings only."""
    cases = [("a one-token prompt", (1,), 2, 3, 0.6, None), ("one new token", (1, 2), 3, 1, 0.6, None),
             ("EOS certain at the first step", (2,), 2, 3, 0.0, "eos-first")]
    with suite.check("smallest_inputs", threshold="equals reference on each case", timeout_s=timeout,
                     requires=("stopping", "finished_beams_compete", "new_tokens_only")) as c:
        for label, lengths, k, n, alpha, special in cases:
            ps = prompts(f"smallest-{label}", lengths)
            # EOS near-certain and one clear runner-up: no ties among the tokens a search keeps
            runner_up = next(t for t in range(vocab) if t != eos)
            overrides = {tuple(ps[0]): {eos: -0.01, runner_up: -5.0}} if special else None
            cr = core(f"smallest-{label}", overrides=overrides)
            try:
                got = answer(cr, ps, k, n, alpha, eos)
            except Exception as exc:  # still the answer's error: name the case it met
                if exc.args and isinstance(exc.args[0], str):
                    exc.args = (f"{label}: {exc.args[0]}", *exc.args[1:])
                raise
            ok, want = matches_reference(cr, ps, got, k, n, alpha)
            c.details[label] = {"got": [seqs(item) for item in got], "reference": want}
            c.expect(ok, f"{label} (prompt lengths {list(lengths)}, K={k}, max_new_tokens={n}, alpha={alpha:g}): "
                     f"got {[seqs(item) for item in got]}, reference {want}")
        c.value = f"{len(cases)} cases"
        c.message = "; ".join(label for label, *_ in cases)
    for label, ps, n in (("empty_batch", [], 3), ("zero_new_tokens", prompts("smallest-zero", (3,)), 0)):
        try:
            got = answer(core(f"smallest-{label}"), ps, 2, n, 0.6, eos)
        except Exception as exc:  # a figure: the prompts do not say what these return
            reading = f"raises {type(exc).__name__}"
        else:
            reading = f"returns {[seqs(item) for item in got]}"
        suite.reading(label, reading, message=f"{label.replace('_', ' ')} (left open by the prompts): {reading}")


def _answer_failed(c, exc: Exception, what: str) -> None:
    """An error raised in the answer's process fails the check with the case named; any other is ours."""
    if getattr(exc, "remote_where", None) is None:
        raise exc
    c.fail(f"{what}: the search raised {getattr(exc, 'remote_type', type(exc).__name__)}: {exc}")


def large_vocabulary(s: Scene) -> None:
    """A model of a real tokenizer's size (Qwen's 151,936 tokens): the prompts,
    the tokens the model favours and EOS are ids of 2^15, 2^16 and beyond, so a
    search that keeps token ids in 16 bits (or sizes anything by the toy
    model's 1000 tokens) returns other beams than the reference. The mock's
    log-probs are drawn on a support of a few dozen such ids, the rest of the
    vocabulary far below them."""
    suite, h, answer = s.suite, s.h, s.answer
    vocab = int(suite.threshold("large_vocab", 151936))
    rng = suite.rng("large-vocab")
    low, high = 1 << 15, 1 << 16
    support = np.unique(np.concatenate([rng.integers(low, high, size=16), rng.integers(high, vocab, size=48)]))
    eos = int(support[-1])
    core = h.MockCore(vocab, int(rng.integers(2**31)), eos, eos_mean=0.0, support=support)
    ps = [[int(t) for t in rng.integers(high, vocab, size=n)] for n in (3, 2)]
    k, n, alpha = 2, 4, 0.6
    with suite.check("large_vocabulary", threshold=f"equals reference with {vocab} tokens", timeout_s=s.timeout,
                     requires=("expand_top_2k", "new_tokens_only")) as c:
        what = f"a {vocab}-token vocabulary (prompts, favoured tokens and EOS={eos} are ids above {low - 1})"
        try:
            got = answer(core, ps, k, n, alpha, eos)
        except Exception as exc:
            _answer_failed(c, exc, what)
        scene = Scene(suite, h, s.ref, answer, vocab, eos, s.timeout)
        ok, want = scene.matches_reference(core, ps, got, k, n, alpha)
        seqs = scene.seqs
        c.value = f"{sum(seqs(g) == w for g, w in zip(got, want))}/{len(want)} items match"
        c.details.update(vocab=vocab, eos=eos, got=[seqs(item) for item in got], reference=want)
        if not ok:
            drawn = {int(t) for t in support} | {t for p in ps for t in p}
            stray = sorted({t for item in got for b in item for t in b.tokens} - drawn)
            wrapped = [t for t in stray if any(t % high == d % high or t % low == d % low for d in drawn)]
            why = (f"ids {wrapped[:4]} are the model's ids cut to 16 bits: token ids stored in 16 bits" if wrapped else
                   f"ids {stray[:4]} were never offered by the model" if stray else
                   "the beams differ: ids of 2^15 and more lose their value somewhere (16-bit token ids, or the "
                   "prompt or candidates sized by a small vocabulary)")
            c.fail(f"{what}: got {[seqs(item) for item in got]}, reference {want}; {why}")


def logits_row_spread(s: Scene) -> None:
    """One context's logits span about 1500 (with a constant of +900 on top), the
    largest mid-row and the first and last ids lowest: a log-softmax that
    subtracts some other logit of the row (its first, last, minimum or mean),
    or none, overflows exp() there and ranks every candidate alike. Two steps,
    K=2, alpha=0: the beams are those of the log-probabilities."""
    suite, answer, seqs, eos, vocab = s.suite, s.answer, s.seqs, s.eos, s.vocab
    rng = suite.rng("row-spread")
    p = s.prompts("row-spread", (3,))[0]
    a, b, x, y = (int(t) for t in rng.choice([i for i in range(1, vocab - 1) if i != eos], size=4, replace=False))
    far = {0: -1500.0, vocab - 1: -1500.0}
    overrides = {tuple(p): {**far, a: -0.4, b: -1.3}, tuple(p + [a]): {**far, x: -2.0}, tuple(p + [b]): {**far, y: -0.3}}
    offsets = {tuple(p): 900.0, tuple(p + [a]): 900.0, tuple(p + [b]): 900.0}
    with suite.check("logits_row_spread", threshold="equals reference with one row's logits spanning 1500",
                     timeout_s=s.timeout, requires=("log_space", "expand_top_2k")) as c:
        core = s.core("row-spread", overrides=overrides, offsets=offsets)
        what = ("logits spanning 1500 in one row (about +900 mid-row, the first and last ids 1500 below): a "
                "log-softmax must subtract the row's maximum, not another of its logits, before exp()")
        try:
            got = answer(core, [p], 2, 2, 0.0, eos)
        except Exception as exc:
            _answer_failed(c, exc, what)
        ok, want = s.matches_reference(core, [p], got, 2, 2, 0.0)
        c.value = f"beams {seqs(got[0])}"
        c.details.update(got=seqs(got[0]), reference=want[0])
        c.expect(ok, f"{what}; got {seqs(got[0])}, reference {want[0]}")


def vocab_at_and_below_2k(s: Scene) -> None:
    """Vocabularies of exactly 2K and of 2K - 1 tokens (K=3): a beam's top 2K
    candidates are every token there, and a search that asks for 2K of them
    from a smaller row (np.argpartition at kth=2K, a fixed-size buffer) breaks.
    Every other case has a vocabulary far above 2K."""
    suite, h, answer = s.suite, s.h, s.answer
    k, n, alpha = 3, 3, 0.6
    with suite.check("vocab_at_and_below_2k", threshold=f"equals reference with V = {2 * k} and {2 * k - 1}, K={k}",
                     timeout_s=s.timeout, requires=("expand_top_2k",)) as c:
        for vocab in (2 * k, 2 * k - 1):
            rng = suite.rng(f"vocab-{vocab}")
            eos = vocab - 1 if vocab == 2 * k else 0  # the edges of the ids, fixed: not a draw
            core = h.MockCore(vocab, int(rng.integers(2**31)), eos, eos_mean=-1.0)
            ps = [[int(t) for t in rng.choice([i for i in range(vocab) if i != eos], size=m)] for m in (2, 3)]
            what = f"a vocabulary of {vocab} tokens, {'equal to' if vocab == 2 * k else 'fewer than'} the 2K={2 * k} candidates a beam expands into (K={k})"
            try:
                got = answer(core, ps, k, n, alpha, eos)
            except Exception as exc:
                _answer_failed(c, exc, what)
            scene = Scene(suite, h, s.ref, answer, vocab, eos, s.timeout)
            ok, want = scene.matches_reference(core, ps, got, k, n, alpha)
            seqs = scene.seqs
            c.details[f"V={vocab}"] = {"got": [seqs(item) for item in got], "reference": want}
            c.expect(ok, f"{what}: got {[seqs(item) for item in got]}, reference {want}")
        c.value = f"V = {2 * k} and {2 * k - 1} with K={k}"


# stages run alone by tests (``run_stages``): the checks a planted bug is about, exactly as in run()
STAGES: dict[str, Callable[[Scene], None]] = {"selection_new_tokens_length": selection_new_tokens_length}


def run_stages(suite, stages) -> None:
    s = scene(suite)
    for stage in stages:
        STAGES[stage](s)
