"""KernelBench-Hard's published answers judged on this machine's GPU, beside the deck's results. Prints JSON.

    python bench/deck_gpu_check.py [--deck PATH] [--budget-s 290] [--out FILE] [--timed-calls 5]

Meant for a GPU machine without network, in one call of at most 5 minutes
(docs/gpu.md says what to carry; the torch extra's packages must be there):

1. the KernelBench-Hard slice (``../shared/kernelbench-hard``, read only) is
   imported into a scratch workbench (``benchtui import --gpu h100``);
2. fourteen of its published answers, chosen to mix Triton, inline CUDA
   (``load_inline``/``cpp_extension``, one with a split-out ``.cu`` sidecar)
   and plain torch, published PASSes and FAILs, over its four problems, are
   run one problem at a time (``benchtui run -c kbh_... -m ... --backend cuda
   --jobs 1``), most valuable first, each skipped (and said) when the time
   left cannot hold it;
3. per answer: benchtui's verdict beside the deck's, the first check that did
   not pass, per shape the trusted time and the as-published one, and
   peak_fraction against the deck's peak and against this device's;
4. ``benchtui published --json``'s agreement counts and every disagreement
   with both reasons.

The scratch workbench's challenges time ``--timed-calls`` calls per shape
(their ``[thresholds] timed_calls``; the decks' own 20-30 do not fit five
minutes over fourteen answers): figures from a check, not a ranking.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.append(str(REPO / "bench"))  # after the repository: bench/engine.py is not the package

from gpu_check import checks_of, cli, machine  # noqa: E402

DEFAULT_DECK = next((p for p in (REPO / "shared" / "kernelbench-hard", REPO.parent / "shared" / "kernelbench-hard")
                     if p.is_dir()), REPO.parent / "shared" / "kernelbench-hard")
# (challenge, models) in order of value: each problem's mix of kinds and of published verdicts
PLAN = [
    ("kbh_01_fp8_gemm", ["codex_gpt-5.5", "deepseek-claude_deepseek-v4-pro", "or-opus_anthropic_claude-opus-5"]),
    ("kbh_07_w4a16_gemm", ["codex_gpt-5.5", "claude_claude-opus-4-8", "or-fable_deepseek_deepseek-v4-flash-0731",
                           "grok_grok-4.5_max"]),
    ("kbh_06_sonic_moe_swiglu", ["codex_gpt-5.5", "hy3-claude_tencent_hy3-preview", "zai-claude_glm-5.2"]),
    ("kbh_02_kda_cutlass", ["claude_claude-fable-5", "cursor_composer-2.5-fast", "gemini_gemini-3.5-flash",
                            "kimi-claude_kimi-k2.7-code"]),
]
SECONDS_PER_ANSWER = 35.0  # a guess for the first one; the measured mean replaces it


def kind_of(folder: Path) -> str:
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.glob("*.py"))
    kinds = [k for k, pat in (("triton", r"\bimport triton|from triton"), ("cuda", r"load_inline|cpp_extension"))
             if re.search(pat, text)]
    return "+".join(kinds) or "torch"


def answer_figures(checks: dict) -> dict:
    out: dict = {"not_passed": {n: [c["verdict"], (c["message"] or "")[:300]] for n, c in checks.items()
                                if c["verdict"] not in ("pass", "info", "skipped")}}
    for name, c in checks.items():
        d = c.get("details") if isinstance(c.get("details"), dict) else {}
        if name.startswith("time:"):
            out.setdefault("times", {})[name] = {k: d.get(k) for k in (
                "trusted_ms", "as_published_ms", "peak_fraction_deck_peak", "peak_fraction_device_peak",
                "flagged", "device", "empty_cycle")}
        elif name in ("peak_fraction", "deck_rule", "build") or name.startswith("property_stress"):
            out[name] = {"verdict": c["verdict"], "value": c["value"], "message": (c["message"] or "")[:300]}
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deck", type=Path, default=DEFAULT_DECK)
    p.add_argument("--budget-s", type=float, default=290.0)
    p.add_argument("--timed-calls", type=int, default=5)
    p.add_argument("--backend", default="cuda", help="cuda (default); cpu only to try the script without a GPU")
    p.add_argument("--out", type=Path)
    p.add_argument("--quick", action="store_true",
                   help="a 60 s budget and one timed call a shape (the first answers only), no goal asserted: the "
                        "test suite runs it on a GPU machine so the script cannot rot")
    a = p.parse_args()
    if a.quick:
        a.budget_s, a.timed_calls = 60.0, 1
    started = time.perf_counter()
    doc: dict = {"machine": machine(), "deck": str(a.deck), "budget_s": a.budget_s, "skipped": [], "answers": {}}

    def save() -> None:
        doc["wall_s"] = round(time.perf_counter() - started, 1)
        if a.out:
            a.out.write_text(json.dumps(doc, indent=1, default=str))

    if not a.deck.is_dir():
        doc["error"] = f"no KernelBench-Hard deck at {a.deck}"
        save()
        print(json.dumps(doc, indent=1))
        return 1
    wb = Path(tempfile.mkdtemp(prefix="benchtui-deck-gpu-"))
    got = cli(wb, "import", str(a.deck), "--gpu", "h100", "--json", timeout=120)
    doc["import"] = {"rc": got["rc"], "s": got["s"]}
    for toml in (wb / "challenges").glob("*/challenge.toml"):
        text = toml.read_text(encoding="utf-8")
        toml.write_text(text.replace("[requirements]", f"[thresholds]\ntimed_calls = {a.timed_calls}\n\n[requirements]", 1),
                        encoding="utf-8")
    cli(wb, "scan", timeout=120)
    per_answer: list[float] = []
    for challenge, models in PLAN:
        left = a.budget_s - (time.perf_counter() - started)
        need = (sum(per_answer) / len(per_answer) if per_answer else SECONDS_PER_ANSWER) * len(models)
        if left < need:
            doc["skipped"].append(f"{challenge} ({len(models)} answers): {left:.0f} s left, needs about {need:.0f} s")
            continue
        args = ["run", "-c", challenge, "--backend", a.backend, "--jobs", "1", "--no-self-check", "--json"]
        for m in models:
            args += ["-m", m]
        try:
            got = cli(wb, *args, timeout=max(30.0, left - 5))
        except subprocess.TimeoutExpired:
            doc["answers"][challenge] = {"error": f"the run passed the {left - 5:.0f} s left of the budget; stopped"}
            save()
            break
        per_answer.append(got["s"] / len(models))
        try:
            runs = json.loads(got["out"])["runs"]
        except (ValueError, KeyError):
            doc["answers"][challenge] = {"error": (got["err"] or got["out"])[-1500:], "rc": got["rc"], "s": got["s"]}
            save()
            continue
        for r in runs:
            key = f"{r['model']}/{challenge}"
            entry = {"verdict": r["verdict"], "kind": kind_of(wb / "models" / r["model"] / challenge),
                     "message": (r.get("message") or "")[:300], "s": r.get("duration_s")}
            if r.get("run_id"):
                entry.update(answer_figures(checks_of(wb, r["run_id"])))
            doc["answers"][key] = entry
        save()
    got = cli(wb, "published", "--json", timeout=120)
    try:
        pub = json.loads(got["out"])
        doc["published"] = {"overall": pub.get("overall"), "disagreements": pub.get("disagreements")}
        deck = {f"{r['model']}/{r['challenge']}": r for r in pub.get("answers", [])}
        for key, entry in doc["answers"].items():
            row = deck.get(key) or {}
            entry.update({"deck_verdict": row.get("deck_verdict"), "deck_reason": row.get("deck_reason"),
                          "deck_peak_fraction": row.get("deck_figure"), "agreement": row.get("agreement")})
    except ValueError:
        doc["published"] = {"error": (got["err"] or got["out"])[-1500:]}
    doc["ran"] = sum(1 for e in doc["answers"].values() if "verdict" in e)
    save()
    print(json.dumps(doc, indent=1, default=str))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "4")
    raise SystemExit(main())
