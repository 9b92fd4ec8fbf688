"""The build prints no "Package would be ignored" warnings. setuptools warns
(build_py's _IncludePackageDataAbuse) when include-package-data is on and a
data file sits in a folder Python could import as a package that `packages`
does not list: every challenge folder holding .py files is one. This test
applies the same rule to pyproject.toml and the folders the wheel maps, so it
needs no build (which needs the network); `.ci/run` builds the real wheel."""
from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SKIP_PARTS = {"__pycache__"}


def would_warn() -> list[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    if config.get("include-package-data", True) is False:
        return []  # the check only runs over include-package-data's files
    packages = set(config["packages"])
    mapped = config.get("package-dir", {})
    data = config.get("package-data", {})
    warned = set()
    for package in packages:
        folder = REPO / mapped.get(package, package.replace(".", "/"))
        # the files include-package-data adds: those package-data names (the build's manifest)
        files = {p for pattern in [*data.get(package, []), *data.get("*", [])] for p in folder.glob(pattern)}
        for path in sorted(files):
            if not path.is_file() or SKIP_PARTS & set(path.parts):
                continue
            rel = path.relative_to(folder)
            if path.suffix == ".py" and len(rel.parts) == 1:
                continue  # a module of the package itself
            parts = []
            for part in rel.parent.parts:
                if not part.isidentifier():
                    break
                parts.append(part)
            if parts and ".".join([package, *parts]) not in packages:
                warned.add(".".join([package, *parts]))
    return sorted(warned)


def test_no_data_folder_would_be_reported_as_an_ignored_package():
    assert would_warn() == []


def test_package_data_still_carries_every_bundled_file():
    """With include-package-data off, package-data alone must still take in
    every file of the bundled challenges and demo, and the dashboard's CSS."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert data["benchtui.bundled.challenges"] == ["**/*"] and data["benchtui.bundled.demo"] == ["**/*"]
    assert "*.tcss" in data["benchtui.tui"]


def test_the_wheel_states_its_license_and_no_placeholder_addresses():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Copyright (c) the benchtui authors" in text
    assert not any("example.invalid" in url for url in project.get("urls", {}).values())


def test_every_code_folder_is_a_listed_package():
    """`packages` is a list, not a search: a new room left off it is missing
    from the wheel, and only an installed benchtui would notice."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {"benchtui": REPO / "engine", "benchtui.tui": REPO / "tui"}
    found = set()
    for name, root in folders.items():
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            if "__pycache__" not in rel.parts and not (name == "benchtui" and rel.parts[:1] == ("tui",)):
                found.add(".".join([name, *rel.parts]))
    assert sorted(found - set(config["packages"])) == []
