"""Fixtures for the grades tests (helpers live in grades_fixtures.py, a
uniquely named module, so test files can import them)."""
import pytest
from benchtui.store.database import Store
from grades_fixtures import fill


@pytest.fixture
def store(tmp_path):
    s = fill(Store(tmp_path / "store.db"))
    yield s
    s.close()
