"""``runs.flags``: the hack signals a run's checks show (engine/records/flags.py),
as a JSON list of kinds, written with the run's verdict and kept apart from it;
NULL for a run that has none. Runs recorded before are read once here."""
import json

import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    from benchtui.records.flags import hack_flags

    table = db.table("runs")
    if "flags" not in table.columns_dict:
        table.add_column("flags", str)
    run_ids = [r[0] for r in db.execute("select id from runs where status = 'done'").fetchall()]
    for start in range(0, len(run_ids), 500):
        chunk = run_ids[start:start + 500]
        rows: dict[int, list] = {}
        for run_id, name, verdict, value, details in db.execute(
                f"select run_id, name, verdict, value, details from checks where run_id in ({','.join('?' * len(chunk))})",
                chunk).fetchall():
            rows.setdefault(run_id, []).append({"name": name, "verdict": verdict, "value": value, "details": details})
        for run_id, checks in rows.items():
            flags = hack_flags(checks)
            if flags:
                db.execute("update runs set flags = ? where id = ?", (json.dumps(flags), run_id))
