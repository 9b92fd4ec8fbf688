"""benchtui.api, the one module a challenge imports: what it exports, that every
bundled challenge imports nothing else of benchtui's, the worked example of
docs/authoring.md run as written, and one clear message for a challenge still
written against benchtui's old internal name (``engine``)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import benchtui.api as api
import pytest
from api_imports import files_reaching_past_api, reaches_past_api
from benchtui.authoring.new_challenge import scaffold_challenge
from benchtui.cli import main
from benchtui.records import verdicts
from benchtui.runner.local import run_local
from benchtui.verify.cuda import build as cuda_build

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "authoring.md"


# -- the bundled challenges and the guard itself ---------------------------------------

def test_every_bundled_challenge_file_imports_only_the_public_api():
    files = sorted((REPO / "challenges").rglob("*.py"))
    assert len([f for f in files if f.name == "conformance.py"]) >= 10  # the guard reads the real folder
    assert files_reaching_past_api(REPO / "challenges") == []
    # and they do use it: every conformance.py that imports benchtui imports benchtui.api
    users = [f for f in files if "from benchtui.api import" in f.read_text(encoding="utf-8")]
    assert len(users) >= 12, users


@pytest.mark.parametrize("source, hit", [
    ("from benchtui.verify.suite import CheckFailed\n", "imports benchtui.verify.suite"),
    ("import benchtui.verify.wire as wire\n", "imports benchtui.verify.wire"),
    ("from benchtui import verify\n", "imports benchtui.verify"),
    ("from engine.verify.module_suite import run\n", "imports engine.verify.module_suite"),
    ("import tui\n", "imports tui"),
    ("import importlib\nm = importlib.import_module('benchtui.verify.seeds')\n", "imports benchtui.verify.seeds"),
    ("def f():\n    from benchtui.verify.binding import load_module\n", "imports benchtui.verify.binding"),
])
def test_the_guard_finds_each_way_past_the_api(source, hit):
    assert [h.split(" ", 1)[1] for h in reaches_past_api(source, "x.py")] == [hit]


def test_the_guard_lets_the_api_and_everything_else_through():
    ok = ("from __future__ import annotations\nimport numpy as np\nfrom benchtui.api import Suite, V\n"
          "import benchtui.api\nfrom benchtui import api\nfrom . import helper\nfrom engines import x\n")
    assert reaches_past_api(ok) == []


# -- what the module promises ---------------------------------------------------------

def test_every_exported_name_exists_and_v_names_every_check_verdict():
    assert len(api.__all__) == len(set(api.__all__))
    assert [n for n in api.__all__ if not hasattr(api, n)] == []
    named = {k: v for k, v in vars(api.V).items() if k.isupper()}
    assert set(named.values()) == verdicts.CHECK_VERDICTS and all(v == k.lower() for k, v in named.items())


def test_no_exported_name_is_a_module():
    """A whole module re-exported would make each of its names the authors' surface, documented or not."""
    import types

    assert [n for n in api.__all__ if isinstance(getattr(api, n), types.ModuleType)] == []


def public_api_section() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text[text.index("## The public API\n"):]


def test_docs_list_exactly_the_exported_names():
    rows = [line for line in public_api_section().splitlines() if line.startswith("| `")]
    listed = [name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[1])]
    assert sorted(listed) == sorted(api.__all__)


def test_the_authors_guide_names_every_public_suite_method():
    """challenges/AUTHORING.md, by job, names each public method of ``Suite`` and of
    ``Check``: a method added to the suite is documented or made private."""
    guide = (REPO / "challenges" / "AUTHORING.md").read_text(encoding="utf-8").split("## The Suite API", 1)[1]
    suite = {m for m in dir(api.Suite) if not m.startswith("_")}
    # what the suite itself calls on a finished check, never a check body
    suite_only = {"as_dict", "set_aside_passing_figure"}
    check = {m for m in dir(api.Check) if not m.startswith("_") and callable(getattr(api.Check, m))} - suite_only
    assert len(suite) >= 20
    assert [m for m in sorted(suite) if f"suite.{m}(" not in guide] == []
    assert [m for m in sorted(check) if f"c.{m}(" not in guide] == []


