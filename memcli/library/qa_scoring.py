"""LoCoMo's answer metric: token F1 after LoCoMo's answer normalisation, per question category.

Follows ``task_eval/evaluation.py`` of snap-research/locomo (Maharana et al. 2024,
"Evaluating Very Long-Term Conversational Memory of LLM Agents"), functions
``normalize_answer``, ``f1_score``, ``f1`` and ``eval_question_answering``:

- normalisation (``normalize_answer``): commas removed, lower case, punctuation
  (``string.punctuation``) removed, the words a, an, the and *and* removed, whitespace
  collapsed;
- token F1 (``token_f1``): the normalised words of prediction and reference, each reduced
  by NLTK's Porter stemmer (as LoCoMo's ``PorterStemmer()``), compared as multisets;
- category 1, multi-hop (``multi_answer_f1``): prediction and reference are each split at
  commas; each reference part takes its best F1 over the prediction parts, and the score is
  the mean over reference parts;
- categories 2 and 4: token F1; category 3: token F1 against the reference's first part
  before ``;``;
- category 5, adversarial (``abstained``): 1 when the prediction says the conversation
  does not hold the answer (LoCoMo: contains "no information available" or "not
  mentioned"), else 0.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any

LOCOMO_ABSTENTIONS = ("no information available", "not mentioned")
"""What an answer to an adversarial question contains when it is right, in LoCoMo's own
scoring (the answer its prompt offers as choice (a): "Not mentioned in the conversation")."""

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = frozenset(string.punctuation)
_stemmer: Any = None


def normalize_answer(text: str) -> str:
    """``text`` as LoCoMo compares answers: commas removed, lower case, no punctuation, no
    a/an/the/and, single spaces."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _stem(word: str) -> str:
    global _stemmer
    if _stemmer is None:
        # heavy: nltk is slow to import and needed only by eval qa
        from nltk.stem import PorterStemmer

        _stemmer = PorterStemmer()
    return str(_stemmer.stem(word))


def answer_tokens(text: str) -> list[str]:
    """The stemmed words of ``text`` after ``normalize_answer``."""
    return [_stem(word) for word in normalize_answer(text).split()]


def token_f1(prediction: str, reference: str) -> float:
    """LoCoMo's ``f1_score``: F1 (0..1) of the stemmed, normalised words of ``prediction``
    against those of ``reference``, counted as multisets; 0 when none is shared (an empty
    prediction or reference included)."""
    predicted, wanted = answer_tokens(prediction), answer_tokens(reference)
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, reference: str) -> float:
    """LoCoMo's ``f1`` (category 1, multi-hop): both split at commas; the mean over the
    reference's parts of each part's best ``token_f1`` over the prediction's parts."""
    predictions = [p.strip() for p in prediction.split(",")]
    references = [r.strip() for r in reference.split(",")]
    return sum(max(token_f1(p, r) for p in predictions) for r in references) / len(references)


def abstained(prediction: str, abstentions: Sequence[str] = LOCOMO_ABSTENTIONS) -> bool:
    """Whether ``prediction`` says the answer is not there: it contains one of
    ``abstentions`` (lower case), ignoring case."""
    lowered = prediction.lower()
    return any(phrase in lowered for phrase in abstentions)


def score(prediction: str, reference: Any, category: int, abstentions: Sequence[str] = LOCOMO_ABSTENTIONS) -> float:
    """The score (0..1) of ``prediction`` for a LoCoMo question of ``category`` whose
    answer is ``reference`` (any JSON value: LoCoMo has years as numbers), as LoCoMo's
    ``eval_question_answering`` scores it; see the module docstring. ``reference`` is not
    read for category 5.

    Raises ValueError for a category other than 1-5.
    """
    if category == 5:
        return 1.0 if abstained(prediction, abstentions) else 0.0
    wanted = str(reference)
    if category == 3:
        wanted = wanted.split(";")[0].strip()
    if category == 1:
        return multi_answer_f1(prediction, wanted)
    if category in (2, 3, 4):
        return token_f1(prediction, wanted)
    raise ValueError(f"no LoCoMo category {category!r}")
