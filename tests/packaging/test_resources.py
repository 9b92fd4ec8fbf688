"""Where benchtui's files are and where it writes; the masks inside the sandbox's view."""
from __future__ import annotations

import sys
from pathlib import Path

from benchtui.host import resources
from benchtui.runner import sandbox
from benchtui.workbench.layout import find_workbench

REPO = Path(__file__).resolve().parents[2]


def test_from_a_clone_the_bundled_folders_are_the_top_level_ones():
    assert not resources.is_installed()
    assert resources.bundled_challenges() == REPO / "challenges"
    assert resources.bundled_demo_models() == REPO / "models"
    assert resources.install_folders() == [REPO]


def test_store_goes_to_the_workbench_when_it_can_take_it(tmp_path, monkeypatch):
    (tmp_path / "wb" / "models").mkdir(parents=True)
    monkeypatch.setenv("BENCHTUI_DATA_DIR", str(tmp_path / "data"))
    assert find_workbench(str(tmp_path / "wb"), None, tmp_path).store_path == tmp_path / "wb" / "store.db"


def test_a_read_only_workbench_keeps_its_store_in_the_user_data_folder(tmp_path, monkeypatch):
    wb = tmp_path / "shelf" / "wb"
    (wb / "models").mkdir(parents=True)
    other = tmp_path / "other" / "wb"
    (other / "models").mkdir(parents=True)
    monkeypatch.setenv("BENCHTUI_DATA_DIR", str(tmp_path / "data"))
    # Running as root, a chmod would not stop a write: ask the same question the code asks.
    monkeypatch.setattr(resources, "_writable", lambda folder: not str(folder).startswith(str(tmp_path)))
    store = find_workbench(str(wb), None, tmp_path).store_path
    assert store.parent.parent == tmp_path / "data" / "stores"
    assert store.name == "store.db" and store.parent.name.startswith("wb-")
    # Two read-only workbenches of the same name keep separate stores; --store still wins.
    assert find_workbench(str(other), None, tmp_path).store_path != store
    assert find_workbench(str(wb), None, tmp_path, store=str(tmp_path / "s.db")).store_path == tmp_path / "s.db"


