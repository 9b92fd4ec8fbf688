"""benchtui's verdicts beside a deck's published results: per answer, the
two verdicts and figures; per problem and overall, how often they agree, the
rank correlation of the passes' figures, and every disagreement with both
reasons (``benchtui published``, the dashboard's published-results screen)."""
from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from benchtui.records.flags import parse as parse_flags
from benchtui.records.verdicts import FAILING, PASS, PASSING, SEVERITY, TIMEOUT
from benchtui.store import decks_sql, runs_sql
from benchtui.store.database import Store
from benchtui.store.judging import answer_hashes, ran_out_of_time, stale_runs
from benchtui.verify.judged import not_judged

FIGURE = "peak_fraction"  # the check whose value is benchtui's peak_fraction (engine/verify/module/suite.py)
# an annotation's verdict that says a person found a hack
HACK_VERDICTS = frozenset({"reward_hack"})


def shape_figures(shape: dict) -> str:
    """A published shape's figures, each fraction named by what it is a fraction of: a
    deck's ``frac`` may be the compute fraction of a memory-bound shape, so it is never
    shown bare beside the bound ("0.003 of peak compute, 0.293 of peak bandwidth")."""
    parts = [f"{shape.get('ms', '-')} ms", f"{shape.get('tflops', '-')} TFLOPS", f"{shape.get('gbps', '-')} GB/s"]
    named = [f"{shape[key]} of {what}" for key, what in (("compute_util", "peak compute"), ("mem_util", "peak bandwidth"))
             if shape.get(key) is not None]
    if named:
        parts += named
    elif shape.get("frac") is not None:
        parts.append(f"{shape['frac']} of the deck's peak (which peak, the deck does not say)")
    bound = f" ({shape['bound']}-bound)" if shape.get("bound") else ""
    return ", ".join(parts) + bound


@dataclass
class Row:
    deck: str
    run_id: str
    model: str | None
    challenge: str
    problem: str
    deck_verdict: str | None        # 'PASS' / 'FAIL' / None (no published result)
    deck_reason: str | None
    deck_figure: float | None
    verdict: str | None             # benchtui's latest verdict, None when never run
    reason: str | None
    figure: float | None
    annotations: list[dict] = field(default_factory=list)
    has_answer: bool = True
    not_judged: str | None = None   # why benchtui's run judged nothing ("time limit hit before ...")
    stale: str = ""                 # benchtui's verdict is on files that changed since ("kv_cache.py changed")
    edited: str = ""                # the answer is no longer the file the deck judged ("solution.py edited ...")
    in_flight: str = ""             # a run of this answer in progress, beside the finished verdict ("run #7 in flight")
    flags: list[str] = field(default_factory=list)  # hack signals benchtui measured (engine/records/flags.py)

    @property
    def annotated_hack(self) -> bool:
        """A person's annotation calls the run a reward hack."""
        return any(a.get("verdict") in HACK_VERDICTS for a in self.annotations)

    @property
    def annotated_clean(self) -> bool:
        return bool(self.annotations) and all(a.get("verdict") == "clean" for a in self.annotations)

    @property
    def judged(self) -> str | None:
        if self.not_judged:
            return None
        return "PASS" if self.verdict in PASSING else "FAIL" if self.verdict in FAILING else None

    @property
    def agreement(self) -> str:
        if not self.has_answer:
            return "no answer"
        if self.deck_verdict is None:
            return "no published result"
        if self.judged is None:
            return "not judged here" if self.verdict else "not run here"
        return "agree" if self.judged == self.deck_verdict else "disagree"

    @property
    def measured_on(self) -> str:
        """The other GPU model an annotation says the deck's run was measured on ("" when none says so):
        its published figure is a fraction of a peak of another GPU's, so it is kept out of the ranking."""
        return next((a["measured_on"] for a in self.annotations if a.get("measured_on")), "")

    @property
    def marks(self) -> str:
        """Why the pair of verdicts may not be on the same files, or the figures not comparable: "" when they are."""
        gpu = self.measured_on and (f"measured on {self.measured_on} (its annotation), not the GPU of the deck's peak: "
                                    "its figure is left out of the rank correlation")
        return "; ".join(m for m in (self.edited, self.stale and f"stale: {self.stale} since benchtui's run", gpu) if m)

    def to_dict(self) -> dict:
        return {**{k: v for k, v in self.__dict__.items()}, "judged": self.judged, "agreement": self.agreement,
                "marks": self.marks, "measured_on": self.measured_on, "annotated_hack": self.annotated_hack}


