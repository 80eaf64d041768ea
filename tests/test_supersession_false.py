"""False supersessions of the slots read by name (issue 31, the rules path): a note must
not mark as replaced a memory the user still holds. Someone else's news is not the
writer's ("my sister got the senior designer role"); a membership ends only when the
membership itself is what ended ("Gym class cancelled" ends none); an employer is
compared by its name, not by the words after it ("last day at Accenture for good"); a
fasting schedule needs the fasting words to govern its numbers, written as a schedule is
("16:08" is a time); a diet switch needs the diet, not one meal's cuisine; an initialism is
its name's initials in order, written in capitals."""

from __future__ import annotations

import pytest

from memcli.text.updates import initialism_of, statements, updates


def _supersedes(older: str, newer: str) -> bool:
    """Whether any statement of ``newer`` replaces any of ``older`` (as remember decides)."""
    return any(updates(n, o) for n in statements(newer) for o in statements(older))


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I have a gym membership at Gold's", "Gym class cancelled"),
        ("I have a Costco membership", "Costco run cancelled, rain"),
        ("I have a Costco membership", "Quit Costco early, too crowded"),
        ("I'm on the Netflix standard plan", "Netflix show ended, so sad"),
        ("I have a Spotify subscription", "Spotify playlist ended"),
        ("I have a Spotify subscription", "Spotify ended my playlist abruptly"),
        ("I have an Audible subscription", "left my Audible headphones at work"),
        ("I'm a member of the Sierra Club", "Sierra Club hike cancelled"),
        ("I have a ClassPass subscription", "dropped ClassPass yoga, too early"),
        # phrasings of the same kind: a thing of the service's ended, not the membership
        ("I have a gym membership at Gold's", "gym session cancelled, coach ill"),
        ("I'm on the Netflix standard plan", "Netflix series ended, gutted"),
        ("I have a Costco membership", "left Costco without the milk"),
        ("I have a Costco membership", "Costco trip cancelled"),
    ],
)
def test_a_thing_of_a_service_ended_is_no_membership_ended(older: str, newer: str) -> None:
    assert not _supersedes(older, newer)


@pytest.mark.parametrize("text", ["left Accenture Consulting today", "quit Deloitte Digital for good"])
def test_an_employer_left_is_no_membership_ended(text: str) -> None:
    assert not [s for s in statements(text) if s.key.startswith("membership:")]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I have a Costco membership", "cancelled my Costco membership"),
        ("I have a Spotify subscription", "spotify cancelled, never use it"),
        ("I'm on the Netflix standard plan", "dropped netflix"),
    ],
)
def test_a_membership_itself_ended_is_still_read(older: str, newer: str) -> None:
    assert _supersedes(older, newer)


@pytest.mark.parametrize(
    "newer",
    [
        "went on a date with mum to the movies",
        "dinner date with grandma",
        "date with destiny lol",
        "dating back to the 1800s, this house",
        "my friend is dating priya now",
        "first date w/ client went fine",
        # phrasings of the same kind
        "coffee date with grandpa",
        "date with nan tonight",
        "my brother is dating zoe apparently",
        "the church, dating from 1642",
    ],
)
def test_a_date_with_family_or_someone_elses_dating_is_no_new_partner(newer: str) -> None:
    assert not _supersedes("I'm dating Alex", newer)


@pytest.mark.parametrize(
    "newer",
    [
        "last day at Accenture for good",
        "Last day at Accenture with the team, cake and tears",
        "last day at Accenture for my dad",
        # phrasings of the same kind
        "last day at accenture today, sad",
        "Last day at Accenture after 6 years",
    ],
)
def test_the_end_of_a_job_named_with_words_after_the_employer_ends_it(newer: str) -> None:
    assert _supersedes("I work at Accenture as an analyst", newer)


def test_the_end_of_a_job_at_another_employer_still_ends_none() -> None:
    assert not _supersedes("I work at Accenture as an analyst", "last day at Deloitte for good")


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I work at Google as a software engineer", "My sister got the senior designer role"),
        ("I work at Google as a software engineer", "Got the shift lead position at the cafe for my son"),
        ("I'm a nurse at St Mary's hospital", "Jen got the promotion to head nurse"),
        ("I work at Google as a software engineer", "Stripe made an offer to my wife and she accepted"),
        ("I work at Google as a software engineer", "offer from stripe, my brother is accepting it"),
        ("I work at Google as a software engineer", "Acme onboarding call went well"),
        ("I work at Google as a software engineer", "onboarding at Google Cloud team this week"),
        # phrasings of the same kind
        ("I work at Google as a software engineer", "my husband got the team lead role at Arup"),
        ("I'm a nurse at St Mary's hospital", "Tom got the promotion to ward manager"),
        ("I work at Google as a software engineer", "Monzo made an offer to my son and he took it"),
        ("I work at Google as a software engineer", "Stripe onboarding deck due friday"),
    ],
)
def test_someone_elses_job_news_or_a_meeting_is_no_job_of_ones_own(older: str, newer: str) -> None:
    assert not _supersedes(older, newer)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I'm keto", "the train at 16:08 window seat"),
        ("I do 16:8 fasting", "The score was 20:4 at half time, fasting tomorrow"),
        ("I'm vegetarian", "moving to mediterranean food for lunch at work"),
        # phrasings of the same kind
        ("I'm keto", "window table booked for 19:05"),
        ("I do 16:8 fasting", "won 18:6 at darts, fasting day tomorrow"),
        ("I'm vegetarian", "going mediterranean for the team lunch"),
    ],
)
def test_numbers_or_a_meal_are_no_diet(older: str, newer: str) -> None:
    assert not _supersedes(older, newer)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("doing 16:8 fasting most days", "changed to 20:4, eating window 2-6pm"),
        ("intermittent fasting 18/6 now", "back to 16:8 fasting, the 18 was too much"),
        ("strict keto since jan", "switched over to mediterranean, dietitian's idea"),
    ],
)
def test_a_fasting_schedule_or_a_diet_switched_is_still_read(older: str, newer: str) -> None:
    assert _supersedes(older, newer)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I have a Body Fit membership", "cancelled FB"),
        ("joined fit body, $30/mo", "cancelled BF, too dear"),
        ("joined planet fitness, $10/mo", "cancelled FP today"),
    ],
)
def test_an_initialism_is_its_names_initials_in_order_in_capitals(older: str, newer: str) -> None:
    assert not _supersedes(older, newer)


def test_an_initialism_still_stands_for_its_name() -> None:
    assert initialism_of("PF", "fit planet")
    assert _supersedes("joined planet fitness, $10/mo", "cancelled PF, never went")
    assert _supersedes("I have a Body Fit membership", "cancelled BF")
    assert not _supersedes("joined planet fitness, $10/mo", "cancelled pf today")  # not in capitals


def test_a_membership_and_a_habit_are_both_read_from_a_subscription_cancelled() -> None:
    said = statements("cancelled spotify, never use it")
    assert [s for s in said if s.key.startswith("membership:") and s.ended]
