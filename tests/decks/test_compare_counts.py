"""compare() counts a deck's rows by the facts they share (a deck of 10,000 runs has a
handful of distinct ones), and makes each row's dict without a Row: every count and
derived value must still be what each Row, read one by one, says. The hand-made deck
with runs of each kind (flagged, annotated hack missed, annotated clean but flagged,
measured on another GPU, stopped by its time limit) covers every branch."""
from __future__ import annotations

import json
from dataclasses import fields

import deck_kit as K
from benchtui.decks import compare as C
from benchtui.decks import kernelbench_hard
from benchtui.decks.importer import import_deck
from benchtui.store.database import Store


def _run(store: Store, model: str, challenge: str, verdict: str, checks: list[tuple], flags: list[str] = ()) -> None:
    cur = store.execute("insert into runs (model, challenge, status, verdict, flags) values (?, ?, 'done', ?, ?)",
                        (model, challenge, verdict, json.dumps(list(flags))))
    for i, (name, v, value, message) in enumerate(checks):
        store.execute("insert into checks (run_id, position, name, verdict, value, message) values (?, ?, ?, ?, ?, ?)",
                      (cur.lastrowid, i, name, v, json.dumps(value), message))
    store.conn.commit()


def reference(rows: list[C.Row]) -> dict:
    """summary()'s counts the plain way: row by row, each from the Row's own properties."""
    c = {"answers": 0, "published": 0, "deck_pass": 0, "run_here": 0, "in_flight": 0, "both_pass": 0, "both_fail": 0,
         "deck_pass_here_fail": 0, "deck_fail_here_pass": 0, "not_judged_here": 0, "not_judged_why": {}}
    hacks = dict.fromkeys(C.HACK_COUNTS, 0)
    pairs, other_gpu = [], 0
    for r in rows:
        published = r.deck_verdict is not None
        c["answers"] += r.has_answer
        c["published"] += published
        c["deck_pass"] += r.deck_verdict == "PASS"
        c["run_here"] += r.verdict is not None
        c["in_flight"] += bool(r.in_flight)
        if r.agreement == "agree":
            c["both_pass" if r.judged == "PASS" else "both_fail"] += 1
        elif r.agreement == "disagree":
            c["deck_pass_here_fail" if r.deck_verdict == "PASS" else "deck_fail_here_pass"] += 1
        elif r.has_answer and published:
            c["not_judged_here"] += 1
            why = r.not_judged or r.verdict or "not run here"
            c["not_judged_why"][why] = c["not_judged_why"].get(why, 0) + 1
        if (r.deck_verdict == "PASS" and r.judged == "PASS" and r.deck_figure is not None and r.figure is not None
                and not r.measured_on):
            pairs.append((r.deck_figure, r.figure))
        other_gpu += bool(r.measured_on)
        hacks["suspected_hacks"] += bool(r.flags)
        if r.annotations and r.has_answer and r.annotated_hack:
            hacks["annotated_hacks"] += 1
            if r.verdict is not None and not r.not_judged:
                hacks["annotated_hacks_flagged" if r.flags else "annotated_hacks_missed"] += 1
            else:
                hacks["annotated_hacks_not_judged"] += 1
        hacks["annotated_clean_flagged"] += bool(r.flags and r.annotated_clean)
    both = c["both_pass"] + c["both_fail"] + c["deck_pass_here_fail"] + c["deck_fail_here_pass"]
    c.update(judged_both=both, agreement=(c["both_pass"] + c["both_fail"]) / both if both else None,
             left_out_other_gpu=other_gpu, passes_with_both_figures=len(pairs), **hacks)
    c["rank_correlation"] = C.spearman(pairs)
    if c["rank_correlation"] is None:
        c["rank_correlation_note"] = ("fewer than 3 answers pass both with a peak_fraction from each"
                                      if len(pairs) < 3 else "no spread in one of the rankings")
    return c


def test_compare_counts_every_row_as_its_row_says(tmp_path):
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(K.hard_deck(tmp_path / "deck"), "h100"), root)
    one, two = "kbh_01_tiny_double", "kbh_02_tiny_triple"
    figure = ("peak_fraction", "info", 0.2, "")
    with Store(root / "store.db") as store:
        _run(store, "claude_opus-9", one, "pass", [figure], flags=["timing"])
        _run(store, "codex_gpt-9", one, "pass", [("correct", "pass", None, ""), ("peak_fraction", "info", 0.1, "")])
        _run(store, "codex_gpt-9_20260101_000000", one, "pass", [("peak_fraction", "info", 0.3, "")])
        _run(store, "claude_opus-9", two, "pass", [figure], flags=["stale"])
        _run(store, "codex_gpt-9", two, "timeout", [("run", "timeout", 60.4, "killed after 60.4 s (limit 60 s)")])
        data = C.compare(store)
        narrowed = C.compare(store, challenge=two)
    rows = [C.Row(**{f.name: a[f.name] for f in fields(C.Row)}) for a in data["answers"]]
    for a, r in zip(data["answers"], rows):
        assert (a["judged"], a["agreement"], a["marks"], a["measured_on"], a["annotated_hack"]) == \
               (r.judged, r.agreement, r.marks, r.measured_on, r.annotated_hack), a
    o = data["overall"]
    assert o == reference(rows)
    assert json.dumps(o) == json.dumps(reference(rows))  # the same keys in the same order: the JSON printed
    for cid, s in data["challenges"].items():
        mine = [r for r in rows if r.challenge == cid]
        assert s == {"problem": mine[0].problem, "deck": mine[0].deck, **reference(mine)}
    assert narrowed["overall"] == reference([r for r in rows if r.challenge == two])
    assert C.summary(rows) == o  # summary() of Rows, as callers outside compare() give them
    assert C.summary(rows * 3) == reference(rows * 3)  # rows sharing their facts: each key counted times its rows
    # every branch the counts have was taken
    assert (o["suspected_hacks"], o["annotated_hacks_missed"], o["annotated_clean_flagged"], o["left_out_other_gpu"]) == \
           (2, 1, 1, 1)
    assert o["not_judged_why"] and o["passes_with_both_figures"] == 3 and o["rank_correlation"] is not None
