"""The judge's tests: a deterministic stand-in model registered through llm's
plugin hooks (no network, no key); see tests/judge_stand_in.py."""
from __future__ import annotations

import pytest

pytest.importorskip("llm", reason="the judge extra (llm) is not installed: pip install -e '.[test]'")

from judge_stand_in import stand_in_fixture  # noqa: E402,F401  (the fixture)
