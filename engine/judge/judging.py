"""A judging: the calls for a selection of answers (planned, estimated, looked
up in the cache), then asked, and each reply stored as it comes.

Each reply is stored in the same grade records an imported judge's grades
are (engine/grading/grades.py): one grade per dimension the reply grades,
the judge's reasoning as its note, by the grader ``MODEL:MODE:RUBRIC8``
(kind ``judge``), with the judge model, the rubric's sha256 and the mode on
the row. The matrix, ``grades history``, the exports, the leaderboard and the
agreement view read them as they read any judge's. A reply no grade can be
read from is stored as a call (``unparseable`` or ``refused``, with its raw
text) and makes no grade; so does a failed call (``error``, one line).
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchtui.grading.grades import JudgedBy, current_grade, set_grade, write_transaction
from benchtui.judge.calls import (
    Answered,
    JudgeError,
    Outcome,
    ask,
    configured_mode,
    configured_rubric,
    find_model,
    key_problem,
    run_calls,
)
from benchtui.judge.material import NO_VERDICT, Material, MaterialError, gather
from benchtui.judge.reply import Reply, ReplyError, parse_reply, system_message
from benchtui.judge.rubric import Rubric, RubricError, load_rubric
from benchtui.store import judge_sql
from benchtui.store.database import Store, now_iso
from benchtui.workbench.layout import Workbench

CHARS_PER_TOKEN = 4          # the estimate: characters / 4, the usual rule for English and code
REPLY_TOKENS = 900           # about what a reply of nine graded dimensions with reasoning takes
MODE_WORDS = {"blind": "blind", "evidence": "with evidence"}


def grader_name(judge_model: str, mode: str, rubric: Rubric) -> str:
    """One grader per judge model, mode and rubric: ``gpt-4o-mini:evidence:1a2b3c4d``."""
    return f"{judge_model}:{mode}:{rubric.short}"


def request_sha(system: str, body: str) -> str:
    """The sha256 of everything sent: the system message (the rubric, what the mode
    tells the judge, the reply's form) and the material (the prompt, the answer's
    files as given, the evidence). Stored as a call's ``material_sha``."""
    return hashlib.sha256(f"{system}\0{body}".encode()).hexdigest()


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class Call:
    model: str
    challenge: str
    material: Material
    input_tokens: int            # estimated
    key: str                     # request_sha: the cache's key, with the judge model, rubric and mode
    cached: dict | None = None   # the graded call this one repeats (nothing is sent)

    @property
    def cell(self) -> str:
        return f"{self.model}/{self.challenge}"


@dataclass
class Plan:
    judge_model: str
    mode: str
    rubric: Rubric
    system: str
    calls: list[Call] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)   # "model/challenge: why" (no material)

    @property
    def grader(self) -> str:
        return grader_name(self.judge_model, self.mode, self.rubric)

    @property
    def without_verdict(self) -> list[str]:
        """With evidence: the answers the suite has not judged (the judge is told so)."""
        return [c.cell for c in self.calls if c.material.evidence == NO_VERDICT]

    @property
    def to_send(self) -> list[Call]:
        return [c for c in self.calls if c.cached is None]

    def estimate(self) -> dict[str, int]:
        send = self.to_send
        return {"calls": len(self.calls), "cached": len(self.calls) - len(send), "to_send": len(send),
                "input_tokens": sum(c.input_tokens for c in send), "output_tokens": REPLY_TOKENS * len(send)}

    def to_dict(self) -> dict[str, Any]:
        return {"judge_model": self.judge_model, "mode": self.mode, "grader": self.grader,
                "rubric": {"path": str(self.rubric.path), "sha256": self.rubric.sha256},
                "estimate": self.estimate(), "token_rule": f"characters / {CHARS_PER_TOKEN}; {REPLY_TOKENS} per reply",
                "calls": [{"model": c.model, "challenge": c.challenge, "input_tokens": c.input_tokens,
                           "cached": c.cached["id"] if c.cached else None, "files": [f for f, _ in c.material.files],
                           "left_out": c.material.left_out, "prompt_from": c.material.prompt_from}
                          for c in self.calls],
                "skipped": self.skipped, "without_verdict": self.without_verdict}


