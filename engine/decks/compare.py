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
        return row_dict(dict(self.__dict__))


def row_dict(d: dict) -> dict:
    """``d`` (a Row's fields, in Row's order) with the Row's derived values added, each
    worked out once, in to_dict's order: compare() makes a deck's 10,000 rows this way
    without a Row each. Most rows have no annotation, so their tests short-cut."""
    notes, verdict = d["annotations"], d["verdict"]
    judged = None if d["not_judged"] else "PASS" if verdict in PASSING else "FAIL" if verdict in FAILING else None
    if not d["has_answer"]:
        agreement = "no answer"
    elif d["deck_verdict"] is None:
        agreement = "no published result"
    elif judged is None:
        agreement = "not judged here" if verdict else "not run here"
    else:
        agreement = "agree" if judged == d["deck_verdict"] else "disagree"
    measured_on = next((a["measured_on"] for a in notes if a.get("measured_on")), "") if notes else ""
    gpu = measured_on and (f"measured on {measured_on} (its annotation), not the GPU of the deck's peak: "
                           "its figure is left out of the rank correlation")
    stale = d["stale"]
    marks = "; ".join(m for m in (d["edited"], stale and f"stale: {stale} since benchtui's run", gpu) if m)
    d.update(judged=judged, agreement=agreement, marks=marks, measured_on=measured_on,
             annotated_hack=any(a.get("verdict") in HACK_VERDICTS for a in notes) if notes else False)
    return d


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


def summary(rows: list) -> dict:
    """The agreement, hack and ranking counts of ``rows`` (Rows, or compare()'s dicts of them)."""
    facts, pairs = tally(r if isinstance(r, dict) else r.to_dict() for r in rows)
    return summarise(facts, pairs)


def row_facts(d: dict) -> tuple:
    """What summarise() counts of one row (row_dict's), as a key: the rows of a deck
    share a handful of these, so a problem's or the whole deck's summary is counted
    from distinct keys, not row by row."""
    notes, verdict, agreement, published = d["annotations"], d["verdict"], d["agreement"], d["deck_verdict"] is not None
    why = None
    if agreement not in ("agree", "disagree") and d["has_answer"] and published:
        why = d["not_judged"] or (verdict if verdict else "not run here")
    clean = bool(notes) and all(a.get("verdict") == "clean" for a in notes)
    return (d["has_answer"], d["deck_verdict"], verdict is not None, bool(d["in_flight"]), d["judged"], agreement,
            why, bool(d["measured_on"]), bool(d["flags"]), bool(notes), d["annotated_hack"], clean,
            bool(d["not_judged"]))


def rank_pair(d: dict) -> tuple[float, float] | None:
    """The (deck's, benchtui's) peak_fraction a row adds to the rank correlation, if any."""
    if (d["deck_verdict"] == "PASS" and d["judged"] == "PASS" and d["deck_figure"] is not None
            and d["figure"] is not None and not d["measured_on"]):
        return d["deck_figure"], d["figure"]
    return None


def tally(rows) -> tuple[dict[tuple, int], list[tuple[float, float]]]:
    """``rows``' (row_dicts) facts counted, and their rank pairs in order."""
    facts: dict[tuple, int] = {}
    pairs = []
    for d in rows:
        key = row_facts(d)
        facts[key] = facts.get(key, 0) + 1
        if (pair := rank_pair(d)) is not None:
            pairs.append(pair)
    return facts, pairs


def summarise(facts: dict[tuple, int], pairs: list[tuple[float, float]]) -> dict:
    """summary()'s counts from tally()'s: each distinct row_facts key once, times its rows."""
    counts: dict[str, Any] = {"answers": 0, "published": 0, "deck_pass": 0, "run_here": 0, "in_flight": 0,
              "both_pass": 0, "both_fail": 0, "deck_pass_here_fail": 0, "deck_fail_here_pass": 0,
              "not_judged_here": 0, "not_judged_why": {}}
    why_counts: dict[str, int] = counts["not_judged_why"]
    other_gpu = 0
    hacks = dict.fromkeys(HACK_COUNTS, 0)
    for (has_answer, deck_verdict, run_here, in_flight, judged, agreement, why, measured_on, flagged, annotated,
         annotated_hack, annotated_clean, unjudged), n in facts.items():
        published = deck_verdict is not None
        counts["answers"] += has_answer * n
        counts["published"] += published * n
        counts["deck_pass"] += (deck_verdict == "PASS") * n
        counts["run_here"] += run_here * n
        counts["in_flight"] += in_flight * n
        if agreement in ("agree", "disagree"):
            key = ("both_pass" if judged == "PASS" else "both_fail") if agreement == "agree" else \
                  ("deck_pass_here_fail" if deck_verdict == "PASS" else "deck_fail_here_pass")
            counts[key] += n
        elif has_answer and published:
            counts["not_judged_here"] += n
            why_counts[why] = why_counts.get(why, 0) + n  # keys in the order the rows first say them
        other_gpu += measured_on * n
        hacks["suspected_hacks"] += flagged * n
        if annotated:
            if has_answer and annotated_hack:
                hacks["annotated_hacks"] += n
                if run_here and not unjudged:
                    hacks["annotated_hacks_flagged" if flagged else "annotated_hacks_missed"] += n
                else:
                    hacks["annotated_hacks_not_judged"] += n
            if flagged and annotated_clean:
                hacks["annotated_clean_flagged"] += n
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


