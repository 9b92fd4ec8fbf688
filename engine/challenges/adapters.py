"""Adapters: small reviewer-written modules that bind an answer whose API is
its own to a challenge's contract.

Where they live, first match wins:

1. ``<workbench root>/.benchtui/adapters/<challenge>/<model>.py|.cu`` (the
   user's own, next to their workbench, never inside an answer folder);
2. ``challenges/<challenge>/adapters/<model>.py|.cu`` (shipped with the plugin).

Keying: an adapter names the answer files it was written against and their
sha256, so it never silently binds a different or edited answer::

    ANSWER_SHA256 = {"kv_cache.py": "3f5a...", "attention.py": "9c1e..."}

(a ``.cu`` adapter carries the same JSON on a comment line:
``// ANSWER_SHA256 = {"softmax_topk.cu": "..."}``). The key is read from the
source text (``ast`` / a regular expression); the adapter is never imported
here. Statuses:

- ``ok``: every listed file exists in the answer with that hash;
- ``stale``: a listed file is missing or changed; the run does not use the
  adapter and records an ``adapter`` check with verdict ``unbound`` naming
  the files;
- ``unkeyed``: no ``ANSWER_SHA256``; the adapter is used, with a note that
  nothing ties it to the answer's files (the bundled demo adapters are
  unkeyed; ``benchtui adapter new`` always writes a key);
- ``none``: no adapter for this model and challenge.

No ``textual`` import; nothing here imports answer or adapter code.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtui.challenges.definition import Challenge

ADAPTER_SUFFIXES = (".py", ".cu")
WORKBENCH_ADAPTERS = Path(".benchtui") / "adapters"
KEY_NAME = "ANSWER_SHA256"
_CU_KEY = re.compile(r"ANSWER_SHA256\s*[:=]\s*(\{[^\n]*\})")


@dataclass(frozen=True)
class AdapterResolution:
    path: Path | None
    source: str  # "workbench" | "plugin" | "none"
    status: str  # "ok" | "stale" | "unkeyed" | "none"
    message: str = ""
    changed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    keyed_files: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def usable(self) -> bool:
        """True when the run should hand this adapter to the checks."""
        return self.path is not None and self.status in ("ok", "unkeyed")

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path) if self.path else None, "source": self.source, "status": self.status,
                "message": self.message, "changed": list(self.changed), "missing": list(self.missing)}


def workbench_adapter_dir(root: Path, challenge_id: str) -> Path:
    return Path(root) / WORKBENCH_ADAPTERS / challenge_id


def candidates(root: Path | None, challenge: Challenge, model: str) -> list[tuple[str, Path]]:
    """(source, path) in lookup order; only existing files."""
    found = []
    folders = ([("workbench", workbench_adapter_dir(root, challenge.id))] if root is not None else []) + \
        [("plugin", challenge.path / "adapters")]
    for source, folder in folders:
        for suffix in ADAPTER_SUFFIXES:
            p = folder / f"{model}{suffix}"
            if p.is_file():
                found.append((source, p))
    return found


def read_key(path: Path) -> dict[str, str] | None:
    """The adapter's ``ANSWER_SHA256`` mapping, without importing it; None if absent.
    Raises ValueError when present but malformed."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    if Path(path).suffix == ".py":
        try:
            tree = ast.parse(text, filename=str(path))
        except SyntaxError as exc:
            if KEY_NAME not in text:
                return None
            raise ValueError(f"{Path(path).name} does not parse: {exc.msg} (line {exc.lineno})") from exc
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets, assigned = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, assigned = [node.target], node.value
            else:
                continue
            if any(isinstance(t, ast.Name) and t.id == KEY_NAME for t in targets):
                try:
                    value = ast.literal_eval(assigned)
                except ValueError as exc:
                    raise ValueError(f"{KEY_NAME} in {Path(path).name} is not a literal dict") from exc
                return _check_key(value, path)
        return None
    m = _CU_KEY.search(text)
    if not m:
        return None
    try:
        return _check_key(json.loads(m.group(1)), path)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{KEY_NAME} in {Path(path).name} is not valid JSON") from exc


def _check_key(value: object, path: Path) -> dict[str, str]:
    if not isinstance(value, dict) or not value or \
            not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(f"{KEY_NAME} in {Path(path).name} must map answer file paths to sha256 hex strings")
    return dict(value)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def compare_key(key: dict[str, str], answer_dir: Path) -> tuple[list[str], list[str]]:
    """(changed, missing) answer files relative to ``key``."""
    changed, missing = [], []
    base = Path(answer_dir)
    for rel, want in sorted(key.items()):
        p = base / rel
        if not p.is_file() or ".." in Path(rel).parts:
            missing.append(rel)
        elif file_sha256(p) != want.lower():
            changed.append(rel)
    return changed, missing


