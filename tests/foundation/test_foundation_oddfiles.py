"""Hypothesis: whatever bytes and names an answer folder holds, a scan completes,
indexes every regular file and flags exactly the undecodable text files."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

names = st.from_regex(r"[A-Za-z0-9_]{1,12}", fullmatch=True)
exts = st.sampled_from([".py", ".cu", ".md", ".jsonl", ".json", ".txt", ".bin", ".npy", ""])
contents = st.one_of(st.binary(max_size=300), st.text(max_size=300).map(lambda s: s.encode("utf-8")))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.dictionaries(st.tuples(names, exts), contents, min_size=1, max_size=8))
def test_scan_survives_any_files(files):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "models" / "m" / "kv"
        base.mkdir(parents=True)
        for (name, ext), data in files.items():
            (base / f"{name}{ext}").write_bytes(data)
        wb = find_workbench(tmp, None, Path.cwd())
        with Store(wb.store_path) as store:
            result = scan_workbench(wb, store)
            assert result.files == len(files)
            flagged = {w.path.rsplit("/", 1)[-1] for w in result.warnings if w.kind == "unreadable_file"}
            kinds = {r["relpath"]: r["kind"] for r in store.query("select relpath, kind from files")}
            for (name, ext), data in files.items():
                fname = f"{name}{ext}"
                text_kind = kinds[fname] in {"source", "cuda", "doc", "transcript", "prompt"}
                try:
                    data.decode("utf-8")
                    decodes = True
                except UnicodeDecodeError:
                    decodes = False
                binary = b"\x00" in data[:65536]  # NUL bytes are flagged even where UTF-8 decodes
                # a transcript-named file with no text is an empty transcript, flagged as a binary one is
                blank = ext in (".jsonl", ".json") and not data.removeprefix(b"\xef\xbb\xbf").strip()
                assert (fname in flagged) == (text_kind and (not decodes or binary or blank)), (fname, kinds[fname])
            # and again, incrementally: nothing re-hashed
            assert scan_workbench(wb, store).hashed == 0
        shutil.rmtree(tmp, ignore_errors=True)
