"""Builds a copy of the demo workbench for TUI tests, snapshots and the bench.

The copy lives in a temporary folder (never the repo's store.db). On top of
the scanned demo it adds fixed runs, checks, grades and a pi transcript with
fixed timestamps, so screens look the same on every run.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
T0 = 1_750_000_000.0  # a fixed instant: 2025-06-15


def pi_session(turns: int = 3, *, pad: int = 0, bad_line: bool = True) -> str:
    """A pi v3 session: user turns, thinking, a write, an edit with a diff, a failing bash."""
    lines = [json.dumps({"type": "session", "version": 3, "id": "0f0e0d0c-0000-4000-8000-000000000001",
                         "timestamp": "2025-06-15T14:40:00.000Z", "cwd": "/work/answer"})]
    parent = None
    n = 0

    def add(obj: dict) -> None:
        nonlocal parent, n
        n += 1
        entry_id = f"{n:08x}"
        obj = {"id": entry_id, "parentId": parent, "timestamp": f"2025-06-15T14:{40 + n // 60:02d}:{n % 60:02d}.000Z", **obj}
        parent = entry_id
        lines.append(json.dumps(obj))

    filler = ("The kernel keeps the running max and sum in registers. " * 8 + "\n") * pad
    for t in range(turns):
        add({"type": "message", "message": {"role": "user", "content": f"Turn {t + 1}: implement layer norm backward and test it.",
                                            "timestamp": int((T0 + n) * 1000)}})
        call = f"call_{t}_w"
        add({"type": "message", "message": {
            "role": "assistant", "provider": "demo", "model": "demo-model", "stopReason": "toolUse",
            "timestamp": int((T0 + n) * 1000),
            "usage": {"input": 1200, "output": 340, "cacheRead": 800, "cacheWrite": 0, "totalTokens": 2340,
                      "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0.0001, "cacheWrite": 0, "total": 0.0031}},
            "content": [
                {"type": "thinking", "thinking": "I should derive dx from dy, the mean and the rstd.\n" * 6 + filler},
                {"type": "text", "text": f"Writing the implementation (turn {t + 1}).\n" + filler},
                {"type": "toolCall", "id": call, "name": "write",
                 "arguments": {"path": "layernorm.py", "content": "import numpy as np\n\n\ndef layer_norm_backward(dy, x, w):\n    return dy * w\n"}},
                {"type": "toolCall", "id": call + "e", "name": "edit",
                 "arguments": {"path": "layernorm.py", "oldText": "return dy * w", "newText": "return dy * w - dy.mean()"}},
                {"type": "toolCall", "id": call + "b", "name": "bash", "arguments": {"command": "python -m pytest -q"}},
            ]}})
        add({"type": "message", "message": {"role": "toolResult", "toolCallId": call, "toolName": "write",
                                            "content": [{"type": "text", "text": "wrote 78 bytes"}], "isError": False}})
        add({"type": "message", "message": {"role": "toolResult", "toolCallId": call + "e", "toolName": "edit",
                                            "content": [{"type": "text", "text": "edited"}], "isError": False,
                                            "details": {"diff": "-    return dy * w\n+    return dy * w - dy.mean()"}}})
        add({"type": "message", "message": {"role": "toolResult", "toolCallId": call + "b", "toolName": "bash",
                                            "content": [{"type": "text", "text": "E   AssertionError: max abs diff 0.12\n1 failed"}],
                                            "isError": True}})
        if bad_line and t == 0:
            lines.append('{"type":"message","message":{"role":"user","content":"File \\"./<redacted>", line 3"}}')
    add({"type": "message", "message": {"role": "assistant", "provider": "demo", "model": "demo-model", "stopReason": "stop",
                                        "timestamp": int((T0 + n) * 1000),
                                        "usage": {"input": 900, "output": 120, "cacheRead": 0, "cacheWrite": 0,
                                                  "cost": {"total": 0.001}},
                                        "content": [{"type": "text", "text": "Done: the tests pass now."}]}})
    return "\n".join(lines) + "\n"


def build_demo(dest: Path) -> Path:
    """Copy models/ and challenges/ into ``dest``, scan, add fixed runs and grades."""
    from benchtui.grading.grades import set_grade
    from benchtui.store.database import Store
    from benchtui.workbench.layout import find_workbench
    from benchtui.workbench.scan import scan_workbench

    # The screens are pinned on the eight bundled challenges: the demo's own
    # worked example (top_p) is left out so the snapshots stay put.
    own = shutil.ignore_patterns("top_p")
    shutil.copytree(REPO / "models", dest / "models", ignore=own)
    shutil.copytree(REPO / "challenges", dest / "challenges", ignore=own)
    answer = dest / "models" / "demo-careful" / "backwards"
    answer.mkdir(parents=True, exist_ok=True)
    (answer / "review-session.jsonl").write_text(pi_session(), encoding="utf-8")
    wb = find_workbench(str(dest), None, dest)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
        seed_results(store)
        answers = store.query("select model, challenge from answers where status = 'answer' order by model, challenge")
        for i, a in enumerate(answers[:3]):
            set_grade(store, a["model"], a["challenge"], ["B+", "A-", "C"][i], grader="reviewer",
                      created_at=f"2025-06-15T15:0{i}:00.000Z")
            set_grade(store, a["model"], a["challenge"], ["A", "B", "B-"][i], grader="Judge LLM",
                      grader_kind="judge", created_at=f"2025-06-15T15:1{i}:00.000Z")
    return dest


VERDICT_CYCLE = ("pass", "fail", "error", "pass", "timeout", "compile_error", "unbound", "skipped")


def seed_results(store) -> None:
    """One finished run per answer with fixed verdicts, times and checks."""
    answers = store.query("select model, challenge, status from answers order by model, challenge")
    for i, a in enumerate(answers):
        if a["status"] != "answer" or i % 4 == 3:
            continue  # leave some answers not run
        verdict = VERDICT_CYCLE[i % len(VERDICT_CYCLE)]
        run_id = store.db["runs"].insert({
            "model": a["model"], "challenge": a["challenge"], "status": "done", "verdict": verdict,
            "backend": "cpu", "device": "cpu", "started_at": "2025-06-15T14:00:00.000Z",
            "finished_at": "2025-06-15T14:00:02.500Z", "duration_s": 2.5,
            "message": f"{verdict}: demo run", "stdout": "checking...\n", "stderr": "",
            "self_exit_code": 0 if verdict == "pass" else 1, "self_duration_s": 0.8,
            "self_output": "test_layernorm.py ..F\n1 failed, 2 passed", "self_status": "fail" if verdict != "pass" else "pass",
        }).last_pk
        store.db["checks"].insert_all([
            {"run_id": run_id, "position": 1, "name": "matches_reference", "verdict": verdict,
             "value": "3.1e-07" if verdict == "pass" else "0.12", "threshold": "1e-05",
             "message": "max abs error vs float64 reference", "details": json.dumps({"shape": [4, 64]})},
            {"run_id": run_id, "position": 2, "name": "speedup", "verdict": "info", "value": "1.8x",
             "threshold": "", "message": "reference time / answer time", "details": None},
        ])
