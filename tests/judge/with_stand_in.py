"""`benchtui ARGS` in this process with the stand-in judge registered: what the
judge's terminal and Ctrl-C tests run as a child. BENCHTUI_STAND_IN_DELAY
makes each reply wait that many seconds."""
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import llm  # noqa: E402
from judge_stand_in import StandInPlugin, default_reply, script  # noqa: E402

llm.pm.register(StandInPlugin(), name="benchtui-test-judge")
delay = float(os.environ.get("BENCHTUI_STAND_IN_DELAY", "0"))


def reply(body: str, system: str) -> str:
    time.sleep(delay)
    return default_reply(body, system)


script.reply = reply
from benchtui.cli import main  # noqa: E402

raise SystemExit(main(sys.argv[1:]))
