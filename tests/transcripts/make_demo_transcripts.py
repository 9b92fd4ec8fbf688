"""Write the demo workbench's session transcripts (models/demo-*/.../session.jsonl ...).

Run from the repository root: ``python tests/transcripts/make_demo_transcripts.py``.
Deterministic: the same files every time. The output is committed; this
script documents how it was made and keeps the builders for pi v3 sessions.
"""
from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# USD per million tokens (input, output, cache read, cache write)
PRICES = {"demo-careful-1": (3.0, 15.0, 0.30, 3.75), "demo-hasty-2": (0.25, 2.0, 0.025, 0.0)}


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ts * 1000) % 1000:03d}Z"


class PiSession:
    """Builds a pi v3 session: entries chain onto the current leaf; ``goto`` moves it."""

    def __init__(self, name: str, start: float, cwd: str, model: str, provider: str):
        self.name, self.t, self.model, self.provider = name, start, model, provider
        self.lines: list[str] = []
        self.leaf: str | None = None
        self.n = 0
        self.calls = 0
        sid = hashlib.sha1(name.encode()).hexdigest()
        self._raw({"type": "session", "version": 3, "id": f"{sid[:8]}-{sid[8:12]}-4{sid[13:16]}-a{sid[17:20]}-{sid[20:32]}",
                   "timestamp": iso(start), "cwd": cwd})

    def _raw(self, obj: dict) -> None:
        self.lines.append(json.dumps(obj, ensure_ascii=False))

    def _id(self) -> str:
        self.n += 1
        return hashlib.sha1(f"{self.name}:{self.n}".encode()).hexdigest()[:8]

    def entry(self, kind: str, advance: float = 0.4, **fields) -> str:
        self.t += advance
        eid = self._id()
        self._raw({"type": kind, "id": eid, "parentId": self.leaf, "timestamp": iso(self.t), **fields})
        self.leaf = eid
        return eid

    def goto(self, entry_id: str) -> None:
        self.leaf = entry_id

    def start(self, thinking: str = "medium") -> None:
        self.entry("model_change", provider=self.provider, modelId=self.model)
        self.entry("thinking_level_change", thinkingLevel=thinking)

    def user(self, text: str, advance: float = 20.0) -> str:
        ms = int((self.t + advance) * 1000)
        return self.entry("message", advance, message={"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms})

    def assistant(self, text: str = "", thinking: str = "", calls: list[tuple[str, dict]] = (),
                  tokens: tuple[int, int, int, int] = (0, 0, 0, 0), latency: float = 4.0,
                  stop: str | None = None) -> tuple[str, list[str]]:
        sent = self.t + 0.05
        content, ids = [], []
        if thinking:
            content.append({"type": "thinking", "thinking": thinking})
        if text:
            content.append({"type": "text", "text": text})
        for name, args in calls:
            self.calls += 1
            cid = f"toolu_{hashlib.sha1(f'{self.name}:call{self.calls}'.encode()).hexdigest()[:20]}"
            ids.append(cid)
            content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
        inp, out, cr, cw = tokens
        p = PRICES[self.model]
        cost = {"input": inp * p[0] / 1e6, "output": out * p[1] / 1e6, "cacheRead": cr * p[2] / 1e6, "cacheWrite": cw * p[3] / 1e6}
        cost = {k: round(v, 6) for k, v in cost.items()}
        cost["total"] = round(sum(cost.values()), 6)
        msg = {"role": "assistant", "content": content, "api": "anthropic-messages" if self.model == "demo-careful-1" else "openai-responses",
               "provider": self.provider, "model": self.model,
               "usage": {"input": inp, "output": out, "cacheRead": cr, "cacheWrite": cw, "totalTokens": inp + out + cr + cw, "cost": cost},
               "stopReason": stop or ("toolUse" if calls else "stop"), "timestamp": int(sent * 1000)}
        eid = self.entry("message", 0.05 + latency, message=msg)
        return eid, ids

    def result(self, call_id: str, tool: str, text: str, error: bool = False, took: float = 0.3,
               diff: str | None = None) -> str:
        msg = {"role": "toolResult", "toolCallId": call_id, "toolName": tool,
               "content": [{"type": "text", "text": text}], "isError": error, "timestamp": int((self.t + took) * 1000)}
        if diff:
            msg["details"] = {"diff": diff}
        return self.entry("message", took, message=msg)

    def step(self, thinking: str, tool: str, args: dict, output: str, *, error: bool = False,
             took: float = 0.3, text: str = "", tokens=(0, 0, 0, 0), latency: float = 4.0, diff: str | None = None) -> str:
        _, (cid,) = self.assistant(text, thinking, [(tool, args)], tokens, latency)
        return self.result(cid, tool, output, error, took, diff)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")


def ctx(turn: int, out: int) -> tuple[int, int, int, int]:
    """Plausible prompt-cached token counts for the n-th call of a session."""
    return (3 + turn % 4, out, 9000 + 1400 * turn, 600 + 37 * (turn % 7))


FA_V1 = '''import numpy as np


def flash_attention_fwd(Q, K, V, tile_size=64, causal=True):
    """Tiled attention with the online-softmax recurrence; never builds (N, N)."""
    B, H, N, D = Q.shape
    scale = 1.0 / np.sqrt(D)
    O = np.zeros_like(Q)
    for i0 in range(0, N, tile_size):
        q = Q[:, :, i0:i0 + tile_size] * scale
        m = np.full(q.shape[:3], -np.inf)
        l = np.zeros(q.shape[:3])
        acc = np.zeros(q.shape)
        for j0 in range(0, N, tile_size):
            if causal and j0 > i0 + tile_size - 1:
                break  # tile entirely above the diagonal
            s = q @ K[:, :, j0:j0 + tile_size].swapaxes(-1, -2)
            if causal:
                rows = np.arange(i0, i0 + q.shape[2])[:, None]
                cols = np.arange(j0, j0 + s.shape[-1])[None, :]
                s = np.where(cols > rows, -np.inf, s)
            m_new = np.maximum(m, s.max(-1))
            p = np.exp(s - m_new[..., None])
            alpha = np.exp(m - m_new)
            l = alpha * l + p.sum(-1)
            acc = acc + p @ V[:, :, j0:j0 + tile_size]
            m = m_new
        O[:, :, i0:i0 + tile_size] = acc / l[..., None]
    return O
'''


def flash_attention_careful() -> PiSession:
    s = PiSession("demo-careful/flash_attention", datetime(2025, 9, 14, 9, 12, 5, tzinfo=UTC).timestamp(),
                  "/home/bench/runs/demo-careful/flash_attention", "demo-careful-1", "demo-provider")
    s.start("high")
    s.user("Implement flash_attention_fwd(Q, K, V, tile_size, causal) in NumPy for (B, H, N, D) inputs. "
           "Use the online-softmax recurrence (running max m, running sum l, rescale by exp(m_old - m_new)), "
           "skip tiles above the diagonal when causal, and never materialise an (N, N) array. "
           "Test against naive attention and explain the memory behaviour. The full task is in PROMPT.md.")
    k = 0
    s.step("Let me read the full prompt first to see the exact signature and what they test for.",
           "read", {"path": "PROMPT.md"},
           "# Flash attention forward (NumPy)\n\nImplement `flash_attention_fwd(Q, K, V, tile_size, causal)` ...\n"
           "- Q, K, V: (B, H, N, D) float arrays\n- process K/V in tiles of `tile_size`\n- causal: position i attends to j <= i\n"
           "- must not allocate an N x N matrix\n- report max error vs. a naive implementation", tokens=ctx(k, 120), latency=3.1)
    k += 1
    s.step("", "bash", {"command": "ls -la && python -c 'import numpy; print(numpy.__version__)'"},
           "total 12\ndrwxr-xr-x 2 bench bench 4096 Sep 14 09:12 .\n-rw-r--r-- 1 bench bench 2210 Sep 14 09:12 PROMPT.md\n2.1.1",
           took=0.4, tokens=ctx(k, 60), latency=2.2)
    k += 1
    s.step("Plan: outer loop over query tiles, inner loop over key tiles. Keep per-row running max m and running sum l, "
           "and an unnormalised accumulator acc. For each key tile: s = q k^T * scale, m_new = max(m, rowmax(s)), "
           "p = exp(s - m_new), l = exp(m - m_new) * l + rowsum(p), acc = exp(m - m_new) * acc + p v. "
           "Divide by l at the end. For causal: a key tile whose first column is past the last row of the query tile can be skipped.",
           "write", {"path": "flash_attention.py", "content": FA_V1},
           f"Successfully wrote {len(FA_V1)} bytes to flash_attention.py", took=0.05, tokens=ctx(k, 980), latency=14.6)
    k += 1
    test = ("import numpy as np\nimport pytest\nfrom flash_attention import flash_attention_fwd\n\n\n"
            "def naive(Q, K, V, causal):\n    s = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])\n"
            "    if causal:\n        n = s.shape[-1]\n        s = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, s)\n"
            "    p = np.exp(s - s.max(-1, keepdims=True))\n    return (p / p.sum(-1, keepdims=True)) @ V\n\n\n"
            "@pytest.mark.parametrize('n,tile,causal', [(256, 64, True), (300, 97, True), (256, 64, False), (1, 64, True), (40, 64, True)])\n"
            "def test_matches_naive(n, tile, causal):\n    rng = np.random.default_rng(0)\n"
            "    Q, K, V = (rng.standard_normal((1, 2, n, 32)) for _ in range(3))\n"
            "    out = flash_attention_fwd(Q, K, V, tile_size=tile, causal=causal)\n"
            "    np.testing.assert_allclose(out, naive(Q, K, V, causal), rtol=1e-6, atol=1e-8)\n")
    s.step("Now a test against a naive float64 implementation, with the edge cases from the prompt: uneven tiles, N=1, N < tile.",
           "write", {"path": "test_flash_attention.py", "content": test},
           f"Successfully wrote {len(test)} bytes to test_flash_attention.py", took=0.05, tokens=ctx(k, 640), latency=8.9)
    k += 1
    s.step("", "bash", {"command": "python -m pytest -q test_flash_attention.py"},
           "F.F..                                                                    [100%]\n"
           "FAILED test_flash_attention.py::test_matches_naive[256-64-True] - AssertionError: \n"
           "Not equal to tolerance rtol=1e-06, atol=1e-08\nMismatched elements: 16344 / 16384 (99.8%)\n"
           "Max relative difference: 3.81\nFAILED test_flash_attention.py::test_matches_naive[256-64-False]\n"
           "2 failed, 3 passed in 0.41s\n\nCommand exited with code 1", error=True, took=1.2, tokens=ctx(k, 40), latency=2.0)
    k += 1
    diff1 = ("--- flash_attention.py\n+++ flash_attention.py\n@@ -23,7 +23,7 @@\n"
             "             alpha = np.exp(m - m_new)\n             l = alpha * l + p.sum(-1)\n"
             "-            acc = acc + p @ V[:, :, j0:j0 + tile_size]\n+            acc = alpha[..., None] * acc + p @ V[:, :, j0:j0 + tile_size]\n"
             "             m = m_new\n")
    s.step("Both multi-tile cases fail, the single-tile ones pass. That points at the rescaling: I rescale l by alpha but "
                  "forgot to rescale the accumulator. When the running max grows, earlier contributions must shrink by exp(m_old - m_new) too.",
                  "edit", {"path": "flash_attention.py", "oldText": "            acc = acc + p @ V[:, :, j0:j0 + tile_size]",
                           "newText": "            acc = alpha[..., None] * acc + p @ V[:, :, j0:j0 + tile_size]"},
                  "Successfully replaced text in flash_attention.py.", took=0.05, diff=diff1, tokens=ctx(k, 310), latency=9.7)
    k += 1
    tested = s.step("", "bash", {"command": "python -m pytest -q test_flash_attention.py"},
                    ".....                                                                    [100%]\n5 passed in 0.38s",
                    took=1.1, tokens=ctx(k, 35), latency=1.8)
    k += 1
    # The abandoned branch: precomputing every score tile at once breaks the memory rule.
    s.user("Can you make it faster? The Python loop over key tiles looks slow.", advance=45.0)
    s.step("I could compute all score tiles for a query tile in one matmul against the whole K and then run the recurrence "
           "over slices of that. Fewer Python iterations.",
           "edit", {"path": "flash_attention.py", "oldText": "        for j0 in range(0, N, tile_size):",
                    "newText": "        s_all = q @ K.swapaxes(-1, -2)  # (B, H, tile, N)\n        for j0 in range(0, N, tile_size):"},
           "Successfully replaced text in flash_attention.py.", took=0.05, tokens=ctx(k, 420), latency=11.2,
           diff="--- flash_attention.py\n+++ flash_attention.py\n@@ -12,6 +12,7 @@\n+        s_all = q @ K.swapaxes(-1, -2)  # (B, H, tile, N)\n         for j0 in range(0, N, tile_size):\n")
    k += 1
    s.step("", "bash", {"command": "python - <<'EOF'\nimport tracemalloc, numpy as np\nfrom flash_attention import flash_attention_fwd\n"
                                   "Q=K=V=np.random.default_rng(1).standard_normal((1,1,4096,64))\ntracemalloc.start()\n"
                                   "flash_attention_fwd(Q,K,V,128,True)\nprint('peak MB', tracemalloc.get_traced_memory()[1]/2**20)\nEOF"},
           "peak MB 8.6", took=2.9, tokens=ctx(k, 150), latency=3.4)
    k += 1
    s.assistant("Peak memory is 8.6 MB at N=4096 (one N x N float64 matrix would be 128 MB), and the loop now slices a "
                "precomputed (tile, N) score block. That block is O(tile x N), so it is still linear in N per query tile.",
                "", [], ctx(k, 160), 6.0)
    k += 1
    s.user("That s_all block is tile x N per query tile: the prompt says tiles of K only. Let's go back to the version that passed.", advance=60.0)
    # The user navigates back to the tested version; pi writes a summary of the abandoned branch there.
    s.goto(tested)
    s.entry("branch_summary", 1.0, fromId=tested,
            summary="Abandoned: precomputed the scores of a query tile against all of K (a tile x N block) to cut Python "
                    "iterations. Memory stayed low at N=4096 (8.6 MB peak) but it processes K in one piece, which the task forbids. "
                    "Back to the per-tile loop that passed 5 tests.")
    s.user("Keep the per-tile loop. Check memory at (1,1,4096,64) with tile 128, make sure large score magnitudes are stable, "
           "and write NOTES.md with the complexity.", advance=25.0)
    s.step("Memory first, with tracemalloc as the checker will likely do it.", "bash",
           {"command": "python - <<'EOF'\nimport tracemalloc, numpy as np\nfrom flash_attention import flash_attention_fwd\n"
                       "Q=K=V=np.random.default_rng(1).standard_normal((1,1,4096,64))\ntracemalloc.start()\n"
                       "flash_attention_fwd(Q,K,V,128,True)\nprint('peak MB', tracemalloc.get_traced_memory()[1]/2**20)\nEOF"},
           "peak MB 6.1", took=3.2, tokens=ctx(k, 170), latency=4.1)
    k += 1
    s.step("6.1 MB against 128 MB for one N x N float64 matrix: under 5%. Now stability: scale the scores by 100. "
           "Since I subtract the running max before exp this should hold, but the first tile starts at m = -inf and "
           "exp(-inf - m_new) = 0, fine. A fully masked row inside a tile would give m_new = -inf and exp(nan); "
           "that cannot happen for causal because the diagonal is always in the first visited tile... but it can for rows "
           "of a query tile whose diagonal lies in a later key tile? No: key tile 0 always has column 0 <= row. OK.",
           "bash", {"command": "python -c \"import numpy as np; from flash_attention import flash_attention_fwd as f; "
                               "r=np.random.default_rng(2); Q,K,V=(r.standard_normal((1,1,300,64)) for _ in range(3)); "
                               "o=f(Q*100,K,V,97,True); print(np.isfinite(o).all(), o.dtype)\""},
           "True float64", took=0.6, tokens=ctx(k, 520), latency=12.8)
    k += 1
    s.step("float32 inputs come back as float64 because acc and l are float64. The checker wants float32 kept; "
           "allocate the accumulators in the input dtype but keep m and l in float64? Simpler: accumulate in float64 and cast the "
           "output tile back to Q.dtype.", "edit",
           {"path": "flash_attention.py", "oldText": "        O[:, :, i0:i0 + tile_size] = acc / l[..., None]",
            "newText": "        O[:, :, i0:i0 + tile_size] = (acc / l[..., None]).astype(Q.dtype, copy=False)"},
           "Successfully replaced text in flash_attention.py.", took=0.05, tokens=ctx(k, 290), latency=7.7,
           diff="--- flash_attention.py\n+++ flash_attention.py\n@@ -27,3 +27,3 @@\n-        O[:, :, i0:i0 + tile_size] = acc / l[..., None]\n"
                "+        O[:, :, i0:i0 + tile_size] = (acc / l[..., None]).astype(Q.dtype, copy=False)\n")
    k += 1
    s.step("", "bash", {"command": "python -m pytest -q test_flash_attention.py && python -c \"import numpy as np; "
                                   "from flash_attention import flash_attention_fwd as f; x=np.ones((1,1,8,4),np.float32); print(f(x,x,x,4,True).dtype)\""},
           ".....                                                                    [100%]\n5 passed in 0.37s\nfloat32", took=1.3,
           tokens=ctx(k, 80), latency=2.4)
    k += 1
    notes = ("# Notes\n\n- Time: O(B H N^2 D) like naive attention; causal skips ~half the key tiles.\n"
             "- Memory: O(B H N D) for Q, K, V, O plus O(B H T D + B H T^2) per tile pair; no N x N array.\n"
             "  Measured peak at (1,1,4096,64), tile 128: 6.1 MB (one N x N float64 matrix: 128 MB).\n"
             "- Stability: scores are shifted by the running max before exp; scores x100 stay finite.\n"
             "- float32 in, float32 out; accumulation in float64.\n")
    s.step("", "write", {"path": "NOTES.md", "content": notes}, f"Successfully wrote {len(notes)} bytes to NOTES.md",
           took=0.05, tokens=ctx(k, 400), latency=9.0)
    k += 1
    s.assistant("Done. `flash_attention_fwd(Q, K, V, tile_size, causal)` in flash_attention.py:\n\n"
                "- online softmax per query tile with running max/sum and rescaling of both l and the accumulator "
                "(the first version forgot the accumulator; the multi-tile tests caught it);\n"
                "- causal key tiles above the diagonal are skipped;\n- 5 tests against naive attention pass "
                "(uneven tiles, N=1, N < tile, non-causal);\n- peak memory 6.1 MB at N=4096, tile 128; scores x100 stay finite; "
                "float32 stays float32.\n\nNOTES.md has the complexity discussion.", "", [], ctx(k, 230), 6.5)
    return s


def dflash_hasty() -> list[str]:
    s = PiSession("demo-hasty/dflash_verify", datetime(2025, 9, 15, 16, 40, 0, tzinfo=UTC).timestamp(),
                  "/home/bench/runs/demo-hasty/dflash_verify", "demo-hasty-2", "demo-provider")
    s.start("low")
    s.user("Implement build_tree_mask(prompt_len, tree_parents) and verify_and_accept(prompt_tokens, tree_tokens, tree_parents, "
           "target_model, temperature=0) for tree-attention speculative decoding in NumPy. See PROMPT.md.")
    k = 0
    code = ("import numpy as np\n\n\ndef build_tree_mask(prompt_len, tree_parents):\n    ...\n\n\n"
            "def verify_and_accept(prompt_tokens, tree_tokens, tree_parents, target_model, temperature=0):\n"
            "    # prediction for node i at position P + i\n    ...\n")
    s.step("Follow the pseudo-code: logits at P + i give the prediction for node i.", "write",
           {"path": "dflash.py", "content": code}, f"Successfully wrote {len(code)} bytes to dflash.py", took=0.05,
           tokens=ctx(k, 1500), latency=21.0)
    k += 1
    s.step("", "bash", {"command": "python test_dflash.py"},
           "Traceback (most recent call last):\n  File \"./home/bench/runs/demo-hasty/dflash_verify/test_dflash.py\", line 3, in <module>\n"
           "    from dflash import verify_and_accept\nModuleNotFoundError: No module named 'numpy.typing_extra'\n\nCommand exited with code 1",
           error=True, took=0.9, tokens=ctx(k, 30), latency=1.5)
    k += 1
    s.step("Stray import, remove it.", "edit",
           {"path": "dflash.py", "oldText": "import numpy.typing_extra\n", "newText": ""},
           "Successfully replaced text in dflash.py.", took=0.05, tokens=ctx(k, 90), latency=3.0)
    k += 1
    s.step("", "bash", {"command": "python test_dflash.py"},
           "Traceback (most recent call last):\n  File \"./home/bench/runs/demo-hasty/dflash_verify/test_dflash.py\", line 21, in <module>\n"
           "    assert out == expected, (out, expected)\nAssertionError: ([5, 9], [5, 7, 2])\n\nCommand exited with code 1",
           error=True, took=1.0, tokens=ctx(k, 30), latency=1.4)
    k += 1
    s.step("The test's expected value is probably wrong; the pseudo-code says P + i. Update the expectation.", "edit",
           {"path": "test_dflash.py", "oldText": "expected = [5, 7, 2]", "newText": "expected = [5, 9]"},
           "Successfully replaced text in test_dflash.py.", took=0.05, tokens=ctx(k, 120), latency=4.2)
    k += 1
    s.step("", "bash", {"command": "python test_dflash.py && echo ok"}, "ok", took=0.8, tokens=ctx(k, 20), latency=1.2)
    k += 1
    s.assistant("Implemented build_tree_mask and verify_and_accept in dflash.py; the test passes.", "", [], ctx(k, 60), 2.5)
    # A redaction tool replaced the home path and its closing backslash, leaving an unescaped quote.
    lines = s.lines
    for i, line in enumerate(lines):
        if "test_dflash.py\\\", line 3" in line:
            lines[i] = line.replace("\\\"./home/bench/runs/demo-hasty/dflash_verify/test_dflash.py\\\"", "\\\"./<redacted>\"")
    return lines


def short_session(name: str, model: str, provider: str, when: datetime, prompt: str,
                  steps: list[tuple[str, str, dict, str, bool]], final: str) -> PiSession:
    s = PiSession(name, when.timestamp(), f"/home/bench/runs/{name}", model, provider)
    s.start()
    s.user(prompt)
    for k, (thinking, tool, args, output, error) in enumerate(steps):
        s.step(thinking, tool, args, output, error=error, took=1.0 if tool == "bash" else 0.05,
               tokens=ctx(k, 200 + 90 * (k % 3)), latency=3.0 + k % 4)
    s.assistant(final, "", [], ctx(len(steps), 180), 5.0)
    return s


def backwards_careful() -> PiSession:
    return short_session(
        "demo-careful/backwards", "demo-careful-1", "demo-provider", datetime(2025, 9, 13, 14, 2, tzinfo=UTC),
        "Derive and implement layer norm backward (dx, dgamma, dbeta) by hand in NumPy, with a finite-difference check. See PROMPT.md.",
        [("Read the prompt for the exact contract.", "read", {"path": "PROMPT.md"},
          "# Layer norm backward\nforward(x, gamma, beta, eps) -> (y, cache); backward(dy, cache) -> (dx, dgamma, dbeta) ...", False),
         ("dx = (1/N) * rstd * (N*g - sum(g) - xhat*sum(g*xhat)) with g = dy*gamma. Cache only xhat, rstd and gamma.",
          "write", {"path": "layernorm.py", "content": "import numpy as np\n\n\ndef layernorm_forward(x, gamma, beta, eps):\n    ...\n"},
          "Successfully wrote 1184 bytes to layernorm.py", False),
         ("", "write", {"path": "test_layernorm.py", "content": "from layernorm import layernorm_forward, layernorm_backward\n..."},
          "Successfully wrote 1630 bytes to test_layernorm.py", False),
         ("", "bash", {"command": "python -m pytest -q test_layernorm.py"},
          "......                                                                   [100%]\n6 passed in 0.52s", False),
         ("Constant rows: var = 0, rstd = 1/sqrt(eps): finite. Check float32 stays float32.", "bash",
          {"command": "python -c \"import numpy as np; from layernorm import *; x=np.ones((2,3,4),np.float32); "
                      "y,c=layernorm_forward(x,np.ones(4,np.float32),np.zeros(4,np.float32),1e-5); print(y.dtype, np.isfinite(y).all())\""},
          "float32 True", False)],
        "layernorm.py implements forward and a hand-derived backward; gradients match central differences to 1e-7 "
        "(float64), constant rows stay finite, float32 is preserved. The cache holds x-hat, 1/std and gamma only.")


def beam_hasty() -> PiSession:
    return short_session(
        "demo-hasty/beam_search", "demo-hasty-2", "demo-provider", datetime(2025, 9, 15, 11, 20, tzinfo=UTC),
        "Write batched_beam_search(prompts, beam_width, max_new_tokens, alpha, eos_token_id) over a tiny random LM in NumPy.",
        [("Keep the top beam_width per step; drop finished beams to save work.", "write",
          {"path": "beam.py", "content": "import numpy as np\n\n\ndef batched_beam_search(prompts, beam_width, max_new_tokens, alpha, eos_token_id):\n    ...\n"},
          "Successfully wrote 2417 bytes to beam.py", False),
         ("", "write", {"path": "demo.py", "content": "from beam import batched_beam_search\n..."},
          "Successfully wrote 640 bytes to demo.py", False),
         ("", "bash", {"command": "python demo.py"},
          "Traceback (most recent call last):\n  File \"demo.py\", line 9, in <module>\n    print(out[0][0])\nIndexError: list index out of range\n\n"
          "Command exited with code 1", True),
         ("All beams of item 0 ended with EOS and were dropped, so nothing was returned. Return the best unfinished beams if empty.",
          "edit", {"path": "beam.py", "oldText": "    return results", "newText": "    return results or [b for b in beams[:beam_width]]"},
          "Successfully replaced text in beam.py.", False),
         ("", "bash", {"command": "python demo.py"}, "[[412, 87, 87, 3], [412, 87, 5, 951]]", False)],
        "beam.py implements batched beam search with a length penalty; demo.py prints the top beams per prompt.")


def kv_export() -> dict:
    t0 = int(datetime(2025, 9, 13, 17, 30, tzinfo=UTC).timestamp() * 1000)
    sid = "ses_4a1f9c2e7b3dffe1Kv9Qx2mZ"

    def tool(cid: str, name: str, inp: dict, start: int, end: int, output: str | None = None,
             error: str | None = None, title: str = "") -> dict:
        state = {"status": "error" if error else "completed", "input": inp, "time": {"start": start, "end": end}}
        if error:
            state["error"] = error
        else:
            state.update(output=output, title=title or name, metadata={})
        return {"id": f"prt_{cid}", "sessionID": sid, "messageID": "", "type": "tool", "callID": f"call_{cid}", "tool": name, "state": state}

    def step_finish(inp: int, out: int, reasoning: int, cr: int, cost: float) -> dict:
        return {"type": "step-finish", "reason": "tool-calls", "cost": cost,
                "tokens": {"input": inp, "output": out, "reasoning": reasoning, "cache": {"read": cr, "write": 0}}}

    def assistant(mid: str, created: int, completed: int, parts: list[dict], cost: float, tokens: dict) -> dict:
        return {"info": {"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": created, "completed": completed},
                         "modelID": "demo-careful-1", "providerID": "demo-provider", "mode": "build",
                         "path": {"cwd": "/home/bench/runs/demo-careful/kv", "root": "/home/bench/runs/demo-careful/kv"},
                         "cost": cost, "tokens": tokens}, "parts": parts}

    kv_test = ("python - <<'EOF'\nimport numpy as np\nfrom kv_cache import KVCache\n"
               "c = KVCache(3, 4, 16)\nlengths = [5, 12, 3]\n# compare each decode step against full causal attention\n...\nEOF")
    parts1 = [
        {"type": "step-start"},
        {"type": "reasoning", "text": "Multi-head cache with per-sequence lengths. Store K/V as (B, H, capacity, D) and mask slots past each length.",
         "time": {"start": t0 + 2000, "end": t0 + 5000}},
        tool("01", "read", {"filePath": "/home/bench/runs/demo-careful/kv/PROMPT.md"}, t0 + 5200, t0 + 5300,
             output="<file>\n00001| # KV-cache for incremental decoding\n00002| One token per step, no recompute ...\n</file>", title="PROMPT.md"),
        step_finish(12, 240, 96, 8800, 0.00641),
        {"type": "step-start"},
        {"type": "text", "text": "I'll write the cache with chunked allocation so memory grows linearly."},
        tool("02", "write", {"filePath": "/home/bench/runs/demo-careful/kv/kv_cache.py", "content": "class KVCache:\n    ..."},
             t0 + 19000, t0 + 19100, output="", title="kv_cache.py"),
        step_finish(8, 1450, 310, 9300, 0.02459),
        {"type": "step-start"},
        tool("03", "bash", {"command": kv_test, "description": "Check decode against full attention"}, t0 + 23000, t0 + 24900,
             error="Command failed with exit code 1:\nTraceback (most recent call last):\n  File \"<stdin>\", line 14, in <module>\n"
                   "AssertionError: step 0, batch 2: max abs diff 0.412 (padding slots 3..11 leaked into attention)"),
        step_finish(10, 380, 60, 10400, 0.00887),
        {"type": "step-start"},
        {"type": "reasoning", "text": "Batch 2 has length 3 but the buffer holds 12 slots: the mask uses the max length instead of each row's length.",
         "time": {"start": t0 + 26000, "end": t0 + 29000}},
        tool("04", "edit", {"filePath": "/home/bench/runs/demo-careful/kv/kv_cache.py",
                            "oldString": "valid = np.arange(self.capacity) < self.lengths.max()",
                            "newString": "valid = np.arange(self.capacity)[None, :] < self.lengths[:, None]"},
             t0 + 29500, t0 + 29600, output="", title="kv_cache.py"),
        step_finish(9, 210, 140, 11200, 0.00661),
        {"type": "step-start"},
        tool("05", "bash", {"command": kv_test, "description": "Re-run the decode check"}, t0 + 31000, t0 + 32600,
             output="20 steps x 3 sequences: max abs diff 2.2e-16\nbytes per token: 512 (constant)\n"),
        step_finish(10, 90, 0, 11900, 0.00494),
        {"type": "step-start"},
        {"type": "text", "text": "The cache matches full causal attention on every decode step for lengths [5, 12, 3] "
                                 "(max diff 2.2e-16). The first version masked with the longest length, so padding leaked into "
                                 "shorter sequences; it now masks per row. Memory grows by 512 bytes per token."},
        step_finish(10, 160, 0, 12400, 0.00614),
    ]
    for i, p in enumerate(parts1):
        p.setdefault("id", f"prt_a01{i:03d}")
        p.setdefault("sessionID", sid)
        p["messageID"] = "msg_a01"
    return {
        "info": {"id": sid, "version": "0.15.3", "projectID": "proj_demo", "directory": "/home/bench/runs/demo-careful/kv",
                 "title": "KV-cache for incremental decoding", "time": {"created": t0, "updated": t0 + 40000}},
        "messages": [
            {"info": {"id": "msg_u01", "sessionID": sid, "role": "user", "time": {"created": t0}},
             "parts": [{"id": "prt_u01", "sessionID": sid, "messageID": "msg_u01", "type": "text",
                        "text": "Build a KV-cache for autoregressive decoding in NumPy: one token per step, multi-head, "
                                "batches with different lengths. Read PROMPT.md for the full task."}]},
            assistant("msg_a01", t0 + 1000, t0 + 40000, parts1, 0.05756,
                      {"input": 10, "output": 160, "reasoning": 0, "cache": {"read": 12400, "write": 0}}),
        ],
    }


def main() -> None:
    flash_attention_careful().write(ROOT / "models/demo-careful/flash_attention/session.jsonl")
    (ROOT / "models/demo-hasty/dflash_verify/sesion.jsonl").write_text("\n".join(dflash_hasty()) + "\n", encoding="utf-8")
    backwards_careful().write(ROOT / "models/demo-careful/backwards/session.jsonl")
    beam_hasty().write(ROOT / "models/demo-hasty/beam_search/session.jsonl")
    doc = kv_export()
    (ROOT / "models/demo-careful/kv/opencode-export.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
