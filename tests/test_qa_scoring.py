"""LoCoMo's answer metric (``memcli.library.qa_scoring``) on LoCoMo-style answers. The expected
figures are worked out from snap-research/locomo ``task_eval/evaluation.py`` by hand:
normalised, stemmed words counted as multisets, precision and recall, their harmonic mean."""

from __future__ import annotations

import pytest

from memcli.library.qa_scoring import abstained, multi_answer_f1, normalize_answer, score, token_f1


def f1(shared: int, predicted: int, wanted: int) -> float:
    """F1 of ``shared`` words between a prediction of ``predicted`` words and a reference of ``wanted``."""
    precision, recall = shared / predicted, shared / wanted
    return 2 * precision * recall / (precision + recall)


def test_normalisation_drops_case_punctuation_commas_articles_and_and() -> None:
    assert normalize_answer("The Sunset, and a Lake!") == "sunset lake"
    assert normalize_answer("  Mother's   day (2023)  ") == "mothers day 2023"
    assert normalize_answer("Theatre an island") == "theatre island"  # whole words only


def test_the_same_answer_scores_one_whatever_its_form() -> None:
    assert token_f1("7 May 2023.", "7 May 2023") == 1.0
    assert token_f1("the PAINTINGS", "painting") == 1.0  # stemmed: painting and paintings meet


def test_f1_counts_shared_stemmed_words() -> None:
    # "She paints sunsets": she, paint, sunset; "painting sunset": paint, sunset.
    assert token_f1("She paints sunsets", "painting sunset") == pytest.approx(f1(2, 3, 2))
    # A repeated word counts as often as both have it: sunset, sunset, lake against sunset.
    assert token_f1("sunset sunset lake", "sunset") == pytest.approx(f1(1, 3, 1))


def test_nothing_shared_or_nothing_said_scores_zero() -> None:
    assert token_f1("Paris", "Rome") == 0.0
    assert token_f1("", "Rome") == 0.0
    assert token_f1("the, a, an", "Rome") == 0.0


def test_multi_hop_takes_each_reference_part_best_match_then_the_mean() -> None:
    # One prediction part ("she likes painting camping": she, like, paint, camp) against
    # three reference parts: pottery 0, camping 1 of 4 words, painting 1 of 4 words.
    assert multi_answer_f1("She likes painting and camping", "pottery, camping, painting") == pytest.approx(
        (0 + f1(1, 4, 1) + f1(1, 4, 1)) / 3
    )
    # Prediction parts matched one to one: each reference part finds its own.
    assert multi_answer_f1("camping, pottery, painting", "pottery, camping, painting") == 1.0
    assert score("camping, painting", "pottery, camping, painting", 1) == pytest.approx(2 / 3)


def test_open_domain_is_scored_on_the_reference_before_its_semicolon() -> None:
    reference = "Likely no; she wants to be a counselor"
    assert score("likely no", reference, 3) == 1.0
    assert score("she wants to be a counselor", reference, 3) == 0.0
    # Scored whole as category 4: its 5 words against the 7 of "likely no she wants to be counselor".
    assert score("she wants to be a counselor", reference, 4) == pytest.approx(f1(5, 5, 7))


def test_numeric_references_are_read_as_text() -> None:
    assert score("2022.", 2022, 2) == 1.0
    assert score("In 2022.", 2022, 2) == pytest.approx(f1(1, 2, 1))


def test_adversarial_is_right_only_when_the_answer_says_it_is_not_mentioned() -> None:
    assert score("Not mentioned in the conversation", "self-care is important", 5) == 1.0
    assert score("There is no information available about that.", None, 5) == 1.0
    assert score("She realized self-care is important.", "self-care is important", 5) == 0.0
    assert abstained("I do not remember that.", ("do not remember",))
    assert not abstained("I do not remember that.")


def test_an_unknown_category_is_an_error() -> None:
    with pytest.raises(ValueError, match="category 6"):
        score("x", "x", 6)
