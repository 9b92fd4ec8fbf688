"""``benchtui challenge check ID``: is a challenge plugin sound?

- the reference passes its own suite, on several seeds;
- every check names the prompt requirement(s) it tests (``requires=``), every
  requirement is tested by some check, and each requirement's words are the
  prompt's own;
- every tolerance sits well outside the reference's noise: the reference's
  worst value over the seeds is at least ``margin`` times inside the threshold,
  or the challenge says why it need not be (``[thresholds_near_reference]``,
  check name -> the reason: a bar that is the prompt's own definition, or one
  that separates two kinds of answer, shown in the report);
- PROMPT.md's hash is a known prompt version (or every answer's prompt reads
  as unknown);
- beside the verdict, the suite's mutation score on the reference: an audit
  of the reference alone (``reference_mutation_score``, sandboxed like every
  audit), a figure that never fails a plugin.

The reference runs as the answer through ``benchtui.runner.local`` (no
sandbox): it and the suite are the author's own trusted code. A CUDA
challenge's reference is the checker's oracle, not an answer that nvcc
builds, and an imported deck problem's reference that ``benchtui run`` would
not run on this CPU is not run either: the items that rest on running it are
reported as not judged. A plugin is called sound only when every item was
judged and none failed, the mutation score measured.
"""
from __future__ import annotations

import functools
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.challenges import contracts, coverage
from benchtui.challenges.definition import Challenge
from benchtui.challenges.prompts import file_prompt_sha256, prompt_versions, version_for_sha
from benchtui.challenges.reference_answer import module_answer, reference_answer_files, write_reference_answer
from benchtui.records.verdicts import FORBIDDEN, INFO, PASS

# Checks the engine records around every suite: they test the plugin, not a requirement.
ENGINE_CHECKS = {"forbidden_imports", "implementations", "bind", "conformance", "adapter", "prompt"}
PLUGIN_FILES = ("challenge.toml", "PROMPT.md", "reference.py", "conformance.py", "ADAPTER.md")
NOT_SOUND_NOTE = "not measured: the plugin is not sound (see FAIL above)"


@dataclass
class Item:
    name: str
    ok: bool | None  # None: not judged here, with the reason as its message
    message: str
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"name": self.name, "ok": self.ok, "message": self.message, "details": self.details}


@dataclass
class Report:
    challenge: str
    items: list[Item] = field(default_factory=list)
    mutation: dict | None = None  # reference_mutation_score(): a figure beside the verdict, never a FAIL

    @property
    def failed(self) -> bool:
        return any(i.ok is False for i in self.items)

    @property
    def mutation_measured(self) -> bool:
        """A score was measured: mutants were made and some were killed or survived. An
        audit whose baseline failed, that made no mutant, or whose every mutant was
        likely equivalent tried nothing, and a count of zero is no success."""
        return mutation_tried(self.mutation)

    @property
    def not_judged(self) -> list[str]:
        """Every item left unjudged here, the mutation score among them when it was not measured."""
        return [i.name for i in self.items if i.ok is None] + ([] if self.mutation_measured else ["mutation_score"])

    @property
    def sound(self) -> bool:
        """Nothing failed and everything was judged: a plugin checked in part is not called sound."""
        return not self.failed and not self.not_judged

    def verdict(self) -> str:
        if self.failed:
            return "not sound: see FAIL above"
        if self.not_judged:
            return f"no item failed, but not everything was judged (see -- above): {', '.join(self.not_judged)}"
        return "sound"

    def mutation_text(self) -> str:
        m = self.mutation
        if not m:
            return NOT_SOUND_NOTE if self.failed else "not measured (--mutants 0)"
        if m.get("score") is None or not self.mutation_measured:
            return m.get("note") or "not judged: no mutant of the reference was killed or survived"
        return (f"{m['score']:.0%} of the reference's mutants killed ({m['killed']} killed, {m['survived']} survived, "
                f"{m['equivalent']} likely equivalent; benchtui audit -c {self.challenge} --show lists them)")

    def as_dict(self) -> dict:
        m = self.mutation or {}
        return {"challenge": self.challenge, "sound": self.sound, "failed": self.failed,
                "not_judged": self.not_judged, "items": [i.as_dict() for i in self.items],
                "mutation_score": m.get("score"), "mutation": m or None, "mutation_score_note": self.mutation_text()}


