"""`benchtui adapter new` (scaffold outside the answer folder: contract,
hashes, the answer's API) and `benchtui adapter check` (the real pipeline)."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.runner.orchestrate import tree_digest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def wb(tmp_path) -> Path:
    """A workbench whose model m1 has demo-careful's kv answer (no plugin adapter for m1)."""
    root = tmp_path / "wb"
    shutil.copytree(REPO / "models" / "demo-careful" / "kv", root / "models" / "m1" / "kv")
    return root


def test_new_writes_the_scaffold_outside_the_answer(wb, capsys):
    answer = wb / "models" / "m1" / "kv"
    before = tree_digest(answer)[0]
    assert main(["--workbench", str(wb), "adapter", "new", "m1", "KV Cache"]) == 0
    path = wb / ".benchtui" / "adapters" / "kv" / "m1.py"
    assert path.is_file() and str(path) in capsys.readouterr().out
    assert tree_digest(answer)[0] == before  # nothing written into the answer folder
    text = path.read_text()
    compile(text, str(path), "exec")  # a valid module
    assert "prefill(k, v, lengths)" in text  # the challenge's contract (challenges/kv/ADAPTER.md)
    assert "class KVCache" in text and "def load_prompt(self" in text and "def step(self" in text  # the API
    key = hashlib.sha256((answer / "kv_cache.py").read_bytes()).hexdigest()
    assert f'"kv_cache.py": "{key}"' in text
    # a second time refuses (exit 2), --force overwrites
    assert main(["--workbench", str(wb), "adapter", "new", "m1", "kv"]) == 2
    assert "--force" in capsys.readouterr().err
    path.write_text("edited\n")
    assert main(["--workbench", str(wb), "adapter", "new", "m1", "kv", "--force"]) == 0
    assert "ANSWER_SHA256" in path.read_text()


def test_new_writes_a_cu_scaffold_for_a_cuda_challenge(wb, capsys):
    """fuse's adapter is CUDA built with the answer: the scaffold is a .cu file
    the run reads the key from, and it compiles to nothing but the answer."""
    from benchtui.challenges.adapters import compare_key, read_key
    from benchtui.verify.cuda import build as cuda_build

    answer = wb / "models" / "m1" / "fuse"
    shutil.copytree(REPO / "models" / "demo-careful" / "fuse", answer)
    assert main(["--workbench", str(wb), "adapter", "new", "m1", "fuse"]) == 0
    path = wb / ".benchtui" / "adapters" / "fuse" / "m1.cu"
    assert path.is_file() and not (wb / ".benchtui" / "adapters" / "fuse" / "m1.py").exists()
    text = path.read_text()
    assert '#include "main.cu"' in text or '#include "softmax_topk.cu"' in text
    assert "benchtui_softmax_topk" in text  # the contract (challenges/fuse/ADAPTER.md), as comments
    assert "softmax_topk_launch" in text  # the answer's host launcher, discovered
    assert compare_key(read_key(path), answer) == ([], [])
    if cuda_build.find_nvcc():
        assert cuda_build.compile_check(path, include_dirs=[answer], cache=False).ok


def test_new_rejects_unknown_names(wb, capsys):
    assert main(["--workbench", str(wb), "adapter", "new", "nobody", "kv"]) == 2
    assert "unknown model 'nobody'" in capsys.readouterr().err
    assert main(["--workbench", str(wb), "adapter", "new", "m1", "nope"]) == 2
    assert "unknown challenge 'nope'" in capsys.readouterr().err
    assert main(["--workbench", str(wb), "adapter", "new", "m1", "fuse"]) == 2
    assert "no fuse answer" in capsys.readouterr().err
    assert not (wb / ".benchtui").exists()


@pytest.mark.sandbox
def test_check_runs_the_adapter_and_reports_stale(wb, capsys):
    args = ["--workbench", str(wb), "adapter", "check", "m1", "kv", "--json"]
    # no adapter yet: demo-careful's API (load_prompt / step) does not bind
    assert main(args) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["bound"] is False and out["verdict"] == "unbound"
    # the scaffold filled in with the translation the bundled demo adapter does
    assert main(["--workbench", str(wb), "adapter", "new", "m1", "kv"]) == 0
    path = wb / ".benchtui" / "adapters" / "kv" / "m1.py"
    body = (REPO / "challenges" / "kv" / "adapters" / "demo-careful.py").read_text().split('"""', 2)[2]
    path.write_text(path.read_text() + body)
    capsys.readouterr()
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bound"] is True and out["verdict"] == "pass"
    assert out["adapter"]["source"] == "workbench" and out["adapter"]["status"] == "ok"
    adapter_check = next(c for c in out["checks"] if c["name"] == "adapter")
    assert adapter_check["verdict"] == "info" and ".benchtui/adapters/kv/m1.py" in adapter_check["message"]
    # the answer changes: the adapter is stale, not used, and the check says which file
    with open(wb / "models" / "m1" / "kv" / "kv_cache.py", "a") as fh:
        fh.write("\n# edited\n")
    assert main(args) == 1
    out = json.loads(capsys.readouterr().out)
    adapter_check = next(c for c in out["checks"] if c["name"] == "adapter")
    assert adapter_check["verdict"] == "unbound" and "stale" in adapter_check["message"]
    assert "kv_cache.py" in adapter_check["message"]
    # plain text output says the same, one check per line
    assert main(args[:-1]) == 1
    text = capsys.readouterr().out
    assert "stale" in text and "not bound" in text