def test_importing_the_api_loads_neither_textual_nor_torch():
    # adapters import it in the answer's process: it must stay light there
    code = "import sys, benchtui.api; print(sorted(m for m in ('textual', 'torch', 'mlx') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


# -- the worked example ---------------------------------------------------------------

def example_files(challenge: str = "unit_rows") -> dict[str, str]:
    """A worked example's files, by their path in a workbench (each block's first line
    names it, after ``#`` or ``//``): the challenge's folder and any answer to it."""
    blocks = re.findall(r"```\w+\n((?:#|//) ((?:challenges|models)/[\w/.-]+)\n.*?)```", public_api_section(), re.S)
    return {path: body for body, path in blocks if f"/{challenge}/" in path}


def test_the_docs_worked_example_runs_as_written(tmp_path):
    files = example_files()
    assert sorted(files) == ["challenges/unit_rows/challenge.toml", "challenges/unit_rows/conformance.py",
                             "challenges/unit_rows/reference.py"]
    assert reaches_past_api(files["challenges/unit_rows/conformance.py"]) == []
    for rel, body in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body, encoding="utf-8")
    right, hasty = tmp_path / "right", tmp_path / "hasty"
    right.mkdir()
    (right / "solution.py").write_text(files["challenges/unit_rows/reference.py"])
    hasty.mkdir()
    (hasty / "solution.py").write_text("import numpy as np\n\n\ndef unit_rows(x):\n"
                                       "    return x / np.linalg.norm(x, axis=1, keepdims=True)\n")
    got = {}
    for answer in (right, hasty):
        out = run_local("unit_rows", answer, challenges_dir=tmp_path / "challenges")
        got[answer.name] = (out["verdict"], {c["name"]: c["verdict"] for c in out["checks"]})
    # what the page says: the reference passes; x / norm passes the random rows and fails the zero row
    assert got["right"] == ("pass", {"zero_row": "pass", "random_rows": "pass"})
    assert got["hasty"] == ("fail", {"zero_row": "fail", "random_rows": "pass"})


def test_the_worked_example_is_sound_once_its_prompt_is_written(capsys, tmp_path):
    # what the page says beneath it: a PROMPT.md in the requirements' words and its hash under [prompts]
    root = tmp_path / "wb"
    (root / "models" / "alpha").mkdir(parents=True)
    for rel, body in example_files().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body, encoding="utf-8")
    folder = root / "challenges" / "unit_rows"
    prompt = ("# Unit rows\n\nImplement `unit_rows(x)` in NumPy: for a 2-D float64 array, return an array of its "
              "shape that scales each row to unit length; an all-zero row stays zero.\n")
    (folder / "PROMPT.md").write_text(prompt)
    (folder / "ADAPTER.md").write_text("`unit_rows(x)` -> an array of x's shape.\n")
    with open(folder / "challenge.toml", "a") as fh:
        fh.write(f'\n[prompts.workbench]\nsha256 = ["{api.prompt_sha256(prompt)}"]\n')
    try:
        code = main(["--workbench", str(root), "challenge", "check", "unit_rows", "--seeds", "1", "--mutants", "0"])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr().out
    # every item judged and passed; only the mutation score, left out by --mutants 0, is not judged
    assert code == 0 and "FAIL" not in out and out.rstrip().endswith("(see -- above): mutation_score"), out


# -- the worked CUDA example ----------------------------------------------------------

needs_nvcc = pytest.mark.skipif(cuda_build.find_nvcc() is None, reason="nvcc not installed: the example cannot compile")


def cuda_example(tmp_path: Path) -> tuple[Path, Path]:
    """docs/authoring.md's CUDA example written out as a workbench: its challenges/
    folder and the answer folder the page gives."""
    files = example_files("scale")
    assert sorted(files) == ["challenges/scale/adapters/demo.cu", "challenges/scale/challenge.toml",
                             "challenges/scale/conformance.py", "challenges/scale/reference.py",
                             "models/demo/scale/scale.cu"]
    assert reaches_past_api(files["challenges/scale/conformance.py"]) == []
    for rel, body in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body, encoding="utf-8")
    return tmp_path / "challenges", tmp_path / "models" / "demo" / "scale"