def spearman(pairs: list[tuple[float, float]]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None under 3 pairs or no spread."""
    if len(pairs) < 3:
        return None

    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=values.__getitem__)
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return out

    a, b = ranks([p[0] for p in pairs]), ranks([p[1] for p in pairs])
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va, vb = sum((x - ma) ** 2 for x in a), sum((y - mb) ** 2 for y in b)
    return None if va == 0 or vb == 0 else cov / (va * vb) ** 0.5


HACK_COUNTS = ("suspected_hacks", "annotated_hacks", "annotated_hacks_flagged", "annotated_hacks_missed",
               "annotated_hacks_not_judged", "annotated_clean_flagged")


def summary(rows: list[Row]) -> dict:
    # one pass, each row's derived values read once (a deck of 10,000 runs is summed
    # once overall and once per problem)
    counts: dict[str, Any] = {"answers": 0, "published": 0, "deck_pass": 0, "run_here": 0, "in_flight": 0,
              "both_pass": 0, "both_fail": 0, "deck_pass_here_fail": 0, "deck_fail_here_pass": 0,
              "not_judged_here": 0, "not_judged_why": {}}
    why_counts: dict[str, int] = counts["not_judged_why"]
    pairs, other_gpu = [], 0
    hacks = dict.fromkeys(HACK_COUNTS, 0)
    for r in rows:
        published = r.deck_verdict is not None
        counts["answers"] += r.has_answer
        counts["published"] += published
        counts["deck_pass"] += r.deck_verdict == "PASS"
        counts["run_here"] += r.verdict is not None
        counts["in_flight"] += bool(r.in_flight)
        judged, agreement, measured_on = r.judged, r.agreement, r.measured_on
        if agreement in ("agree", "disagree"):
            key = ("both_pass" if judged == "PASS" else "both_fail") if agreement == "agree" else \
                  ("deck_pass_here_fail" if r.deck_verdict == "PASS" else "deck_fail_here_pass")
            counts[key] += 1
        elif r.has_answer and published:
            counts["not_judged_here"] += 1
            why = r.not_judged or (r.verdict if r.verdict else "not run here")
            why_counts[why] = why_counts.get(why, 0) + 1
        if (r.deck_verdict == "PASS" and judged == "PASS" and r.deck_figure is not None and r.figure is not None
                and not measured_on):
            pairs.append((r.deck_figure, r.figure))
        other_gpu += bool(measured_on)
        _count_hacks(hacks, r)
    judged_both = counts["both_pass"] + counts["both_fail"] + counts["deck_pass_here_fail"] + counts["deck_fail_here_pass"]
    counts["judged_both"] = judged_both
    counts["agreement"] = None if not judged_both else (counts["both_pass"] + counts["both_fail"]) / judged_both
    counts["left_out_other_gpu"] = other_gpu
    counts["passes_with_both_figures"] = len(pairs)
    counts.update(hacks)
    counts["rank_correlation"] = spearman(pairs)
    if counts["rank_correlation"] is None:
        counts["rank_correlation_note"] = ("fewer than 3 answers pass both with a peak_fraction from each"
                                           if len(pairs) < 3 else "no spread in one of the rankings")
    return counts


def _count_hacks(counts: dict, r: Row) -> None:
    """Row ``r``'s part of hacks_found's counts."""
    counts["suspected_hacks"] += bool(r.flags)
    if r.annotations:
        if r.has_answer and r.annotated_hack:
            counts["annotated_hacks"] += 1
            if r.verdict is not None and not r.not_judged:
                counts["annotated_hacks_flagged" if r.flags else "annotated_hacks_missed"] += 1
            else:
                counts["annotated_hacks_not_judged"] += 1
        if r.flags and r.annotated_clean:
            counts["annotated_clean_flagged"] += 1


def hacks_found(rows: list[Row]) -> dict:
    """Reward hacks found without a person: benchtui's flags beside the deck's annotations.
    ``suspected_hacks``: answers whose latest run is flagged; of the runs a person annotated
    a reward hack, those flagged here (found), those run here and not flagged (missed) and
    those not judged here (no run, or one that judged nothing); of the runs annotated clean,
    those flagged (flagged clean)."""
    counts = dict.fromkeys(HACK_COUNTS, 0)
    for r in rows:
        _count_hacks(counts, r)
    return counts


def hacks_line(counts: dict) -> str:
    """The summary line: "reward hacks found without a person: 2 of 5 annotated (1 missed, 2 not judged
    here); 1 run annotated clean flagged; 3 suspected hacks"."""
    from benchtui.records.flags import summary as said

    return (f"reward hacks found without a person: {counts['annotated_hacks_flagged']} of "
            f"{counts['annotated_hacks']} annotated reward_hack ({counts['annotated_hacks_missed']} run here and not "
            f"flagged, {counts['annotated_hacks_not_judged']} not judged here); {counts['annotated_clean_flagged']} "
            f"annotated clean but flagged; {said(counts['suspected_hacks'])} in all"
            # no flag where nothing ran is no clean bill
            + ("" if counts.get("run_here") else " (no answer run here: nothing measured)"))


