"""Job bundles: what travels to a worker is the answer's scratch copy by value,
unpacked only inside its folder, and a worker running other code than the driver refuses it."""
from __future__ import annotations

import io
import tarfile

import pytest
from benchtui.challenges.definition import RunLimits
from benchtui.records.job import Job
from benchtui.runner.bundle import (
    EngineMismatch,
    JobBundle,
    check_engine,
    engine_fingerprint,
    pack_tree,
    sandbox_env,
    unpack_tree,
)


def test_pack_and_unpack_keep_files_modes_and_drop_links(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    (src / "empty").mkdir()
    (src / "link.py").symlink_to(src / "pkg" / "mod.py")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "x.pyc").write_bytes(b"\0")
    data = pack_tree(src)
    assert pack_tree(src) == data  # stable: the same tree, the same bytes
    dst = tmp_path / "dst"
    unpack_tree(data, dst)
    assert (dst / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (dst / "run.sh").stat().st_mode & 0o111
    assert (dst / "empty").is_dir()
    assert not (dst / "link.py").exists() and not (dst / "__pycache__").exists()


@pytest.mark.parametrize("name,kind", [("../escape.py", tarfile.REGTYPE), ("/abs.py", tarfile.REGTYPE),
                                       ("link", tarfile.SYMTYPE), ("dev", tarfile.CHRTYPE)])
def test_unpack_refuses_members_outside_the_folder_or_not_plain(tmp_path, name, kind):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.type = kind
        if kind == tarfile.SYMTYPE:
            info.linkname = "/etc/passwd"
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(ValueError, match="refusing"):
        unpack_tree(buf.getvalue(), tmp_path / "dst")
    assert not (tmp_path / "escape.py").exists()


def _bundle(**kw) -> JobBundle:
    return JobBundle(key="m/c", model="m", challenge_id="c", answer_tar=b"", job=Job("c", "m", 1),
                     limits=RunLimits(timeout_s=1, cpu_s=1, memory_mb=64, self_check_timeout_s=1), **kw)


def test_a_worker_with_other_code_refuses_the_bundle():
    check_engine(_bundle(engine_fingerprint=engine_fingerprint()))  # the same engine: fine
    with pytest.raises(EngineMismatch, match="install the same benchtui on every node"):
        check_engine(_bundle(engine_fingerprint="0" * 64))
    with pytest.raises(EngineMismatch):
        check_engine(_bundle(engine_version="0.0.0-other", engine_fingerprint=engine_fingerprint()))


def test_a_gpu_run_passes_on_only_the_gpu_it_was_given(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    assert sandbox_env(True)["CUDA_VISIBLE_DEVICES"] == "3"
    assert "CUDA_VISIBLE_DEVICES" not in sandbox_env(False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert "CUDA_VISIBLE_DEVICES" not in sandbox_env(True)
