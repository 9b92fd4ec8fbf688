"""Trace entries: exact, or floats within rounding; an accepted other reading."""
import numpy as np
from benchtui.audit.checker import digest
from benchtui.audit.equivalence import ALLOWED, allowed_by_prompt, same_entry, same_values


def entry(value):
    from benchtui.audit.equivalence import entry as make
    return make(digest(value), value)


def log_softmax_rowmax(x):
    s = x - x.max(axis=-1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def test_a_rewrite_that_only_rounds_differently_matches():
    x = np.random.default_rng(0).standard_normal((64, 1000)) * 5
    whole = x - x.max(keepdims=True)  # the max over the whole array: equal in exact arithmetic
    other = whole - np.log(np.exp(whole).sum(axis=-1, keepdims=True))
    plus = x + x.max(axis=-1, keepdims=True)
    plus = plus - np.log(np.exp(plus).sum(axis=-1, keepdims=True))
    base = log_softmax_rowmax(x)
    assert not np.array_equal(base, other) and not np.array_equal(base, plus)
    assert same_entry(entry(other), entry(base)) and same_entry(entry(plus), entry(base))
    # a score handed back as a float, within rounding
    assert same_entry(entry(float(base[0, 0]) * (1 + 1e-15)), entry(float(base[0, 0])))


def test_one_entry_off_beyond_rounding_does_not_match():
    base = log_softmax_rowmax(np.random.default_rng(1).standard_normal((64, 1000)))
    for delta in (1e-9, 1e-4):
        bad = base.copy()
        bad[17, 3] += delta
        assert not same_entry(entry(bad), entry(base))
    spread = base * (1 + 1e-6)  # a relative error of 1e-6 everywhere: far beyond float64 rounding
    assert not same_entry(entry(spread), entry(base))
    assert not same_entry(entry(base.astype(np.float32)), entry(base))  # the dtype is part of the shape
    nan = base.copy()
    nan[0, 0] = np.nan
    assert not same_entry(entry(nan), entry(base))
    assert not same_entry(entry(1.5), entry(1.5000001))


def test_integers_of_either_kind_are_the_same_tokens():
    tokens = [np.int64(3), np.int64(9)]
    assert same_entry(entry(([3, 9], -1.25)), entry((tokens, -1.25)))
    assert same_entry(entry(np.array([3, 9], dtype=np.int32)), entry(np.array([3, 9], dtype=np.int64)))
    assert not same_entry(entry([3, 9]), entry([3, 8]))
    assert not same_entry(entry([3, 9]), entry([3.0, 9.0]))


def test_values_that_vary_between_runs_are_skipped_only_there():
    base = [entry(np.ones(4)), entry("x")]
    assert same_values([entry(np.ones(4)), entry("y")], base, [1])
    assert not same_values([entry(np.ones(4) * 2), entry("x")], base, [1])


def reading(value, accepted=True):
    return {"name": "eos_in_length", "verdict": "info", "value": value,
            "details": {"open_reading": {"accepted": accepted}}}


def test_an_accepted_other_reading_explains_different_values():
    base = [{"name": "penalty", "verdict": "pass"}, reading("EOS counted in the length")]
    moved = [{"name": "penalty", "verdict": "pass"}, reading("EOS not counted in the length")]
    why = allowed_by_prompt(moved, base)
    assert why.startswith(ALLOWED) and "EOS counted in the length -> EOS not counted in the length" in why
    assert allowed_by_prompt(base, base) is None  # nothing moved: the values differ for another reason
    assert allowed_by_prompt([reading("neither reading", accepted=False)], base) is None


def not_asked(verdict):
    return {"name": "float64_accuracy", "verdict": "info", "message": f"not asked by this answer's prompt: would be {verdict}",
            "details": {"would_be": {"verdict": verdict, "message": ""}, "asked_by_prompt_versions": ["benchtui"]}}


def test_a_check_the_prompt_does_not_ask_for_moving_is_allowed_by_that_prompt():
    why = allowed_by_prompt([not_asked("fail")], [not_asked("pass")])
    assert why.startswith(ALLOWED) and "float64_accuracy (not asked by this prompt) would be fail" in why
    assert allowed_by_prompt([not_asked("pass")], [not_asked("pass")]) is None
    # a check the prompt asks for never makes a survivor allowed (it would have killed it)
    assert allowed_by_prompt([{"name": "float64_accuracy", "verdict": "pass"}],
                             [{"name": "float64_accuracy", "verdict": "pass"}]) is None


def test_a_point_the_challenges_table_leaves_open_is_allowed_only_under_its_words(tmp_path):
    """A float32 buffer in ternary_training's loop changes the trained model's values: the
    prompt fixes no training precision, which the challenge's table (contracts.toml) says with
    the prompt's words; under a prompt without those words, or for another operator, it stays a
    survivor."""
    from benchtui.audit.core import Target, left_open
    from benchtui.audit.mutate import Mutant
    from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge

    challenge = load_challenge(BUNDLED_CHALLENGES / "ternary_training")
    buffer = Mutant("reference.py", 120, "narrow_dtype", "np.zeros_like(...) allocated in float32", "", "")
    reference = Target("(reference)", challenge, tmp_path / "reference")  # no PROMPT.md: the challenge's own
    reference.folder.mkdir()
    why = left_open(reference, buffer)
    assert why is not None and why.startswith(ALLOWED) and "precision" in why
    assert left_open(reference, Mutant("reference.py", 134, "default_flip", "default window=64 -> 32", "", "")) is None
    assert left_open(reference, Mutant("r.py", 9, "narrow_dtype", "the returned .astype(...) dropped", "", "")) is None
    other = Target("m", challenge, tmp_path / "m")
    other.folder.mkdir()
    (other.folder / "PROMPT.md").write_text("Train a ternary model in float64 throughout.\n")
    assert left_open(other, buffer) is None
