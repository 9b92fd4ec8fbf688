"""Foundation schema: workbench contents, runs, checks, graders, grades, notes.

Answers, grades and notes are keyed by (model, challenge) names, not by
row ids, so a rescan that re-creates rows never orphans a human grade.
"""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db["meta"].create({"key": str, "value": str}, pk="key")

    db["scans"].create(
        {
            "id": int, "started_at": str, "finished_at": str, "workbench": str,
            "layout": str, "git_commit": str, "git_dirty": int, "models": int,
            "answers": int, "files": int, "transcripts": int, "warnings": int,
            "hashed": int, "duration_s": float,
        },
        pk="id",
    )
    db["models"].create(
        {"name": str, "display_name": str, "path": str, "present": int,
         "first_seen": str, "last_seen": str},
        pk="name",
    )
    db["challenges"].create(
        {"id": str, "position": int, "title": str, "difficulty": str, "language": str,
         "backends": str, "display_names": str, "forbidden_imports": str,
         "path": str, "prompt_sha256": str},
        pk="id",
    )
    db["answers"].create(
        {"id": int, "model": str, "challenge": str, "path": str, "status": str,
         "files": int, "transcripts": int, "bytes": int, "present": int,
         "first_seen": str, "last_seen": str},
        pk="id", not_null={"model", "challenge"},
    )
    db["answers"].create_index(["model", "challenge"], unique=True)
    db["files"].create(
        {"id": int, "answer_id": int, "relpath": str, "size": int, "mtime_ns": int,
         "sha256": str, "kind": str, "readable": int, "problem": str,
         "git_status": str, "lines": int},
        pk="id", foreign_keys=[("answer_id", "answers", "id")],
    )
    db["files"].create_index(["answer_id", "relpath"], unique=True)
    db["files"].create_index(["sha256"])
    db["transcripts"].create(
        {"id": int, "answer_id": int, "relpath": str, "sha256": str, "size": int,
         "format": str, "status": str, "problem": str},
        pk="id", foreign_keys=[("answer_id", "answers", "id")],
    )
    db["transcripts"].create_index(["answer_id", "relpath"], unique=True)
    db["scan_warnings"].create(
        {"id": int, "scan_id": int, "kind": str, "model": str, "challenge": str,
         "path": str, "detail": str},
        pk="id", foreign_keys=[("scan_id", "scans", "id")],
    )

    db["runs"].create(
        {"id": int, "model": str, "challenge": str, "status": str, "verdict": str,
         "backend": str, "device": str, "sandbox": str, "seed": int,
         "started_at": str, "finished_at": str, "duration_s": float, "work_s": float, "pid": int,
         "git_commit": str, "answer_sha256": str, "files": str, "versions": str,
         "message": str, "stdout": str, "stderr": str,
         "self_exit_code": int, "self_duration_s": float, "self_command": str,
         "self_output": str, "self_status": str},
        pk="id", not_null={"model", "challenge"},
    )
    db["runs"].create_index(["model", "challenge", "id"])
    db["checks"].create(
        {"id": int, "run_id": int, "position": int, "name": str, "verdict": str,
         "value": str, "threshold": str, "message": str, "details": str},
        pk="id", foreign_keys=[("run_id", "runs", "id")],
    )
    db["checks"].create_index(["run_id"])

    db["graders"].create(
        {"id": int, "name": str, "kind": str, "created_at": str}, pk="id", not_null={"name"}
    )
    db["graders"].create_index(["name"], unique=True)
    # Append-only: a new grade supersedes, invalidation keeps the row.
    db["grades"].create(
        {"id": int, "model": str, "challenge": str, "dimension": str, "letter": str,
         "score": float, "points": float, "grader_id": int, "note": str,
         "rubric_version": str, "created_at": str, "supersedes": int,
         "invalidated_at": str, "invalid_reason": str, "source": str, "source_key": str},
        pk="id", not_null={"model", "challenge", "dimension"},
        foreign_keys=[("grader_id", "graders", "id")],
    )
    db["grades"].create_index(["model", "challenge", "dimension"])
    db["notes"].create(
        {"id": int, "model": str, "challenge": str, "relpath": str, "line": int,
         "transcript": str, "entry": int, "author": str, "text": str, "created_at": str},
        pk="id",
    )
