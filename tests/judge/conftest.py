"""The judge's tests: a deterministic stand-in model registered through llm's
plugin hooks (no network, no key), and a demo workbench with suite verdicts
written into its store as a run would have left them."""
from __future__ import annotations

import pytest

llm = pytest.importorskip("llm", reason="the judge extra (llm) is not installed: pip install -e '.[test]'")

from judge_stand_in import StandInPlugin, script  # noqa: E402


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    """The stand-in judge models, registered for one test; ``script`` says what they reply."""
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))  # no key or alias of the user's is read
    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "benchtui-config.toml"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    plugin = StandInPlugin()
    llm.pm.register(plugin, name="benchtui-test-judge")
    script.reset()
    try:
        yield script
    finally:
        llm.pm.unregister(name="benchtui-test-judge")
