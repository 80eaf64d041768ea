"""Dates that recall queries write, the way people write them, in English and Chinese.

"On May 2nd", "the 3rd of May", "5/1", "in May 2023", "2023", "yesterday", "last Tuesday",
"two weeks ago", "last week", "new year's eve", "the first of January"; "5月2日", "五月三号",
"上周二", "前天", "三天前", "上周", "去年", "国庆", "除夕".
English (and other Latin-script) text is read by dateparser's ``search_dates``; text with
Chinese characters by JioNLP's time parser (``jionlp.ner.extract_time``), which also resolves
Chinese relative forms that dateparser misreads ("5月2日" as 2 December). Both resolve
relative dates against the clock (``now``: ``--now``/``MEMCLI_NOW``), preferring the past:
a query about memories asks about what was.

A date written without a year ("May 2nd", "5月2号") is resolved per user by
``resolve_year``: the year of the user's memories nearest before now. A month named alone
("in May", "in October") matches that month of any year (LoCoMo's questions name months of
the conversation's year, which is not now's).

Cost: dateparser takes about 1 ms a query once warm (its first call, about 0.2 s, loads its
English data); JioNLP about 0.2 ms (1.1 s to import, once, on the first Chinese query). A
text that cannot name a date for either (no digit, no word of dateparser's English data, no
run of JioNLP's time characters: ``may_name_date_en``, ``may_name_date_zh``) imports neither.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import io
import logging
import os
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from memcli.errors import UsageError

DAY_SECONDS = 86400.0
MIN_YEAR, MAX_YEAR = 1900, 2200
"""The years memcli takes, for every time: a query's date ("my locker code is 9999" or
"room 0001" is no date), ``--now``/``MEMCLI_NOW``, ``--since``/``--until``/``--day``, and the
timestamps of imported records. Inside them a time converts to unix seconds and back, and
names a day, on every platform; a memory dated outside them could not be asked about."""
TIME_RANGE = f"{MIN_YEAR}-01-01 to {MAX_YEAR}-12-31"
"""The range of ``MIN_YEAR``..``MAX_YEAR`` as error messages name it."""


class OutOfRange(ValueError):
    """A time outside the years memcli takes (``MIN_YEAR``..``MAX_YEAR``); its message
    says what and the allowed range, for the caller to prefix with the option or field."""


def unix_seconds(moment: datetime, what: str = "") -> float:
    """``moment`` as unix seconds (a naive time is local wall-clock time).

    Raises OutOfRange (``what``: the value as the user wrote it, for the message) when its
    year is outside ``MIN_YEAR``..``MAX_YEAR``, where ``datetime.timestamp`` would raise
    OverflowError, OSError or ValueError near year 1 or 9999, or give a time that names no
    day on some platforms."""
    if not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise OutOfRange(f"{what or moment.isoformat()} is out of range (memcli takes times from {TIME_RANGE})")
    return moment.timestamp()


def from_unix_seconds(seconds: float, what: str = "") -> datetime:
    """Unix ``seconds`` as an aware local time.

    Raises OutOfRange (``what``: the value as the user wrote it) outside ``MIN_YEAR``..
    ``MAX_YEAR``, for NaN or infinity, and where the platform's time_t cannot hold it
    (``datetime.fromtimestamp``'s OverflowError, OSError, ValueError)."""
    message = f"{what or repr(seconds)} is out of range (memcli takes unix seconds from {TIME_RANGE})"
    try:
        moment = datetime.fromtimestamp(float(seconds), tz=UTC).astimezone()
    except (OverflowError, OSError, ValueError):
        raise OutOfRange(message) from None
    if not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise OutOfRange(message)
    return moment


def _out_of_range_year(value: str) -> bool:
    """Whether ``value`` starts with a year that no datetime holds (0000, or five digits
    and more), which parsers report as an unreadable date rather than one out of range."""
    found = re.match(r"\s*[+-]?(\d{4,})(?=\D|$)", value)
    return bool(found) and not 1 <= int(found.group(1)) <= 9999


# Days and how they are written ---------------------------------------------------------------

DAY_FORMAT = "%Y-%m-%d"
"""How memcli writes a day: a memory's ``day``, a MemoryBank session, ``--day``."""


def _moment(when: float | date) -> date:
    return when if isinstance(when, date) else datetime.fromtimestamp(when)


def day_of(when: float | date) -> str:
    """The calendar day ``YYYY-MM-DD`` of ``when``: unix seconds (the local day), or a
    date or datetime (its own day, in its own timezone)."""
    return _moment(when).strftime(DAY_FORMAT)


def spoken_date(when: float | date, weekday: bool = True) -> str:
    """The day of ``when`` (as ``day_of``) as people say it, and as prompts and questions
    write it: ``Monday 8 May 2023``, or without ``weekday`` ``8 May 2023`` (the day of
    the month is not zero-padded)."""
    moment = _moment(when)
    spoken = f"{moment.day} {moment:%B %Y}"
    return f"{moment:%A} {spoken}" if weekday else spoken


def spoken_day(day: str) -> str:
    """A ``YYYY-MM-DD`` day as a question would write it, ``8 May 2023`` (``spoken_date``
    without the weekday); unchanged when unreadable."""
    try:
        return spoken_date(date.fromisoformat(day), weekday=False)
    except ValueError:
        return day


# Times that options, the environment and imported files give ----------------------------------


def clock_from_env(env: Mapping[str, str] | None = None, option: str = "MEMCLI_NOW") -> Callable[[], float]:
    """``time.time``, or a fixed clock when ``MEMCLI_NOW`` (ISO 8601, read by
    ``datetime.fromisoformat``) is set, so tests and simulations can move time without
    waiting.

    Raises UsageError when MEMCLI_NOW cannot be read or is out of range; the message names
    ``option`` (where the value came from: ``--now`` or ``MEMCLI_NOW``).
    """
    value = (os.environ if env is None else env).get("MEMCLI_NOW")
    if not value:
        return time.time
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        if _out_of_range_year(value):
            raise UsageError(f"{option}: {value!r} is out of range (memcli takes times from {TIME_RANGE})") from None
        raise UsageError(f"{option}: cannot read {value!r} as an ISO 8601 time") from None
    try:
        fixed = unix_seconds(moment, repr(value))
    except OutOfRange as exc:
        raise UsageError(f"{option}: {exc}") from None
    return lambda: fixed


class NoFullDate(ValueError):
    """A time written without its year, month or day ("10:00", "May 2023", "Tuesday")."""


def _absolute(text: str, full: bool) -> datetime | None:
    """``text`` read by dateparser's parser of absolute dates in English; with ``full``, only
    when it writes a year, a month and a day. None when it reads no such date."""
    # thin client: dateparser takes a few hundred ms to import, and memcli starts at every TAB press
    from dateparser.date import DateDataParser

    settings: dict[str, Any] = {"PARSERS": ["absolute-time"]}
    if full:
        settings["REQUIRE_PARTS"] = ["day", "month", "year"]
    try:
        return DateDataParser(languages=["en"], settings=settings).get_date_data(text).date_obj
    except (ValueError, OverflowError):  # numbers dateparser takes for an impossible date
        return None


def written_time(text: str) -> datetime:
    """A time with a full date, as an imported record writes it: ISO 8601 by
    ``datetime.fromisoformat``, else as people write it in English ("1:56 pm on 8 May,
    2023", "May 8, 2023 3pm") by dateparser's parser of absolute dates (a relative date,
    "yesterday", has no day in a file to be read against). A time without an offset is
    local wall-clock time; one with an offset is aware.

    Raises OutOfRange for a year outside ``MIN_YEAR``..``MAX_YEAR``; NoFullDate when it
    names a time but not its year, month and day; ValueError when it cannot be read."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        if _out_of_range_year(text):
            raise OutOfRange(f"the date {text!r} is out of range (memcli takes times from {TIME_RANGE})") from None
        found = _absolute(text, full=True)
        if found is None:
            # dateparser fills a missing part from today: read without requiring them, it tells
            # a time without a full date from no time at all.
            if _absolute(text, full=False) is not None:
                raise NoFullDate(f"{text!r} has no full date (year, month and day)") from None
            raise ValueError(f"cannot read the date {text!r}") from None
        moment = found
    if not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise OutOfRange(f"the date {text!r} is out of range (memcli takes times from {TIME_RANGE})")
    return moment


def written_date(value: str, option: str, now: float) -> datetime:
    """The time at which a date an option gives starts (``--since``, ``--until``,
    ``--day``): ISO 8601 by ``datetime.fromisoformat``, else a date as people write it
    ("May 2", "last week", "two days ago", "上周一") by ``query_dates``, read against ``now``
    (unix seconds): the start of its day, week, month or year, a date without a year being
    the latest one not after now.

    Raises UsageError naming ``option`` when the date cannot be read, or is out of range
    (years ``MIN_YEAR``..``MAX_YEAR``)."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        if _out_of_range_year(value):
            raise UsageError(f"{option}: {value!r} is out of range (memcli takes times from {TIME_RANGE})") from None
    else:
        try:
            unix_seconds(moment, repr(value))
        except OutOfRange as exc:
            raise UsageError(f"{option}: {exc}") from None
        return moment
    found = [d for d in query_dates(value, now) if d.granularity != "month alone"]
    if not found:
        raise UsageError(f"{option}: cannot read the date {value!r} (try YYYY-MM-DD or 'last week')")
    return datetime.fromtimestamp(resolve_year(found[0], np.zeros(0), now, after=0.0).start)


def parse_since(value: str | None, now: float | None = None) -> float | None:
    """``--since DATE`` as unix seconds (``written_date``, against ``now``: the clock when
    None); None when not given. Raises UsageError as ``written_date``."""
    if value is None:
        return None
    return unix_seconds(written_date(value, "--since", time.time() if now is None else now))


def parse_day(value: str | None, option: str, now: float | None = None) -> str | None:
    """A date option (``written_date``, against ``now``: the clock when None) as the day
    ``YYYY-MM-DD`` it starts; None when not given. Raises UsageError as ``written_date``."""
    if value is None:
        return None
    return day_of(written_date(value, option, time.time() if now is None else now))


@dataclass(frozen=True)
class QueryDate:
    """A date a query writes: from ``start`` to ``end`` (unix seconds, local time) at a
    ``granularity`` of day, week, month or year; or, for a month named alone, ``month``
    (1-12) and granularity "month alone". ``yearless``: written without a year ("May 2nd"),
    so ``start``/``end`` hold the first guess until ``resolve_year`` places it."""

    granularity: str
    start: float = 0.0
    end: float = 0.0
    month: int = 0
    yearless: bool = False


def _span(granularity: str, moment: datetime) -> tuple[float, float]:
    """The local day, Monday-to-Sunday week, month or year holding ``moment``, as unix seconds
    (start, end), the end being the last second inside."""
    day = datetime(moment.year, moment.month, moment.day)
    if granularity == "week":
        start = day - timedelta(days=day.weekday())
        end = start + timedelta(days=7)
    elif granularity == "month":
        start = datetime(moment.year, moment.month, 1)
        end = datetime(moment.year + (moment.month == 12), moment.month % 12 + 1, 1)
    elif granularity == "year":
        start, end = datetime(moment.year, 1, 1), datetime(moment.year + 1, 1, 1)
    else:
        start, end = day, day + timedelta(days=1)
    return start.timestamp(), end.timestamp() - 1


# English -----------------------------------------------------------------------------------

_LEADING = re.compile(r"^(?:(?:on|in|at|of|from|by|about|during|since|until|till|for|before|after)\s+)+", re.I)
_VERB_MONTHS = ("may", "march")
"""Months whose names are also verbs ("may I...", "march on"): a month only after a word
that places in time (``_VERB_AS_MONTH``) or beside a number ("May 2")."""
_VERB_AS_MONTH = re.compile(
    r"\b(?:in|of|during|since|until|till|by|before|after|early|late|mid|last|this|next)\s+(may|march)\b", re.I
)
_TIME_UNITS = frozenset(
    {"a second", "second", "a minute", "minute", "an hour", "hour", "a moment", "moment", "a sec", "a min"}
)
"""Phrases dateparser reads as now, a second or a minute from it ("a second opinion", "an
hour-long call"): a length of time, no date."""

_FEASTS_EN = (
    ("new year eve", "31 December"),
    ("nye", "31 December"),
    ("new year", "1 January"),
    ("christmas eve", "24 December"),
    ("christmas", "25 December"),
    ("xmas", "25 December"),
    ("boxing", "26 December"),
    ("valentine", "14 February"),
    ("halloween", "31 October"),
)
"""Days of the year named by a feast (English), as dateparser reads a day: the first whose
words start the feast's name as written, without its apostrophes, plural s and "day"."""
_HOLIDAY_EN = re.compile(
    r"\b(?:new\s+years?'?s?\s+eve|christmas\s+eve|nye"
    r"|new\s+years?'?s?\s+day|christmas\s+day|boxing\s+day|valentines?'?s?(?:\s+day)?|halloween"
    r"|(?P<pre>(?:on|at|over|since|until|till|before|after|during)\s+)(?:christmas|xmas|new\s+years?'?s?)"
    r"(?!'?s?\s+(?:eve|day|resolution|party|card|present|gift|list|tree|dinner|plan)))(?!\w)",
    re.I,
)
"""A feast named as a day: "new year's eve", "Christmas Eve", "Valentine's", "Halloween";
Christmas and New Year's alone only after a word that places in time ("on Christmas", "over
New Year's"): "Christmas presents" and "new year's resolutions" name no day."""
_ORDINAL_WORDS = {
    word: index + 1
    for index, word in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
        "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split()
    )
} | {"thirtieth": 30}
_ORDINAL_DAY = re.compile(
    r"\b(?:(?P<tens>twenty|thirty)[\s-])?(?P<unit>"
    + "|".join(_ORDINAL_WORDS)
    + r")(?=\s+of\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)",
    re.I,
)
"""A day of the month written in words before its month ("the first of January", "the
twenty-third of May"), which dateparser does not read: written as a number ("1st") first."""
_ABBREVIATION_DOT = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)\.", re.I)


