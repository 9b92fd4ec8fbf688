"""What the judge is given for one answer: the prompt it was written to, its
files (capped by one rule), and, with evidence, what benchtui's suite found.

The cap, in the order the files are given: the answer's main source first
(engine/workbench/answer_files.py), then its other sources by path, then its
documents by path. A file longer than ``FILE_CAP`` characters is cut there,
and once ``TOTAL_CAP`` characters of files are given, the rest are left out
whole. Transcripts, data, the handed-out prompt's copies, binary and
unreadable files are never given. Every file cut or left out is named, with
why, both to the judge and in the dry run.

The answer's folder is only read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from benchtui.records.coverage import describe
from benchtui.records.verdicts import FAIL, INFO, PARTIAL, PASS, SKIPPED
from benchtui.store import judging, queries
from benchtui.store.database import Store
from benchtui.workbench.answer_files import main_source
from benchtui.workbench.layout import Workbench

FILE_CAP = 40_000
TOTAL_CAP = 120_000
DETAIL_CAP = 1_500  # one check's message, as given with the evidence
GIVEN_KINDS = ("source", "cuda", "doc")
NEVER_GIVEN = {"transcript": "a session transcript", "data": "data", "prompt": "the handed-out prompt",
               "artifact": "not source or text"}
MODES = ("blind", "evidence")
NO_VERDICT = "The suite has not judged this answer: there is no verdict. Grade it on what you can see, as if blind."


class MaterialError(ValueError):
    """An answer that cannot be judged (no folder, nothing to read); one line."""


@dataclass
class Material:
    model: str
    challenge: str
    mode: str
    prompt_from: str               # where the prompt came from ("the answer's PROMPT.md", ...)
    prompt: str
    files: list[tuple[str, str]]   # (relpath, text as given)
    left_out: list[str] = field(default_factory=list)   # "name: why", cut files too
    evidence: str | None = None    # the suite's findings as given (evidence mode)

    def body(self) -> str:
        """The user message: the task, the answer's files, the evidence."""
        parts = [f"# The task the answer was written to ({self.prompt_from})", "", self.prompt.strip(), "",
                 f"# The answer: {self.model}/{self.challenge}", ""]
        for relpath, text in self.files:
            fence = "````" if "```" in text else "```"
            parts += [f"## {relpath}", fence, text.rstrip("\n"), fence, ""]
        if not self.files:
            parts += ["(the answer holds no source or text file)", ""]
        if self.left_out:
            parts += ["Left out or cut (the size cap, or not source or text):",
                      *[f"- {item}" for item in self.left_out], ""]
        if self.evidence is not None:
            parts += ["# What benchtui's hidden test suite found when it ran this answer", "", self.evidence, ""]
        return "\n".join(parts)


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def answer_prompt(workbench: Workbench, answer_dir: Path, challenge: str) -> tuple[str, str]:
    """(where from, text): the answer folder's own PROMPT.md, else the challenge's."""
    own = answer_dir / "PROMPT.md"
    if own.is_file() and (text := _read(own)) is not None:
        return "the PROMPT.md in the answer's folder", text
    found = workbench.challenges.get(challenge)
    if found is not None and found.prompt_path.is_file() and (text := _read(found.prompt_path)) is not None:
        return f"the challenge {challenge}'s PROMPT.md", text
    raise MaterialError(f"{challenge}: no PROMPT.md in the answer's folder nor in the challenge, so the judge "
                        "would not know the task")


