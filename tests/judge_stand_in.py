"""A stand-in judge for the tests: an ``llm.Model`` whose reply is a function
of what it is sent, registered through llm's ``register_models`` hook by the
``stand_in`` fixture (imported by the conftest of each folder that uses it).

Its default reply grades every dimension A, except where the material holds
the suite's evidence of a failing verdict: then C. So a blind judging puts an
A on an answer the suite fails, and a judging with evidence does not: the
figure ``grades agreement`` reports."""
from __future__ import annotations

import json
import threading
import time

import llm
import pytest

DIMENSIONS = ("correctness", "completeness", "testing", "analysis_depth", "algorithmic_sophistication",
              "engineering_rigor", "code_quality", "gpu_mapping", "overall")


def graded_reply(letter: str, note: str = "reads well") -> str:
    return "```json\n" + json.dumps({"grades": {d: {"grade": letter, "reasoning": f"{d}: {note}"}
                                                for d in DIMENSIONS}}) + "\n```"


def default_reply(body: str, system: str) -> str:
    if "Verdict: fail" in body or "Verdict: error" in body:
        return graded_reply("C", "the suite's counter-example shows it is wrong")
    return graded_reply("A")


class Script:
    """What the stand-in does with each prompt, and what it was sent."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.reply = default_reply
        self.sent: list[tuple[str, str]] = []   # (system, body) per call
        self.lock = threading.Lock()

    def __call__(self, body: str, system: str) -> str:
        with self.lock:
            self.sent.append((system, body))
        return self.reply(body, system)


script = Script()


class StandIn(llm.Model):
    model_id = "stand-in"
    can_stream = False

    def execute(self, prompt, stream, response, conversation):
        text = script(prompt.prompt or "", prompt.system or "")
        response.set_usage(input=len(prompt.prompt or "") // 4, output=len(text) // 4)
        yield text


class KeyedStandIn(StandIn):
    """A stand-in that needs a key no test sets: not usable."""
    model_id = "stand-in-keyed"
    needs_key = "stand-in-provider"
    key_env_var = "STAND_IN_PROVIDER_KEY"


class StandInPlugin:
    @llm.hookimpl
    def register_models(self, register):
        register(StandIn())
        register(KeyedStandIn())


def slow(seconds: float):
    """A reply that comes after ``seconds`` (longer than --timeout: a timeout)."""
    def reply(body: str, system: str) -> str:
        time.sleep(seconds)
        return graded_reply("B")
    return reply


class RateLimitError(Exception):
    """Named as the OpenAI client names a quota failure."""


@pytest.fixture(name="stand_in")
def stand_in_fixture(monkeypatch, tmp_path):
    """The stand-in judge models, registered for one test; ``script`` says what they reply.
    The config file is an empty one in ``tmp_path`` (``BENCHTUI_CONFIG``)."""
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
