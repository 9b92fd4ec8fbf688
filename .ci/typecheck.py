#!/usr/bin/env python3
"""Type-check benchtui with mypy against a baseline that may only shrink.

    python .ci/typecheck.py            # fails on an error the baseline does not allow
    python .ci/typecheck.py --update   # rewrites the baseline after errors were fixed

The repository keeps its folders (engine/ is the package benchtui, tui/ is
benchtui.tui) and the editable install maps them through an import hook, which
mypy does not run. So this script lays the package out as the wheel does, as
a tree of symbolic links inside the cache folder, and checks `-p benchtui`
there; the settings are pyproject.toml's [tool.mypy].

The baseline (.ci/mypy-baseline.json) counts the errors mypy still finds, per
file and error code. A file or code above its count fails the check, with the
new errors printed; a count below it asks for `--update`, which never raises a
count unless told to (`--allow-growth`: a newer mypy, a room made strict).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / ".ci" / "mypy-baseline.json"
# mypy's one-line form: path:line: error: message  [code]
ERROR = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?:\d+:)? error: (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$")
CHECKED = re.compile(r"(?:\(checked|no issues found in) (\d+) source files?")


def link_tree(root: Path) -> Path:
    """The package as installed: root/benchtui holds links to engine/'s entries and to tui/."""
    package = root / "benchtui"
    package.mkdir(parents=True, exist_ok=True)
    wanted = {entry.name: entry for entry in (REPO / "engine").iterdir() if entry.name != "__pycache__"}
    wanted["tui"] = REPO / "tui"
    for link in package.iterdir():
        if link.name not in wanted or not link.is_symlink() or link.readlink() != wanted[link.name]:
            link.unlink()
    for name, target in wanted.items():
        if not (package / name).is_symlink():
            (package / name).symlink_to(target)
    return root


def run_mypy(cache: Path) -> tuple[list[dict[str, str]], str]:
    """mypy's errors (path relative to the repository, line, code, message) and its full output."""
    tree = link_tree(cache / "tree")
    env = dict(os.environ, MYPYPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(cache / "mypy"),
         "--no-pretty", "--no-color-output", "--show-error-codes", "-p", "benchtui"],
        cwd=REPO, env=env, capture_output=True, text=True)
    if out.returncode not in (0, 1):  # 2: mypy itself failed (bad configuration, crash)
        raise SystemExit(f"mypy failed (exit {out.returncode}):\n{out.stdout[-3000:]}{out.stderr[-3000:]}")
    # A package mypy did not find whole would pass with no errors: it must have read every module.
    checked = CHECKED.search(out.stdout)
    modules = [p for p in [*(REPO / "engine").rglob("*.py"), *(REPO / "tui").rglob("*.py")] if (p.parent / "__init__.py").exists()]
    if not checked or int(checked[1]) < len(modules):
        raise SystemExit(f"mypy checked {checked[1] if checked else 'no'} source files, not benchtui's {len(modules)} modules:\n"
                         f"{out.stdout[-3000:]}{out.stderr[-3000:]}")
    prefix = str(tree / "benchtui") + os.sep
    errors = []
    for line in out.stdout.splitlines():
        found = ERROR.match(line)
        if not found:
            continue
        path = os.path.normpath(os.path.join(REPO, found["path"]))
        if path.startswith(prefix):  # back to the repository's folders: benchtui/tui is tui/, the rest engine/
            path = path[len(prefix):]
            path = path if path.startswith("tui/") else "engine/" + path
        errors.append({"path": path, "line": found["line"], "code": found["code"] or "misc", "message": found["message"]})
    return errors, out.stdout


def counts(errors: list[dict[str, str]]) -> dict[str, dict[str, int]]:
    per_file: dict[str, Counter[str]] = {}
    for error in errors:
        per_file.setdefault(error["path"], Counter())[error["code"]] += 1
    return {path: dict(sorted(codes.items())) for path, codes in sorted(per_file.items())}


Change = tuple[str, str, int, int]  # path, error code, errors now, errors the baseline allows


def compare(found: dict[str, dict[str, int]], allowed: dict[str, dict[str, int]]) -> tuple[list[Change], list[Change]]:
    """(what grew beyond the baseline, what shrank below it)."""
    grown, shrunk = [], []
    for path in sorted(set(found) | set(allowed)):
        for code in sorted(set(found.get(path, {})) | set(allowed.get(path, {}))):
            now, was = found.get(path, {}).get(code, 0), allowed.get(path, {}).get(code, 0)
            if now != was:
                (grown if now > was else shrunk).append((path, code, now, was))
    return grown, shrunk


def lines(changes: list[Change]) -> str:
    return "".join(f"\n  {path}: {now} [{code}] errors, the baseline allows {was}" for path, code, now, was in changes)


def total(table: dict[str, dict[str, int]]) -> int:
    return sum(sum(codes.values()) for codes in table.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="write the current counts as the baseline (never raising one)")
    parser.add_argument("--allow-growth", action="store_true",
                        help="with --update: raise counts too (a newer mypy, a room made strict); say why in the commit")
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".mypy_cache", help="mypy's cache and the package's tree of links")
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    args = parser.parse_args(argv)
    errors, _ = run_mypy(args.cache_dir.resolve())
    found = counts(errors)
    allowed = json.loads(args.baseline.read_text()) if args.baseline.exists() else {}
    grown, shrunk = compare(found, allowed)
    if args.update:
        if grown and not args.allow_growth:
            print("not updated: the baseline only shrinks; fix these first:" + lines(grown))
            return 1
        # one line per file: a change shows as that file's line in a diff
        args.baseline.write_text("{\n" + ",\n".join(f" {json.dumps(path)}: {json.dumps(codes)}" for path, codes in found.items())
                                 + "\n}\n")
        print(f"baseline: {total(found)} errors (was {total(allowed)})")
        return 0
    print(f"mypy: {total(found)} errors, the baseline allows {total(allowed)}")
    if shrunk:
        print("fewer errors than the baseline allows; lower it with `python .ci/typecheck.py --update`:" + lines(shrunk))
    if grown:
        print("more errors than the baseline allows:" + lines(grown))
        print("mypy's errors of those files and codes (which of them are new the baseline cannot tell):")
        grown_keys = {(path, code) for path, code, _, _ in grown}
        for error in errors:
            if (error["path"], error["code"]) in grown_keys:
                print(f"  {error['path']}:{error['line']}: {error['message']}  [{error['code']}]")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
