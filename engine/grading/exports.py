"""Exports: a README-ready Markdown report, and CSV / JSON of every grade
and verdict. The Markdown re-imports with ``benchtui grades import``."""
from __future__ import annotations

import csv
import io
import json

from benchtui.grading.aggregates import (
    GONE_MARK,
    Leaderboard,
    current_coverage,
    current_messages,
    current_verdicts,
    leaderboard,
    stale_cells,
)
from benchtui.grading.grades import (
    CELL_RULE,
    RUBRIC_VERSION,
    all_grades,
    all_notes,
    answerless_cells,
    current_grades,
    list_graders,
    shown_grade,
)
from benchtui.records.verdicts import (
    FAILING,  # verdicts that say the answer does not do what it was asked
    NO_ANSWER,
    NOT_RUN,
    PARTIAL,
)
from benchtui.store import runs_sql
from benchtui.store.database import Store, now_iso

FORMATS = ("markdown", "csv", "json")
DASH = "\u2014"
SEVERAL_MARK = "\u2020"        # a cell more than one grader graded (a dagger; re-imports as the grade)
NO_ANSWER_MARK = "(no answer)"  # a grade on an answer the workbench does not hold
STALE_MARK = "(stale)"  # a verdict on files that have changed since its run
IN_FLIGHT_MARK = "(run in flight)"  # a run in progress beside the last finished verdict


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]


def _pct(value: float | None) -> str:
    return DASH if value is None else f"{round(value * 100)}%"


def markdown(store: Store, *, grader: str | None = None) -> str:
    """Models table, grade matrix (best per challenge in bold), rankings and
    head-to-head records."""
    lb = leaderboard(store, grader=grader)
    out = ["# Grades", ""]
    out += [f"Rubric version {RUBRIC_VERSION}. "
            + (f"Grades by {grader}." if grader else f"Each cell shows one grade: {CELL_RULE}.")
            + " The rankings and head-to-head records use the grades shown.", ""]
    out += ["## Models tested", ""]
    out += _table(["Folder", "Model"], [[f"`{m}/`", lb.display_names[m]] for m in lb.models])
    if lb.gone:  # the table keeps their names as they were (a re-import maps them); said here
        out += ["", f"{GONE_MARK}: no longer in the workbench (renamed or removed since they were graded; "
                "`benchtui model move OLD NEW` moves a renamed one's grades): "
                + ", ".join(f"`{m}/`" for m in sorted(lb.gone)) + "."]
    out += ["", "## Per-challenge grade matrix", ""]
    if grader:
        out += [f"Judge: {grader}", ""]
    out += _matrix(lb)
    out += _cell_notes(lb)
    out += _verdict_sections(store, lb)
    out += ["", "## Rankings", ""]
    out += _table(
        ["Model", "Rank", "Mean", "Grade", "Attempted", "Best", "Worst", "Suite pass rate"],
        [[lb.shown_name(s.model), str(s.rank or DASH),
          DASH if s.mean_points is None else f"{s.mean_points:.2f}", s.band, str(s.attempted),
          f"{lb.challenge_titles[s.best]} ({s.best_letter})" if s.best else DASH,
          f"{lb.challenge_titles[s.worst]} ({s.worst_letter})" if s.worst else DASH,
          f"{_pct(s.pass_rate)} ({s.over})" if s.over else DASH] for s in lb.model_summaries])
    out += ["", "The suite pass rate counts the answers the hidden checks judged; a run that judged nothing "
            "(skipped for want of a GPU, a missing dependency, nothing to call, or stopped by its time limit "
            "before its checks finished) is counted apart, with its reason."]
    out += ["", "## Head-to-head", ""]
    out += _table(["Model", "Opponent", "Record (W-L-T)", "Shared"],
                  [[lb.shown_name(h.model_a), lb.shown_name(h.model_b), h.text, str(len(h.challenges))]
                   for h in lb.shared_head_to_head])
    if (empty := len(lb.head_to_head) - len(lb.shared_head_to_head)) > 0:
        out += ["", f"{empty} pair{'s' if empty != 1 else ''} of models with no challenge graded for both "
                f"left out (no record to show)."]
    out += _published_markdown(store)
    out += _audit_markdown(store)
    return "\n".join(out) + "\n"


def _matrix(lb: Leaderboard) -> list[str]:
    rows = []
    for c in lb.challenges:
        if not any((m, c) in lb.matrix for m in lb.models):
            continue
        cells = [lb.challenge_titles[c] if lb.challenge_titles[c] != c else c]
        for m in lb.models:
            g = lb.matrix.get((m, c))
            text = g.display if g else DASH
            if (m, c) in lb.no_answer:
                text += f" {NO_ANSWER_MARK}"
            text = f"**{text}**" if (m, c) in lb.best_cells else text
            cells.append(text + SEVERAL_MARK if (m, c) in lb.graded_by else text)
        rows.append(cells)
    return _table(["Challenge", *[lb.display_names[m] for m in lb.models]], rows)