def too_few_blocks(answer: Path, tmp_path: Path) -> Path:
    """The answer the page says fails on a GPU: n / 256 blocks leave a partial block's elements unwritten."""
    wrong = tmp_path / "few_blocks"
    wrong.mkdir()
    source = (answer / "scale.cu").read_text()
    assert "(n + 255) / 256" in source
    (wrong / "scale.cu").write_text(source.replace("(n + 255) / 256", "n / 256"))
    return wrong


@pytest.fixture
def nvcc_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHTUI_NVCC_CACHE", str(tmp_path / "nvcc-cache"))


@needs_nvcc
def test_the_docs_cuda_example_compiles_and_its_gpu_checks_skip_with_the_reason(tmp_path, nvcc_cache):
    challenges, answer = cuda_example(tmp_path)
    out = run_local("scale", answer, model="demo", backend="cpu", challenges_dir=challenges)
    checks = {c["name"]: c for c in out["checks"]}
    assert [c["message"] for c in checks.values() if c["verdict"] == "error"] == []  # e.g. a misspelled API name
    assert checks["nvcc_compile:scale.cu"]["verdict"] == "pass", checks
    gpu = {name: c for name, c in checks.items() if name not in ("nvcc_compile:scale.cu", "forbidden_imports")}
    assert sorted(gpu) == ["build_library", "negative_scale", "sizes"], checks
    assert all(c["verdict"] == "skipped" and c["message"].startswith("needs an NVIDIA GPU") for c in gpu.values()), gpu
    assert out["verdict"] == "skipped"  # never "pass" while the GPU checks did not run
    # the adapter builds with the answer as the GPU run's library would, nvcc only
    built = cuda_build.compile_check(challenges / "scale" / "adapters" / "demo.cu", include_dirs=[answer],
                                     arch="sm_90", timeout_s=120.0)
    assert built.ok, built.summary()


@needs_nvcc
def test_the_docs_cuda_example_finds_an_answer_that_does_not_compile(tmp_path, nvcc_cache):
    challenges, answer = cuda_example(tmp_path)
    (answer / "scale.cu").write_text((answer / "scale.cu").read_text().replace("cudaGetLastError()", "cudaGetLastErrors()"))
    out = run_local("scale", answer, model="demo", backend="cpu", challenges_dir=challenges)
    check = {c["name"]: c for c in out["checks"]}["nvcc_compile:scale.cu"]
    assert check["verdict"] == "compile_error" and out["verdict"] == "compile_error", check


@pytest.mark.gpu
def test_the_docs_cuda_example_passes_its_answer_and_fails_too_few_blocks_on_a_gpu(tmp_path, nvcc_cache):
    usable, reason = cuda_build.gpu_status()
    if not usable:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    if cuda_build.find_nvcc() is None:
        pytest.skip("needs nvcc to build the example's library")
    challenges, answer = cuda_example(tmp_path)
    got = {}
    for folder in (answer, too_few_blocks(answer, tmp_path)):
        out = run_local("scale", folder, model="demo", backend="cuda", challenges_dir=challenges)
        got[folder.name] = (out["verdict"], {c["name"]: c["verdict"] for c in out["checks"] if c["name"] != "forbidden_imports"})
    assert got["scale"] == ("pass", {"nvcc_compile:scale.cu": "pass", "build_library": "pass", "sizes": "pass",
                                     "negative_scale": "pass"}), got
    # 4,099 = 16 * 256 + 3: the last 3 elements are never written; 257 leaves one
    assert got["few_blocks"] == ("fail", {"nvcc_compile:scale.cu": "pass", "build_library": "pass", "sizes": "fail",
                                          "negative_scale": "fail"}), got


# -- a challenge still on the old name ------------------------------------------------

@pytest.fixture
def no_engine(monkeypatch):
    """``engine`` cannot be imported, as in an installed benchtui (a checkout's root
    on sys.path would otherwise find the repository's engine/ folder)."""
    monkeypatch.setitem(sys.modules, "engine", None)


def scaffold(tmp_path: Path, cid: str = "old_one") -> Path:
    return scaffold_challenge(tmp_path / "challenges", cid)


def reference_answer(tmp_path: Path, folder: Path) -> Path:
    answer = tmp_path / "answer"
    answer.mkdir()
    (answer / "solution.py").write_text((folder / "reference.py").read_text())
    return answer