def gather(store: Store, workbench: Workbench, model: str, challenge: str, mode: str) -> Material:
    """The material for one answer in ``mode`` (``blind`` or ``evidence``)."""
    if mode not in MODES:
        raise MaterialError(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")
    answer = queries.answer_row(store, model, challenge)
    if answer is None or not answer["present"]:
        raise MaterialError(f"{model} has no folder for {challenge}")
    folder = workbench.root / answer["path"]
    prompt_from, prompt = answer_prompt(workbench, folder, challenge)
    rows = queries.answer_files(store, answer["id"])
    material = Material(model, challenge, mode, prompt_from, prompt, [])
    found = workbench.challenges.get(challenge)
    names = [challenge, *((found.title, found.display_name) if found else ())]
    first = main_source(rows, names, found.language if found else None)
    kind_rank = {"source": 0, "cuda": 0, "doc": 1}
    given = sorted((r for r in rows if r["kind"] in GIVEN_KINDS),
                   key=lambda r: (r["relpath"] != first, kind_rank[r["kind"]], r["relpath"]))
    for r in rows:
        if r["kind"] not in GIVEN_KINDS and not (r["relpath"] == "PROMPT.md" and prompt_from.endswith("folder")):
            material.left_out.append(f"{r['relpath']} ({r['size']:,} bytes): left out, "
                                     f"{NEVER_GIVEN.get(r['kind'], r['kind'])}")
    total = 0
    for r in given:
        text = _read(folder / r["relpath"]) if r["readable"] else None
        if text is None:
            material.left_out.append(f"{r['relpath']}: left out, {r['problem'] or 'binary or unreadable'}")
            continue
        if total >= TOTAL_CAP:
            material.left_out.append(f"{r['relpath']} ({len(text):,} characters): left out, the "
                                     f"{TOTAL_CAP:,}-character cap on all files was reached")
            continue
        room = min(FILE_CAP, TOTAL_CAP - total)
        if len(text) > room:
            material.left_out.append(f"{r['relpath']}: cut after {room:,} of its {len(text):,} characters "
                                     f"(the cap is {FILE_CAP:,} per file, {TOTAL_CAP:,} in all)")
            text = text[:room]
        material.files.append((r["relpath"], text))
        total += len(text)
    if mode == "evidence":
        material.evidence = evidence(store, model, challenge)
    return material


def evidence(store: Store, model: str, challenge: str) -> str:
    """The suite's latest verdict on the answer in words: the verdict and what
    it covers, each check that did not pass with its message (the
    counter-example where the check gives one), the self-check's result, and
    what the verdict does not cover."""
    run = queries.latest_run(store, model, challenge)
    if run is None or run["status"] != "done":
        return NO_VERDICT
    cov = queries.stored_value(run.get("coverage")) if run.get("coverage") else None
    lines = [f"Verdict: {describe(run['verdict'], cov)} (run #{run['id']}, {run['started_at'][:16]}, "
             f"on {run['backend']})."]
    meaning = {PASS: "every check the suite ran passed",
               PARTIAL: "every check it ran passed, but some requirements were not exercised (below)"}
    lines.append(f"The verdict is the worst of its checks: {meaning.get(run['verdict'], 'at least one check did not pass')}.")
    stale = judging.stale_runs(store, [run["id"]]).get(run["id"])
    if stale:
        lines.append(f"Caution: {stale} since this run, so the verdict is on files other than those you see.")
    superseded = queries.superseded_suite(run["versions"], challenge, queries.current_suites(store))
    if superseded:
        lines.append(f"Caution: this verdict was {superseded}.")
    checks = queries.shown_checks(store, run["id"])
    bad = [c for c in checks if c["verdict"] not in (PASS, INFO, SKIPPED)]
    if bad:
        lines += ["", "Checks that did not pass:"]
        for c in bad:
            said = _said(c, DETAIL_CAP) or _measured(c)
            lines.append(f"- {c['name']}: {c['verdict']}" + (f": {said}" if said else ""))
    passed = [c["name"] for c in checks if c["verdict"] == PASS]
    if passed:
        lines += ["", f"Checks that passed ({len(passed)}): {', '.join(passed)}."]
    lines += ["", "The answer's own tests (its self-check; shown, never counted in the verdict): "
              + _self_check(run)]
    uncovered = [f"- requirement {q['id']}: {q['status']}" + (f" ({q['reason']})" if q.get("reason") else "")
                 for q in cov or () if q.get("status") not in (PASS, FAIL)]
    uncovered += [f"- check {c['name']}: skipped" + (f": {_said(c, 300)}" if c["message"] else "")
                  for c in checks if c["verdict"] == SKIPPED]
    lines += ["", "What the verdict does not cover:"]
    lines += uncovered or ["- every requirement the suite knows was exercised"]
    lines.append("- anything the suite does not check: code quality, analysis, testing, the write-up's claims "
                 "(those are yours to judge)")
    figures = [f"- {c['name']}: {_said(c, 300)}" for c in checks if c["verdict"] == INFO and c["message"]]
    if figures:
        lines += ["", "Figures and notes the suite recorded without counting them in the verdict:", *figures]
    return "\n".join(lines)


def _said(check: dict, cap: int) -> str:
    text = " ".join(str(check["message"] or "").split())
    return text if len(text) <= cap else text[:cap] + " [cut]"


def _measured(check: dict) -> str:
    if check.get("value") in (None, ""):
        return ""
    return f"value {check['value']}" + (f" (threshold {check['threshold']})" if check.get("threshold") not in (None, "") else "")


def _self_check(run: dict) -> str:
    status = run.get("self_status")
    if not status:
        return "not run."
    code = run.get("self_exit_code")
    return f"{status}" + (f" (exit code {code})" if code is not None else "") + "."