def _cell_notes(lb: Leaderboard) -> list[str]:
    """What the matrix's marks mean: cells several graders graded (each
    grade listed) and grades on answers the workbench does not hold."""
    out = []
    if lb.graded_by:
        out += ["", f"{SEVERAL_MARK} graded by more than one grader; the cell shows the grade the rule above picks "
                "(first below):", ""]
        out += [f"- {lb.challenge_titles[c]}, {lb.display_names[m]}: "
                + "; ".join(f"{g.display} by {g.grader}" + (" (shown)" if n == 0 else "") for n, g in enumerate(rows))
                for (m, c), rows in sorted(lb.graded_by.items(), key=lambda kv: (lb.challenges.index(kv[0][1])
                                                                              if kv[0][1] in lb.challenges else 0,
                                                                              kv[0][0]))]
    if lb.no_answer:
        out += ["", f"{NO_ANSWER_MARK}: graded, but the workbench holds no answer for it; the grade counts in the "
                "rankings all the same: "
                + ", ".join(f"{lb.display_names[m]} on {lb.challenge_titles[c]}" for m, c in sorted(lb.no_answer))
                + "."]
    return out


def _verdict_sections(store: Store, lb: Leaderboard) -> list[str]:
    """The hidden suite's verdict per cell beside the grade matrix, and the
    graded answers it fails: where a judge's letter and the evidence part."""
    verdicts = current_verdicts(store)
    flying = runs_sql.in_flight(store)
    if not verdicts and not flying:
        return []
    covers = current_coverage(store)
    stale = stale_cells(store)
    rows = []
    for c in lb.challenges:
        cells = [lb.challenge_titles[c]]
        for m in lb.models:
            v = verdicts.get((m, c))
            text = (DASH if v in (None, NO_ANSWER, NOT_RUN) else
                    f"{v} ({covers[(m, c)]})" if v == PARTIAL and covers.get((m, c)) else v)
            text = f"{text} {STALE_MARK}" if text != DASH and (m, c) in stale else text
            cells.append(f"{text} {IN_FLIGHT_MARK}" if (m, c) in flying else text)
        if any(cell != DASH for cell in cells[1:]):
            rows.append(cells)
    out = ["", "## Suite verdicts", "",
           "The latest run of each answer against the hidden checks (`benchtui show MODEL CHALLENGE` has the evidence).", ""]
    out += _table(["Challenge", *[lb.display_names[m] for m in lb.models]], rows)
    if stale:
        out += ["", f"{STALE_MARK} stale: the answer's files changed since that run, so the verdict is on other files: "
                + "; ".join(f"{lb.display_names.get(m, m)} on {lb.challenge_titles.get(c, c)} ({why})"
                            for (m, c), why in sorted(stale.items())) + "."]
    if flying:
        out += ["", f"{IN_FLIGHT_MARK}: a run in flight when this was exported; the verdict beside it is the "
                "last finished one: " + "; ".join(f"{lb.display_names.get(m, m)} on {lb.challenge_titles.get(c, c)} "
                                                  f"({runs_sql.in_flight_text(r)})" for (m, c), r in sorted(flying.items())) + "."]
    failed = sorted(((g.points if g.points is not None else -1, m, c, g) for (m, c), g in lb.matrix.items()
                     if verdicts.get((m, c)) in FAILING), key=lambda t: (-t[0], t[1], t[2]))
    if failed:
        messages = current_messages(store)
        out += ["", "## Graded answers the suite fails", ""]
        out += _table(["Model", "Challenge", "Grade", "Verdict", "First failing check"],
                      [[lb.display_names[m], lb.challenge_titles[c], g.display, verdicts[(m, c)],
                        _short(messages.get((m, c), ""))] for _, m, c, g in failed])
    return out


