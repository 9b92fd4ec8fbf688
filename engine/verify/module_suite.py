"""Placeholder for the PyTorch module harness that runs an imported deck's
answers (``challenges/<id>/conformance.py`` of a ``benchtui import``): until
the harness is installed every such run records one ``unbound`` check that
says so, never a pass."""
from __future__ import annotations

from engine.verify import verdicts as V

MESSAGE = "the PyTorch module harness is not installed"


def run(suite) -> None:
    suite.record("module_harness", V.UNBOUND, message=MESSAGE, requires=("task",))