def test_new_refuses_an_answer_a_plugin_adapter_binds(demo_workbench, capsys):
    """A workbench scaffold is looked up before the plugin's adapter, so
    writing one over an answer that binds would make every later run unbound."""
    assert main(["--workbench", str(demo_workbench), "adapter", "new", "demo-careful", "kv"]) == 2
    err = capsys.readouterr().err
    assert "already binds through the plugin adapter challenges/kv/adapters/demo-careful.py" in err
    assert "--force" in err
    assert not (demo_workbench / ".benchtui").exists()
    assert main(["--workbench", str(demo_workbench), "adapter", "new", "demo-careful", "kv", "--force"]) == 0
    assert (demo_workbench / ".benchtui" / "adapters" / "kv" / "demo-careful.py").is_file()


def test_new_refuses_an_answer_whose_latest_run_bound(wb, capsys):
    from benchtui.store.database import Store, now_iso
    from benchtui.workbench.layout import find_workbench

    store_path = find_workbench(str(wb), None, wb).store_path
    with Store(store_path) as store:
        run_id = store.db["runs"].insert({"model": "m1", "challenge": "kv", "status": "done", "verdict": "pass",
                                          "started_at": now_iso()}).last_pk
        store.db["checks"].insert({"run_id": run_id, "position": 0, "name": "prefill", "verdict": "pass"})
    assert main(["--workbench", str(wb), "adapter", "new", "m1", "kv"]) == 2
    assert f"already binds without an adapter (latest run #{run_id}: pass)" in capsys.readouterr().err
    with Store(store_path) as store:  # an unbound latest run is what a scaffold is for
        store.db["runs"].insert({"model": "m1", "challenge": "kv", "status": "done", "verdict": "unbound",
                                 "started_at": now_iso()})
    assert main(["--workbench", str(wb), "adapter", "new", "m1", "kv"]) == 0


def test_unbound_message_does_not_name_the_plugin_adapter_when_a_workbench_one_is_used(wb):
    """With an empty workbench scaffold in use, the unbound message
    used to say it looked for challenges/kv/adapters/<model>.py only."""
    from benchtui.challenges.adapters import scaffold
    from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
    from benchtui.runner.local import run_local

    answer = wb / "models" / "m1" / "kv"
    path = scaffold(wb, load_challenge(BUNDLED_CHALLENGES / "kv"), "m1", answer)
    out = run_local("kv", answer, model="m1", adapter=path)
    unbound = [c for c in out["checks"] if c["verdict"] == "unbound"]
    assert out["verdict"] == "unbound" and unbound
    assert ".benchtui/adapters/kv/<model>.py" in unbound[0]["message"]
    assert "the adapter in use" in unbound[0]["message"]


def test_an_unfinished_scaffold_binds_nothing(demo_workbench):
    """A scaffold that does not define what the contract names is `unbound`
    (it used to be an `error` blamed on the answer, with the run reported as bound)."""
    from benchtui.challenges.adapters import scaffold
    from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
    from benchtui.runner.local import run_local

    answer = demo_workbench / "models" / "demo-quitter" / "dflash_verify"
    path = scaffold(demo_workbench, load_challenge(BUNDLED_CHALLENGES / "dflash_verify"), "demo-quitter", answer)
    out = run_local("dflash_verify", answer, model="demo-quitter", adapter=path)
    assert out["verdict"] == "unbound"
    bind = next(c for c in out["checks"] if c["name"] == "bind")
    assert bind["verdict"] == "unbound" and "defines no verify_and_accept" in bind["message"]
    assert not any(c["verdict"] == "error" for c in out["checks"])


@pytest.mark.sandbox
def test_check_of_a_scaffold_is_a_trial_that_keeps_the_answers_verdict(demo_workbench, capsys):
    """`adapter check` on an unfinished scaffold exits 1, and its run is a trial: the
    answer's latest verdict (results, show, the matrix) stays the real run's."""
    from benchtui.store import queries
    from benchtui.store.database import Store
    from benchtui.workbench.layout import find_workbench

    wb = ["--workbench", str(demo_workbench)]
    assert main([*wb, "run", "-m", "demo-quitter", "-c", "dflash_verify", "--no-self-check"]) == 0
    capsys.readouterr()
    assert main([*wb, "adapter", "new", "demo-quitter", "dflash_verify"]) == 0
    assert main([*wb, "adapter", "check", "demo-quitter", "dflash_verify"]) == 1
    out = capsys.readouterr().out
    assert "not bound" in out and "the adapter bound" not in out
    assert "a trial: stored as run #2" in out and "its verdict stays run #1: unbound" in out
    with Store(find_workbench(str(demo_workbench), None, demo_workbench).store_path) as store:
        assert store.db["runs"].get(2)["status"] == queries.TRIAL
        assert queries.latest_run(store, "demo-quitter", "dflash_verify")["id"] == 1
        assert queries.load_matrix(store).cells["demo-quitter", "dflash_verify"].run_id == 1
    assert main([*wb, "show", "demo-quitter", "dflash_verify", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["latest_run"]["id"] == 1 and [t["id"] for t in shown["trials_since"]] == [2]


def test_new_refuses_a_folder_that_holds_no_answer(demo_workbench, capsys):
    """demo-quitter/kv holds only its PROMPT.md: there is no answer to adapt."""
    assert main(["--workbench", str(demo_workbench), "adapter", "new", "demo-quitter", "kv"]) == 1
    assert "holds no answer source files" in capsys.readouterr().err
    assert not (demo_workbench / ".benchtui" / "adapters" / "kv").exists()