def plan(store: Store, workbench: Workbench, cells: list[tuple[str, str]], *, judge_model: str, mode: str,
         rubric: Rubric) -> Plan:
    """The calls for ``cells`` (model, challenge), each with its material and
    estimate, and the cached ones marked. Reads only."""
    system = system_message(rubric, mode)
    out = Plan(judge_model, mode, rubric, system)
    for model, challenge in cells:
        try:
            material = gather(store, workbench, model, challenge, mode)
        except MaterialError as exc:
            out.skipped.append(f"{model}/{challenge}: {exc}")
            continue
        body = material.body()
        tokens = estimate_tokens(system) + estimate_tokens(body)
        key = request_sha(system, body)
        out.calls.append(Call(model, challenge, material, tokens, key,
                              judge_sql.cached_call(store, judge_model, rubric.sha256, mode, key)))
    return out


@dataclass
class Result:
    """What a judging did: per call, one line each."""
    graded: list[str] = field(default_factory=list)       # "model/challenge: B+ (9 dimensions)"
    cached: list[str] = field(default_factory=list)
    unparseable: list[str] = field(default_factory=list)  # "model/challenge: why (call #N keeps the reply)"
    failed: list[str] = field(default_factory=list)       # "model/challenge: one line"
    not_asked: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"graded": self.graded, "cached": self.cached, "unparseable": self.unparseable, "failed": self.failed,
                "not_asked": self.not_asked, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


def _store_grades(store: Store, call: Call, reply: Reply, plan_: Plan, call_id: int, *, again: bool = False) -> list[int]:
    """The reply's grades as the plan's grader's; with ``again`` (a cached reply),
    only those that differ from the grader's current grade on the cell."""
    judged = JudgedBy(plan_.judge_model, plan_.rubric.sha256, plan_.mode)
    ids = []
    for dim, (value, reasoning) in reply.grades.items():
        if again:
            now = current_grade(store, call.model, call.challenge, dim, grader=plan_.grader)
            if now is not None and now.letter == value.letter and now.score == value.score \
                    and (now.note or "") == reasoning and now.source_key == f"call {call_id}":
                continue
        g = set_grade(store, call.model, call.challenge, value, dimension=dim, grader=plan_.grader,
                      grader_kind="judge", note=reasoning or None, source="judge", source_key=f"call {call_id}",
                      judged=judged)
        ids.append(g.id)
    return ids


def _overall(reply: Reply) -> str:
    value, _ = reply.grades["overall"]
    return f"{value.display} ({len(reply.grades)} dimension{'s' if len(reply.grades) != 1 else ''})"


def record(store: Store, plan_: Plan, call: Call, outcome: Outcome, result: Result) -> None:
    """One call's outcome into the store, in one transaction: the call, and its grades."""
    answered: Answered | None = outcome.answered
    row: dict[str, Any] = {"model": call.model, "challenge": call.challenge, "judge_model": plan_.judge_model,
                           "rubric_sha": plan_.rubric.sha256, "mode": plan_.mode,
                           "material_sha": call.key, "created_at": now_iso()}
    reply = None
    if answered is None:
        row.update(status="error", problem=outcome.problem)
    else:
        row.update(reply=answered.text, input_tokens=answered.input_tokens, output_tokens=answered.output_tokens)
        result.input_tokens += answered.input_tokens or 0
        result.output_tokens += answered.output_tokens or 0
        try:
            reply = parse_reply(answered.text, plan_.rubric)
            row.update(status="graded", problem="; ".join(reply.problems) or None)
        except ReplyError as exc:
            row.update(status=exc.status, problem=str(exc))
    with write_transaction(store):
        call_id = judge_sql.insert_call(store, row)
        if reply is not None:
            judge_sql.set_call_grades(store, call_id, _store_grades(store, call, reply, plan_, call_id))
    if answered is None:
        result.failed.append(f"{call.cell}: {outcome.problem}")
    elif reply is None:
        what = "the judge declined" if row["status"] == "refused" else "unparseable"
        result.unparseable.append(f"{call.cell}: {what}: {row['problem']} (call #{call_id} keeps the reply; "
                                  "no grade made)")
    else:
        problems = f"; {row['problem']}" if row["problem"] else ""
        result.graded.append(f"{call.cell}: {_overall(reply)}{problems}")