def mutation_tried(m: dict | None) -> bool:
    """Whether a reference audit's figure rests on mutants run: at least one made and at
    least one killed or surviving (not all likely equivalent), its baseline passing."""
    if not m or m.get("score") is None:
        return False
    return int(m.get("mutants") or 0) > 0 and int(m.get("killed") or 0) + int(m.get("survived") or 0) > 0


def why_reference_cannot_run_here(challenge: Challenge) -> str | None:
    """Why an imported deck problem's reference cannot be run as the answer on this
    machine (the items resting on it are then not judged), or None. Without a GPU it
    is asked what ``benchtui run`` asks of every answer on the CPU (module_suite's
    ``not_on_cpu``): a reference that fits is run, whichever deck it comes from."""
    if not isinstance(challenge.raw.get("module"), dict):
        return None
    try:
        import torch
    except ImportError:
        return "not judged: PyTorch is not installed here (pip install 'benchtui[torch]'); the reference is a torch module"
    if torch.cuda.is_available():
        return None
    from benchtui.verify.module.suite import Spec, not_on_cpu

    try:
        spec = Spec.read(challenge.path)
    except (OSError, ValueError) as exc:  # the suite records the same as its own error when run
        return f"not judged: this challenge's [module] table cannot be read: {exc}"
    why = not_on_cpu(challenge.path, spec, reference_answer_files(challenge))
    if why:
        return f"not judged: the reference as the answer {why}; run `challenge check` where torch sees a GPU"
    return None


def reference_backend(challenge: Challenge) -> str:
    """Where the reference runs as the answer: an imported deck problem on the GPU
    where torch sees one (its shapes are sized for one), everything else on the CPU."""
    if module_answer(challenge) is None:
        return "cpu"
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def run_reference(challenge: Challenge, seed: int, on_check: Callable[[str, dict], None] | None = None) -> dict:
    """The suite's checks with the challenge's reference as the answer (its
    ``adapters/reference.py`` binds it where its API is not the contract).
    ``on_check``: run_local's, said as each check starts and ends (progress)."""
    from benchtui.runner.local import run_local

    with tempfile.TemporaryDirectory(prefix="benchtui-check-") as tmp:
        answer = Path(tmp) / "reference-as-answer"
        answer.mkdir()
        write_reference_answer(challenge, answer)
        return run_local(challenge.path.name, answer, model="reference", seed=seed,
                         backend=reference_backend(challenge), challenges_dir=challenge.path.parent, copy=False,
                         on_check=on_check)


def check_files(challenge: Challenge) -> Item:
    missing = [f for f in PLUGIN_FILES if not (challenge.path / f).is_file()]
    if missing:
        return Item("files", False, f"missing {', '.join(missing)}", {"missing": missing})
    return Item("files", True, "challenge.toml, PROMPT.md, reference.py, conformance.py, ADAPTER.md present")


def failing_line(c: dict) -> str:
    """A failing check in one line: its message cut short, except the suite's own
    failure (conformance.py did not load), which says what to fix."""
    limit = 400 if c["name"] == "conformance" else 120
    return f"{c['name']}: {c['verdict']} {c['message'][:limit]}".rstrip()


# A deck's forbidden-op rule binds its answers: the deck's own reference is the
# plain-torch baseline and calls the very ops an answer may not.
REFERENCE_EXEMPT = {"forbidden_ops", "forbidden_calls"}


