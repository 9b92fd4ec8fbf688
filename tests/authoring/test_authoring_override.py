"""Workbench challenges: WORKBENCH/challenges/<id>/ comes on top of
the bundled set; a bundled id is replaced and the scan says so; a broken one
is left out with a warning; `bundled = false` keeps the demo's own example
out of other workbenches."""
from __future__ import annotations

import shutil
from pathlib import Path

from benchtui.challenges.definition import BUNDLED_CHALLENGES, CHALLENGE_IDS
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]
# the published eight, then the bundled CUDA challenge no published benchmark has
BUNDLED_IDS = (*CHALLENGE_IDS, "paged_attention")


def models_wb(tmp_path: Path, *challenges: str) -> Path:
    root = tmp_path / "wb"
    for cid in challenges:
        (root / "models" / "m1" / cid).mkdir(parents=True)
        (root / "models" / "m1" / cid / "PROMPT.md").write_text("prompt\n")
    return root


def test_without_own_challenges_the_bundled_nine_and_not_the_demo_example(tmp_path):
    wb = find_workbench(str(models_wb(tmp_path, "kv")), None, tmp_path)
    assert list(wb.challenges) == list(BUNDLED_IDS)
    assert "top_p" not in wb.challenges and (BUNDLED_CHALLENGES / "top_p" / "challenge.toml").is_file()
    assert wb.challenge_set.overrides == []


def test_the_demo_workbench_holds_its_own_example(tmp_path):
    wb = find_workbench(str(REPO), None, tmp_path)
    assert set(wb.challenges) == {*BUNDLED_IDS, "top_p"} and wb.challenge_set.overrides == []


def test_own_challenge_is_added_and_one_with_a_bundled_id_replaces_it(tmp_path):
    root = models_wb(tmp_path, "kv", "mine")
    own = root / "challenges"
    shutil.copytree(BUNDLED_CHALLENGES / "kv", own / "kv")
    toml = own / "kv" / "challenge.toml"
    toml.write_text(toml.read_text().replace('title = "', 'title = "Ours: ', 1))
    shutil.copytree(BUNDLED_CHALLENGES / "backwards", own / "mine")
    toml = own / "mine" / "challenge.toml"
    toml.write_text(toml.read_text().replace('id = "backwards"', 'id = "mine"'))

    wb = find_workbench(str(root), None, tmp_path)
    assert set(wb.challenges) == {*BUNDLED_IDS, "mine"}
    assert wb.challenges["kv"].path == own / "kv" and wb.challenges["kv"].title.startswith("Ours: ")
    assert wb.challenges["backwards"].path == BUNDLED_CHALLENGES / "backwards"
    with Store(wb.store_path) as store:
        result = scan_workbench(wb, store)
        rows = store.query("select path from challenges where id = 'kv'")
    overrides = [w for w in result.warnings if w.kind == "challenge_override"]
    assert [(w.challenge, w.path) for w in overrides] == [("kv", "challenges/kv")]
    assert "replaces the bundled kv" in overrides[0].detail
    assert rows == [{"path": str(own / "kv")}]
    assert result.answers == 2  # m1/kv and m1/mine: the workbench's own id finds its answers


def test_a_broken_own_challenge_is_left_out_and_reported(tmp_path, capsys):
    from benchtui.cli import main

    root = models_wb(tmp_path, "kv")
    (root / "challenges" / "broken").mkdir(parents=True)
    (root / "challenges" / "broken" / "challenge.toml").write_text("id = [unclosed\n")
    wb = find_workbench(str(root), None, tmp_path)
    assert list(wb.challenges) == list(BUNDLED_IDS)
    assert main(["--workbench", str(root), "scan"]) == 0
    out = capsys.readouterr().out
    assert "bad_challenge" in out and "challenges/broken" in out and "Traceback" not in out


def test_published_layout_finds_models_of_an_own_challenge_only(tmp_path):
    # A model folder holding only the workbench's own challenge is still a model.
    root = tmp_path / "pub"
    shutil.copytree(BUNDLED_CHALLENGES / "backwards", root / "challenges" / "mine")
    toml = root / "challenges" / "mine" / "challenge.toml"
    toml.write_text(toml.read_text().replace('id = "backwards"', 'id = "mine"'))
    (root / "glm" / "mine").mkdir(parents=True)
    wb = find_workbench(str(root), None, tmp_path)
    assert wb.layout == "published" and list(wb.model_dirs()) == ["glm"]


def test_a_verbatim_copy_of_the_bundled_challenges_is_not_reported(tmp_path):
    root = models_wb(tmp_path, "kv")
    shutil.copytree(BUNDLED_CHALLENGES / "kv", root / "challenges" / "kv")
    shutil.copytree(BUNDLED_CHALLENGES / "fuse", root / "challenges" / "fuse")
    (root / "challenges" / "fuse" / "PROMPT.md").write_text("changed\n")
    wb = find_workbench(str(root), None, tmp_path)
    assert [o.id for o in wb.challenge_set.overrides] == ["fuse", "kv"]
    with Store(wb.store_path) as store:
        warned = [w.challenge for w in scan_workbench(wb, store).warnings if w.kind == "challenge_override"]
    assert warned == ["fuse"]