def resolve(root: Path | None, challenge: Challenge, model: str, answer_dir: Path | None) -> AdapterResolution:
    """The adapter for (workbench, challenge, model) and whether it still fits the answer.

    The first adapter found decides: a stale workbench adapter is reported,
    never silently replaced by the plugin's."""
    found = candidates(root, challenge, model)
    if not found:
        return AdapterResolution(None, "none", "none", f"no adapter for {model}/{challenge.id}")
    source, path = found[0]
    where = f"{source} adapter {display_path(path, root)}"
    try:
        key = read_key(path)
    except (OSError, ValueError) as exc:
        return AdapterResolution(path, source, "stale", f"{where} cannot be checked: {exc}")
    if key is None:
        return AdapterResolution(path, source, "unkeyed",
                                 f"{where} (unkeyed: it lists no {KEY_NAME}, so nothing ties it to the answer's files)")
    if answer_dir is None or not Path(answer_dir).is_dir():
        return AdapterResolution(path, source, "stale", f"{where}: the answer folder is missing", keyed_files=key)
    changed, missing = compare_key(key, answer_dir)
    if changed or missing:
        parts = ([f"changed: {', '.join(changed)}"] if changed else []) + \
                ([f"missing: {', '.join(missing)}"] if missing else [])
        return AdapterResolution(path, source, "stale",
                                 f"{where} is stale: it was written against other answer files ({'; '.join(parts)}); "
                                 f"not used. Check the answer, then `benchtui adapter new {model} {challenge.id} --force` "
                                 "or update its ANSWER_SHA256",
                                 tuple(changed), tuple(missing), keyed_files=key)
    return AdapterResolution(path, source, "ok", f"{where} (keyed to {len(key)} answer file(s), all unchanged)",
                             keyed_files=key)


def display_path(path: Path, root: Path | None) -> str:
    from benchtui.host.resources import bundled_challenges

    # bundled adapters read "challenges/<id>/adapters/..." from a clone and from a wheel alike
    for base in [root, bundled_challenges().parent]:
        if base is None:
            continue
        try:
            return Path(path).resolve().relative_to(Path(base).resolve()).as_posix()
        except ValueError:
            continue
    return str(path)


def adapter_check(res: AdapterResolution) -> dict[str, Any] | None:
    """The ``adapter`` check a run records (None when there is no adapter)."""
    if res.status == "none":
        return None
    details = res.as_dict()
    if res.usable:
        return {"name": "adapter", "verdict": "info", "value": res.status, "threshold": None,
                "message": f"used {res.message}", "details": details}
    return {"name": "adapter", "verdict": "unbound", "value": res.status, "threshold": None,
            "message": res.message, "details": details}


def append_check(results: Path, check: Mapping[str, Any]) -> None:
    """Record ``check`` in a run's results file before the run (the results preamble)."""
    with open(results, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"check": check}) + "\n")
    results.chmod(0o666)


def prepare_for_run(root: Path | None, challenge: Challenge, model: str, answer_dir: Path,
                    out: Path, results: Path) -> Path | None:
    """Resolve the adapter for one run: record the ``adapter`` check in the
    results file and return the path to hand to the checks (a copy under
    ``out``, which the sandbox can read even when the workbench is hidden),
    or None when there is none or it is stale."""
    res = resolve(root, challenge, model, answer_dir)
    check = adapter_check(res)
    if check is not None:
        append_check(results, check)
    if not res.usable or res.path is None:
        return None
    staged = out / "adapter" / res.path.name
    staged.parent.mkdir(exist_ok=True)
    shutil.copyfile(res.path, staged)
    staged.parent.chmod(0o777)
    staged.chmod(0o666)
    return staged


# -- discovering an answer's API (for `benchtui adapter new`) ---------------------

SOURCE_SUFFIXES = (".py", ".cu", ".cuh", ".c", ".cc", ".cpp", ".h", ".hpp", ".metal")


def answer_source_files(answer_dir: Path) -> list[Path]:
    """The answer's source files (sorted; hidden folders and caches skipped)."""
    files = []
    for p in sorted(Path(answer_dir).rglob("*")):
        rel = p.relative_to(answer_dir)
        if p.is_file() and p.suffix in SOURCE_SUFFIXES and "__pycache__" not in rel.parts \
                and not any(part.startswith(".") for part in rel.parts):
            files.append(p)
    return files