def check_reference(runs: dict[int, dict], deck: bool = False) -> Item:
    """``deck``: an imported deck problem, whose reference may call what its forbidden list names."""
    exempt = REFERENCE_EXEMPT if deck else set()

    def failing(c: dict) -> bool:
        return c["verdict"] not in (PASS, INFO) and not (c["name"] in exempt and c["verdict"] == FORBIDDEN)

    bad = {seed: [failing_line(c) for c in r["checks"] if failing(c)] for seed, r in runs.items()}
    bad = {seed: lines for seed, lines in bad.items() if lines}
    seeds = ", ".join(map(str, runs))
    if bad:
        seed, lines = next(iter(bad.items()))
        return Item("reference_passes", False,
                    f"the reference does not pass its own suite on seed(s) {', '.join(map(str, bad))}: "
                    + "; ".join(lines[:3]), {"failing": {str(s): v for s, v in bad.items()}})
    first = next(iter(runs.values()))["checks"]
    n = sum(1 for c in first if c["verdict"] == PASS)
    if n == 0:  # a suite that passed nothing tried nothing
        return Item("reference_passes", None, f"not judged: no check passed or failed on seeds {seeds} "
                                              "(all skipped or informational)")
    own = sorted({c["name"] for r in runs.values() for c in r["checks"]
                  if c["name"] in exempt and c["verdict"] == FORBIDDEN})
    said = (f"; it calls what the deck forbids its answers ({', '.join(own)}), as a deck's reference does"
            if own else "")
    return Item("reference_passes", True, f"the reference passes all {n} checks on seeds {seeds}{said}",
                {"forbidden_to_answers": own} if own else {})


