"""Dates that recall queries write, the way people write them, in English and Chinese.

"On May 2nd", "the 3rd of May", "5/1", "in May 2023", "2023", "yesterday", "last Tuesday",
"two weeks ago", "last week"; "5月2日", "五月三号", "上周二", "前天", "三天前", "上周", "去年".
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
English data); JioNLP about 0.2 ms (1.1 s to import, once, on the first Chinese query).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
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
_MAY_AS_MONTH = re.compile(r"\b(in|of|during|since|until|by|early|late|mid)\s+may\b", re.I)
_ABBREVIATION_DOT = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)\.", re.I)


def _dateparser_settings(now: datetime) -> dict[str, Any]:
    return {"RELATIVE_BASE": now, "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False}


def _plausible(phrase: str, query: str) -> bool:
    """Whether a phrase dateparser found reads as a date in the query: it holds a digit or
    a word of four letters or more ("we", "now", "sat" and the verb "may" are not dates),
    or it is the month May after in/of/during... ("in May")."""
    if any(c.isdigit() for c in phrase) or any(len(w) >= 4 for w in re.findall(r"[a-z]+", phrase.lower())):
        return phrase.lower() not in {"now", "till date"}
    return phrase.lower() == "may" and bool(_MAY_AS_MONTH.search(query))


def _english(query: str, now: datetime) -> list[QueryDate]:
    """Dates of a query in English, by dateparser (``search_dates``, then each phrase's
    period and written parts by ``DateDataParser.get_date_data``)."""
    # thin client: dateparser takes a few hundred ms to import, and memcli starts at every TAB press
    from dateparser.date import DateDataParser
    from dateparser.search import search_dates

    settings = _dateparser_settings(now)
    # "the 1st of Jan. 2000": dateparser ends a date at the abbreviation's dot.
    query = _ABBREVIATION_DOT.sub(r"\1", query)
    try:
        found = search_dates(query, languages=["en"], settings=settings) or []
    except (ValueError, OverflowError):  # a number dateparser takes for an impossible date
        return []
    parser = DateDataParser(languages=["en"], settings=settings)
    out: list[QueryDate] = []
    for text, moment in found:
        phrase = _LEADING.sub("", text.strip())
        if not phrase or not _plausible(phrase, query):
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
_ZH_WEEKDAY = re.compile(r"^(周|星期|礼拜)[一二三四五六日天1-7]$")
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


def _chinese(query: str, now: datetime) -> list[QueryDate]:
    """Dates of a query in Chinese, by JioNLP's time parser (points and spans; durations
    and periods such as 每周 are not dates)."""
    try:
        found = _jio().ner.extract_time(query, time_base=now.timestamp(), with_parsing=True)
    except Exception:  # the parser raises many types on text it cannot read; the query has no date for us
        return []
    out: list[QueryDate] = []
    for item in found:
        detail = item.get("detail") or {}
        times = detail.get("time")
        if detail.get("type") not in ("time_point", "time_span") or not isinstance(times, list) or len(times) != 2:
            continue
        try:
            start, end = (datetime.strptime(t, "%Y-%m-%d %H:%M:%S") for t in times)
        except (TypeError, ValueError):  # open-ended spans ("inf")
            continue
        text = str(item.get("text", ""))
        if not (MIN_YEAR <= start.year <= MAX_YEAR and MIN_YEAR <= end.year <= MAX_YEAR):
            continue
        if _ZH_WEEKDAY.match(text) and start > now:  # 周日 asked on a Thursday: the Sunday gone
            start, end = start - timedelta(days=7), end - timedelta(days=7)
        days = (end - start).total_seconds() / DAY_SECONDS
        granularity = "day" if days <= 1 else "week" if days <= 7 else "month" if days <= 31 else "year"
        yearless = bool(_ZH_MONTH_DAY.match(text)) and "年" not in text
        if granularity == "month" and yearless:
            out.append(QueryDate("month alone", month=start.month))
            continue
        first, _ = _span("day", start)
        _, last = _span("day", end)
        out.append(QueryDate(granularity, first, last, yearless=yearless))
    return out


# A day named by its day of the month alone ------------------------------------------------

DAY_OF_MONTH = re.compile(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of|time|century))|(?<![月\d])(\d{1,2})\s?[号日]")
"""A day of the month written alone: "the 9th" (not "the 9th of May", read whole by
dateparser), "9号", "9日" (not "3月9日", read whole by JioNLP)."""


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
