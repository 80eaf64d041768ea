"""Grounding: checks that a text the chat model wrote for consolidation stays within its
sources (``memcli.consolidation.consolidate``): summaries, portraits and running-memory sentences
against the turns they were written from, facts against their one source turn.

A weak local model must not poison memory: every text it writes is checked against its
sources, and words and names it did not read are rejected (Wang et al. 2023 found
fabricated facts and wrong relations among its memory errors).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memcli.text.stopwords import stopwords

_STEM = 5
"""Words are compared by their first five letters, a crude stemmer that lets "painting"
meet "paints" and "painted"."""


def _stem(word: str) -> str:
    return word[:_STEM]


FIRST_AND_SECOND_PERSON = frozenset(
    {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "you", "your", "yours"}
)
_SPEAKER_LABEL = re.compile(r"(?m)^[\s\[(*\"]*[\w .'-]{1,40}[\])*\"]*:(\s|$)")
MIN_STATEMENT_WORDS = 2


def statement_problem(text: str) -> str | None:
    """Why ``text`` is not a third-person statement (what summaries, portraits and facts
    must be), or None. A weak model often copies a transcript line ("Ana: I went ...") or
    a question instead of summarising."""
    if _SPEAKER_LABEL.search(text):
        return "it is a transcript line, not a statement"
    if len(re.findall(r"\w+", text)) < MIN_STATEMENT_WORDS:
        return f"it has fewer than {MIN_STATEMENT_WORDS} words, not a statement"
    if "?" in text:
        return "it is a question, not a statement"
    if FIRST_AND_SECOND_PERSON.intersection(re.findall(r"\w+", text.lower())):
        return "it is not written in the third person"
    return None


class Grounding:
    """Checks that a text the model wrote stays within ``source`` (the text it was given).

    A candidate is grounded when at least ``min_overlap`` of its content words (stop words
    removed, compared by stem) occur in the source, and every capitalised word (a name)
    and every number in it occurs there too: invented names, places and numbers are the
    fabrications a weak model makes most (Wang et al. 2023 found fabricated facts and
    wrong relations among its memory errors).
    """

    def __init__(self, source: str) -> None:
        self._stopwords = stopwords("STOPWORDS_EN_PLUS")
        words = re.findall(r"\w+", source.lower())
        self._words = set(words)
        self._stems = {_stem(w) for w in words}

    def content_words(self, text: str) -> list[str]:
        """The words of ``text`` that carry content: lower-cased, stop words removed."""
        return [w for w in re.findall(r"\w+", text.lower()) if w not in self._stopwords and len(w) > 1]

    def overlap(self, text: str) -> float:
        """The fraction (0..1) of ``text``'s content words found in the source; 1 when it has none."""
        words = self.content_words(text)
        if not words:
            return 1.0
        return sum(_stem(w) in self._stems for w in words) / len(words)

    def names(self, text: str) -> list[str]:
        """The capitalised words of ``text`` that are not stop words (names, places, months)."""
        return [w for w in re.findall(r"\b[A-Z]\w*", text) if w.lower() not in self._stopwords]

    def problem(self, text: str, min_overlap: float) -> str | None:
        """Why ``text`` is not grounded in the source, or None when it is: every name and
        number must occur in the source, and ``min_overlap`` of its content words."""
        for word in [*self.names(text), *re.findall(r"\b\w*\d\w*", text)]:
            lower = word.lower()
            if lower not in self._words and (any(ch.isdigit() for ch in word) or _stem(lower) not in self._stems):
                return f"{word!r} is not in its source"
        share = self.overlap(text)
        if share < min_overlap:
            return f"only {share:.0%} of its words are in its source"
        return None

    def names_someone(self, text: str) -> bool:
        """Whether ``text`` names someone (a capitalised word) that the source names too."""
        return any(w.lower() in self._words for w in self.names(text))


_GREETING = re.compile(r"\b(?:hey|hi|hello|thanks|thank you|bye|congrats|congratulations|dear|oh|wow|yes|no)\W*$", re.I)


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` speaks *of* ``name`` rather than only *to* them: a name right after a
    greeting or right before a comma, ``!`` or ``?`` ("Hey Ana!", "Thanks, Ana,") is the
    person addressed, and a fact about the addressee is not what the speaker said."""
    for match in re.finditer(rf"\b{re.escape(name)}\b", text, re.I):
        after = text[match.end() : match.end() + 1]
        before = text[: match.start()].rstrip()
        if after in (",", "!", "?") or before.endswith(",") or _GREETING.search(before):
            continue
        return True
    return False


@dataclass
class SourceTurn:
    """A turn that a fact may be grounded in: its speaker and its grounding."""

    speaker: str
    text: str
    grounding: Grounding


def fact_problem(fact: str, sources: Sequence[SourceTurn], min_overlap: float) -> str | None:
    """Why ``fact`` cannot be stored, or None.

    A fact is a third-person statement grounded in one single source turn (Grounding), and
    its subject (the first name in it) is that turn's speaker or someone the turn speaks of.
    A fact pieced together from two turns, or pinned on the person addressed, is how a weak
    model invents the wrong relations Wang et al. (2023) count among memory errors.
    """
    problem = statement_problem(fact)
    if problem:
        return problem
    problems = []
    for source in sources:
        subject = next((n for n in source.grounding.names(fact) if source.grounding.names_someone(n)), None)
        if subject is None:
            problems.append("it names nobody of its source")
        elif subject.lower() != source.speaker.lower() and not mentions(source.text, subject):
            problems.append(f"its subject {subject} is not who says or is spoken of in its source")
        else:
            problems.append(source.grounding.problem(fact, min_overlap))
            if problems[-1] is None:
                return None
    return problems[0] if problems else "it has no source"