def check_requirements(challenge: Challenge, checks: list[dict]) -> list[Item]:
    """Every check names the requirements it tests; every checkable requirement
    is tested by some check (one declared ``checkable = false`` carries its
    reason instead); the requirements that apply to PROMPT.md's own version
    quote it (others quote other versions of the prompt, not shipped here)."""
    declared = {r["id"]: r for r in coverage.requirements(challenge)}
    if not declared:
        return [Item("requirements", False, "challenge.toml has no [requirements] table: id = \"the prompt's own words\"")]
    items = []
    graded = [c for c in checks if c["verdict"] != INFO and c["name"].split("::")[-1] not in ENGINE_CHECKS]
    unnamed = [c["name"] for c in graded if not c.get("requires")]
    unknown = sorted({f"{c['name']} -> {r}" for c in graded for r in c.get("requires") or [] if r not in declared})
    named = {r for c in graded for r in c.get("requires") or []}
    # a check the reference cannot reach (the adapter builds what it tests) still
    # names its requirement; the report says the reference left it unexercised
    unreached = {r: f"{c['name']}: {why}" for c in checks for r, why in
                 ((c.get("details") or {}).get("not_exercised") or {}).items() if r not in named}
    untested = [r for r, spec in declared.items() if r not in named and r not in unreached and spec["checkable"]]
    problems = []
    if unnamed:
        problems.append(f"checks naming no requirement: {', '.join(unnamed)}")
    if unknown:
        problems.append(f"requirements not in [requirements]: {', '.join(unknown)}")
    if untested:
        problems.append(f"requirements no check tests: {', '.join(untested)}")
    checkable = sum(spec["checkable"] for spec in declared.values())
    unreached_note = (f"; not exercised on the reference: {', '.join(sorted(unreached))} "
                      f"({'; '.join(sorted(set(unreached.values())))})" if unreached else "")
    items.append(Item("checks_name_requirements", not problems,
                      "; ".join(problems) or f"each of {len(graded)} checks names its requirement(s); all {checkable} "
                                              f"checkable requirements are tested ({len(declared) - checkable} "
                                              "declared not checkable, with a reason)" + unreached_note,
                      {"checks": {c["name"]: c.get("requires") or [] for c in graded}, "untested": untested,
                       "not_exercised_on_reference": unreached}))
    try:
        prompt = coverage.words(challenge.prompt_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return [*items, Item("requirements_quote_prompt", False, f"cannot read PROMPT.md: {exc}")]
    version = version_for_sha(challenge, file_prompt_sha256(challenge.prompt_path))
    mine = coverage.requirements(challenge, version)
    not_quoted = [r["id"] for r in mine if coverage.words(r["words"]) not in prompt]
    where = f"prompt version {version}" if version else "PROMPT.md"
    items.append(Item("requirements_quote_prompt", not not_quoted,
                      f"not the prompt's own words: {', '.join(not_quoted)} (quote PROMPT.md)" if not_quoted
                      else f"all {len(mine)} requirements of {where} quote it", {"not_quoted": not_quoted}))
    versions = challenge.raw.get("prompts") or {}
    stray = sorted({f"{v}: {r}" for v, spec in versions.items() if isinstance(spec, dict)
                    for r in spec.get("requirements") or [] if r not in declared})
    if stray:
        items.append(Item("version_requirements", False, f"prompt versions name unknown requirements: {', '.join(stray)}"))
    return items


def _number(x) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


def check_margins(runs: dict[int, dict], margin: float, near: dict[str, str] | None = None) -> Item:
    """For each check with a numeric value and threshold that the reference
    meets from below, the threshold must sit outside the reference's noise:
    ``margin`` times the reference's worst value (an error, whose ideal is 0),
    or ``margin`` times its spread over the seeds beyond it (a quantity), or
    ``near`` gives the reason it need not (the challenge's
    ``[thresholds_near_reference]``)."""
    near = near or {}
    values: dict[str, list[float]] = {}
    thresholds: dict[str, float] = {}
    for r in runs.values():
        for c in r["checks"]:
            value, threshold = _number(c.get("value")), _number(c.get("threshold"))
            if c["name"].split("::")[-1] in ENGINE_CHECKS:
                continue
            if c["verdict"] == PASS and value is not None and threshold is not None:
                values.setdefault(c["name"], []).append(value)
                thresholds[c["name"]] = threshold
    rows, close, not_tolerance = {}, [], []
    for name, vals in values.items():
        threshold, worst = thresholds[name], max(vals)
        if worst > threshold:  # passes from above (a floor, e.g. a fraction of tokens): no tolerance to judge
            not_tolerance.append(name)
            continue
        ratio = math.inf if worst <= 0 else threshold / worst
        spread = worst - min(vals)
        # Outside the noise: an error-like figure far below its threshold, or a
        # figure that is a real quantity (a ratio near 2) whose threshold sits
        # many times its seed-to-seed spread away. With no spread measured, only
        # the first rule can vouch for it.
        by_spread = len(vals) >= 2 and spread > 0 and threshold - worst >= margin * spread
        rows[name] = {"threshold": threshold, "reference_worst": worst, "reference_best": min(vals),
                      "margin": "inf" if math.isinf(ratio) else round(ratio, 2), "spread": spread,
                      "rule": "ratio" if ratio >= margin else "spread" if by_spread else "none"}
        if ratio < margin and not by_spread and name in near:
            rows[name]["rule"] = "declared"
            rows[name]["reason"] = near[name]
        elif ratio < margin and not by_spread:
            close.append(f"{name} (threshold {threshold:g}, reference up to {worst:.3g}: {ratio:.1f}x; "
                         f"spread over seeds {spread:.3g})")
    details = {"margin_wanted": margin, "tolerances": rows, "floors_not_judged": not_tolerance}
    if close:
        return Item("thresholds_outside_noise", False,
                    f"thresholds within {margin:g}x of the reference's own values: {'; '.join(close)}", details)
    if not rows:  # nothing measured is no margin cleared
        return Item("thresholds_outside_noise", None, "not judged: no check reported a numeric value under its "
                                                      "threshold, so no tolerance was measured", details)
    judged = {n: r for n, r in rows.items() if r["rule"] != "declared"}
    declared = [f"{n} ({r['margin']}x: {r['reason']})" for n, r in rows.items() if r["rule"] == "declared"]
    said = f"; near the reference by design: {'; '.join(declared)}" if declared else ""
    if not judged:
        return Item("thresholds_outside_noise", True, f"no tolerance judged by the noise rule{said}", details)
    worst = min(judged, key=lambda n: math.inf if judged[n]["margin"] == "inf" else judged[n]["margin"])
    closest = ("the reference is exact (0) on every one" if judged[worst]["margin"] == "inf"
               else f"closest: {worst}, {judged[worst]['margin']}x its worst value")
    return Item("thresholds_outside_noise", True,
                f"{len(judged)} thresholds sit outside the reference's noise over {len(runs)} seeds ({closest}){said}",
                details)


def check_contracts(challenge: Challenge, check_names: set[str], static: bool = False) -> Item:
    """The contract table (``contracts.toml``): each contract the prompt states names a check
    the suite records (or names in its source), or says why none can judge it. ``static``: the
    suite was not run here, so its names are read from its source alone."""
    try:
        table = contracts.load(challenge.path)
    except contracts.TableError as exc:
        return Item("contracts_checked", False, str(exc))
    if table is None:
        return Item("contracts_checked", True, f"no contract table ({contracts.FILENAME}): nothing to enforce")
    try:
        prompt = challenge.prompt_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Item("contracts_checked", False, f"cannot read PROMPT.md: {exc}")
    problems = contracts.problems(table, prompt, check_names)
    from benchtui.audit.mutate import OPERATORS  # libcst: only where a table is checked
    try:
        problems += contracts.open_problems(contracts.load_open(challenge.path), prompt, set(OPERATORS))
    except contracts.TableError as exc:
        problems.append(str(exc))
    rows = [c.as_dict() for c in table]
    if problems:
        return Item("contracts_checked", False, "; ".join(problems[:4]) + (f" (+{len(problems) - 4} more)"
                                                                          if len(problems) > 4 else ""),
                    {"problems": problems, "contracts": rows})
    open_ = sum(1 for c in table if c.not_checkable)
    where = " (check names read from the suite's source: it is not run here)" if static else ""
    return Item("contracts_checked", True, f"{len(table) - open_} stated contracts each name the checks that "
                                           f"exercise them; {open_} marked not checkable, with a reason{where}",
                {"contracts": rows})


def static_names(challenge: Challenge) -> set[str]:
    from benchtui.verify.cuda import suite as cuda_suite

    return contracts.static_check_names(challenge.path / "conformance.py", Path(cuda_suite.__file__))


def check_prompt_version(challenge: Challenge) -> Item:
    sha = file_prompt_sha256(challenge.prompt_path)
    known = {v: spec["sha256"] for v, spec in prompt_versions(challenge).items()}
    hit = [v for v, hashes in known.items() if sha in hashes]
    if hit:
        return Item("prompt_version", True, f"PROMPT.md is prompt version {hit[0]}")
    return Item("prompt_version", False,
                f"PROMPT.md's hash is under no [prompts.<version>]: add sha256 = [\"{sha}\"] "
                "(else every answer's prompt reads as unknown)", {"sha256": sha})


def check_challenge(challenge: Challenge, *, seeds: tuple[int, ...] = (1, 2, 3), margin: float = 10.0,
                    on_step: Callable[[str, int, int], None] | None = None,
                    on_check: Callable[[int, str, dict], None] | None = None) -> Report:
    """``on_step(doing, done, total)``: said before each run of the reference (progress);
    ``on_check(seed, kind, record)``: as each of its checks starts and ends."""
    report = Report(challenge.id)
    files = check_files(challenge)
    report.items.append(files)
    if not files.ok:
        return report
    if challenge.language == "cuda":
        why = ("not judged: a CUDA challenge's reference.py is the checker's float64 oracle, not an answer nvcc "
               "builds; its suite is proved on a GPU by a known-good kernel (pytest -m gpu)")
        report.items.extend(Item(name, None, why) for name in
                            ("reference_passes", "checks_name_requirements", "thresholds_outside_noise"))
        report.items.extend(i for i in check_requirements(challenge, []) if i.name != "checks_name_requirements")
        report.items.append(check_contracts(challenge, static_names(challenge), static=True))
        report.items.append(check_prompt_version(challenge))
        return report
    why = why_reference_cannot_run_here(challenge)
    if why:
        report.items.extend(Item(name, None, why) for name in
                            ("reference_passes", "checks_name_requirements", "thresholds_outside_noise"))
        report.items.extend(i for i in check_requirements(challenge, []) if i.name != "checks_name_requirements")
        report.items.append(check_prompt_version(challenge))
        return report
    runs = {}
    for i, seed in enumerate(seeds):
        if on_step is not None:
            on_step(f"the reference's checks, seed {seed}", i, len(seeds))
        runs[seed] = run_reference(challenge, seed, None if on_check is None else functools.partial(on_check, seed))
    report.items.append(check_reference(runs, deck=module_answer(challenge) is not None))
    report.items.extend(check_requirements(challenge, runs[seeds[0]]["checks"]))
    # a check the reference does not reach (an adapter's, a GPU's) is named in the suite's source
    report.items.append(check_contracts(challenge, contracts.recorded_names(runs[seeds[0]]["checks"])
                                        | static_names(challenge)))
    near = {str(k): str(v) for k, v in (challenge.raw.get("thresholds_near_reference") or {}).items()}
    report.items.append(check_margins(runs, margin, near))
    report.items.append(check_prompt_version(challenge))
    return report


def reference_mutation_score(workbench, challenge: Challenge, mutants: int,
                             on_step: Callable[[str, int, int], None] | None = None) -> dict | None:
    """The suite's strength on its own reference: ``benchtui audit`` of the
    reference only (sandboxed, cached in the workbench's store like any audit).
    ``None`` with ``mutants`` 0; a note instead of a score where it cannot run.
    ``on_step(doing, done, total)``: said as each mutant ends (progress)."""
    if mutants <= 0:
        return None
    from benchtui.audit.core import REFERENCE, AuditOptions, Auditor
    from benchtui.audit.report import challenge_reports
    from benchtui.runner import sandbox
    from benchtui.store.database import Store

    if challenge.language == "cuda":
        return {"score": None, "note": "not measured: CUDA sources are not mutated yet"}
    why = why_reference_cannot_run_here(challenge)
    if why:
        return {"score": None, "note": why.replace("not judged", "not measured", 1)}
    try:
        sandbox.choose_layer("auto")
    except sandbox.SandboxUnavailable as exc:
        return {"score": None, "note": f"not measured: {exc}"}
    def on_event(event) -> None:
        if on_step is not None and event.kind in ("baseline", "mutant"):
            on_step("the reference's baseline" if event.kind == "baseline" else f"mutant {event.done} of {event.total}",
                    event.done, event.total or 1)

    Auditor(workbench, AuditOptions(models=[REFERENCE], challenges=[challenge.id], mutants=mutants, jobs=2),
            on_event=on_event).run()
    with Store(workbench.store_path) as store:
        report = next((c for c in challenge_reports(store) if c["challenge"] == challenge.id), None)
    ref = next((a for a in (report or {}).get("answers", []) if a["model"] == REFERENCE), None)
    if ref is None:
        return {"score": None, "note": "not judged: the audit made no mutants of the reference", "mutants": 0}
    counts = {"killed": ref["killed"], "survived": ref["survived"], "equivalent": ref["equivalent"],
              "mutants": ref["mutants"], "status": ref["status"]}
    if ref["status"] == "baseline_failed":
        return {"score": None, **counts, "note": f"not judged: the audit's baseline failed ({ref['message']}), "
                                                 "so no mutant was tried"}
    if not ref["mutants"]:
        why = ref["message"] or ref["status"]
        return {"score": None, **counts, "note": f"not judged: the audit made no mutant of the reference ({why})"}
    if ref["score"] is None:
        return {"score": None, **counts, "note": f"not judged: all {ref['mutants']} mutants of the reference were "
                                                 "likely equivalent or errors; none was killed or survived"}
    return {"score": ref["score"], **counts}
