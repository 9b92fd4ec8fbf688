"""A grade written while a benchmark run is writing is never lost, and the
store survives the run's process being killed in the middle of a transaction."""
import signal
import sqlite3
import subprocess
import sys
import textwrap

from benchtui.grading.grades import current_grades, set_grade
from benchtui.store.database import Store
from grades_fixtures import fill

# Writes runs and their checks in transactions, forever, the way the runner
# does; a tiny page cache makes uncommitted pages spill into the WAL. Once
# the stop file exists it keeps its next transaction open until killed.
WRITER = textwrap.dedent("""
    import os, sys, time
    from benchtui.store.database import Store
    store = Store(sys.argv[1])
    conn = store.db.conn
    conn.execute("PRAGMA cache_size=5")
    n = 0
    while True:
        n += 1
        conn.execute("BEGIN IMMEDIATE")
        run = conn.execute("insert into runs (model, challenge, status, message) values "
                           "('demo-hasty', 'kv', 'running', ?)", (f"txn {n}",)).lastrowid
        for i in range(300):
            conn.execute("insert into checks (run_id, position, name, verdict, details) values (?, ?, ?, 'pass', ?)",
                         (run, i, f"check {i}", "x" * 400))
        print(f"open {n}", flush=True)
        if os.path.exists(sys.argv[2]):  # asked to stop: hold this transaction open
            print(f"held {n}", flush=True)
            time.sleep(600)
        time.sleep(0.02)
        conn.execute("update runs set status = 'done', verdict = 'pass' where id = ?", (run,))
        conn.execute("COMMIT")
""")


def test_grades_survive_a_writer_killed_mid_transaction(tmp_path):
    path = tmp_path / "store.db"
    fill(Store(path)).close()
    stop = tmp_path / "stop"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(stop)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().startswith("open")
        store = Store(path)
        letters = ["A", "B+", "C", "D-", "F", "A-", "B", "C+"]
        written = []
        for i in range(24):
            g = set_grade(store, "demo-careful", ["kv", "fuse", "backwards"][i % 3], letters[i % 8],
                          grader=f"grader-{i % 4}", note=f"grade {i}")
            written.append((g.id, g.letter, g.note))
        store.close()
        stop.touch()
        line = ""
        while not line.startswith("held"):
            line = child.stdout.readline()
            assert line, "the writer died before holding a transaction"
        in_flight = line.split()[1]
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    reopened = Store(path)
    stored = {(g.id, g.letter, g.note) for g in current_grades(reopened, dimension=None)}
    history = reopened.query("select id, letter, note from grades order by id")
    assert [(r["id"], r["letter"], r["note"]) for r in history] == written
    assert len(stored) == 12  # 3 cells x 4 graders, each the newest of two
    runs = reopened.query("select message, status from runs where message is not null")
    assert runs and all(r["status"] == "done" for r in runs)  # committed ones only
    assert f"txn {in_flight}" not in {r["message"] for r in runs}
    orphans = reopened.query("select count(*) as n from checks where run_id not in (select id from runs)")
    assert orphans[0]["n"] == 0
    reopened.close()
