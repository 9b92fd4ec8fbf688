"""A rescan skips an unchanged answer whole, and still sees every change."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchtui.store.database import Store
from benchtui.workbench import scan as scan_mod
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

PROMPT = "# Task\nImplement it.\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def counting(monkeypatch) -> dict[str, list]:
    """Record each answer whose facts are gathered and whose file rows are compared."""
    calls: dict[str, list] = {"facts": [], "store_files": []}
    facts, store_files = scan_mod._ModelPass._facts, scan_mod._store_files

    def counted_facts(self, model, cid, listed, examined):
        calls["facts"].append((model, cid))
        return facts(self, model, cid, listed, examined)

    def counted_store_files(store, answer_id, *rest):
        calls["store_files"].append(answer_id)
        return store_files(store, answer_id, *rest)

    monkeypatch.setattr(scan_mod._ModelPass, "_facts", counted_facts)
    monkeypatch.setattr(scan_mod, "_store_files", counted_store_files)
    return calls


def workbench(root: Path):
    for m in ("a", "b", "c"):
        write(root / "models" / m / "kv" / "PROMPT.md", PROMPT)
        write(root / "models" / m / "kv" / "kv.py", f"# {m}\n")
    write(root / "models" / "c" / "kv" / "PROMPT.md", PROMPT + "Use PyTorch.\n")  # drifts
    write(root / "models" / "a" / "backwards" / "ln.py", "shared = 1\n")
    write(root / "models" / "b" / "backwards" / "ln.py", "shared = 1\n")  # a duplicate across models
    wb = find_workbench(str(root), None, root)
    return wb, Store(wb.store_path)


def warned(result) -> set[tuple[str, str]]:
    return {(w.kind, w.path) for w in result.warnings}


def test_a_rescan_touching_nothing_does_no_per_answer_work(tmp_path, monkeypatch):
    wb, store = workbench(tmp_path)
    calls = counting(monkeypatch)
    first = scan_workbench(wb, store)
    assert len(calls["facts"]) == len(calls["store_files"]) == 5
    calls["facts"].clear(), calls["store_files"].clear()
    again = scan_workbench(wb, store)
    assert calls == {"facts": [], "store_files": []}
    assert again.unchanged == 5 and again.hashed == 0
    assert (again.answers, again.files, again.transcripts) == (first.answers, first.files, first.transcripts)
    # the duplicate and the drifted prompt are still named, from the stored rows
    assert warned(again) == warned(first) == {
        ("duplicate_file", "a/backwards/ln.py"), ("duplicate_file", "b/backwards/ln.py"),
        ("prompt_drift", "c/kv/PROMPT.md")}


def test_an_edit_in_place_of_the_same_size_is_seen_and_only_its_answer_examined(tmp_path, monkeypatch):
    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    calls = counting(monkeypatch)
    kv = tmp_path / "models" / "a" / "kv" / "kv.py"
    before = kv.stat()
    kv.write_text("# A\n", encoding="utf-8")
    # the same size; a later mtime whatever the clock's grain (the folder's own mtime does not move)
    os.utime(kv, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert kv.stat().st_size == before.st_size
    r = scan_workbench(wb, store)
    assert r.hashed == 1 and r.unchanged == 4
    assert calls["facts"] == [("a", "kv")]
    row = store.query("select f.sha256 from files f join answers a on a.id = f.answer_id "
                      "where a.model = 'a' and a.challenge = 'kv' and f.relpath = 'kv.py'")[0]
    assert row["sha256"] == scan_mod.sha256_file(kv)
    # an edit that makes a skipped answer's file a duplicate names both places
    ln = tmp_path / "models" / "c" / "backwards" / "ln.py"
    write(ln, "shared = 1\n")
    dups = {w.path for w in scan_workbench(wb, store).warnings if w.kind == "duplicate_file"}
    assert dups == {"a/backwards/ln.py", "b/backwards/ln.py", "c/backwards/ln.py"}


def test_added_removed_renamed_files_and_git_state_are_seen(tmp_path):
    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    folder = tmp_path / "models" / "b" / "kv"
    write(folder / "extra" / "more.py", "x = 1\n")
    (folder / "kv.py").rename(folder / "kv2.py")
    (tmp_path / "models" / "a" / "backwards" / "ln.py").unlink()
    r = scan_workbench(wb, store)
    assert r.unchanged == 3  # a/kv, c/kv, b/backwards untouched; b/kv and a/backwards examined

    def rels(model, cid):
        return sorted(x["relpath"] for x in store.query(
            "select f.relpath from files f join answers a on a.id = f.answer_id where a.model = ? and a.challenge = ?",
            [model, cid]))
    assert rels("b", "kv") == ["PROMPT.md", "extra/more.py", "kv2.py"]
    assert rels("a", "backwards") == []
    assert "duplicate_file" not in {w.kind for w in r.warnings}
    # a commit changes each file's git state without touching a file
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for argv in (["init", "-q"], ["add", "models"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *argv], cwd=tmp_path, check=True, capture_output=True, env=env)
    assert scan_workbench(find_workbench(str(tmp_path), None, tmp_path), store).unchanged == 0
    assert {x["git_status"] for x in store.query("select git_status from files")} == {"committed"}


def test_a_rescan_reads_the_file_rows_of_the_answers_it_looks_into_only(tmp_path, monkeypatch):
    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    read: list[int] = []
    previous_files = scan_mod.scan_sql.previous_files

    def recorded(store, answer_ids):
        read.extend(answer_ids)
        return previous_files(store, answer_ids)

    monkeypatch.setattr(scan_mod.scan_sql, "previous_files", recorded)
    write(tmp_path / "models" / "b" / "kv" / "notes.md", "more\n")
    r = scan_workbench(wb, store)
    assert r.unchanged == 4 and r.hashed == 1
    assert read == [store.query("select id from answers where model = 'b' and challenge = 'kv'")[0]["id"]]


def test_a_file_whose_stored_hash_was_cleared_is_examined_again(tmp_path):
    # what a migration does to have files looked at again (m010_empty_transcripts)
    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    with store.conn:
        store.conn.execute("update files set sha256 = '' where relpath = 'kv.py' and answer_id = "
                           "(select id from answers where model = 'a' and challenge = 'kv')")
    r = scan_workbench(wb, store)
    assert r.hashed == 1 and r.unchanged == 4
    assert "" not in {x["sha256"] for x in store.query("select sha256 from files")}


def test_a_challenge_whose_data_files_change_has_its_answers_looked_into(tmp_path):
    import dataclasses

    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    # kv.py becomes the data the challenge hands out: a/kv then holds no answer of its own
    wb.challenges["kv"] = dataclasses.replace(wb.challenges["kv"], data_files=("kv.py",))
    r = scan_workbench(wb, store)
    assert r.unchanged == 2  # the backwards answers; the three kv answers are looked into
    status = {x["model"]: x["status"] for x in store.query("select model, status from answers where challenge = 'kv'")}
    assert status == {"a": "no_answer", "b": "no_answer", "c": "no_answer"}


def test_an_answer_folder_removed_alone_takes_its_duplicate_warning_with_it(tmp_path, monkeypatch):
    # the duplicate and drift rows are read beside the stat calls, before the answer is marked gone
    monkeypatch.setattr(scan_mod, "STAT_THREADS", 2)
    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    assert ("duplicate_file", "b/backwards/ln.py") in warned(scan_workbench(wb, store))
    import shutil

    shutil.rmtree(tmp_path / "models" / "b" / "backwards")
    r = scan_workbench(wb, store)
    assert r.unchanged == 4 and "duplicate_file" not in {w.kind for w in r.warnings}
    # and the prompt drift of an answer gone
    shutil.rmtree(tmp_path / "models" / "c" / "kv")
    assert "prompt_drift" not in {w.kind for w in scan_workbench(wb, store).warnings}


def test_a_rescan_writes_no_row_of_an_unchanged_answer_and_dates_a_gone_one(tmp_path):
    """last_seen is not rewritten on every row at each scan (the whole answers
    table in the WAL); an answer gone from disk is dated by the last scan that found it."""
    import shutil

    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    with store.conn:
        store.conn.execute("update answers set last_seen = 'as written'")
    scan_workbench(wb, store)
    assert {r[0] for r in store.conn.execute("select last_seen from answers")} == {"as written"}
    (seen,) = store.conn.execute("select started_at from scans order by id desc limit 1").fetchone()
    shutil.rmtree(tmp_path / "models" / "c" / "kv")
    scan_workbench(find_workbench(str(tmp_path), None, tmp_path), store)
    rows = dict(store.conn.execute("select model || '/' || challenge, last_seen from answers where present = 0"))
    assert rows == {"c/kv": seen}


def test_the_rescan_queries_of_the_files_table_read_only_the_rows_they_need(tmp_path):
    """unsettled_answers and answer_prompts run at every rescan: by partial
    indexes, not a scan of every file row (60,000 at bench/scale.py's size)."""
    from benchtui.store import scan_sql

    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    plans = []
    real = store.conn.execute

    class Conn:  # the plan of each query the two functions run
        def execute(self, sql, *args):
            plans.append(" ".join(r[3] for r in real("explain query plan " + sql, *args).fetchall()))
            return real(sql, *args)

    class Spy:
        conn = Conn()

    assert scan_sql.unsettled_answers(Spy()) == set()
    assert {r[1] for r in scan_sql.answer_prompts(Spy())} == {"a", "b", "c"}
    assert len(plans) == 2
    assert "idx_files_unsettled" in plans[0] and "idx_files_transcript" in plans[0], plans[0]
    import re

    partial = {"idx_files_unsettled", "idx_files_transcript", "idx_files_prompt"}
    for plan in plans:  # every pass over the files table is over one of the partial indexes
        scans = re.findall(r"SCAN (?:files|f)\b(?: USING (?:COVERING )?INDEX (\w+))?", plan)
        assert scans and set(scans) <= partial, plan
    assert "idx_files_prompt" in plans[1], plans[1]


def test_a_rescan_of_an_unchanged_index_reuses_the_warnings_derived_from_it(tmp_path, monkeypatch):
    """The duplicate and prompt-drift warnings and the unsettled answers are read from
    the whole files table: a rescan after which nothing they read has changed
    (m018's count) takes the last scan's, and a change by any writer is seen."""
    from benchtui.store import scan_sql

    wb, store = workbench(tmp_path)
    first = scan_workbench(wb, store)
    assert ("duplicate_file", "a/backwards/ln.py") in warned(first) and ("prompt_drift", "c/kv/PROMPT.md") in warned(first)
    reads = []
    for name in ("shared_content", "answer_prompts", "unsettled_answers"):
        real = getattr(scan_sql, name)
        monkeypatch.setattr(scan_sql, name, lambda s, _real=real, _name=name: reads.append(_name) or _real(s))
    again = scan_workbench(wb, store)
    assert reads == [] and warned(again) == warned(first)
    assert [w.detail for w in again.warnings] == [w.detail for w in first.warnings]

    with store.conn:  # another writer changes a hash the warnings rest on
        store.conn.execute("update files set sha256 = 'other' where relpath = 'ln.py' and answer_id = "
                           "(select id from answers where model = 'b' and challenge = 'backwards')")
    changed = scan_workbench(wb, store)
    assert "shared_content" in reads and ("duplicate_file", "a/backwards/ln.py") not in warned(changed)
    reads.clear()
    assert scan_workbench(wb, store).warnings == changed.warnings and reads == []

    with store.conn:  # a row inserted (no trigger: the largest id moves)
        store.conn.execute("insert into files (answer_id, relpath, size, mtime_ns, sha256, kind, readable) "
                           "select a.id, 'copy.py', f.size, f.mtime_ns, f.sha256, 'source', 1 from answers a, files f "
                           "where a.model = 'c' and a.challenge = 'kv' and f.relpath = 'ln.py' and f.sha256 != 'other'")
    inserted = scan_workbench(wb, store)
    assert ("duplicate_file", "c/kv/copy.py") in warned(inserted)

    with store.conn:  # without its triggers (a table rebuilt by a later migration) every scan reads
        store.conn.execute("drop trigger files_index_update")
    reads.clear()
    scan_workbench(wb, store)
    assert "shared_content" in reads and "unsettled_answers" in reads


def test_warnings_kept_from_other_code_are_derived_again(tmp_path, monkeypatch):
    """An upgrade (or an edit of the code that words the warnings) does not show the older wording."""
    from benchtui.store import scan_sql

    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    reads = []
    real = scan_sql.shared_content
    monkeypatch.setattr(scan_sql, "shared_content", lambda s: reads.append(1) or real(s))
    scan_workbench(wb, store)
    assert reads == []
    monkeypatch.setattr(scan_mod, "_derived_by", lambda: "other code")
    scan_workbench(wb, store)
    assert reads == [1]
