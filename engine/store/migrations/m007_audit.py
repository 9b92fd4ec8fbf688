"""Audits (`benchtui audit`): each mutant's outcome, cached by its content and the
suite's hash; each audited answer's baseline (its trace and the lines the
checks reached); each audit's per-answer summary; and people's marks on
survivors (equivalent or not), kept across audits."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db["audits"].create({"id": int, "started_at": str, "finished_at": str, "status": str, "options": str,
                         "mutants": int, "reused": int, "wall_s": float}, pk="id", if_not_exists=True)
    db["audit_baselines"].create({"key": str, "model": str, "challenge": str, "answer_sha256": str, "suite_sha256": str,
                                  "seed": int, "verdict": str, "trace": str, "unstable": str, "lines": str, "checks": str,
                                  "message": str,
                                  "wall_s": float, "created_at": str}, pk="key", if_not_exists=True)
    db["audit_mutants"].create({"key": str, "model": str, "challenge": str, "file": str, "line": int, "operator": str,
                                "description": str, "diff": str, "mutant_sha256": str, "suite_sha256": str, "seed": int,
                                "status": str, "killed_by": str, "checks": str, "message": str, "wall_s": float,
                                "audited_at": str}, pk="key", if_not_exists=True)
    db["audit_answers"].create({"id": int, "audit_id": int, "model": str, "challenge": str, "status": str,
                                "message": str, "baseline_key": str, "mutant_keys": str, "available": int, "generated": int,
                                "killed": int, "survived": int, "equivalent": int, "score": float},
                               pk="id", foreign_keys=[("audit_id", "audits", "id")], if_not_exists=True)
    db["audit_marks"].create({"id": int, "model": str, "challenge": str, "file": str, "mutant_sha256": str,
                              "equivalent": int, "grader": str, "note": str, "created_at": str}, pk="id", if_not_exists=True)
    db["audit_answers"].create_index(["model", "challenge", "audit_id"], if_not_exists=True)
    db["audit_marks"].create_index(["model", "challenge", "mutant_sha256"], if_not_exists=True)