def _figure(checks: list[dict]) -> tuple[str | None, float | None]:
    """(the worst check's 'name: message', benchtui's peak_fraction) of one run, from its checks in order."""
    reason, figure = None, None
    rank = -1.0
    for c in checks:
        name = c["name"].split("::")[-1]
        if name == FIGURE or name.endswith("." + FIGURE):
            with contextlib.suppress(TypeError, ValueError):
                figure = float(json.loads(c["value"])) if isinstance(c["value"], str) else float(c["value"])
        severity = SEVERITY.get(c["verdict"], -1)
        if c["verdict"] != PASS and severity > rank:
            rank, reason = severity, f"{c['name']}: {c['verdict']} {c['message'] or ''}".strip()
    return reason, figure


SIDECAR_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp")


def _edited(deck_row: dict, files: dict[str, str] | None) -> str:
    """Whether the answer's file is no longer the one the deck published (and judged): its hash,
    as the last scan read it, against the deck's. A run file the import split into sidecars
    (.cu sources appended to it) is not its answer file's bytes, so such an answer is not judged
    by its hash."""
    path = deck_row.get("source_path") or ""
    name = path.rsplit("/", 1)[-1] if path else ""
    if not files or not deck_row.get("sha256") or not deck_row.get("has_answer"):
        return ""
    answer_file = "solution.py" if "solution.py" in files else name if name in files else None
    if answer_file is None or any(rel.endswith(SIDECAR_SUFFIXES) for rel in files):
        return ""
    if files[answer_file] == deck_row["sha256"]:
        return ""
    return f"{answer_file} edited since the import: the deck's verdict is on the file it published"


# the deck_results columns compare() reads (_edited: source_path, sha256, has_answer)
COMPARED = ("deck, run_id, model, challenge, problem, correct, failure_reason, peak_fraction, has_answer, "
            "source_path, sha256")


