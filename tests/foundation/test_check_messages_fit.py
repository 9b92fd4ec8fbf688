"""`show` and `run` print check messages to the terminal's width: a number is
never cut into another number nor dropped, a cut line ends with an ellipsis,
and a failing check's message is printed whole."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.store.database import Store
from benchtui.text.fit import fit
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

PASSING = "fixed case error 3.3e-16 below the tolerance 1e-05 on every one of the twelve fixed cases and the seeded random ones too"
FAILING = ("multi_token_causal: 3 of 4 decode steps differ from full attention; smallest counter-example: batch 0, "
           "head 1, step 2, position 17: got 0.51234 expected 0.49876 (difference 1.358e-02, tolerance 1e-04)")


PROSE = "none of torch, tensorflow, jax, cupy or numba is imported anywhere in the answer's own files"
SPEED = "speedup 1.15x: answer 34.352 ms (spread 0.4 ms), reference 39.505 ms (spread 0.3 ms) over 30 trials"


def test_a_passing_message_in_words_is_cut_between_words_with_an_ellipsis():
    [line] = fit("  pass  forbidden_imports  ", PROSE, whole=False, width=70)
    assert line == "  pass  forbidden_imports  none of torch, tensorflow, jax, cupy or…"


@pytest.mark.parametrize("width", [80, 140])
def test_a_passing_message_never_drops_a_number(width):
    """A figure cut off the end (the reference time of a speedup) is as misleading as
    one cut in half: the message is wrapped whole instead."""
    prefix = "  info          speed_8x512x1024_float32       "
    lines = fit(prefix, SPEED + " " + PASSING, whole=False, width=width)
    assert all(len(x) <= width for x in lines) and len(lines) > 1
    assert " ".join(x.strip() for x in lines).endswith(SPEED + " " + PASSING)


@pytest.mark.parametrize("width", [1, 2, 4, 5, 6, 9, 17, 18, 30, 80, 140])
def test_a_cut_cell_holds_whole_words_only(width):
    from benchtui.text.fit import cut

    for text in ("speed_8x512x1024_float32", "1e-06", "0.0001", "threshold 1e-06 value 0.0107", SPEED):
        shown = cut(text, width)
        assert len(shown) <= width
        if shown != text:
            assert shown.endswith("…")
            kept = shown[:-1]
            assert text.startswith(kept) and (kept == "" or text[len(kept)] in " _" or kept.endswith("_"))


def test_a_failing_message_is_wrapped_whole():
    lines = fit("  fail          multi_token_causal             ", FAILING, whole=True, width=80)
    assert all(len(x) <= 80 for x in lines) and len(lines) > 1
    words = " ".join(x.strip() for x in lines).split()
    assert words[-len(FAILING.split()):] == FAILING.split()


def test_a_short_message_stays_as_it_is():
    assert fit("  pass  x ", "ok", whole=False, width=80) == ["  pass  x ok"]


@pytest.mark.parametrize("columns", ["80", "300"])
def test_show_prints_to_the_terminals_width(demo_workbench: Path, capsys, monkeypatch, columns):
    wb = find_workbench(str(demo_workbench), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        run_id = store.db["runs"].insert({"model": "demo-hasty", "challenge": "kv", "status": "done", "verdict": "fail",
                                          "backend": "cpu", "duration_s": 1.0}).last_pk
        store.db["checks"].insert_all([
            {"run_id": run_id, "position": 0, "name": "fixed", "verdict": "pass", "message": PASSING},
            {"run_id": run_id, "position": 1, "name": "multi_token_causal", "verdict": "fail", "message": FAILING}])
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["--workbench", str(demo_workbench), "show", "demo-hasty", "kv"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert all(len(x) <= int(columns) for x in lines if "fixed" in x or "multi_token" in x or x.startswith(" " * 6))
    fixed = next(x for x in lines if " fixed " in x)
    if columns == "300":
        assert fixed.endswith(PASSING)
    else:  # wrapped whole: cutting it would drop its figures
        assert "…" not in fixed
        assert " ".join(out.split()).count(" ".join(PASSING.split())) == 1
    assert " ".join(out.split()).count(" ".join(FAILING.split())) == 1  # whole, wrapped or not


def test_a_check_without_a_message_shows_its_value_and_threshold():
    from benchtui.commands.workbench_cmds import measured

    assert measured({"value": "2.6776818533170106e-16", "threshold": "0.0001", "message": ""}) == "value 2.68e-16 (threshold 0.0001)"
    assert measured({"value": "ok", "threshold": None}) == "value ok"
    assert measured({"value": None, "threshold": "1"}) == ""


def test_a_failing_message_keeps_its_own_lines():
    nvcc = ("build_library: nvcc exited 2\nk.cu(12): error: identifier \"x\" is undefined\n"
            "k.cu(19): error: expected a \";\"\n\n2 errors detected in the compilation of \"k.cu\".")
    lines = fit("  compile_error  build: ", nvcc, whole=True, width=100)
    assert lines[0] == "  compile_error  build: build_library: nvcc exited 2"
    assert lines[1].strip() == 'k.cu(12): error: identifier "x" is undefined'
    assert lines[2].strip() == 'k.cu(19): error: expected a ";"' and len(lines) == 4
    assert all(line.startswith(" " * len("  compile_error  build: ")) for line in lines[1:])
    # a check that passed gets one paragraph: its figures kept, its own lines not
    lines = fit("  pass  build: ", nvcc, whole=False, width=100)
    assert " ".join(" ".join(lines).split()) == "pass build: " + " ".join(nvcc.split()) and len(lines) == 2


@pytest.mark.parametrize("width", [60, 80])
def test_a_long_prefix_or_a_long_word_stays_within_the_width(width):
    """`run` says one reason for several requirements at once: their names make a
    prefix wider than the terminal, and a path can be wider than the column under
    the prefix. Both are wrapped, not printed past the edge."""
    names = "    not_exercised topk_softmax, large_vocab, many_rows, accuracy, numerically_stable: "
    reason = "skipped (needs an NVIDIA GPU: this run's backend is cpu, not cuda)"
    lines = fit(names, reason, whole=True, width=width)
    assert all(len(x) <= width for x in lines), lines
    assert " ".join(x.strip() for x in lines) == (names + reason).strip()
    path = "(challenges/ternary_training/adapters/<model>.py)"
    prefix = "    not_exercised training_loop:            "
    lines = fit(prefix, f"smoke_run: no adapter binds smoke_run(text, steps, seed) {path}", whole=True, width=width)
    assert all(len(x) <= width for x in lines), lines
    assert lines[-1].strip().endswith(path)
    assert all(len(x) <= width for x in fit(names, PROSE, whole=False, width=width))