def reuse(store: Store, plan_: Plan, call: Call, result: Result) -> None:
    """A cached call: its reply's grades stand again where the cell's current
    grade is another (the answer was edited, then edited back); nothing is sent."""
    cached = call.cached or {}
    try:
        reply = parse_reply(cached.get("reply") or "", plan_.rubric)
    except ReplyError:
        return
    with write_transaction(store):
        _store_grades(store, call, reply, plan_, cached["id"], again=True)
    result.cached.append(f"{call.cell}: {_overall(reply)} (call #{cached['id']}, nothing sent)")


def judge(store: Store, plan_: Plan, model: Any, *, jobs: int = 4, timeout: float = 300.0,
          on_progress: Callable[[int, int, str], None] | None = None,
          should_stop: Callable[[], bool] = lambda: False, result: Result | None = None) -> Result:
    """Ask the judge for every call of the plan not in the cache, ``jobs`` at a
    time. Each outcome is stored as it comes, so Ctrl-C (KeyboardInterrupt,
    raised on) keeps every call that finished; pass ``result`` to read what
    they were after one."""
    result = result if result is not None else Result()
    for call in plan_.calls:
        if call.cached is not None:
            reuse(store, plan_, call, result)
    send = plan_.to_send
    done = 0

    def job(call: Call) -> Callable[[], Answered]:
        body = call.material.body()
        return lambda: ask(model, plan_.system, body)

    def on_done(outcome: Outcome) -> None:
        nonlocal done
        done += 1
        call = send[outcome.index]
        record(store, plan_, call, outcome, result)
        if on_progress is not None:
            on_progress(done, len(send), call.cell)

    result.not_asked = run_calls([job(c) for c in send], limit=jobs, timeout=timeout, on_done=on_done,
                                 should_stop=should_stop)
    return result


def judge_configured(store: Store, workbench: Workbench, cells: list[tuple[str, str]]) -> tuple[Plan, Result]:
    """``cells`` judged by the judge the config file names (``[judge]`` model,
    mode, rubric; else llm's default model, with evidence, the bundled rubric):
    the dashboard's judge key. JudgeError (one line) when there is no judge to
    ask or its key is missing; nothing is sent then."""
    model = find_model(None)
    if problem := key_problem(model):
        raise JudgeError(problem)
    try:
        rubric = load_rubric(configured_rubric())
    except RubricError as exc:
        raise JudgeError(str(exc)) from exc
    the_plan = plan(store, workbench, cells, judge_model=model.model_id, mode=configured_mode(), rubric=rubric)
    return the_plan, judge(store, the_plan, model)


def summary(the_plan: Plan, result: Result) -> str:
    """One line: what a judging did (the dashboard's notification)."""
    parts = [f"{len(result.graded)} graded"]
    if result.cached:
        parts.append(f"{len(result.cached)} from the cache")
    if result.unparseable:
        parts.append(f"{len(result.unparseable)} without a grade ({result.unparseable[0]})")
    if result.failed:
        parts.append(f"{len(result.failed)} failed ({result.failed[0]})")
    if the_plan.skipped:
        parts.append(f"{len(the_plan.skipped)} skipped ({the_plan.skipped[0]})")
    return f"{the_plan.grader}: " + ", ".join(parts)