def answer_key(answer_dir: Path) -> dict[str, str]:
    return {p.relative_to(answer_dir).as_posix(): file_sha256(p) for p in answer_source_files(answer_dir)}


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    try:
        args = ast.unparse(node.args)
    except Exception:  # pragma: no cover - ast.unparse handles every parsed tree
        args = "..."
    ret = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"{node.name}({args}){ret}"


def _doc(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module) -> str:
    doc = ast.get_docstring(node) or ""
    line = doc.strip().splitlines()[0].strip() if doc.strip() else ""
    return line[:120]


_C_FUNC = re.compile(r"^\s*((?:extern\s+\"C\"\s+)?(?:__global__|__device__|__host__|static|inline|template\s*<[^>]*>|\s)*"
                     r"[A-Za-z_][\w:<>\*\s&]*?\b([A-Za-z_]\w*)\s*\([^;{]*\))\s*\{", re.M)


def discover_api(answer_dir: Path) -> list[str]:
    """Lines describing each source file's top-level API (AST only for Python)."""
    lines = []
    for path in answer_source_files(answer_dir):
        rel = path.relative_to(answer_dir).as_posix()
        if path.suffix != ".py":
            text = path.read_text(encoding="utf-8", errors="replace")
            sigs = [re.sub(r"\s+", " ", m.group(1)).strip() for m in _C_FUNC.finditer(text)
                    if m.group(2) not in ("if", "for", "while", "switch", "return")]
            lines.append(f"{rel}:")
            lines.extend(f"    {s}" for s in sigs[:40]) if sigs else lines.append("    (no function definitions found)")
            continue
        try:
            tree = ast.parse(path.read_bytes(), filename=rel)
        except (SyntaxError, ValueError) as exc:
            lines.append(f"{rel}: does not parse ({exc})")
            continue
        entries = []
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = _doc(node)
                entries.append(f"    def {_signature(node)}" + (f"  # {doc}" if doc else ""))
            elif isinstance(node, ast.ClassDef):
                bases = ", ".join(ast.unparse(b) for b in node.bases)
                doc = _doc(node)
                entries.append(f"    class {node.name}" + (f"({bases})" if bases else "") + (f"  # {doc}" if doc else ""))
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        deco = [ast.unparse(d) for d in sub.decorator_list]
                        mark = f"@{deco[0]} " if deco else ""
                        sdoc = _doc(sub)
                        entries.append(f"        {mark}def {_signature(sub)}" + (f"  # {sdoc}" if sdoc else ""))
        lines.append(f"{rel}:" + ("" if entries else " (no top-level functions or classes)"))
        lines.extend(entries)
    return lines


def contract_text(challenge: Challenge) -> str:
    """The challenge's adapter contract (``challenges/<id>/ADAPTER.md``)."""
    p = challenge.path / "ADAPTER.md"
    try:
        return p.read_text(encoding="utf-8").strip()
    except OSError:
        return (f"(challenge {challenge.id} documents no adapter contract; read "
                f"challenges/{challenge.id}/conformance.py for what it looks up on suite.adapter())")