def _short(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


GRADE_FIELDS = ("id", "model", "challenge", "dimension", "letter", "score", "points", "grader",
                "grader_kind", "note", "rubric_version", "created_at", "supersedes",
                "invalidated_at", "invalid_reason", "source", "source_key", "judge_model", "rubric_sha", "judge_mode")


def _records(store: Store) -> tuple[list[dict], list[dict]]:
    live = current_grades(store, dimension=None)
    current = {g.id for g in live}
    by_cell: dict[tuple[str, str, str], list] = {}
    for g in live:
        by_cell.setdefault((g.model, g.challenge, g.dimension), []).append(g)
    shown = {shown_grade(rows).id for rows in by_cell.values()}  # CELL_RULE: the grade the matrix shows
    verdicts = current_verdicts(store)
    everything = all_grades(store)
    answerless = answerless_cells(store, {(g.model, g.challenge) for g in everything})
    grades = [{**{k: getattr(g, k) for k in GRADE_FIELDS}, "current": g.id in current,
               "verdict": verdicts.get((g.model, g.challenge)), "shown": g.id in shown,
               "no_answer": (g.model, g.challenge) in answerless} for g in everything]
    covers = current_coverage(store)
    stale = stale_cells(store)
    flying = runs_sql.in_flight(store)
    # an answer with a run in flight keeps its last finished verdict (none yet: null) and says so
    cells = sorted({*verdicts, *flying})
    gone = answerless_cells(store, cells)  # a verdict of a folder that is gone (renamed or removed) says so
    verdict_rows = [{"model": m, "challenge": c, "verdict": verdicts.get((m, c)), "covers": covers.get((m, c), ""),
                     "no_answer": (m, c) in gone, "stale": stale.get((m, c), ""),
                     "in_flight": runs_sql.in_flight_text(flying.get((m, c)))} for m, c in cells]
    return grades, verdict_rows


def csv_text(store: Store) -> str:
    """One row per grade (history and invalid ones included, ``current``
    marks the live ones, ``shown`` the one the matrix shows of a cell several
    graders graded, ``no_answer`` a grade on an answer the workbench does not
    hold), then one ``verdict`` row per answer with a verdict, the notes, and in
    a deck workbench one ``published`` row per published run beside benchtui's
    verdict (the JSON's ``published.answers``; their columns only there)."""
    grades, verdicts = _records(store)
    published = _published(store)
    buf = io.StringIO()
    fields = ["kind", *GRADE_FIELDS, "current", "verdict", "covers", "shown", "no_answer", "in_flight", "stale"]
    if published:
        fields += [f for f in PUBLISHED_FIELDS if f not in fields]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for g in grades:
        writer.writerow({"kind": "grade", **g})
    for v in verdicts:
        writer.writerow({"kind": "verdict", **v})
    for n in all_notes(store):  # the author in `grader`, the text in `note`
        writer.writerow({"kind": "note", "id": n.id, "model": n.model, "challenge": n.challenge,
                         "grader": n.author, "note": n.text, "created_at": n.created_at})
    for row in published["answers"] if published else []:
        writer.writerow({"kind": "published", **row})
    return buf.getvalue()


def json_data(store: Store) -> dict:
    grades, verdicts = _records(store)
    return {
        "rubric_version": RUBRIC_VERSION,
        "exported_at": now_iso(),
        "graders": [{"name": g.name, "kind": g.kind} for g in list_graders(store)],
        "grades": grades,
        "verdicts": verdicts,
        "notes": [n.to_dict() for n in all_notes(store)],
        "leaderboard": leaderboard(store).to_dict(),
        "audit": _audit(store),  # suite strength per challenge, survivors with diffs
        # a deck workbench: the deck's published results beside benchtui's verdicts (`benchtui published`)
        **({"published": published} if (published := _published(store)) else {}),
    }


PUBLISHED_FIELDS = ("deck", "run_id", "model", "challenge", "deck_verdict", "deck_reason", "deck_figure",
                    "verdict", "reason", "figure", "agreement", "marks", "in_flight")


def _published(store: Store) -> dict | None:
    """The deck's published results beside benchtui's verdicts, as `benchtui published --json`
    has them (overall and per problem, a row per published run); None outside a deck workbench."""
    if "deck_results" not in store.table_names():
        return None
    from benchtui.decks.compare import compare

    data = compare(store)
    if not data["answers"]:
        return None
    return {"overall": data["overall"], "challenges": data["challenges"],
            "answers": [{k: a.get(k) for k in PUBLISHED_FIELDS} for a in data["answers"]]}


def _published_markdown(store: Store) -> list[str]:
    data = _published(store)
    if not data:
        return []
    o = data["overall"]
    agree = DASH if o["agreement"] is None else f"{o['agreement']:.0%}"
    out = ["", "## The deck's published results beside benchtui's", "",
           f"{o['published']} published results ({o['deck_pass']} PASS), {o['run_here']} run here; judged by both: "
           f"{o['judged_both']}, agreement {agree} (`benchtui published` has every row and both reasons).", ""]
    out += _table(["Challenge", "Published", "Deck PASS", "Run here", "Judged by both", "Agreement"],
                  [[cid, str(c["published"]), str(c["deck_pass"]), str(c["run_here"]), str(c["judged_both"]),
                    DASH if c["agreement"] is None else f"{c['agreement']:.0%}"] for cid, c in data["challenges"].items()])
    return out


def _audit(store: Store) -> list[dict]:
    from benchtui.audit.report import export_section

    return export_section(store)


def _audit_markdown(store: Store) -> list[str]:
    audit = _audit(store)
    if not audit:
        return []
    out = ["", "## Suite strength (mutation score)", ""]
    out += _table(["Challenge", "Score", "Killed", "Survived", "Likely equivalent", "Mutants"],
                  [[c["challenge"], _pct(c["score"]), str(c["killed"]), str(c["survived"]), str(c["equivalent"]),
                    str(c["mutants"])] for c in audit])
    return out


def export(store: Store, fmt: str, *, grader: str | None = None) -> str:
    if fmt == "markdown":
        return markdown(store, grader=grader)
    if fmt == "csv":
        return csv_text(store)
    if fmt == "json":
        # One top-level key per line, each value compact: `indent` would send
        # json through its pure-Python encoder, ~10x slower on a 50 x 200
        # workbench's 18 MB (bench/scale.py).
        data = json_data(store)
        return "{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, default=str)}" for k, v in data.items()) + "\n}\n"
    raise ValueError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
