"""The letter scale, points, 0-100 mapping and bands of the grades spec."""
import pytest
from benchtui.grading.grades import (
    DIMENSION_IDS,
    DIMENSIONS,
    LETTERS,
    POINTS,
    RUBRIC_VERSION,
    GradeError,
    band,
    find_dimension,
    parse_grade,
    parse_letter,
    points_to_letter,
    score_to_letter,
)
from hypothesis import given
from hypothesis import strategies as st


def test_rubric_has_the_eight_dimensions_and_overall_each_described():
    assert DIMENSION_IDS == ("correctness", "completeness", "code_quality", "analysis_depth", "testing",
                             "algorithmic_sophistication", "engineering_rigor", "gpu_mapping", "overall")
    assert all(len(d.description) > 120 for d in DIMENSIONS)
    assert RUBRIC_VERSION
    assert find_dimension("Code Quality").id == "code_quality"
    with pytest.raises(GradeError, match="unknown dimension"):
        find_dimension("speed")


def test_points_follow_the_spec():
    assert [POINTS[x] for x in LETTERS] == [4.0, 3.7, 3.3, 3.0, 2.7, 2.3, 2.0, 1.7, 1.3, 1.0, 0.7, 0.0]


@pytest.mark.parametrize("score,letter", [
    (100, "A"), (93, "A"), (92.9, "A-"), (90, "A-"), (89, "B+"), (87, "B+"), (86, "B"), (83, "B"),
    (82, "B-"), (80, "B-"), (79, "C+"), (77, "C+"), (76, "C"), (73, "C"), (72, "C-"), (70, "C-"),
    (69, "D+"), (67, "D+"), (66, "D"), (63, "D"), (62, "D-"), (60, "D-"), (59.9, "F"), (0, "F"),
])
def test_score_mapping_boundaries(score, letter):
    assert score_to_letter(score) == letter


@pytest.mark.parametrize("text", ["A++", "E", "A+", "", "B plus", "101", "-3", "4.0.1"])
def test_bad_grades_are_refused(text):
    with pytest.raises(GradeError):
        parse_grade(text)


def test_parse_grade_letters_and_scores():
    assert parse_grade("b+").letter == "B+"
    assert parse_letter("A\u2212") == "A-"  # a typographic minus
    value = parse_grade("87")
    assert (value.letter, value.score, value.points, value.display) == ("B+", 87.0, 3.3, "87 (B+)")
    assert parse_grade(92.5).letter == "A-"


@pytest.mark.parametrize("mean,shown", [
    (4.0, "A"), (3.96, "A"), (3.95, "A/A-"), (3.85, "A/A-"), (3.75, "A/A-"), (3.74, "A-"),
    (3.5, "A-/B+"), (3.0, "B"), (3.16, "B+/B"), (3.1, "B+/B"), (3.04, "B"), (0.35, "D-/F"), (0.1, "F"), (2.0, "C"),
])
def test_band_is_nearest_letter_or_a_band_near_the_midpoint(mean, shown):
    assert band(mean) == shown


def test_band_of_nothing_is_a_dash():
    assert band(None) == "\u2014"


@given(st.floats(min_value=0, max_value=100))
def test_score_letters_never_rise_as_scores_fall(score):
    lower = max(0.0, score - 3)
    assert POINTS[score_to_letter(lower)] <= POINTS[score_to_letter(score)]


@given(st.floats(min_value=0, max_value=4))
def test_band_names_the_nearest_letter(mean):
    shown = band(mean)
    parts = shown.split("/")
    assert points_to_letter(mean) in parts
    if len(parts) == 2:  # adjacent letters, mean near their midpoint
        hi, lo = POINTS[parts[0]], POINTS[parts[1]]
        assert LETTERS.index(parts[1]) == LETTERS.index(parts[0]) + 1
        assert abs(mean - (hi + lo) / 2) <= 0.1 + 1e-9