def _dateparser_settings(now: datetime) -> dict[str, Any]:
    return {"RELATIVE_BASE": now, "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False}


_NO_DAY_WORDS = frozenset(
    "a an the at in on now currently present moment date till until night nights morning mornings evening evenings "
    "afternoon afternoons noon midnight".split()
)
"""Words of a phrase dateparser reads as today that name no day: "at night now", "a
morning jog", "till date" (``_plausible``)."""
_LENGTH = re.compile(
    r"^(?:(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|few|several|a couple of|"
    r"couple of|\d+(?:\s*-\s*\d+)?)\s+)?(?:secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|wks?|weeks?|months?|yrs?|"
    r"years?)(?:\s+(?:at|before|after|into|in|of|on|from|notice))?$",
    re.I,
)
"""A length of time dateparser reads as a date from now ("ten years at Kaiser", "two weeks
before August 11", "once a week", "results in a week"): without "ago", no date."""
_NOT_A_DAY_AFTER = re.compile(
    r"\s*(?:floor|anniversary|birthday|bday|b-day|ave|avenue|street|st|road|rd|grade|place|row|round|edition|"
    r"century|time|times|year|coffee|cup|attempt|try|visit|date|lap|game|book|season|episode|chapter|page|level|"
    r"gen|generation|percentile|party|wedding|pick|choice|in\s+line)\b",
    re.I,
)
"""Words after an ordinal that make it no day of the month: "the 5th floor", "25th
anniversary", "the 3rd time", "5th Ave"."""
_YEAR_NAMERS = frozenset(
    "during since in back before after until till from by around circa spring summer autumn fall winter "
    "christmas xmas easter thanksgiving halloween hanukkah ramadan diwali".split()
)
"""Capitalised words a year follows as a time ("During 2020", "Summer 2023", "Christmas 2023"),
not as a name's number."""
_NUMBER_NAMED = re.compile(
    r"(?:[$£€¥#]|\b(?:route|line|room|gate|terminal|platform|bus|flat|unit|apt|no|number|page|level|floor|exit|"
    r"highway|version|v)\s*)$",
    re.I,
)
"""What before a number makes it a name's number ("Route 66", "Line 1", "#45"), not a
year or a day."""
_HABIT_WEEKDAY_AFTER = re.compile(r"^(?:s\b|\s+(?:nights|mornings|evenings|afternoons)\b)", re.I)
_HABIT_WEEKDAY_BEFORE = re.compile(r"\b(?:every|each|on\s+alternate)\s+$", re.I)
_WEEKDAY_ALONE = re.compile(
    r"^(?:on\s+)?(?:mon|tues?|wed|thu|thurs?|fri|sat|sun|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\.?$",
    re.I,
)
"""A weekday dateparser reads alone, which ``_HABIT_WEEKDAY_AFTER``/``_BEFORE`` may make a
habit's: "on Tuesday" of "on Tuesday nights", "Tues" of "Tues nights"."""


def _named_elsewhere(text: str, query: str) -> bool:
    """Whether the phrase ``text`` dateparser found in ``query`` is, by the words in and
    beside it, no date: an amount ("£88"), a name's number (``_NUMBER_NAMED``, "Cyberpunk
    2077"), an ordinal of a thing (``_NOT_A_DAY_AFTER``, or after a possessive: "Sara's 30th"), or a
    weekday of a habit ("on Tuesday nights", "Tuesdays", "every Friday")."""
    at = query.find(text)
    if at < 0:
        return False
    before, after = query[:at], query[at + len(text) :]
    phrase = _LEADING.sub("", text.strip())
    if re.match(r"[$£€¥]\s?\d|#\d+$", phrase):  # dateparser's year 1988 of "£88"
        return True
    if re.fullmatch(r"\d+", phrase):
        # a number after a capitalised word inside a sentence, naming no month, season or feast
        # and placing nothing in time: a name's ("try Cyberpunk 2077"), not "During 2020",
        # "Since 2019", "Summer 2023", "Christmas 2023"
        word = re.search(r"([A-Za-z]+)\s+$", before)
        inside = (
            bool(word)
            and bool(before[: word.start()].strip())
            and not re.search(r"[.!?,;:]\s*$", before[: word.start()])
        )
        named = (
            inside
            and word.group(1)[0].isupper()
            and word.group(1).lower()[:3] not in _MONTH_NAMES
            and word.group(1).lower() not in _YEAR_NAMERS
        )
        return named or bool(_NUMBER_NAMED.search(before))
    if re.fullmatch(r"(?:the\s+)?\d{1,2}(?:st|nd|rd|th)(?:\s+(?:at|the|on|in))*", phrase, re.I):
        return bool(_NOT_A_DAY_AFTER.match(after)) or bool(re.search(r"'s\s+$", before))
    if _WEEKDAY_ALONE.match(phrase):
        return bool(_HABIT_WEEKDAY_AFTER.match(after) or _HABIT_WEEKDAY_BEFORE.search(before))
    return False


def _plausible(phrase: str, query: str) -> bool:
    """Whether a phrase dateparser found reads as a date in the query: it holds a digit or
    a word of four letters or more ("we", "now", "sat" are not dates), and is no length of
    time ("a second opinion", ``_TIME_UNITS``; "two weeks", ``_LENGTH``) nor made of words
    that name no day ("at night now", ``_NO_DAY_WORDS``); May or March without a number
    only after a word that places in time ("in May", "last March"; not "may I", "march on")."""
    lower = phrase.lower()
    if _LENGTH.match(lower):
        return False
    if any(c.isdigit() for c in phrase):
        return True
    letters = re.findall(r"[a-z]+", lower)
    if set(letters) <= _NO_DAY_WORDS or lower in _TIME_UNITS or not any(len(w) >= 3 for w in letters):
        return False
    if any(w in _VERB_MONTHS for w in letters) and len(set(letters) - {"on", "the", "of", "in"}) == 1:
        return any(m.group(1).lower() in letters for m in _VERB_AS_MONTH.finditer(query))
    return any(len(w) >= 4 for w in letters)


def _holiday_day(match: re.Match[str]) -> str:
    """The day a feast of ``_HOLIDAY_EN`` names, as dateparser reads it (``_FEASTS_EN``)."""
    pre = match.group("pre") or ""
    name = re.sub(r"\b(year|valentine)s\b|\bday\b", r"\1", match.group(0)[len(pre) :].lower().replace("'", ""))
    name = " ".join(name.split())
    return pre + next(day for feast, day in _FEASTS_EN if name.startswith(feast))


def _ordinal_day(match: re.Match[str]) -> str:
    """``_ORDINAL_DAY``'s day in figures ("twenty-first" -> "21st")."""
    number = (
        _ORDINAL_WORDS[match.group("unit").lower()]
        + {"twenty": 20, "thirty": 30, None: 0}[match.group("tens") and match.group("tens").lower()]
    )
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def with_days_written(query: str) -> str:
    """``query`` with its feasts ("new year's eve", "on Christmas": ``_FEASTS_EN``) and its
    days of the month in words ("the first of January") written as dates dateparser reads
    ("31 December", "the 1st of January"); unchanged when it has none."""
    return _ORDINAL_DAY.sub(_ordinal_day, _HOLIDAY_EN.sub(_holiday_day, query))


def _source_value(module: str, relative: str, name: str, key: str | None = None) -> Any:
    """The literal value of the top-level assignment ``name`` (of its dict entry ``key`` when
    given) in the file ``relative`` of the installed package ``module``, read as text: the
    package is not imported. None when the file or the assignment cannot be read."""
    try:
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            return None
        tree = ast.parse((Path(spec.origin).parent / relative).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                value = node.value
                if key is not None:
                    entries = zip(value.keys, value.values, strict=True) if isinstance(value, ast.Dict) else ()
                    value = next(v for k, v in entries if isinstance(k, ast.Constant) and k.value == key)
                if (  # "".join([...]), as JioNLP writes its patterns
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Attribute)
                    and value.func.attr == "join"
                    and isinstance(value.func.value, ast.Constant)
                    and len(value.args) == 1
                ):
                    return str(value.func.value.value).join(ast.literal_eval(value.args[0]))
                return ast.literal_eval(value)
    except (OSError, SyntaxError, ValueError, ImportError, StopIteration):
        return None
    return None


_LOCALE_NOT_WORDS = frozenset({"name", "date_order", "sentence_splitter_group", "no_word_spacing"})
"""Entries of a dateparser locale that hold no word of a date: its name, its order of day,
month and year, flags."""


def _locale_strings(value: Any) -> list[str]:
    """The strings of a dateparser locale's data (``date_translation_data/en.py``'s ``info``)
    that a date may be written with: its translations, skipped words, relative phrases and
    patterns, and simplifications (both sides), and those of its regional variants
    (``locale_specific``); not the entries' own names."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _locale_strings(item)]
    if isinstance(value, dict):
        if "name" in value:  # a locale: its entries are named by dateparser, not words of a date
            variants = list(value.get("locale_specific", {}).values())
            entries = [v for k, v in value.items() if k not in _LOCALE_NOT_WORDS | {"locale_specific"}]
            return _locale_strings(entries + variants)
        return [s for k, v in value.items() for s in (*_locale_strings(k), *_locale_strings(v))]
    return []


_WORD = re.compile(r"[^\W\d_]+")
"""A word as dateparser splits one from its neighbours: letters between non-letters, digits
or underscores (its known words match only between ``\\W``, ``_`` and digits)."""


@functools.cache
def dateparser_vocabulary() -> frozenset[str] | None:
    """Every word of dateparser's English data, NFKD-normalised and lowercased: each word of
    each string of its English locale (``date_translation_data/en.py``: month and weekday
    names, units, relative phrases, words it skips, the words of its simplifications and
    relative patterns, its regional variants), of its default ``SKIP_TOKENS``
    (``dateparser_data/settings.py``) and of the tokens its dictionary always knows
    (``languages/dictionary.py``, "UTC", "am"), read from the installed files without
    importing dateparser (a few hundred ms; reading them takes about 20 ms, once). None when
    a file cannot be read: every text then goes to dateparser."""
    sources = (
        ("dateparser", "data/date_translation_data/en.py", "info", None),
        ("dateparser_data", "settings.py", "settings", "SKIP_TOKENS"),
        ("dateparser", "languages/dictionary.py", "PARSER_KNOWN_TOKENS", None),
    )
    words: set[str] = set()
    for module, relative, name, key in sources:
        strings = _locale_strings(_source_value(module, relative, name, key))
        if not strings:
            return None
        for text in strings:
            words.update(_WORD.findall(unicodedata.normalize("NFKD", text).lower()))
    return frozenset(words)


def may_name_date_en(text: str) -> bool:
    """Whether dateparser may find a date in ``text``: it holds a digit, a word of
    ``dateparser_vocabulary`` or a word with a letter outside ASCII (NFKD-normalised, as
    dateparser reads it). True when the vocabulary cannot be read. dateparser reads a date
    only from known words and numbers, so a text with none of them is no date and is not
    given to it, which spares a dateless question its import (issue 32)."""
    vocabulary = dateparser_vocabulary()
    if vocabulary is None:
        return True
    normal = unicodedata.normalize("NFKD", text).lower()
    if any(c.isdigit() for c in normal):
        return True
    return any(not word.isascii() or word in vocabulary for word in _WORD.findall(normal))


def _english(query: str, now: datetime) -> list[QueryDate]:
    """Dates of a query in English, by dateparser (``search_dates``, then each phrase's
    period and written parts by ``DateDataParser.get_date_data``); empty, without dateparser,
    when the query cannot name one (``may_name_date_en``)."""
    # "the 1st of Jan. 2000": dateparser ends a date at the abbreviation's dot.
    query = with_days_written(_ABBREVIATION_DOT.sub(r"\1", query))
    if not may_name_date_en(query):
        return []
    # thin client: dateparser takes a few hundred ms to import, and memcli starts at every TAB press
    from dateparser.date import DateDataParser
    from dateparser.search import search_dates

    settings = _dateparser_settings(now)
    try:
        found = search_dates(query, languages=["en"], settings=settings) or []
    except (ValueError, OverflowError):  # a number dateparser takes for an impossible date
        return []
    parser = DateDataParser(languages=["en"], settings=settings)
    out: list[QueryDate] = []
    for text, moment in found:
        phrase = _LEADING.sub("", text.strip())
        if not phrase or not _plausible(phrase, query) or _named_elsewhere(text, query):
            continue
        try:
            data = parser.get_date_data(phrase)
        except (ValueError, OverflowError):  # "9999-99": nothing a memory could be dated by
            continue
        period, parts = (data.period or "day"), tuple(data.parts or ())
        moment = data.date_obj or moment
        if period not in ("day", "week", "month", "year") or not MIN_YEAR <= moment.year <= MAX_YEAR:
            continue
        if period == "month" and parts == ("month",):
            if any(m in phrase.lower() for m in _MONTH_NAMES):  # "in May"; not "the 4th", read as a month
                out.append(QueryDate("month alone", month=moment.month))
            continue
        start, end = _span(period, moment)
        out.append(QueryDate(period, start, end, yearless="year" not in parts and "month" in parts))
    return out


_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


# Chinese ------------------------------------------------------------------------------------

_HAN = re.compile(r"[\u4e00-\u9fff]")
_HAN_RUN = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")
_ZH_MONTH_DAY = re.compile(r"^[0-9一二三四五六七八九十两〇零]+月")
_jionlp: Any = None
_JIO_LOCK = threading.Lock()


_JIO_LOG = logging.getLogger("memcli.dates.jionlp")
"""Where JioNLP's time parser logs: nowhere (see ``_jio``)."""
_JIO_LOG.addHandler(logging.NullHandler())
_JIO_LOG.propagate = False


def _jio() -> Any:
    """JioNLP, imported once, made quiet.

    Its import prints a banner on stdout, which is data here. Its time parser logs a full
    traceback for every phrase it cannot read ("几号", "几点") with the module function
    ``logging.error``, which also installs a handler on the root logger (``basicConfig``):
    a question such as "房租每个月几号交?" then printed tracebacks on stderr, where a script
    reads status. The parser's module name ``logging`` is given a logger that keeps them.
    """
    global _jionlp
    if _jionlp is None:
        with _JIO_LOCK:
            if _jionlp is None:
                with contextlib.redirect_stdout(io.StringIO()):
                    # thin client: JioNLP takes about 2 s to import, and memcli starts at every TAB press
                    import jionlp
                    from jionlp.gadget import time_parser

                time_parser.logging = _JIO_LOG  # it calls only logging.error, which a Logger has
                _jionlp = jionlp
    return _jionlp


_FEASTS_ZH = re.compile(r"除夕夜?|大年夜|(?<!大)年三十|(?P<christmas_eve>平安夜)|(?P<halloween>万圣节(?:前夜)?)")
"""Feasts JioNLP's time parser does not read, by the names it reads: New Year's Eve of the
lunar calendar (除夕, 大年夜, 年三十: 大年三十, the lunar year's last day, which JioNLP finds
when it has 29 days too), Christmas Eve, Halloween."""
_ZH_NAMES_YEAR = re.compile(r"[今去明前后本]年|\d+\s*年|[〇零一二三四五六七八九十]{2,4}年")
"""A year a Chinese date names ("今年春节", "2023年元旦"); not 大年 of 大年初一."""


def _zh_feast(match: re.Match[str]) -> str:
    if match.group("christmas_eve"):
        return "12月24日"
    if match.group("halloween"):
        return "10月31日"
    return "大年三十"


@functools.cache
def _jio_time_chars() -> re.Pattern[str] | None:
    """JioNLP's pattern of the characters a time is written with (``TIME_CHAR_STRING`` of
    ``jionlp/rule/rule_pattern.py``, read as text: JioNLP takes about 1 s to import), or None
    when it cannot be read or compiled."""
    pattern = _source_value("jionlp", "rule/rule_pattern.py", "TIME_CHAR_STRING")
    try:
        return re.compile(pattern) if isinstance(pattern, str) and pattern else None
    except re.error:
        return None


_JIO_SINGLE_CHAR_TIMES = frozenset("春夏秋冬")
"""The characters JioNLP reads as a time alone (its ``single_char_time``)."""


def may_name_date_zh(text: str) -> bool:
    """Whether JioNLP's time extractor may find a time in ``text``: it looks for times only
    in runs of two or more of its time characters (``_jio_time_chars``) and in 春, 夏, 秋, 冬
    alone, so a text with none of them is no date and is not given to it (issue 32). True
    when its pattern cannot be read."""
    pattern = _jio_time_chars()
    if pattern is None:
        return True
    return any(c in _JIO_SINGLE_CHAR_TIMES for c in text) or any(len(m.group()) > 1 for m in pattern.finditer(text))


def _jio_times(text: str, base: datetime) -> list[tuple[str, str, tuple[datetime, datetime]]]:
    """The points and spans of time JioNLP's parser reads in ``text`` against ``base``, as
    (text, type, (start, end)); empty when it reads none or cannot read the text, and
    without JioNLP when the text cannot name one (``may_name_date_zh``)."""
    if not may_name_date_zh(text):
        return []
    try:
        found = _jio().ner.extract_time(text, time_base=base.timestamp(), with_parsing=True)
    except Exception:  # the parser raises many types on text it cannot read; the query has no date for us
        return []
    out = []
    for item in found:
        detail = item.get("detail") or {}
        times = detail.get("time")
        if detail.get("type") not in ("time_point", "time_span") or not isinstance(times, list) or len(times) != 2:
            continue
        try:
            start, end = (datetime.strptime(t, "%Y-%m-%d %H:%M:%S") for t in times)
        except (TypeError, ValueError):  # open-ended spans ("inf")
            continue
        out.append((str(item.get("text", "")), str(detail["type"]), (start, end)))
    return out


def _day_of_the_year(text: str, now: datetime) -> tuple[datetime, datetime, bool] | None:
    """The day a Chinese phrase names that comes back each year without its year being
    named (元旦, 国庆, 春节, 大年初一, 中秋), as JioNLP's calendars place it: the latest one
    not after ``now`` (JioNLP gives the one of now's year, or the lunar year's, even when
    still to come), and whether it falls on the same day of the solar calendar each year
    (元旦 does, 春节 does not). None for any other phrase: one read differently against
    two times of one year ("三号", "上周二") or that names its year ("今年春节")."""
    if _ZH_NAMES_YEAR.search(text) or _ZH_MONTH_DAY.match(text):
        return None
    spring, autumn = (_jio_times(text, datetime(now.year, month, 1, 12)) for month in (3, 9))
    if len(spring) != 1 or [t for *_, t in spring] != [t for *_, t in autumn]:
        return None
    before = _jio_times(text, datetime(now.year - 1, 3, 1, 12))
    start, earlier = spring[0][2][0], [t for *_, t in before]
    if len(earlier) != 1 or earlier[0][0].year != start.year - 1:
        return None
    solar = (earlier[0][0].month, earlier[0][0].day) == (start.month, start.day)
    current = _jio_times(text, now)
    for base in (now, now.replace(year=now.year - 1, day=min(now.day, 28))):
        times = current if base is now else _jio_times(text, base)
        if len(times) == 1 and times[0][2][0] <= now:
            return times[0][2][0], times[0][2][1], solar
    return None


_ZH_NO_DAY = re.compile(
    r"^(?:现在|目前|如今|当前|当下|眼下|最近|近来|近期|这些天|这阵子)+(?:早上?|晚上?|上午|中午|下午|夜里)?$"
)
"""What JioNLP reads as today that names no day: the present ("我现在住哪儿？", "我最近…"),
with a time of day ("我现在晚饭后一般干嘛？", read as 现在晚)."""
_ZH_BARE_WEEKDAY = re.compile(
    r"^(?=.)(?:(?:周|星期|礼拜)[一二三四五六日天1-7]|周末)?(?:早上|早晨|清晨|上午|中午|下午|傍晚|晚上|夜里|半夜|凌晨)?$"
)
_ZH_ONE_OCCASION = re.compile(r"[了过]|那天")
_ZH_HABIT = re.compile(r"每|一般|通常|经常|总是|平时|平常|以后|照常|双周")
"""A weekday without 上/下/这 (周六, 周末) or a time of day alone (晚上) names the day gone,
or today, only in a sentence that tells of one occasion (了, 过, 那天: "周六去爬山了", "晚上去看了
场话剧", "周日那天我在哪？") and of no habit ("朵朵周六上的是什么课？", "我晚上那针胰岛素现在打几个单位？",
"每周六晚上跟老王他们打麻将"): JioNLP reads it as a day in every sentence."""
_NOT_A_DAY_ZH = r"\s*(?:号)?(?:线|楼(?!下|上)|栋|幢|床(?!单)|门(?![诊票口])|单元|车厢|站台|窗口|房间|病房|会议室|教室)"
"""What after 号 makes a number a name ("一号线", "3号楼", "5号床", "2号门"), not a day; whole
words, so that "20号房贷", "15号房租", "3号门诊", "5号口试" keep their day."""
_ZH_COMING = re.compile(r"^(?:就|也)?(?:快|要|马上|即将)")
_ZH_COMING_BEFORE = re.compile(r"(?:快|马上|即将|就要)(?:到)?$")
"""Words beside a feast that make it the coming one ("中秋节快到了", "马上国庆了")."""


def _chinese(query: str, now: datetime) -> list[QueryDate]:
    """Dates of a query in Chinese, by JioNLP's time parser (points and spans; durations
    and periods such as 每周 are not dates). A day that comes back each year (元旦, 国庆,
    春节, 除夕: ``_day_of_the_year``) is the latest one up to ``now``, or JioNLP's of this
    year when the words beside it say it is coming (``_ZH_COMING``); one on a fixed day of
    the solar calendar is yearless, for ``resolve_year`` to place. What JioNLP reads that
    names no day is left out: the present and a time of day alone (``_ZH_NO_DAY``), a
    weekday of a habit (``_ZH_BARE_WEEKDAY``), a number of a thing ("一号线",
    ``_NOT_A_DAY_ZH``)."""
    out: list[QueryDate] = []
    written = _FEASTS_ZH.sub(_zh_feast, query)
    at = 0
    for text, _, (start, end) in _jio_times(written, now):
        found = written.find(text, at)
        at = found + len(text) if found >= 0 else at
        before, after = (written[:found], written[found + len(text) :]) if found >= 0 else ("", "")
        if not (MIN_YEAR <= start.year <= MAX_YEAR and MIN_YEAR <= end.year <= MAX_YEAR):
            continue
        if _ZH_NO_DAY.match(text) or re.match(_NOT_A_DAY_ZH, after) and text.endswith("号"):
            continue
        if _ZH_BARE_WEEKDAY.match(text) and (not _ZH_ONE_OCCASION.search(written) or _ZH_HABIT.search(written)):
            continue
        # 周日 asked on a Thursday: the Sunday gone; 晚上 said at noon: today
        if _ZH_BARE_WEEKDAY.match(text) and datetime(start.year, start.month, start.day) > now:
            start, end = start - timedelta(days=7), end - timedelta(days=7)
        days = (end - start).total_seconds() / DAY_SECONDS
        granularity = "day" if days <= 1 else "week" if days <= 7 else "month" if days <= 31 else "year"
        yearless = bool(_ZH_MONTH_DAY.match(text)) and "年" not in text
        if granularity == "month" and yearless:
            out.append(QueryDate("month alone", month=start.month))
            continue
        yearly = _day_of_the_year(text, now) if granularity == "day" else None
        if yearly is not None and (_ZH_COMING.match(after) or _ZH_COMING_BEFORE.search(before)):
            if start < now:  # 春节快到了 said in March: next year's, which JioNLP reads a year on
                later = _jio_times(text, now.replace(year=now.year + 1, day=min(now.day, 28)))
                start, end = later[0][2] if len(later) == 1 else (start, end)
        elif yearly is not None:
            start, end, yearless = yearly
        first, _ = _span("day", start)
        _, last = _span("day", end)
        out.append(QueryDate(granularity, first, last, yearless=yearless))
    return out


# A day named by its day of the month alone ------------------------------------------------

DAY_OF_MONTH = re.compile(
    rf"\bthe\s+(\d{{1,2}})(?:st|nd|rd|th)\b(?!\s+of\b)(?!{_NOT_A_DAY_AFTER.pattern})"
    rf"|(?<![月\d])(\d{{1,2}})\s?[号日](?!{_NOT_A_DAY_ZH})",
    re.I,
)
"""A day of the month written alone: "the 9th" (not "the 9th of May", read whole by
dateparser; not "the 5th floor", ``_NOT_A_DAY_AFTER``), "9号", "9日" (not "3月9日", read
whole by JioNLP; not "3号楼", ``_NOT_A_DAY_ZH``)."""


def day_of_month(query: str, now: float) -> list[QueryDate]:
    """The day ``query`` names by its day of the month alone ("on the 9th", "9号",
    ``DAY_OF_MONTH``): the latest such day up to ``now`` (unix seconds), as a day
    ``QueryDate``; empty when it names none. dateparser reads "the 9th" as no date, or as
    the month of September, and "the 31st" as a day to come."""
    match = DAY_OF_MONTH.search(query)
    if not match:
        return []
    number = int(match.group(1) or match.group(2))
    moment = datetime.fromtimestamp(now)
    year, month = moment.year, moment.month
    for _ in range(13):
        if 1 <= number <= 31:
            try:
                day = datetime(year, month, number)
            except ValueError:  # the 31st of a shorter month: the month before
                day = None
            if day is not None and day <= moment:
                start, end = _span("day", day)
                return [QueryDate("day", start, end)]
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return []


def query_dates(query: str, now: float) -> list[QueryDate]:
    """The dates ``query`` writes (see the module docstring), relative ones resolved
    against ``now`` (unix seconds). Chinese text goes to JioNLP, other text to dateparser;
    in mixed text ("What did 张伟 say on May 2nd?"), each reads its own part. A day of
    the month written alone ("on the 9th", "9号") that neither reads is the latest such
    day up to ``now`` (``day_of_month``)."""
    moment = datetime.fromtimestamp(now)
    if not _HAN.search(query):
        found = _english(query, moment)
    else:
        found = _chinese(query, moment)
        latin = _HAN_RUN.sub(" ", query)
        if re.search(r"[A-Za-z]{3}", latin):
            found += _english(latin, moment)
    if DAY_OF_MONTH.search(query) and all(d.start > now for d in found):  # "the 31st" read as a day to come
        return day_of_month(query, now)
    return found


def resolve_year(date: QueryDate, created_at: np.ndarray, now: float, after: float) -> QueryDate:
    """``date`` placed in the year of the user's memories nearest before ``now``: the
    latest year, not after now, in which some memory of ``created_at`` (unix seconds)
    falls from a day before the date to ``after`` seconds after it; without one, the
    latest year in which the date is not after now. Dates with a year are returned as
    they are."""
    if not date.yearless:
        return date
    first = datetime.fromtimestamp(date.start)
    length = date.end - date.start
    latest = datetime.fromtimestamp(now).year
    earliest = min(latest - 1, datetime.fromtimestamp(float(created_at.min())).year if len(created_at) else latest)
    fallback = None
    for year in range(latest, min(earliest, latest) - 1, -1):
        try:
            start = first.replace(year=year).timestamp()
        except ValueError:  # 29 February
            continue
        if start > now:
            continue
        fallback = fallback or start
        if np.any((created_at >= start - DAY_SECONDS) & (created_at <= start + length + after)):
            return replace(date, start=start, end=start + length, yearless=False)
    if fallback is None:
        return date
    return replace(date, start=fallback, end=fallback + length, yearless=False)


# Time phrases in memories -------------------------------------------------------------------

_RELATIVE_TIME = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|recently|lately|earlier|"
    r"(last|this|next|past|previous|coming|few|couple of|other)\s+(night|nights|day|days|week|weeks|weekend|weekends|"
    r"month|months|year|years|summer|winter|spring|fall|autumn|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|morning|evening|time)|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|june|july|august|september|october|november|december|\d{4})\b",
    re.I,
)


_RELATIVE_TIME_ZH = re.compile(
    r"昨天|前天|今天|明天|后天|上周|下周|这周|上个?月|下个?月|去年|今年|明年|周末|星期[一二三四五六日天]|礼拜[一二三四五六日天]|"
    r"周[一二三四五六日]|[0-9一二三四五六七八九十]+月|[0-9]{4}年|[0-9一二三四五六七八九十两]+(天|周|个月|年)(前|后|以前|以后)"
)


def says_when(text: str) -> bool:
    """Whether ``text`` places something in time: "yesterday", "last week", "in June",
    "昨天", "上周", "五月", "三天前"..."""
    return bool(_RELATIVE_TIME.search(text) or (not text.isascii() and _RELATIVE_TIME_ZH.search(text)))