def _docstring_safe(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', "'''")


def scaffold(root: Path, challenge: Challenge, model: str, answer_dir: Path, *, force: bool = False) -> Path:
    """Write ``<root>/.benchtui/adapters/<challenge>/<model>.py`` (``.cu`` for a CUDA challenge): the contract,
    the answer's current ANSWER_SHA256 and its discovered API. Never writes
    inside the answer folder. Raises FileExistsError unless ``force``."""
    from benchtui.host.resources import refuse_install_write

    if refusal := refuse_install_write(root):
        raise ValueError(refusal)
    folder = workbench_adapter_dir(root, challenge.id)
    target = folder / f"{model}{adapter_suffix(challenge)}"
    answer_dir = Path(answer_dir)
    if answer_dir.resolve() in target.resolve().parents:
        raise ValueError(f"refusing to write an adapter inside the answer folder {answer_dir}")
    if target.exists() and not force:
        raise FileExistsError(f"{display_path(target, root)} exists; pass --force to overwrite it")
    key = answer_key(answer_dir)
    if target.suffix == ".cu":
        folder.mkdir(parents=True, exist_ok=True)
        target.write_text(cuda_scaffold(challenge, model, answer_dir, key), encoding="utf-8")
        return target
    contract = _docstring_safe(contract_text(challenge))
    api = _docstring_safe("\n".join(discover_api(answer_dir))) or "(no source files found)"
    key_lines = "\n".join(f"    {json.dumps(rel)}: {json.dumps(h)}," for rel, h in key.items())
    text = f'''"""Adapter for {model} / {challenge.id} (written with `benchtui adapter new`).

Translate calls only: argument order and names, shapes, classes to functions,
the reset / prefill / decode mapping. Never change what the answer computes,
and import nothing of benchtui's but benchtui.api: this module runs in the answer's
process with the answer folder on sys.path (import its modules by file name).

Contract ({challenge.id})
{"-" * (len(challenge.id) + 11)}
{contract}

The answer's API (discovered from its files, nothing imported)
--------------------------------------------------------------
{api}
"""
from __future__ import annotations

# The answer files this adapter was written against. When one changes the run
# reports the adapter as stale instead of using it. Drop the files you do not
# use, keep the ones you import.
{KEY_NAME} = {{
{key_lines}
}}

# TODO: import the answer's modules and define what the contract above names.
'''
    folder.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def adapter_suffix(challenge: Challenge) -> str:
    """``.cu`` for a CUDA challenge (its adapter is built with the answer by nvcc), else ``.py``."""
    return ".cu" if challenge.language == "cuda" else ".py"


def cuda_scaffold(challenge: Challenge, model: str, answer_dir: Path, key: dict[str, str]) -> str:
    """A ``.cu`` adapter: the contract and the answer's host functions as
    comments, its key on the comment line the run reads, its first .cu
    included, and no entry point until a person writes one."""
    def comment(text: str) -> str:
        return "\n".join(f"// {line}".rstrip() for line in text.splitlines())

    sources = [p for p in answer_source_files(answer_dir) if p.suffix == ".cu"]
    include = f'#include "{sources[0].relative_to(answer_dir).as_posix()}"' if sources else "// (the answer has no .cu file)"
    api = "\n".join(discover_api(answer_dir)) or "(no source files found)"
    # the key line comes first: the run reads the first one, and the contract quotes an example
    return f"""// Adapter for {model} / {challenge.id} (written with `benchtui adapter new`).
// The answer files it was written against (a changed one makes it stale, not used):
// {KEY_NAME} = {json.dumps(key)}
//
// Translate calls only: argument order, template parameters, the launch
// configuration the answer's launcher expects. Never change what the answer
// computes. nvcc builds this file with the answer's folder on the include path,
// in the answer's sandbox, and the run calls the entry point the contract names.
//
// Contract ({challenge.id})
{comment(contract_text(challenge))}
//
// The answer's functions (discovered from its files, nothing compiled)
{comment(api)}
{include}

// TODO: define the entry point the contract names and call the answer's launcher from it.
"""


class AdapterError(Exception):
    """A model or challenge that does not exist, or an answer folder that is missing."""


class AlreadyBinds(FileExistsError):
    """Writing a scaffold would replace what binds the answer today:
    a workbench adapter is looked up first, so an empty scaffold would turn a
    working answer into ``unbound`` on every later run."""


def already_binds(root: Path, challenge: Challenge, model: str, answer_dir: Path,
                  latest: dict[str, Any] | None = None, latest_checks: list[dict[str, Any]] | None = None) -> str | None:
    """Why a new workbench scaffold would break this answer's binding, or None.

    ``latest`` / ``latest_checks``: the answer's latest stored run and its
    checks (None when it never ran). A usable plugin adapter binds it; so does
    a latest run that passed or failed with no ``unbound`` check."""
    if latest is not None and (latest.get("verdict") == "unbound"
                               or any(c.get("verdict") == "unbound" for c in latest_checks or [])):
        return None  # it does not bind today: a scaffold is what it needs
    res = resolve(root, challenge, model, answer_dir)
    if res.usable and res.source == "plugin":
        return (f"{model}/{challenge.id} already binds through the {res.message.split(' (')[0]}; a workbench adapter "
                "is looked up first and would replace it")
    if latest is None or latest.get("verdict") not in ("pass", "fail"):
        return None  # only a pass or a fail proves the suite called into the answer
    return f"{model}/{challenge.id} already binds without an adapter (latest run #{latest['id']}: {latest['verdict']})"


def nothing_to_adapt(model: str, challenge_id: str, folder: Path) -> str | None:
    """Why an answer folder has nothing an adapter could bind (None: it has): only its
    PROMPT.md (a model that has not answered yet), or notes."""
    if answer_source_files(folder):
        return None
    return (f"{model}/{challenge_id} holds no answer source files ({', '.join(SOURCE_SUFFIXES)}): "
            "there is nothing to adapt")