def _edited(source_path: str | None, sha256: str | None, has_answer, files: dict[str, str] | None) -> str:
    """Whether the answer's file is no longer the one the deck published (and judged): its hash,
    as the last scan read it, against the deck's. A run file the import split into sidecars
    (.cu sources appended to it) is not its answer file's bytes, so such an answer is not judged
    by its hash."""
    if not files or not sha256 or not has_answer:
        return ""
    answer_file: str | None = "solution.py"
    if answer_file not in files:
        name = source_path.rsplit("/", 1)[-1] if source_path else ""
        answer_file = name if name in files else None
    # the same file is unedited whatever else the answer holds: the sidecars are looked for only after
    if answer_file is None or files[answer_file] == sha256:
        return ""
    if any(rel.endswith(SIDECAR_SUFFIXES) for rel in files):
        return ""
    return f"{answer_file} edited since the import: the deck's verdict is on the file it published"


# the deck_results columns compare() reads, in the order its loop unpacks them (_edited: source_path, sha256, has_answer)
COMPARED = ("deck, run_id, model, challenge, problem, correct, failure_reason, peak_fraction, has_answer, "
            "source_path, sha256")


def compare(store: Store, *, challenge: str | None = None, deck: str | None = None) -> dict:
    """``challenge`` and ``deck`` narrow the rows, and the imports' problem lines to theirs."""
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
    published = decks_sql.result_tuples(store, challenge=challenge, deck=deck, columns=COMPARED)
    ran = {(m, c): latest[(m, c)] for _, _, m, c, *_ in published if m and (m, c) in latest} if latest else {}
    checks = decks_sql.checks_of_runs(store, sorted({r["id"] for r in ran.values()}))
    answers: list[dict] = []
    for deck_id, run_id, model, cid, problem, correct, failure_reason, deck_figure, has_answer, source_path, sha256 \
            in published:
        key = (model, cid)
        run = ran.get(key)
        verdict, reason, figure, why, stale_files, flags = None, None, None, None, "", []
        if run:
            verdict = run["verdict"]
            reason, figure = _figure(checks[run["id"]])
            if verdict not in PASSING:  # a run stored before figures were kept to right answers
                figure = None
            why = not_judged(verdict, run.get("message"), ran_out.get(run["id"]))
            if verdict in PASSING:
                reason = None
            elif run["id"] in ran_out:
                reason = f"run: {ran_out[run['id']]}"  # what stopped it, not the check it was in
            elif not reason:
                reason = run.get("message")
            stale_files = stale.get(run["id"], "")
            flags = parse_flags(run.get("flags")) if run.get("status") == "done" else []
        flight = flying.get(key)
        # Row's fields in Row's order (row_dict adds the derived ones): no Row made per deck run
        answers.append(row_dict({
            "deck": deck_id, "run_id": run_id, "model": model, "challenge": cid, "problem": problem,
            "deck_verdict": None if correct is None else ("PASS" if correct else "FAIL"),
            "deck_reason": failure_reason, "deck_figure": deck_figure, "verdict": verdict, "reason": reason,
            "figure": figure, "annotations": notes.get((deck_id, run_id), []) if notes else [],
            "has_answer": bool(has_answer), "not_judged": why, "stale": stale_files,
            "edited": _edited(source_path, sha256, has_answer, hashes.get(key)),
            "in_flight": runs_sql.in_flight_text(flight) if flight else "", "flags": flags}))
    imports = [{**i, "problems": json.loads(i["problems"] or "[]")} for i in decks_sql.latest_imports(store)]
    if challenge or deck:
        imports = narrowed(store, imports, answers)
    # each row's facts counted once, into its problem's tally and the whole deck's
    overall: dict[tuple, int] = {}
    overall_pairs: list[tuple[float, float]] = []
    per: dict[str, tuple[dict, dict[tuple, int], list]] = {}  # challenge -> (its first row, facts, pairs)
    for row in answers:
        facts = row_facts(row)
        first, counted, pairs = per.get(row["challenge"]) or per.setdefault(row["challenge"], (row, {}, []))
        counted[facts] = counted.get(facts, 0) + 1
        overall[facts] = overall.get(facts, 0) + 1
        if (pair := rank_pair(row)) is not None:
            pairs.append(pair)
            overall_pairs.append(pair)
    return {
        "overall": summarise(overall, overall_pairs),
        "challenges": {cid: {"problem": first["problem"], "deck": first["deck"], **summarise(counted, pairs)}
                       for cid, (first, counted, pairs) in per.items()},
        "disagreements": [d for d in answers if d["agreement"] == "disagree"],
        "annotated": [d for d in answers if d["annotations"] and any(a["verdict"] != "clean" for a in d["annotations"])],
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
