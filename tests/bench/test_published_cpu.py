"""bench/published.py counts the CPU time of processes a run's sandboxes killed: it adopts
orphans below it and reaps them, so their time reaches its RUSAGE_CHILDREN."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "published.py"

# a child that leaves a grandchild burning 0.3 s of CPU behind it and exits at once:
# the grandchild's parent is gone before it ends, as a sandbox's payload is when its helper is killed
ORPHANING = ("import subprocess, sys; subprocess.Popen([sys.executable, '-c', "
             "'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass'])")


def load_script():
    spec = importlib.util.spec_from_file_location("bench_published", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu_of_an_orphaning_child(bench, adopt: bool) -> float:
    """CPU time this process's children gained from ORPHANING, run in a fresh process so
    that adopting orphans there leaves this test process as it was."""
    code = (f"import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('b', {str(SCRIPT)!r})\n"
            f"b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)\n"
            f"import subprocess\n"
            f"{'b.adopt_orphans()' if adopt else 'pass'}\n"
            f"before = b.cpu_of_children()\n"
            f"subprocess.run([sys.executable, '-c', {ORPHANING!r}], check=True)\n"
            f"import time; time.sleep(0.6)\n"
            f"b.reap_orphans(2.0)\n"
            f"print(b.cpu_of_children() - before)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    return float(out.stdout.strip())


def test_orphans_cpu_is_counted_once_adopted():
    bench = load_script()
    adopted = cpu_of_an_orphaning_child(bench, adopt=True)
    assert adopted >= 0.25  # the grandchild's 0.3 s, reaped here
    # without the adoption the grandchild is reaped by init: its time is missing
    assert cpu_of_an_orphaning_child(bench, adopt=False) < 0.25 <= adopted
