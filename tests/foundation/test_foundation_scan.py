"""Scanning: both layouts, every warning kind, incremental rescans, git."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from benchtui.store.database import Store
from benchtui.workbench import scan as scan_mod
from benchtui.workbench.layout import WorkbenchError, find_workbench
from benchtui.workbench.scan import scan_workbench

PROMPT = "# Task\nImplement it.\n"


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def open_wb(root: Path):
    wb = find_workbench(str(root), None, Path.cwd())
    return wb, Store(wb.store_path)


def kinds(result) -> dict[str, list]:
    out: dict[str, list] = {}
    for w in result.warnings:
        out.setdefault(w.kind, []).append(w)
    return out


def test_models_layout_counts_and_kinds(tmp_path):
    a = tmp_path / "models" / "alpha"
    write(a / "backwards" / "PROMPT.md", PROMPT)
    write(a / "backwards" / "ln.py", "def forward(x, gamma, beta, eps):\n    return x\n")
    write(a / "backwards" / "NOTES.md", "notes\n")
    write(a / "fuse" / "kernel.cu", "__global__ void k() {}\n")
    write(a / "fuse" / "bench.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(a / "fuse" / "sesion.jsonl", '{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}\n')
    write(a / "ternary_training" / "train_data.txt", "data " * 10)
    wb, store = open_wb(tmp_path)
    assert wb.layout == "models"
    r = scan_workbench(wb, store)
    assert (r.models, r.answers, r.files, r.transcripts) == (1, 3, 7, 1)
    by_path = {(row["relpath"]): row["kind"] for row in store.query("select relpath, kind from files")}
    assert by_path == {"PROMPT.md": "prompt", "ln.py": "source", "NOTES.md": "doc", "kernel.cu": "cuda",
                       "bench.png": "artifact", "sesion.jsonl": "transcript", "train_data.txt": "data"}
    t = store.query("select relpath, format from transcripts")
    assert t == [{"relpath": "sesion.jsonl", "format": "pi"}]


def test_published_layout_ignores_analysis_folders(tmp_path):
    for model in ("glm5", "qwen36"):
        write(tmp_path / model / "backwards" / "PROMPT.md", PROMPT)
        write(tmp_path / model / "backwards" / f"{model}.py", f"# {model}\n")
        write(tmp_path / model / "README.md", "model notes\n")
    write(tmp_path / "glm5" / "dflash_verify" / "verify.py", "x = 1\n")
    write(tmp_path / "analysis" / "charts" / "plot.py", "print(1)\n")
    write(tmp_path / "analysis" / "summary.md", "grades\n")
    write(tmp_path / "README.md", "# Benchmark\n")
    wb, store = open_wb(tmp_path)
    assert wb.layout == "published"
    assert set(wb.model_dirs()) == {"glm5", "qwen36"}
    r = scan_workbench(wb, store)
    assert (r.models, r.answers) == (2, 3)
    assert {(a["model"], a["challenge"]) for a in store.answers()} == {
        ("glm5", "backwards"), ("qwen36", "backwards"), ("glm5", "dflash_verify")}
    assert store.db["answers"].count == 3


def test_not_a_workbench_is_a_clear_error(tmp_path):
    with pytest.raises(WorkbenchError, match="not a workbench"):
        find_workbench(str(tmp_path), None, Path.cwd())
    with pytest.raises(WorkbenchError, match="does not exist"):
        find_workbench(str(tmp_path / "missing"), None, Path.cwd())


def test_workbench_resolution_order(tmp_path, monkeypatch):
    for name in ("flag", "env", "cwd"):
        write(tmp_path / name / "models" / "m" / "kv" / "PROMPT.md", PROMPT)
    assert find_workbench(str(tmp_path / "flag"), str(tmp_path / "env"), tmp_path / "cwd").root == (tmp_path / "flag").resolve()
    assert find_workbench(None, str(tmp_path / "env"), tmp_path / "cwd").root == (tmp_path / "env").resolve()
    assert find_workbench(None, None, tmp_path / "cwd").root == (tmp_path / "cwd").resolve()
    wb = find_workbench(None, None, tmp_path / "cwd", store=str(tmp_path / "elsewhere.db"))
    assert wb.store_path == (tmp_path / "elsewhere.db").resolve()


def test_warning_no_answer(tmp_path):
    write(tmp_path / "models" / "m" / "kv" / "PROMPT.md", PROMPT)
    write(tmp_path / "models" / "m" / "backwards" / "PROMPT.md", PROMPT)
    write(tmp_path / "models" / "m" / "backwards" / "ln.py", "x = 1\n")
    wb, store = open_wb(tmp_path)
    result = scan_workbench(wb, store)
    # only its PROMPT.md: waiting for an answer, said as information, not a warning
    assert "no_answer" not in kinds(result)
    assert [(x.kind, x.model, x.challenge) for x in result.info] == [("waiting", "m", "kv")]
    assert {a["challenge"]: a["status"] for a in store.answers()} == {"kv": "no_answer", "backwards": "answer"}
    write(tmp_path / "models" / "m" / "kv" / "session.jsonl", "")  # a session, and still nothing written
    assert [(x.model, x.challenge) for x in kinds(scan_workbench(wb, store))["no_answer"]] == [("m", "kv")]


def test_warning_duplicate_file_across_models_only(tmp_path):
    code = "def forward():\n    return 1\n"
    write(tmp_path / "models" / "a" / "backwards" / "ln.py", code)
    write(tmp_path / "models" / "b" / "backwards" / "layer.py", code)
    write(tmp_path / "models" / "a" / "kv" / "copy.py", "same model twice\n")
    write(tmp_path / "models" / "a" / "beam_search" / "copy.py", "same model twice\n")
    for m in ("a", "b"):  # identical prompts and data files are expected, not duplicates
        write(tmp_path / "models" / m / "backwards" / "PROMPT.md", PROMPT)
        write(tmp_path / "models" / m / "ternary_training" / "train_data.txt", "shared data\n")
        write(tmp_path / "models" / m / "ternary_training" / "train.py", f"# {m}\n")
    wb, store = open_wb(tmp_path)
    dups = kinds(scan_workbench(wb, store))["duplicate_file"]
    assert sorted(d.path for d in dups) == ["a/backwards/ln.py", "b/backwards/layer.py"]
    assert "b/backwards/layer.py" in next(d.detail for d in dups if d.model == "a")


def test_warning_prompt_drift_says_how_much(tmp_path):
    for m in ("a", "b", "c"):
        write(tmp_path / "models" / m / "kv" / "PROMPT.md", PROMPT + "Use NumPy.\n")
        write(tmp_path / "models" / m / "kv" / "kv.py", f"# {m}\n")
    write(tmp_path / "models" / "c" / "kv" / "PROMPT.md", PROMPT + "Use PyTorch.\nBe quick.\n")
    wb, store = open_wb(tmp_path)
    drift = kinds(scan_workbench(wb, store))["prompt_drift"]
    assert len(drift) == 1 and drift[0].model == "c"
    assert "2 of 3" in drift[0].detail and "+2 -1" in drift[0].detail


def test_warning_unreadable_files(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "MAX_TEXT_BYTES", 1000)
    base = tmp_path / "models" / "m" / "backwards"
    write(base / "latin1.py", "# caf\xe9\n".encode("latin-1"))
    write(base / "huge.md", "x" * 5000)
    write(base / "empty.py", "")
    write(base / "blob.bin", bytes(range(256)))  # binary data is fine
    outside = write(tmp_path.parent / f"{tmp_path.name}-outside.py", "secret = 1\n")
    os.symlink(outside, base / "link.py")
    wb, store = open_wb(tmp_path)
    bad = {w.path: w.detail for w in kinds(scan_workbench(wb, store))["unreadable_file"]}
    assert set(bad) == {"m/backwards/latin1.py", "m/backwards/huge.md", "m/backwards/link.py"}
    assert "not UTF-8" in bad["m/backwards/latin1.py"]
    assert "size cap" in bad["m/backwards/huge.md"]
    assert "leaves the workbench" in bad["m/backwards/link.py"]
    files = {r["relpath"] for r in store.query("select relpath from files")}
    assert "link.py" not in files and "empty.py" in files


def test_rescan_is_incremental(tmp_path):
    base = tmp_path / "models" / "m" / "backwards"
    write(base / "a.py", "a = 1\n")
    write(base / "b.py", "b = 1\n")
    wb, store = open_wb(tmp_path)
    assert scan_workbench(wb, store).hashed == 2
    assert scan_workbench(wb, store).hashed == 0
    write(base / "b.py", "b = 22\n")
    r = scan_workbench(wb, store)
    assert r.hashed == 1
    (base / "a.py").unlink()
    scan_workbench(wb, store)
    assert [row["relpath"] for row in store.query("select relpath from files")] == ["b.py"]


def test_removed_model_keeps_rows_but_is_absent(tmp_path):
    write(tmp_path / "models" / "gone" / "kv" / "kv.py", "x\n")
    write(tmp_path / "models" / "stays" / "kv" / "kv.py", "y\n")
    wb, store = open_wb(tmp_path)
    scan_workbench(wb, store)
    import shutil

    shutil.rmtree(tmp_path / "models" / "gone")
    scan_workbench(wb, store)
    assert store.model_names() == ["stays"]
    assert store.answer_id("gone", "kv") is not None  # grades keyed on it survive


def test_git_status_per_file(tmp_path):
    base = tmp_path / "models" / "m" / "backwards"
    write(base / "committed.py", "a = 1\n")
    write(base / "changed.py", "b = 1\n")
    os.symlink("changed.py", base / "alias.py")  # a link inside the answer: its target's status
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    run = lambda *a: subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True, env=env)  # noqa: E731
    run("init", "-q")
    run("add", "-A")
    run("commit", "-qm", "init")
    write(base / "changed.py", "b = 2\n")
    write(base / "new.py", "c = 1\n")
    wb, store = open_wb(tmp_path)
    r = scan_workbench(wb, store)
    status = {row["relpath"]: row["git_status"] for row in store.query("select relpath, git_status from files")}
    assert status == {"committed.py": "committed", "changed.py": "modified", "new.py": "untracked",
                      "alias.py": "modified"}
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert r.git_commit == head
    assert store.db["scans"].get(r.scan_id)["git_dirty"] == 1


def test_migrations_are_idempotent(tmp_path):
    s = Store(tmp_path / "store.db")
    first = s.applied_migrations()
    assert first and first[0] == "m001_foundation"
    tables = set(s.db.table_names())
    assert {"models", "challenges", "answers", "files", "transcripts", "runs", "checks", "graders", "grades", "notes"} <= tables
    s.close()
    s = Store(tmp_path / "store.db")
    assert s.migrate() == []
    assert s.applied_migrations() == first
    assert s.query("pragma journal_mode")[0]["journal_mode"] == "wal"


def test_scan_never_writes_answer_folders(demo_workbench):
    from benchtui.runner.orchestrate import tree_digest

    before = tree_digest(demo_workbench / "models")
    wb, store = open_wb(demo_workbench)
    scan_workbench(wb, store)
    scan_workbench(wb, store)
    assert tree_digest(demo_workbench / "models") == before


def test_folders_merely_named_like_challenges_are_not_a_workbench(tmp_path, capsys, monkeypatch):
    """`projects/kv/notes.txt` is a project folder, not a model's answer to kv: `list` there
    refuses in one line and writes no store; a PROMPT.md in the folder, or a store made for
    it, is the evidence that makes it a workbench."""
    from benchtui.cli import main

    write(tmp_path / "projects" / "kv" / "notes.txt", "todo\n")
    monkeypatch.chdir(tmp_path)
    assert main(["list"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is not a workbench" in err and "projects/kv" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["projects"]  # no store.db
    write(tmp_path / "projects" / "kv" / "PROMPT.md", PROMPT)
    assert find_workbench(None, None, tmp_path).layout == "published"
    (tmp_path / "projects" / "kv" / "PROMPT.md").unlink()
    Store(tmp_path / "store.db").close()  # a store already made for it (an earlier scan)
    assert find_workbench(None, None, tmp_path).layout == "published"


def test_a_scan_says_where_its_time_went(demo_workbench, monkeypatch):
    """bench/scale.py prints these figures: each phase's wall and CPU time,
    the workers' apart, the FTS rebuild of a bulk load among them."""
    from benchtui.transcripts import index as index_mod

    monkeypatch.setattr(index_mod, "BULK_FTS_MIN", 1)  # the bulk load (and its rebuild) at the demo's size
    wb, store = open_wb(demo_workbench)
    with store:
        cold = scan_workbench(wb, store)
        warm = scan_workbench(wb, store)
    assert list(cold.phases) == ["git_and_challenges", "files", "rows_and_warnings", "fts_rebuild", "transcripts"]
    assert list(warm.phases) == ["git_and_challenges", "files", "rows_and_warnings", "transcripts"]  # nothing to rebuild
    for result in (cold, warm):
        for figures in result.phases.values():
            assert set(figures) == {"wall_s", "cpu_s", "workers_cpu_s"} and min(figures.values()) >= 0
        # consecutive phases (the rebuild is a part of the transcripts' phase): together the scan's time
        whole = sum(f["wall_s"] for name, f in result.phases.items() if name != "fts_rebuild")
        assert whole <= result.duration_s + 0.01
        assert whole >= 0.5 * result.duration_s
    assert cold.phases["fts_rebuild"]["wall_s"] <= cold.phases["transcripts"]["wall_s"]
