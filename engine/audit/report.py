"""What the store says about suite strength: per answer (its latest audit) and
per challenge (all its audited answers pooled), survivors with their diffs.
Scores are recomputed here so a person's marks count at once."""
from __future__ import annotations

import json

from benchtui.audit.core import effective_status, marks, mutant_rows
from benchtui.audit.equivalence import ALLOWED
from benchtui.store import answers_sql, audit_sql
from benchtui.store.database import Store, now_iso


def latest_answers(store: Store) -> list[dict]:
    """Each (model, challenge)'s row from its most recent audit."""
    return audit_sql.latest_answers(store)


def answer_report(store: Store, row: dict) -> dict:
    keys = json.loads(row["mutant_keys"] or "[]")
    rows = mutant_rows(store, keys)
    marked = marks(store, row["model"], row["challenge"])
    counts = {"killed": 0, "survived": 0, "equivalent": 0, "error": 0, "allowed": 0}
    survivors, equivalent = [], []
    for r in sorted(rows, key=lambda r: (r["file"], r["line"], r["description"])):
        status = effective_status(r, marked)
        counts[status] = counts.get(status, 0) + 1
        if status in ("survived", "equivalent"):
            allowed = r["status"] == "equivalent" and (r.get("message") or "").startswith(ALLOWED)
            counts["allowed"] += status == "equivalent" and allowed and r["mutant_sha256"] not in marked
            item = {"file": r["file"], "line": r["line"], "operator": r["operator"], "description": r["description"],
                    "diff": r["diff"], "mutant_sha256": r["mutant_sha256"],
                    "checks": [c["name"] for c in json.loads(r["checks"] or "[]")],
                    "marked": marked.get(r["mutant_sha256"]), "detected": r["status"],
                    # why it counts as equivalent: the same values, or what the prompt leaves to the answer
                    "why": r["message"][len(ALLOWED):] if allowed else ""}
            (survivors if status == "survived" else equivalent).append(item)
    counted = counts["killed"] + counts["survived"]
    return {"model": row["model"], "challenge": row["challenge"], "status": row["status"], "message": row["message"],
            "audit_id": row["audit_id"], "mutants": len(keys), "available": row.get("available"), **counts,
            "score": round(counts["killed"] / counted, 4) if counted else None,
            "survivors": survivors, "likely_equivalent": equivalent}


def challenge_reports(store: Store) -> list[dict]:
    """Per challenge: killed over non-equivalent mutants across its audited answers."""
    by_challenge: dict[str, dict] = {}
    for row in latest_answers(store):
        a = answer_report(store, row)
        c = by_challenge.setdefault(a["challenge"], {"challenge": a["challenge"], "killed": 0, "survived": 0,
                                                     "equivalent": 0, "allowed": 0, "mutants": 0, "answers": []})
        for k in ("killed", "survived", "equivalent", "allowed", "mutants"):
            c[k] += a[k]
        c["answers"].append(a)
    for c in by_challenge.values():
        counted = c["killed"] + c["survived"]
        c["score"] = round(c["killed"] / counted, 4) if counted else None
    return list(by_challenge.values())


def strength(store: Store) -> dict[str, float | None]:
    """challenge -> mutation score, for the dashboard's column (cheap enough to call on refresh)."""
    try:
        return {c["challenge"]: c["score"] for c in challenge_reports(store)}
    except Exception:  # a store from before m007_audit has no audit tables: no column values
        return {}


def mark(store: Store, model: str, challenge: str, mutant_sha: str, equivalent: bool, grader: str, note: str = "") -> dict:
    """Record a person's word on a survivor (append-only; the latest counts)."""
    found = audit_sql.mutants_starting(store, model, challenge, mutant_sha)
    shas = {r["mutant_sha256"] for r in found}
    if len(shas) != 1:
        raise LookupError(f"{'no' if not shas else 'more than one'} audited mutant of {model}/{challenge} "
                          f"starts with {mutant_sha!r}")
    sha = shas.pop()
    audit_sql.add_mark(store, {"model": model, "challenge": challenge, "file": found[0]["file"],
                               "mutant_sha256": sha, "equivalent": int(equivalent), "grader": grader,
                               "note": note, "created_at": now_iso()})
    return {"model": model, "challenge": challenge, "mutant_sha256": sha, "equivalent": equivalent}


def export_section(store: Store) -> list[dict]:
    """The export's `audit` section: per challenge, scores and survivors (diffs included)."""
    return challenge_reports(store)


def apply_diff(original: str, diff: str) -> str | None:
    """The mutant's text rebuilt from the original and its stored unified diff;
    None when the original no longer matches (the answer changed since)."""
    import re

    src = original.splitlines(keepends=True)
    out, pos = [], 0
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        head = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", lines[i])
        i += 1
        if not head:
            continue
        start = int(head.group(1)) - (0 if head.group(2) == "0" else 1)
        out.extend(src[pos:start])
        pos = start
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, text = lines[i][:1], lines[i][1:]
            if tag in (" ", "-"):
                if pos >= len(src) or src[pos].rstrip("\r\n") != text.rstrip("\r\n"):
                    return None
                pos += 1
            if tag in (" ", "+"):
                out.append(text)
            i += 1
    out.extend(src[pos:])
    return "".join(out)


def original_text(store: Store, workbench, model: str, challenge: str, file: str) -> str | None:
    """The audited file as it is on disk now (the reference, or the answer's file)."""
    from benchtui.audit.core import REFERENCE

    if model == REFERENCE:
        ch = workbench.challenges.get(challenge)
        path = ch.reference_path if ch else None
    else:
        folder = answers_sql.answer_path(store, model, challenge)
        path = workbench.root / folder / file if folder is not None else None
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path else None
    except OSError:
        return None
