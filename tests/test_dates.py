"""Dates as people write them (``memcli.dates``): English by dateparser, Chinese by JioNLP,
relative dates against the clock, dates without a year placed in the year of the user's
memories, and words that only look like dates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from memcli import dates
from memcli.dates import (
    NoFullDate,
    QueryDate,
    dateparser_vocabulary,
    day_of,
    may_name_date_en,
    may_name_date_zh,
    parse_day,
    query_dates,
    resolve_year,
    spoken_date,
    spoken_day,
    written_time,
)
from memcli.errors import UsageError

NOW = datetime(2023, 5, 4, 20, 0).timestamp()  # a Thursday evening
DAY = 86400.0


def day(year: int, month: int, dom: int) -> float:
    return datetime(year, month, dom).timestamp()


def spans(query: str, now: float = NOW) -> list[tuple[str, float, float]]:
    return [(d.granularity, d.start, d.end) for d in query_dates(query, now)]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("What did we talk about yesterday?", (2023, 5, 3)),
        ("What did you recommend the day before yesterday?", (2023, 5, 2)),
        ("What did I say last Tuesday?", (2023, 5, 2)),
        ("What did you suggest on Monday?", (2023, 5, 1)),
        ("Five days ago, what did you recommend?", (2023, 4, 29)),
        ("昨天我们聊了什么？", (2023, 5, 3)),
        ("前天你推荐了什么？", (2023, 5, 2)),
        ("大前天我说了什么", (2023, 5, 1)),
        ("三天前我说了什么", (2023, 5, 1)),
        ("上周二我说了什么？", (2023, 4, 25)),
        ("星期天你说了什么", (2023, 4, 30)),  # the Sunday gone, not the coming one
    ],
)
def test_relative_days_resolve_against_now(query: str, first: tuple[int, int, int]) -> None:
    assert spans(query) == [("day", day(*first), day(*first) + DAY - 1)]


@pytest.mark.parametrize("query", ["What did I mention last week about my job?", "上周我们聊了什么"])
def test_last_week_is_the_monday_to_sunday_week_before_this_one(query: str) -> None:
    assert spans(query) == [("week", day(2023, 4, 24), day(2023, 5, 1) - 1)]


def test_relative_dates_move_with_the_clock() -> None:
    later = datetime(2023, 6, 10, 9, 0).timestamp()
    assert spans("What did we talk about yesterday?", later)[0][1] == day(2023, 6, 9)
    assert spans("昨天我们聊了什么", later)[0][1] == day(2023, 6, 9)


@pytest.mark.parametrize(
    "query",
    [
        "On May 2nd, what topics did we discuss?",
        "What did you recommend on the 2nd of May?",
        "What did we discuss on 5/2?",
        "What did I tell you on May 2 about my job?",
        "5月2日我们聊了什么？",
        "5月2号你推荐了什么",
        "五月二号你推荐的电影是哪部？",
    ],
)
def test_a_month_and_day_without_a_year_is_read_as_yearless(query: str) -> None:
    [found] = query_dates(query, NOW)
    assert (found.granularity, found.yearless, datetime.fromtimestamp(found.start).strftime("%m-%d")) == (
        "day",
        True,
        "05-02",
    )


@pytest.mark.parametrize("query", ["What did Ana do on 8 May 2023?", "2023年5月8日我们聊了什么"])
def test_a_date_with_its_year_is_not_yearless(query: str) -> None:
    [found] = query_dates(query, NOW)
    assert (found.granularity, found.start, found.yearless) == ("day", day(2023, 5, 8), False)


def test_a_yearless_date_takes_the_year_of_the_users_memories_nearest_before_now() -> None:
    [may2] = query_dates("What did we talk about on May 2nd?", NOW)
    memories = np.array([day(2021, 5, 2) + 3600, day(2022, 5, 3), day(2022, 9, 1)])
    now = datetime(2026, 11, 25).timestamp()
    placed = resolve_year(may2, memories, now, after=14 * DAY)
    assert (placed.start, placed.yearless) == (day(2022, 5, 2), False)  # 2022 has memories near it; 2023-2026 none
    only_old = resolve_year(may2, memories[:1], now, after=0.0)
    assert only_old.start == day(2021, 5, 2)


def test_a_yearless_date_without_memories_near_it_is_the_latest_not_after_now() -> None:
    [dec24] = query_dates("What did I say on December 24?", NOW)
    now = datetime(2026, 11, 25).timestamp()
    assert resolve_year(dec24, np.array([day(2023, 5, 2)]), now, after=0.0).start == day(2025, 12, 24)


def test_a_date_with_a_year_is_left_as_it_is() -> None:
    written = QueryDate("day", day(2020, 1, 1), day(2020, 1, 2) - 1)
    assert resolve_year(written, np.array([day(2023, 1, 1)]), NOW, after=0.0) == written


@pytest.mark.parametrize("query", ["What did Ana do in May?", "What did Ana paint in October?"])
def test_a_month_alone_is_any_years(query: str) -> None:
    [found] = query_dates(query, NOW)
    assert found.granularity == "month alone" and found.month in (5, 10)


@pytest.mark.parametrize(
    "query",
    [
        "What did you recommend to me?",
        "Can you recommend a good book now?",
        "What may Ana do next?",
        "May I ask what Rex eats?",
        "What did we talk about?",
        "What is my second favourite book?",
        "你推荐了什么",
        "我喜欢一个人",
        "",
        "my locker code is 9999",
        "December 9999",
        "on 31 December 9999",
        "room 0001",
        "in 9999",
    ],
)
def test_words_that_only_look_like_dates_are_not_dates(query: str) -> None:
    assert query_dates(query, NOW) == []


def test_mixed_text_reads_the_english_and_the_chinese_dates() -> None:
    found = {
        (d.granularity, datetime.fromtimestamp(d.start).strftime("%m-%d"))
        for d in query_dates("What did 张伟 say on May 2nd?", NOW)
    }
    assert found == {("day", "05-02")}
    assert spans("昨天 what did we talk about?") == [("day", day(2023, 5, 3), day(2023, 5, 3) + DAY - 1)]


# one day format, one spoken form, one parse -------------------------------------------------


def test_a_day_is_written_one_way_from_seconds_or_a_date() -> None:
    assert day_of(datetime(2023, 5, 8, 23, 59).timestamp()) == day_of(datetime(2023, 5, 8, 23, 59)) == "2023-05-08"


def test_the_spoken_form_does_not_zero_pad_the_day() -> None:
    monday = datetime(2023, 5, 8, 9, 0)
    assert spoken_date(monday.timestamp()) == "Monday 8 May 2023"
    assert spoken_date(monday, weekday=False) == spoken_day("2023-05-08") == "8 May 2023"
    assert spoken_day("not a day") == "not a day"


@pytest.mark.parametrize(
    ("written", "expected"),
    [("2023-05-02", "2023-05-02"), ("May 2", "2023-05-02"), ("last week", "2023-04-24"), ("上周一", "2023-04-24")],
)
def test_a_date_option_is_read_like_a_query_date(written: str, expected: str) -> None:
    assert parse_day(written, "--day", NOW) == expected


def test_an_unreadable_date_option_names_the_option() -> None:
    with pytest.raises(UsageError, match="^--day: cannot read the date 'soonish'"):
        parse_day("soonish", "--day", NOW)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("2023-05-08T13:56:00", datetime(2023, 5, 8, 13, 56)),
        ("May 8, 2023 3pm", datetime(2023, 5, 8, 15)),
    ],
)
def test_an_imported_time_is_read_with_its_full_date(written: str, expected: datetime) -> None:
    assert written_time(written) == expected


@pytest.mark.parametrize("written", ["10:00", "May 2023", "Tuesday"])
def test_an_imported_time_without_a_full_date_is_refused(written: str) -> None:
    with pytest.raises(NoFullDate):
        written_time(written)


def test_an_imported_relative_date_is_not_read_against_today() -> None:
    with pytest.raises(ValueError, match="cannot read"):
        written_time("yesterday")


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("What did I buy on the 9th?", (2023, 4, 9)),  # the 9th to come is not asked about: April's
        ("What did I buy on the 2nd?", (2023, 5, 2)),
        ("What did I do on the 31st?", (2023, 3, 31)),  # April has none; dateparser reads a May 31st to come
        ("我3号买了什么？", (2023, 5, 3)),
    ],
)
def test_a_day_of_the_month_alone_is_the_latest_such_day_up_to_now(query: str, first: tuple[int, int, int]) -> None:
    assert spans(query) == [("day", day(*first), day(*first) + DAY - 1)]


def test_a_chinese_phrase_the_time_parser_cannot_read_prints_nothing_on_stderr() -> None:
    """JioNLP logs a traceback for "几号" through the root logger; stderr is status, and a
    script's `memcli ask "房租每个月几号交?"` must not get tracebacks there. In a fresh
    process, since pytest's own log handlers would hide the root logger's."""
    import subprocess
    import sys

    code = (
        "import logging, time\n"
        "from memcli.dates import query_dates\n"
        "query_dates('房租每个月几号交？', time.time())\n"
        "print(len(logging.getLogger().handlers))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stderr == ""
    assert done.stdout.strip() == "0"  # no handler left on the root logger either


def days(query: str, now: float = NOW) -> list[tuple[str, str, bool]]:
    return [
        (d.granularity, datetime.fromtimestamp(d.start).strftime("%Y-%m-%d"), d.yearless)
        for d in query_dates(query, now)
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Where was I on New Year's Eve?", ("day", "2022-12-31", True)),
        ("who came over for NYE?", ("day", "2022-12-31", True)),
        ("what did I cook on Christmas Day?", ("day", "2022-12-25", True)),
        ("what did we do over christmas eve?", ("day", "2022-12-24", True)),
        ("where did we eat on Valentine's?", ("day", "2023-02-14", True)),
        ("what was I dressed as for halloween?", ("day", "2022-10-31", True)),
        ("what happened on the first of January?", ("day", "2023-01-01", True)),
        ("who texted me on the twenty-second of April?", ("day", "2023-04-22", True)),
    ],
)
def test_a_feast_or_a_day_in_words_is_a_day_of_the_year(query: str, expected: tuple[str, str, bool]) -> None:
    assert days(query) == [expected]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("除夕那天我在哪？", ("day", "2023-01-21", False)),
        ("大年夜吃了什么", ("day", "2023-01-21", False)),
        ("国庆去哪玩了", ("day", "2022-10-01", True)),
        ("圣诞节收到了什么礼物", ("day", "2022-12-25", True)),
        ("中秋节和谁一起过的", ("day", "2022-09-10", False)),
    ],
)
def test_a_chinese_feast_is_the_latest_one_up_to_now(query: str, expected: tuple[str, str, bool]) -> None:
    assert days(query) == [expected]


def test_a_solar_feast_takes_the_year_of_the_users_memories() -> None:
    [found] = query_dates("国庆节去了哪里", NOW)
    placed = resolve_year(found, np.array([datetime(2021, 10, 1, 12).timestamp()]), NOW, after=DAY)
    assert datetime.fromtimestamp(placed.start).strftime("%Y-%m-%d") == "2021-10-01"


@pytest.mark.parametrize(
    "query",
    [
        "march on with the plan, what did Ana say?",
        "did I get a second opinion on my knee?",
        "what was my new year's resolution?",
        "Christmas presents for mum?",
        "who sat down with me?",
        "the 3 of us went where?",
    ],
)
def test_words_beside_dates_are_not_dates(query: str) -> None:
    assert query_dates(query, NOW) == []


@pytest.mark.parametrize(
    "query",
    [
        "what melatonin amount should i be taking at night now?",
        "how many tournaments has John organized till date?",
        "what do I do after a morning jog?",
        "what's the language class I go to on Tuesday nights?",
        "is my office on the 5th floor?",
        "who came to Sara's 30th at the bowling alley?",
        "where was our 25th anniversary dinner?",
        "when did James try Cyberpunk 2077?",
        "did I pay £88 for the electric bill?",
        "I inject Ozempic once a week",
        "ten years at Kaiser, what next?",
        "我现在住哪儿？",
        "我最近晚上一般喝什么？",
        "我晚上那针胰岛素现在打几个单位？",
        "我现在晚饭后一般干嘛？",
        "朵朵周六上的是什么课？",
        "我周末还打麻将吗",
        "坐一号线去公司要多久？",
        "住在3号楼的是谁？",
    ],
)
def test_what_a_library_reads_as_a_date_but_names_no_day_is_no_date(query: str) -> None:
    """The present (现在, "now"), a time of day or a weekday of a habit, a length of time,
    an ordinal or a number of a thing (a floor, a birthday, a metro line, a game's name,
    an amount): dateparser and JioNLP read each as a day."""
    assert query_dates(query, NOW) == []


def test_a_length_of_time_beside_a_date_leaves_the_date_alone() -> None:
    assert days("What puppy did Maria get two weeks before August 11, 2023?") == [("day", "2023-08-11", False)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("中秋节快到了，买什么月饼？", ("day", "2023-09-29", False)),
        ("春节快到了，给爸妈买什么？", ("day", "2024-02-10", False)),
        ("马上就要国庆了", ("day", "2023-10-01", False)),
    ],
)
def test_a_chinese_feast_said_to_be_coming_is_the_coming_one(query: str, expected: tuple[str, str, bool]) -> None:
    assert days(query) == [expected]


def test_a_weekend_of_one_occasion_is_the_weekend_gone() -> None:
    """Said on a Thursday, "周末去看了场话剧" tells of the weekend gone, which JioNLP reads
    as the coming one."""
    assert days("周末去看了场话剧") == [("day", "2023-04-30", False)]


@pytest.mark.parametrize(
    "query",
    [
        "During 2020 where did I live?",
        "Where did I travel Summer 2023?",
        "Since 2019, what job have I had?",
        "Christmas 2023 gifts?",
        "20号房贷扣了多少？",
        "15号房租交了多少？",
        "3号门诊挂的哪个医生？",
        "我周六都干了什么？",
        "周日那天我在哪？",
    ],
)
def test_a_year_or_a_day_a_person_means_is_still_read_beside_the_filters(query: str) -> None:
    """The filters of what names no day leave alone a year after a capitalised time word
    ("During 2020", "Summer 2023"), a day before a word that only starts like a thing's
    number (号房贷, 号门诊), a weekday of one occasion with 都 or 那天."""
    assert query_dates(query, NOW) != []


ROOT = Path(__file__).resolve().parents[1]


def test_a_dateless_question_imports_neither_dateparser_nor_jionlp() -> None:
    """A question with no digit, no word of dateparser's English data and no run of JioNLP's
    time characters is no date, found without importing either (issue 32: a cold ``memcli
    ask`` paid for them on every question)."""
    code = (
        "import json, sys\n"
        "from memcli.dates import query_dates\n"
        f"found = [query_dates(q, {NOW}) for q in ('Where do I live?', '我住在哪里？')]\n"
        "print(json.dumps([repr(found), sorted(m for m in ('dateparser', 'jionlp') if m in sys.modules)]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["[[], []]", []]


def test_the_vocabulary_is_dateparsers_english_words() -> None:
    """Read from dateparser's data files, it holds its relative words, months, weekdays and
    their abbreviations, and no word of a dateless question."""
    vocabulary = dateparser_vocabulary()
    assert vocabulary is not None
    assert {"yesterday", "march", "tuesday", "tues", "ago", "fortnight", "noon", "utc"} <= vocabulary
    assert not {"where", "do", "i", "live", "my", "favourite"} & vocabulary


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("What did I eat yesterday?", (2023, 5, 3)),
        ("Where was I on the first of May?", (2023, 5, 1)),
        ("What did I buy on Christmas Eve?", (2022, 12, 24)),
        ("我昨天吃了什么？", (2023, 5, 3)),
        ("我五一去哪儿了？", (2023, 5, 1)),
    ],
)
def test_a_dated_question_passes_the_gates_and_finds_its_date(query: str, first: tuple[int, int, int]) -> None:
    """A question that names a day in words (English, Chinese, a feast memcli writes as a
    date for dateparser) is given to its parser and read."""
    assert may_name_date_en(query) or may_name_date_zh(query)
    assert [(d.granularity, d.start) for d in query_dates(query, NOW)][:1] == [("day", day(*first))]


def test_unreadable_data_files_send_every_text_to_the_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without dateparser's or JioNLP's data files (moved, renamed by an upgrade), every text
    goes to the parsers, as before the gates."""
    monkeypatch.setattr(dates.importlib.util, "find_spec", lambda name: None)
    dates.dateparser_vocabulary.cache_clear()
    dates._jio_time_chars.cache_clear()
    try:
        assert may_name_date_en("Where do I live?")
        assert may_name_date_zh("我住在哪里？")
    finally:
        dates.dateparser_vocabulary.cache_clear()
        dates._jio_time_chars.cache_clear()
