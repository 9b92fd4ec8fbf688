"""The answer's process for an audit's baseline run: the ordinary answer server
(``engine.runner.answer_server``) with a line tracer on the answer folder's
files, so the audit mutates only lines some check reached.

    python -m engine.audit.answer_lines FD ANSWER_DIR [ADAPTER]

The lines are written to ``ANSWER_DIR/.benchtui-audit-lines.json`` (the
scratch copy; the answer folder itself is never written). They only choose
which mutants to make: what an answer could fake here is fewer mutants of
its own code, never a verdict. Lines run while the harness probes the answer
(``Suite.probing``) are left out: the suite replaces what it probed.
"""
from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

LINES_FILE = ".benchtui-audit-lines.json"


def main(argv: list[str]) -> int:
    from benchtui.runner import answer_server

    folder = str(Path(argv[2]).resolve()) + os.sep
    seen: dict[str, set[int]] = {}
    # while the harness probes the answer to shape its own stand-ins (beam
    # search's model class), lines run for binding, not for any check
    probing = [False]
    answer_server.PROBE_HOOKS.append(lambda on: probing.__setitem__(0, on))

    def local(frame, event, arg):
        if event == "line" and not probing[0]:
            seen.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return local

    def tracer(frame, event, arg):
        if not frame.f_code.co_filename.startswith(folder):
            return None  # library code: no line events, almost no cost
        if not probing[0]:
            seen.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return local

    threading.settrace(tracer)
    sys.settrace(tracer)
    try:
        return answer_server.main(argv)
    finally:
        sys.settrace(None)
        lines = {os.path.relpath(f, folder): sorted(ls) for f, ls in seen.items()}
        with open(os.path.join(folder, LINES_FILE), "w", encoding="utf-8") as fh:
            json.dump(lines, fh)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
