"""Contract tables: each bundled challenge lists what its prompt states (defaults,
dtypes, shapes, special values, reported figures) with the checks that exercise
each, and ``challenge check`` fails a table with a contract no check exercises,
a check the suite does not have, or words that are not the prompt's."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.audit.mutate import OPERATORS
from benchtui.authoring.soundness import check_contracts
from benchtui.challenges import contracts
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge

BUNDLED = sorted(p.parent.name for p in BUNDLED_CHALLENGES.glob("*/challenge.toml"))


@pytest.mark.parametrize("cid", BUNDLED)
def test_every_bundled_challenge_has_a_contract_table(cid):
    table = contracts.load(BUNDLED_CHALLENGES / cid)
    assert table, f"{cid} has no {contracts.FILENAME}"
    kinds = {c.kind for c in table}
    assert "requirement" in kinds or len(kinds) > 1
    # every row: the prompt's words, and a check or a reason
    prompt = (BUNDLED_CHALLENGES / cid / "PROMPT.md").read_text()
    assert contracts.problems(table, prompt, {n for c in table for n in c.checks}) == []
    assert contracts.open_problems(contracts.load_open(BUNDLED_CHALLENGES / cid), prompt, set(OPERATORS)) == []


def challenge_with(tmp_path: Path, table: str):
    folder = tmp_path / "kv"
    folder.mkdir(parents=True)
    for name in ("challenge.toml", "PROMPT.md"):
        (folder / name).write_bytes((BUNDLED_CHALLENGES / "kv" / name).read_bytes())
    (folder / contracts.FILENAME).write_text(table)
    return load_challenge(folder)


ROW = '[[contract]]\nkind = "{kind}"\nsays = "{says}"\n{rest}\n'


def test_a_stated_contract_without_a_check_fails(tmp_path):
    names = {"decode_matches_full_attention", "memory_linear"}
    good = ROW.format(kind="size", says="Memory grows linearly with tokens", rest='checks = ["memory_linear"]')
    reasoned = ROW.format(kind="requirement", says="Past attention is never recomputed",
                          rest='not_checkable = "a cost, shown as a figure"')
    item = check_contracts(challenge_with(tmp_path / "a", good + reasoned), names)
    assert item.ok, item.message
    assert "1 stated contracts" in item.message and "1 marked not checkable" in item.message

    open_row = ROW.format(kind="shape", says="each shaped (batch, heads, head_dim)", rest="checks = []")
    item = check_contracts(challenge_with(tmp_path / "b", good + open_row), names)
    assert not item.ok and "no check exercises it" in item.message

    unknown = ROW.format(kind="shape", says="each shaped (batch, heads, head_dim)", rest='checks = ["decode_shape"]')
    item = check_contracts(challenge_with(tmp_path / "c", good + unknown), names)
    assert not item.ok and "no such check: decode_shape" in item.message

    not_quoted = ROW.format(kind="default", says="eps defaults to 1e-5", rest='checks = ["memory_linear"]')
    item = check_contracts(challenge_with(tmp_path / "d", not_quoted), names)
    assert not item.ok and "not the prompt's own words" in item.message

    bad_kind = ROW.format(kind="vibe", says="Memory grows linearly with tokens", rest='checks = ["memory_linear"]')
    item = check_contracts(challenge_with(tmp_path / "e", bad_kind), names)
    assert not item.ok and "kind 'vibe'" in item.message

    item = check_contracts(challenge_with(tmp_path / "f", "contract = 3\n"), names)
    assert not item.ok and "no [[contract]] rows" in item.message


OPEN = '[[open]]\noperator = "{op}"\nwrites = "allocated in float32"\nsays = ["{says}"]\npoint = "{point}"\n'


def test_an_open_point_must_quote_the_prompt_and_name_an_operator(tmp_path):
    names = {"memory_linear"}
    good = ROW.format(kind="size", says="Memory grows linearly with tokens", rest='checks = ["memory_linear"]')
    fine = OPEN.format(op="narrow_dtype", says="Memory grows linearly with tokens", point="the cache's dtype")
    assert check_contracts(challenge_with(tmp_path / "a", good + fine), names).ok
    unquoted = OPEN.format(op="narrow_dtype", says="any precision will do", point="the cache's dtype")
    item = check_contracts(challenge_with(tmp_path / "b", good + unquoted), names)
    assert not item.ok and "none of its says is the prompt's own words" in item.message
    unknown = OPEN.format(op="vibes", says="Memory grows linearly with tokens", point="the cache's dtype")
    item = check_contracts(challenge_with(tmp_path / "c", good + unknown), names)
    assert not item.ok and "operator 'vibes'" in item.message
    reasonless = OPEN.format(op="narrow_dtype", says="Memory grows linearly with tokens", point="")
    item = check_contracts(challenge_with(tmp_path / "d", good + reasonless), names)
    assert not item.ok and "no point says" in item.message
