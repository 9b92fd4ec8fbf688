"""What a user downloads and installs: the wheel and sdist, and the
virtualenv a default install makes against one with the extras.

    python bench/install_size.py [--extras cuda,ternary] [--keep DIR]

Builds the sdist and the wheel (from the sdist) with `build`, installs the
wheel with its dependencies from the package index into fresh virtualenvs
(default, then with the extras) and prints one JSON object: sizes in MB
(10^6 bytes) of the files on disk, file counts, the largest installed
distributions. Needs the network (or a local index) and a few minutes.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MB = 1e6


def sh(*argv: str | Path) -> str:
    return subprocess.run([str(a) for a in argv], check=True, capture_output=True, text=True).stdout


def tree_bytes(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def venv_with(tmp: Path, name: str, spec: str) -> dict:
    venv = tmp / name
    sh(sys.executable, "-m", "venv", venv)
    started = time.perf_counter()
    sh(venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", spec)
    took = time.perf_counter() - started
    site = Path(sh(venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    dists = {}
    for info in site.glob("*.dist-info"):
        record = info / "RECORD"
        if record.is_file():
            size = sum((site / line.split(",")[0]).stat().st_size for line in record.read_text().splitlines()
                       if line and (site / line.split(",")[0]).is_file())
            dists[info.name.split("-")[0]] = size
    largest = sorted(dists.items(), key=lambda kv: -kv[1])[:8]
    return {"venv_mb": round(tree_bytes(venv) / MB, 1), "site_packages_mb": round(tree_bytes(site) / MB, 1),
            "distributions": len(dists), "install_s": round(took, 1),
            "largest_mb": {k: round(v / MB, 1) for k, v in largest}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--extras", default="cuda,ternary")
    ap.add_argument("--keep", type=Path, help="build and install under DIR and keep it")
    ap.add_argument("--quick", action="store_true",
                    help="the wheel and sdist only, no installs (still needs the package index for `build`): the "
                         "test suite runs it where the network is reachable, so the script cannot rot")
    args = ap.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="benchtui-size-"))
    tools = tmp / "tools"
    sh(sys.executable, "-m", "venv", tools)
    sh(tools / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "build")
    sh(tools / "bin" / "python", "-m", "build", "-q", "-o", tmp / "dist", REPO)
    wheel = next((tmp / "dist").glob("benchtui-*.whl"))
    sdist = next((tmp / "dist").glob("benchtui-*.tar.gz"))
    with zipfile.ZipFile(wheel) as z:
        infos = [i for i in z.infolist() if not i.is_dir()]
    tops = Counter()
    for i in infos:
        parts = i.filename.split("/")
        tops["/".join(parts[:3]) if parts[:2] == ["benchtui", "bundled"] else "/".join(parts[:2]) if parts[0] == "benchtui" and len(parts) > 2 else parts[0]] += 1
    out = {
        "wheel": {"file": wheel.name, "mb": round(wheel.stat().st_size / MB, 3), "files": len(infos),
                  "unpacked_mb": round(sum(i.file_size for i in infos) / MB, 3), "files_by_folder": dict(sorted(tops.items()))},
        "sdist": {"file": sdist.name, "mb": round(sdist.stat().st_size / MB, 3)},
    }
    if not args.quick:
        out["default"] = venv_with(tmp, "default", str(wheel))
        out[f"with_{args.extras.replace(',', '_')}"] = venv_with(tmp, "extras", f"{wheel}[{args.extras}]")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