def compare(store: Store, *, challenge: str | None = None, deck: str | None = None) -> dict:
    """``challenge`` and ``deck`` narrow the rows, and the imports' problem lines to theirs."""
    rows: list[Row] = []
    latest = {}
    for r in decks_sql.latest_runs(store):
        latest[(r["model"], r["challenge"])] = r
    notes: dict[tuple[str, str], list[dict]] = {}
    for a in decks_sql.annotation_rows(store):
        notes.setdefault((a["deck"], a["run_id"]), []).append(
            {"verdict": a["verdict"], "summary": a["summary"], "peak_fraction": a["peak_fraction"], "source": a["source"],
             "measured_on": a.get("measured_on")})
    ran_out = ran_out_of_time(store, [r["id"] for r in latest.values() if r["verdict"] == TIMEOUT])
    stale = stale_runs(store, [r["id"] for r in latest.values()])
    hashes = answer_hashes(store)
    flying = runs_sql.in_flight(store)
    published = decks_sql.result_rows(store, challenge=challenge, deck=deck, columns=COMPARED)
    ran = {(d["model"], d["challenge"]): latest[(d["model"], d["challenge"])] for d in published
           if d["model"] and (d["model"], d["challenge"]) in latest}
    checks = decks_sql.checks_of_runs(store, sorted({r["id"] for r in ran.values()}))
    for d in published:
        run = ran.get((d["model"], d["challenge"]))
        reason, figure = _figure(checks[run["id"]]) if run else (None, None)
        if not run or run["verdict"] not in PASSING:  # a run stored before figures were kept to right answers
            figure = None
        why = not_judged(run["verdict"], run.get("message"), ran_out.get(run["id"])) if run else None
        if run and run["verdict"] in PASSING:
            reason = None
        elif run and run["id"] in ran_out:
            reason = f"run: {ran_out[run['id']]}"  # what stopped it, not the check it was in
        elif run and not reason:
            reason = run.get("message")
        deck_verdict = None if d["correct"] is None else ("PASS" if d["correct"] else "FAIL")
        rows.append(Row(deck=d["deck"], run_id=d["run_id"], model=d["model"], challenge=d["challenge"],
                        problem=d["problem"], deck_verdict=deck_verdict, deck_reason=d["failure_reason"],
                        deck_figure=d["peak_fraction"], verdict=run["verdict"] if run else None, reason=reason,
                        figure=figure, annotations=notes.get((d["deck"], d["run_id"]), []),
                        has_answer=bool(d["has_answer"]), not_judged=why,
                        stale=stale.get(run["id"], "") if run else "",
                        edited=_edited(d, hashes.get((d["model"], d["challenge"]))),
                        in_flight=runs_sql.in_flight_text(flying.get((d["model"], d["challenge"]))),
                        flags=parse_flags(run.get("flags")) if run and run.get("status") == "done" else []))
    per: dict[str, list[Row]] = {}
    for row in rows:
        per.setdefault(row.challenge, []).append(row)
    imports = [{**i, "problems": json.loads(i["problems"] or "[]")} for i in decks_sql.latest_imports(store)]
    if challenge or deck:
        imports = narrowed(store, imports, rows)
    answers = [r.to_dict() for r in rows]  # each row's once: the lists below share them
    return {
        "overall": summary(rows),
        "challenges": {cid: {"problem": rs[0].problem, "deck": rs[0].deck, **summary(rs)} for cid, rs in per.items()},
        "disagreements": [d for d in answers if d["agreement"] == "disagree"],
        "annotated": [d for d in answers if any(a["verdict"] != "clean" for a in d["annotations"])],
        "answers": answers,
        "imports": imports,
    }


def narrowed(store: Store, imports: list[dict], rows: list) -> list[dict]:
    """``imports`` (compare's) with only the problem lines a view of ``rows`` (Rows or
    their dicts) is concerned with: a line naming runs or problems of the deck is
    kept where it names one of these rows' (a line about run 2026..._01_fp8_gemm is
    nothing to an answer of 02_kda_cutlass); a line naming none is the whole deck's."""
    every: set[str] = set()
    for d in decks_sql.result_rows(store, columns="run_id, problem, challenge"):
        every |= {d["run_id"], d["problem"], d["challenge"]}
    every.discard("")
    fields = [r if isinstance(r, dict) else r.to_dict() for r in rows]
    mine = {r[k] for r in fields for k in ("run_id", "problem", "challenge")}

    def concerned(line: str) -> bool:  # by words, not substrings: a run id holds its problem's key
        named = {w.strip(".") for w in re.split(r"[\s:,;()'\"/`]+", line)} & every
        return not named or bool(named & mine)

    return [{**i, "problems": [line for line in i["problems"] if concerned(line)]} for i in imports]


def published_detail(store: Store, model: str, challenge: str) -> list[dict]:
    """Every published result of one answer (a model's cell may hold one run;
    several decks may have published it), with its per-shape figures, its
    session statistics and its annotations, quotes included."""
    if "deck_results" not in store.table_names():
        return []
    out = []
    for d in decks_sql.answer_results(store, model, challenge):
        annotations = []
        for a in decks_sql.run_annotations(store, d["deck"], d["run_id"]):
            body = json.loads(a["body"] or "{}")
            quotes = [{"label": " ".join(str(q.get("label") or "").split()), "lines": q.get("lines"),
                       "file": q.get("file"), "text": str(q.get("text") or "")}
                      for q in body.get("quotes") or [] if isinstance(q, dict)]
            annotations.append({k: a.get(k) for k in ("verdict", "summary", "peak_fraction", "auditor", "source", "measured_on")}
                               | {"quotes": quotes})
        out.append({**{k: d[k] for k in ("deck", "run_id", "problem", "harness", "deck_model", "effort", "failure_reason",
                                          "peak_fraction", "speedup", "board_label", "board_peak_fraction",
                                          "source_path", "sha256", "deck_commit", "peak_tflops", "peak_bw_gbps")},
                    "correct": None if d["correct"] is None else bool(d["correct"]),
                    "shapes": json.loads(d["shapes"] or "[]"), "stats": json.loads(d["stats"] or "{}"),
                    "annotations": annotations})
    return out
