"""Files beside a model's challenge folders: the scan names every one, and a
one-shot chat export (PROMPT: ... MODEL: ...) that quotes a challenge's
prompt is indexed as that challenge's transcript for the model."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.records.scan_kinds import CHAT_KIND
from benchtui.store import queries
from benchtui.store.database import Store
from benchtui.transcripts import ASSISTANT, RAW, USER, load_transcript, parse_text
from benchtui.transcripts.detect import detect_format
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench
from benchtui.workbench.strays import OUTSIDE_KIND

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"


def chat(prompt: str, answer: str = "Here is a plan.\n\n```python\ndef f():\n    return 1\n```\n") -> str:
    return f"PROMPT: {prompt}\n\n\nMODEL:\n\n{answer}"


def test_a_chat_export_parses_to_a_prompt_and_an_answer():
    text = chat("Do the thing.\n\nConstraints:\n- fast") + "\nPROMPT: and again?\nMODEL: again.\n"
    assert detect_format(text) == "chat"
    t = parse_text(text)
    assert t.header.format == "chat"
    assert [(e.role, e.line) for e in t.entries] == [(USER, 1), (ASSISTANT, 7), (USER, 16), (ASSISTANT, 17)]
    assert t.entries[0].text == "Do the thing.\n\nConstraints:\n- fast"
    assert t.entries[1].text.startswith("Here is a plan.") and "return 1" in t.entries[1].text
    assert len(t.turns) == 2 and not t.warnings
    # a line that merely mentions a model is not a marker; text ahead of the first marker is kept and said
    assert detect_format("Notes\nPROMPT: x\nMODEL: y\n") is None
    odd = parse_text("Notes first\nPROMPT: x\nModel: not a marker\nMODEL: y\n", "chat")
    assert [e.role for e in odd.entries] == [RAW, USER, ASSISTANT] and len(odd.warnings) == 1
    assert odd.entries[1].text == "x\nModel: not a marker"


@pytest.fixture
def wb(tmp_path, challenge_prompts) -> Path:
    root = tmp_path / "wb"
    model = root / "models" / "m"
    for cid in ("kv", "backwards"):
        (model / cid).mkdir(parents=True)
        (model / cid / "PROMPT.md").write_text(challenge_prompts[cid])
    (model / "kv" / "kv.py").write_text("def prefill(k, v, lengths):\n    pass\n")
    (model / "backwards" / "ln.py").write_text("def forward(x, g, b):\n    pass\n")
    # the kv prompt re-wrapped (whitespace differs): still its prompt
    (model / "kv cache chat.md").write_text(chat("\n".join(challenge_prompts["kv"].split(" ")) + "\n"))
    (model / "fuse chat.md").write_text(chat(challenge_prompts["fuse"]))  # no fuse/ folder here
    (model / "ctc chat.md").write_text(chat("Implement CTC loss from scratch in C."))
    (model / "notes.txt").write_text("what I saw\n")
    (model / "misc").mkdir()
    (model / "misc" / "scratch.py").write_text("x = 1\n")
    return root


def scan(root: Path):
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        result = scan_workbench(wb, store)
        rows = store.query("select t.relpath, t.format, t.status, t.entries, t.parsed_at, a.challenge, a.path, a.transcripts "
                           "from transcripts t join answers a on a.id = t.answer_id")
        matrix = queries.load_matrix(store)
    return wb, result, rows, matrix


def test_the_scan_names_every_file_outside_a_challenge_folder_and_indexes_the_chat_that_quotes_one(wb):
    workbench, result, rows, matrix = scan(wb)
    outside = {w.path: w.detail for w in result.warnings if w.kind == OUTSIDE_KIND}
    assert set(outside) == {"m/fuse chat.md", "m/ctc chat.md", "m/notes.txt", "m/misc/scratch.py"}
    assert "m has no fuse/ folder" in outside["m/fuse chat.md"]
    assert "no challenge's prompt" in outside["m/ctc chat.md"]
    assert "not indexed" in outside["m/notes.txt"]
    assert [(w.kind, w.model, w.challenge, w.path) for w in result.info] == [(CHAT_KIND, "m", "kv", "m/kv cache chat.md")]
    assert [(r["relpath"], r["format"], r["status"], r["entries"], r["challenge"], r["transcripts"]) for r in rows] == \
        [("../kv cache chat.md", "chat", "ok", 2, "kv", 1)]
    # what the answer screen's transcript view reads: the workbench, the answer's folder, the relpath
    t = load_transcript(workbench.root / rows[0]["path"] / rows[0]["relpath"])
    assert [e.role for e in t.entries] == [USER, ASSISTANT]
    # information, not a warning: the cell carries none, the scan counts none for it
    assert matrix.cell("m", "kv").warnings == 0
    assert CHAT_KIND not in {w.kind for w in result.warnings}
    # a rescan reads nothing again and parses nothing again
    with Store(workbench.store_path) as store:
        again = scan_workbench(workbench, store)
        assert again.hashed == 0 and [w.path for w in again.info] == ["m/kv cache chat.md"]
        assert store.query("select parsed_at from transcripts")[0]["parsed_at"] == rows[0]["parsed_at"]
    # gone from disk: gone from the index
    (wb / "models" / "m" / "kv cache chat.md").unlink()
    _, result, rows, _ = scan(wb)
    assert rows == [] and result.info == []


def test_scan_and_show_print_the_records(wb, capsys):
    assert main(["--workbench", str(wb), "scan"]) == 0
    out = capsys.readouterr().out
    assert "outside_challenge m/notes.txt: outside any challenge folder: not indexed" in out
    assert "info chat_transcript m/kv cache chat.md: a one-shot chat export quoting kv's prompt" in out
    assert main(["--workbench", str(wb), "show", "m", "kv"]) == 0
    out = capsys.readouterr().out
    assert "transcript: ../kv cache chat.md (chat, ok)" in out and "info chat_transcript:" in out
    assert main(["--workbench", str(wb), "transcript", "show", "models/m/kv cache chat.md"]) == 0
    assert "return 1" in capsys.readouterr().out


def test_a_model_folder_with_many_loose_files_gets_them_named_and_the_rest_counted(tmp_path, challenge_prompts):
    from benchtui.workbench import strays

    model = tmp_path / "models" / "m"
    (model / "kv").mkdir(parents=True)
    (model / "kv" / "kv.py").write_text("x = 1\n")
    for i in range(strays.MOST_NAMED + 7):
        (model / f"f{i:03}.txt").write_text("x\n")
    _, result, _, _ = scan(tmp_path)
    outside = [w for w in result.warnings if w.kind == OUTSIDE_KIND]
    assert len(outside) == strays.MOST_NAMED + 1
    assert outside[-1].path == "m/" and outside[-1].detail.startswith("7 more files")


@pytest.fixture
def published_copy(tmp_path) -> Path:
    if not PUBLISHED.is_dir():
        pytest.skip(f"the published benchmark is not at {PUBLISHED}")
    root = tmp_path / "published"
    shutil.copytree(PUBLISHED, root, symlinks=True, ignore=shutil.ignore_patterns("store.db*"))
    return root


def test_on_the_published_benchmark_a_chat_export_of_each_challenge_finds_its_challenge(published_copy):
    """Each challenge's published prompt, quoted at a model folder's root as the
    benchmark's own chat exports do (qwen36/stable backwards pass.md), is
    indexed as that model's transcript of that challenge, and only that one."""
    qwen = published_copy / "qwen36"
    challenges = sorted(d.name for d in qwen.iterdir() if (d / "PROMPT.md").is_file())
    assert len(challenges) == 8
    for cid in challenges:
        (qwen / f"{cid} chat.md").write_text(chat((qwen / cid / "PROMPT.md").read_text()), encoding="utf-8")
    # a model without that challenge's folder: named, not indexed
    (published_copy / "glm5.1" / "stable backwards pass.md").write_text(
        chat((qwen / "backwards" / "PROMPT.md").read_text()), encoding="utf-8")
    workbench, result, rows, matrix = scan(published_copy)
    chats = {r["challenge"]: r for r in rows if r["format"] == "chat"}
    assert {c: r["relpath"] for c, r in chats.items()} == {c: f"../{c} chat.md" for c in challenges}
    assert all(r["status"] == "ok" and r["entries"] == 2 for r in chats.values())
    assert {w.challenge for w in result.info} == set(challenges)
    outside = {w.path: w.detail for w in result.warnings if w.kind == OUTSIDE_KIND}
    assert outside == {"glm5.1/stable backwards pass.md":
                       "a one-shot chat export quoting backwards's prompt, but glm5.1 has no backwards/ folder: not indexed"}
    # the answer's own session still counts beside it
    assert {r["relpath"] for r in rows if r["challenge"] == "backwards" and r["path"] == "qwen36/backwards"} == \
        {"../backwards chat.md", "session.jsonl"}