def old_import(path: Path, line: str = "from engine.verify.suite import CheckFailed  # noqa: F401") -> None:
    text = path.read_text()
    path.write_text(text.replace("import numpy as np\n", f"import numpy as np\n\n{line}\n", 1))


def assert_clear_errors(out: dict, where: str, names: list[str]) -> None:
    """The run's error checks are ``names``, each naming the file and saying what to import instead."""
    errors = [c for c in out["checks"] if c["verdict"] == "error"]
    assert out["verdict"] == "error" and [c["name"] for c in errors] == names, out
    for c in errors:
        message = c["message"]
        assert re.match(rf"challenges/old_one/{re.escape(where)}:\d+ imports engine", message), message
        assert "benchtui.api" in message and "docs/authoring.md" in message and "import the deck again" in message
        assert "Traceback" not in message and "\n" not in message


def test_a_conformance_importing_engine_gets_one_error_check_naming_it(tmp_path, no_engine):
    folder = scaffold(tmp_path)
    old_import(folder / "conformance.py")
    out = run_local("old_one", reference_answer(tmp_path, folder), challenges_dir=folder.parent)
    assert_clear_errors(out, "conformance.py", ["conformance"])
    assert [c["name"] for c in out["checks"]] == ["forbidden_imports", "conformance"]


def test_a_reference_importing_engine_is_the_challenges_error_not_a_missing_package(tmp_path, no_engine):
    folder = scaffold(tmp_path)
    answer = reference_answer(tmp_path, folder)
    old_import(folder / "reference.py", "from engine.challenges.prompts import prompt_sha256  # noqa: F401")
    out = run_local("old_one", answer, challenges_dir=folder.parent)
    # the reference loads in each check that asks for it (and in the timing, outside a check): each says the same
    assert_clear_errors(out, "reference.py", ["fixed_large_inputs", "random_cases", "conformance"])
    assert "missing_dependency" not in {c["verdict"] for c in out["checks"]}


def test_an_adapter_importing_engine_is_named_too(tmp_path):
    # the adapter runs in the answer's own process, whose sys.path holds no engine/
    folder = scaffold(tmp_path)
    (folder / "adapters" / "local.py").write_text(
        "from engine.verify.smoke_stand_ins import checkpoint  # noqa: F401\n\n\n"
        "def old_one(x):\n    return x\n")
    out = run_local("old_one", reference_answer(tmp_path, folder), challenges_dir=folder.parent)
    assert_clear_errors(out, "adapters/local.py", ["conformance"])


def test_an_answer_importing_engine_is_still_a_missing_package(tmp_path):
    # only the challenge's own files get the message: an answer's import is the answer's
    folder = scaffold(tmp_path)
    answer = reference_answer(tmp_path, folder)
    old_import(answer / "solution.py", "import engine  # noqa: F401")
    out = run_local("old_one", answer, challenges_dir=folder.parent)
    assert {c["name"]: c["verdict"] for c in out["checks"]}["conformance"] == "missing_dependency"


def test_a_conformance_that_does_not_load_is_one_error_check(tmp_path):
    folder = scaffold(tmp_path)
    (folder / "conformance.py").write_text("def run(suite)\n    pass\n")
    out = run_local("old_one", reference_answer(tmp_path, folder), challenges_dir=folder.parent)
    (check,) = [c for c in out["checks"] if c["name"] == "conformance"]
    assert check["verdict"] == "error" and out["verdict"] == "error"
    assert check["message"].startswith("challenges/old_one/conformance.py cannot be loaded: SyntaxError")


def test_challenge_check_says_what_to_do_instead_of_a_traceback(capsys, tmp_path, no_engine):
    root = tmp_path / "wb"
    (root / "models" / "alpha").mkdir(parents=True)
    folder = scaffold(root)
    old_import(folder / "conformance.py")
    try:
        code = main(["--workbench", str(root), "challenge", "check", "old_one", "--seeds", "1", "--mutants", "0"])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    line = next(line for line in out.splitlines() if "reference_passes" in line)
    assert code == 1 and "Traceback" not in out + err
    assert "challenges/old_one/conformance.py:" in line and "import from benchtui.api instead (docs/authoring.md)" in line