def test_user_data_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("BENCHTUI_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(resources.sys, "platform", "linux")
    assert resources.user_data_dir() == tmp_path / "xdg" / "benchtui"


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A virtualenv-like prefix under /tmp holding benchtui/bundled with an adapter folder."""
    venv = tmp_path / "venv"
    data = venv / "lib" / "site-packages" / "benchtui" / "bundled"
    adapters = data / "challenges" / "kv" / "adapters"
    adapters.mkdir(parents=True)
    return venv, data, adapters


def _binds(tmp_path: Path):
    venv, data, adapters = _layout(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    return venv, data, adapters, sandbox.view(work, [venv, adapters], [], [data, data / "challenges"])


def test_a_hidden_folder_inside_a_bound_prefix_is_masked_after_it_and_before_binds_inside_it(tmp_path):
    venv, data, adapters, binds = _binds(tmp_path)
    order = [(b.path, b.mask) for b in binds]
    assert (data, True) in order and (data / "challenges", True) not in order  # nothing left to hide inside a mask
    assert order.index((venv, False)) < order.index((data, True)) < order.index((adapters, False))

    argv = sandbox._bwrap_argv(["true"], binds, False)
    pos = lambda *seq: next(i for i in range(len(argv)) if argv[i:i + len(seq)] == list(seq))  # noqa: E731
    assert pos("--ro-bind", str(venv), str(venv)) < pos("--tmpfs", str(data)) < pos("--ro-bind", str(adapters), str(adapters))
    # the folders between the mask and the adapter are made traversable (bwrap would make them 0700)
    assert pos("--tmpfs", str(data)) < pos("--perms", "0755", "--dir", str(data / "challenges")) < pos("--ro-bind", str(adapters), str(adapters))

    script = sandbox._unshare_argv(["true"], binds, False)[-3]
    at = lambda path: script.index(f"/mnt/r{path} ")  # noqa: E731
    assert at(venv) < at(data) < at(adapters)
    assert f"/mnt/r{data} tmpfs" in script


def test_without_a_bind_nothing_extra_is_masked(tmp_path):
    _, data, _ = _layout(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    binds = sandbox.view(work, [], [], [data])
    assert not any(b.mask for b in binds)  # the view never shows it: nothing to cover


def test_version_comes_from_the_package(capsys):
    import benchtui
    import pytest
    from benchtui.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"benchtui {benchtui.__version__}"
    meta = (REPO / "pyproject.toml").read_text()
    assert 'version = { attr = "benchtui.__version__" }' in meta  # the wheel's version is the same string


def test_doctor_recommends_the_extras_this_machine_lacks():
    from benchtui.commands.doctor import recommend_extras

    gpu_no_cupy = recommend_extras(nvidia_gpu=True, cupy=None, mlx_lm="0.30", platform_ok_for_mlx_lm=True, from_clone=False)
    assert [r["extra"] for r in gpu_no_cupy] == ["cuda"]
    # installed from a wheel: the extra's own packages beside it, never benchtui again from an index
    command = gpu_no_cupy[0]["command"]
    assert command.startswith(f'{sys.executable} -m pip install "cupy-cuda12x>=13"'), command
    assert 'pipx inject benchtui "cupy-cuda12x>=13"' in command
    assert "benchtui[" not in command and "--force" not in command
    assert recommend_extras(nvidia_gpu=False, cupy=None, mlx_lm="0.30", platform_ok_for_mlx_lm=True, from_clone=True) == []
    assert recommend_extras(nvidia_gpu=True, cupy="14.0", mlx_lm="0.30", platform_ok_for_mlx_lm=True, from_clone=True) == []
    no_lm = recommend_extras(nvidia_gpu=False, cupy=None, mlx_lm=None, platform_ok_for_mlx_lm=True, from_clone=True)
    assert [(r["extra"], r["command"]) for r in no_lm] == [("ternary", 'python3 -m pip install -e ".[ternary]"')]
    assert recommend_extras(nvidia_gpu=False, cupy=None, mlx_lm=None, platform_ok_for_mlx_lm=False, from_clone=True) == []


def test_an_installed_benchtui_gets_each_extras_exact_packages(monkeypatch):
    """The extra's packages come from the installed distribution's metadata."""
    from benchtui.commands import doctor

    requires = ['numpy>=1.26', 'mlx[cpu]>=0.20; sys_platform == "linux"',
                'mlx-lm>=0.20; (sys_platform == "linux" or (sys_platform == "darwin")) and extra == "ternary"',
                'ray>=2.40; extra == "cluster"', 'pytest>=8; extra == "test"']
    monkeypatch.setattr(doctor.md, "requires", lambda name: requires if name == "benchtui" else None)
    assert doctor.extra_packages("ternary") == ["mlx-lm>=0.20"] and doctor.extra_packages("cluster") == ["ray>=2.40"]
    (rec,) = doctor.recommend_extras(nvidia_gpu=False, cupy=None, mlx_lm=None, platform_ok_for_mlx_lm=True,
                                     from_clone=False)
    assert rec["command"].endswith('-m pip install "mlx-lm>=0.20"  (pipx: pipx inject benchtui "mlx-lm>=0.20")')


def test_doctor_names_every_cupy_distribution_and_the_one_the_driver_fits(monkeypatch):
    from types import SimpleNamespace

    from benchtui.commands import doctor

    fake = [SimpleNamespace(metadata={"Name": n}, version=v)
            for n, v in (("cupy-cuda13x", "14.2.0"), ("numpy", "2.0"), ("cupy", "13.0.0"))]
    monkeypatch.setattr(doctor.md, "distributions", lambda: fake)
    assert doctor.cupy_distributions() == {"cupy": "13.0.0", "cupy-cuda13x": "14.2.0"}
    fit = doctor.cupy_fit({"cupy-cuda13x": "14.2.0"}, (13, 0))
    assert (fit["driver_cuda"], fit["fits"], fit["extra"], fit["problems"]) == ("13.0", "cupy-cuda13x", "cuda13", [])
    old_driver = doctor.cupy_fit({"cupy-cuda13x": "14.2.0"}, (12, 4))
    assert old_driver["fits"] == "cupy-cuda12x" and "needs a CUDA 13 driver" in old_driver["problems"][0]
    two = doctor.cupy_fit({"cupy-cuda12x": "13.6", "cupy-cuda13x": "14.2"}, (13, 0))
    assert "2 CuPy distributions installed" in two["problems"][0]
    assert doctor.cupy_fit({}, None)["fits"] is None
    assert doctor.cupy_fit({}, (14, 1))["fits"] == "cupy-cuda13x"  # newer drivers run older CUDA builds
    rec = doctor.recommend_extras(nvidia_gpu=True, cupy=None, mlx_lm="1", platform_ok_for_mlx_lm=True, from_clone=True,
                                  cuda_extra="cuda13")
    assert rec[0]["command"] == 'python3 -m pip install -e ".[cuda13]"'
    assert "the driver supports CUDA 13.0: cupy-cuda13x fits" in doctor._fit_text(fit)


def test_site_folders_outside_the_prefix_are_bound_back(tmp_path, monkeypatch):
    # `pip install --user` under a hidden $HOME, or a .pth naming another environment's
    # packages: without them every answer's process fails to import NumPy
    user_site = tmp_path / "home" / ".local" / "lib" / "python3" / "site-packages"
    user_site.mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(user_site)])
    work = tmp_path / "work"
    work.mkdir()
    assert sandbox.Bind(user_site, False) in sandbox.view(work)


def test_doctor_recommends_torch_for_kernel_deck_challenges(tmp_path):
    from benchtui.commands.doctor import module_challenges, recommend_extras

    (tmp_path / "challenges" / "deck_a").mkdir(parents=True)
    (tmp_path / "challenges" / "deck_a" / "challenge.toml").write_text('id = "deck_a"\n[module]\ndeck = "kernelbench"\n')
    (tmp_path / "challenges" / "plain").mkdir()
    (tmp_path / "challenges" / "plain" / "challenge.toml").write_text('id = "plain"\n')
    assert module_challenges(str(tmp_path)) == 1
    base = dict(nvidia_gpu=False, cupy=None, mlx_lm="0.30", platform_ok_for_mlx_lm=True, from_clone=True)
    wanted = recommend_extras(**base, torch_missing=True, module_challenges=1)
    assert [(r["extra"], r["command"]) for r in wanted] == [("torch", 'python3 -m pip install -e ".[torch]"')]
    assert "1 kernel-deck challenge" in wanted[0]["why"]
    assert recommend_extras(**base, torch_missing=True, module_challenges=0) == []  # the lean install stays lean
    assert recommend_extras(**base, torch_missing=False, module_challenges=3) == []
    gpu = recommend_extras(**{**base, "nvidia_gpu": True, "cupy": "14.0"}, torch_missing=True)
    assert [r["extra"] for r in gpu] == ["torch"]


def test_doctor_says_how_to_install_torch_where_it_is_missing(tmp_path, monkeypatch):
    """The torch line carries its install command, as pytest's does, even where the lean
    install is not told to add the extra (no kernel-deck challenge in the workbench)."""
    from benchtui.commands import doctor

    real = doctor._version
    monkeypatch.setattr(doctor, "_version", lambda dist: None if dist == "torch" else real(dist))
    monkeypatch.setattr(doctor, "_sandbox", lambda: {"active": "rlimits", "layers": []})
    report = doctor.gather(str(tmp_path))
    [line] = [ln for ln in doctor.render(report).splitlines() if ln.startswith("-- torch")]
    assert line.endswith('; python3 -m pip install -e ".[torch]"'), line
    assert "torch" not in [r["extra"] for r in report["extras"]]
