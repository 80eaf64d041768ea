"""Extractive consolidation: summaries chosen from what was said, grounded by construction.

No generative model writes here: every sentence kept is a sentence someone said, with its
speaker named. This is what a nightly ``memcli consolidate`` can afford on the embedded
270M base model, which cannot write summaries (issue 13).

- Sentences: each turn is split into sentences by pySBD (Sadvilkar & Neumann 2020, rule
  based, English and Chinese); fragments without content ("Wow!", "Haha.") are left out.
- Centrality: LexRank (Erkan & Radev 2004, continuous form): a graph over the sentences
  whose edges weigh the cosine similarity of their embeddings (those below
  ``LEXRANK_THRESHOLD`` dropped), ranked by PageRank (networkx, damping 0.85).
- Selection: maximal marginal relevance (Carbonell & Goldstein 1998): the next sentence is
  the one of highest ``λ · centrality − (1 − λ) · similarity to those chosen``; a sentence
  at least ``REDUNDANT`` similar to one chosen is never chosen.
- Order: the chosen sentences are given back in the order they were said.

``summarize`` makes a day's event summary; ``fold`` a running memory (Wang et al. 2023's
``M_i = f(S_i, M_{i-1})``, its sentences competing with the new session's, at most 20).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memcli.memory import ASSISTANT, BASE_MODEL
from memcli.text.chunking import LONGEST_READ, chunks

Embed = Callable[[list[str]], list[list[float]]]
"""Texts -> unit vectors (``Embedder.embed``)."""

LEXRANK_THRESHOLD = 0.1
SUMMARY_READ = LONGEST_READ
"""Characters of one memory an extractive summary reads at most (``chunking.LONGEST_READ``,
as the graph step)."""
SPLIT_PIECE = 2000
"""Characters past which a text is cut into pieces (at sentence boundaries) before pySBD
splits them, so that splitting a long memory costs time in proportion to its length."""
"""Cosine similarity below which two sentences are not linked (Erkan & Radev use 0.1)."""
DAMPING = 0.85
"""PageRank's damping factor."""
DIVERSITY = 0.3
"""1 − λ of MMR: how much a sentence's similarity to those chosen counts against it."""
REDUNDANT = 0.85
"""Cosine similarity from which a sentence repeats one already chosen."""
MIN_WORDS = 5
"""Sentences shorter than this (in words, or CJK characters / 2) carry no event ("Good to
see you!", "That's really sweet.")."""
RUNNING_LIMIT = 20
"""Sentences a running memory keeps (Wang et al. 2023)."""
ASSISTANT_WEIGHT = 0.5
"""Salience of an assistant's sentence relative to a person's: the day and the running
memory are about what happened to the people; an assistant's long, central advice would
otherwise fill a MemoryBank day's summary (Gary's 2023-04-28: three lines, all advice)."""

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W_]+")
_SEGMENTERS: dict[str, Any] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Sentence:
    """One sentence of a turn: its ``text``, who said it (``speaker``, "" for none), the
    turn's id (``source``) and time (``at``, unix seconds), and its place in the turn."""

    text: str
    speaker: str
    source: str
    at: float
    position: int = 0

    def line(self) -> str:
        """``speaker: text``, as a summary shows it (``parse_line`` reads it back)."""
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


_SPEAKER_LINE = re.compile(r"^([^:\n]{1,40}): (.*)$")


def parse_line(line: str) -> tuple[str, str]:
    """The (speaker, sentence) of a line of an extractive summary or running memory as
    ``Sentence.line`` writes it ("Ana: I adopted Rex." -> ("Ana", "I adopted Rex.")), or
    ("", line) for a line that names no speaker."""
    match = _SPEAKER_LINE.match(line)
    return (match.group(1), match.group(2)) if match else ("", line)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (pySBD, Chinese rules when the text is mostly CJK),
    stripped, empty ones dropped."""
    return list(_split(text))


@functools.lru_cache(maxsize=8192)
def _split(text: str) -> tuple[str, ...]:
    """``split_sentences``, remembered: consolidation reads each turn in several stages,
    and pySBD's rules cost about a millisecond a turn."""
    language = "zh" if len(_CJK.findall(text)) * 2 > len(text) else "en"
    segmenter = _SEGMENTERS.get(language)
    if segmenter is None:
        with _LOCK:
            # heavy: needed only to split sentences
            import pysbd

            segmenter = _SEGMENTERS[language] = pysbd.Segmenter(language=language, clean=False)
    # pySBD's cost grows faster than the text: a long text is cut at sentence boundaries
    # into pieces of about a chunk first (memcli.text.chunking), so splitting stays linear.
    pieces = chunks(text, SPLIT_PIECE) if len(text) > SPLIT_PIECE else (text,)
    return tuple(s.strip() for piece in pieces for s in segmenter.segment(piece) if s.strip())


def size(text: str) -> float:
    """How long ``text`` is in words: Latin words, plus CJK characters / 2."""
    cjk = len(_CJK.findall(text))
    return len(_WORD.findall(_CJK.sub(" ", text))) + cjk / 2


def by_base_model(turn: Any) -> bool:
    """Whether ``turn`` (a memory) is a reply a base model wrote (tagged ``base-model``):
    kept as context, never the source of a fact, a portrait or a summary line."""
    return BASE_MODEL in getattr(turn, "tags", ())


def sentences_of(turns: Sequence[Any], min_words: int = MIN_WORDS) -> list[Sentence]:
    """The sentences of ``turns`` (memories: ``text``, ``speaker``, ``id``, ``created_at``),
    in the order said, without questions (they ask, they do not tell what happened), those
    shorter than ``min_words``, and none of a base model's reply (``by_base_model``); of a
    memory longer than ``SUMMARY_READ`` characters, the sentences of its start."""
    out: list[Sentence] = []
    for turn in turns:
        if by_base_model(turn):
            continue
        # no further than SUMMARY_READ of one memory, so that no one memory holds the
        # consolidation for long (every sentence read is embedded)
        for i, text in enumerate(split_sentences(turn.text[:SUMMARY_READ])):
            if size(text) >= min_words and not text.rstrip().endswith(("?", "？")):
                out.append(Sentence(text, turn.speaker, turn.id, turn.created_at, i))
    return out


def centrality(vectors: np.ndarray, threshold: float = LEXRANK_THRESHOLD) -> np.ndarray:
    """LexRank score of each row of ``vectors`` (unit vectors, n x d): PageRank over the
    graph of cosine similarities ≥ ``threshold``; sums to 1. A sentence linked to none
    keeps the teleport share."""
    n = len(vectors)
    if n == 0:
        return np.zeros(0)
    if n == 1:
        return np.ones(1)
    vectors = np.asarray(vectors, dtype=np.float32)
    similarity = np.clip(vectors @ vectors.T, 0.0, 1.0)
    np.fill_diagonal(similarity, 0.0)
    similarity[similarity < threshold] = 0.0
    # PageRank by power iteration on the matrix itself, as networkx's pagerank computes it
    # (uniform teleport, a sentence linked to none spreads its share evenly, stop when the
    # L1 change is below n x 1e-6, at most 100 steps): building a networkx graph of the
    # same matrix cost time and memory in proportion to n² Python objects.
    out_weight = similarity.sum(axis=1)
    dangling = out_weight == 0
    transition = similarity / np.where(dangling, 1.0, out_weight)[:, None]
    rank = np.full(n, 1.0 / n)
    for _ in range(100):
        previous = rank
        rank = DAMPING * (previous @ transition + previous[dangling].sum() / n) + (1 - DAMPING) / n
        if np.abs(rank - previous).sum() < n * 1e-6:
            break
    return rank / rank.sum()


def select(
    scores: np.ndarray, vectors: np.ndarray, k: int, diversity: float = DIVERSITY, redundant: float = REDUNDANT
) -> list[int]:
    """Up to ``k`` rows by maximal marginal relevance over ``scores`` (scaled to 0..1),
    never one at least ``redundant`` similar to a row already chosen; in the order chosen."""
    n = len(scores)
    if n == 0 or k <= 0:
        return []
    high, low = float(scores.max()), float(scores.min())
    relevance = np.ones(n) if high == low else (scores - low) / (high - low)
    chosen: list[int] = []
    closest = np.zeros(n)  # similarity of each row to the nearest chosen one
    available = np.ones(n, dtype=bool)
    while len(chosen) < k and available.any():
        value = (1 - diversity) * relevance - diversity * closest
        value[~available] = -np.inf
        best = int(np.argmax(value))
        chosen.append(best)
        available[best] = False
        closest = np.maximum(closest, vectors @ vectors[best])
        available &= closest < redundant
    return chosen


def summary_length(n: int) -> int:
    """How many sentences a day of ``n`` sentences keeps: about one in eight, 3 to 10."""
    return max(3, min(10, round(n / 8)))


def salience(pool: Sequence[Sentence], vectors: np.ndarray) -> np.ndarray:
    """What selection ranks by: LexRank centrality times the square root of the sentence's
    length in words, so that a sentence that tells something ("I went to an LGBTQ support
    group yesterday") outranks the short pleasantries every conversation repeats, which
    LexRank alone finds central. An assistant's sentence weighs ``ASSISTANT_WEIGHT``."""
    weights = np.array([ASSISTANT_WEIGHT if s.speaker == ASSISTANT else 1.0 for s in pool])
    return centrality(vectors) * np.sqrt([size(s.text) for s in pool]) * weights


def summarize(turns: Sequence[Any], embed: Embed, limit: int | None = None) -> list[Sentence]:
    """A day's (or any span's) extractive event summary: its most salient, non-redundant
    sentences (``salience``, then MMR), ``limit`` of them (``summary_length`` when None),
    in the order they were said. Empty when the turns hold no sentence of substance."""
    pool = sentences_of(turns)
    if not pool:
        return []
    vectors = np.asarray(embed([s.text for s in pool]), dtype=np.float32)
    chosen = select(salience(pool, vectors), vectors, summary_length(len(pool)) if limit is None else limit)
    return [pool[i] for i in sorted(chosen, key=lambda i: (pool[i].at, pool[i].position))]


def fold(
    previous: Sequence[Sentence], turns: Sequence[Any], embed: Embed, limit: int = RUNNING_LIMIT
) -> list[Sentence]:
    """The running memory after a session (Wang et al. 2023, ``M_i = f(S_i, M_{i-1})``):
    the previous memory's sentences and the session's compete on centrality over both
    (``salience``, then MMR), at most ``limit`` kept, in the order they were said. A session
    that repeats the memory adds nothing; one with new events pushes the least central
    sentences out."""
    pool = list(previous) + [s for s in sentences_of(turns) if s not in previous]
    if not pool:
        return []
    vectors = np.asarray(embed([s.text for s in pool]), dtype=np.float32)
    chosen = select(salience(pool, vectors), vectors, limit)
    return [pool[i] for i in sorted(chosen, key=lambda i: (pool[i].at, pool[i].source, pool[i].position))]


# Facts and portraits: what people say of themselves ------------------------------------------

FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine)\b|我", re.I)
"""A word of the first person singular, English or Chinese: a sentence, or a question, about oneself."""
_SECOND_PERSON = re.compile(r"\b(you|your|yours|you're|you've|u)\b|你|您", re.I)
_PLURAL = re.compile(r"\b(we|we're|we've|our|ours|us|ourselves|myself)\b|我们|咱们", re.I)
_SMALL_TALK = re.compile(
    r"^\W*(hi|hey|hello|thanks|thank you|bye|goodbye|good (morning|night|evening)|wow|haha|lol|ok|okay|yeah|yes|no|sure|"
    r"cool|awesome|great|nice|congrats|congratulations|sounds|glad|sorry|welcome)\b|^(你好|谢谢|再见|哈哈|好的|嗯)",
    re.I,
)
_SELF_DESCRIPTION = re.compile(
    r"\b(i|i'm|i've)\s+(\w+\s+)?(love|loved|like|liked|enjoy|enjoyed|hate|prefer|am|'m|feel|felt|want|wanted|plan|planned|"
    r"hope|dream|dreamed|believe|care|adore|miss|started|have been|'ve been|been)\b|\bmy (favorite|favourite|passion|dream|goal|hobby|hobbies)\b|"
    r"我(很|最|特别|非常|一直|也|还|真的)?(喜欢|爱|讨厌|想|希望|打算|觉得|感到|是|梦想)",
    re.I,
)
_LEANS_ON_CONTEXT = re.compile(
    r"^\W*(?:(?:and|but|so|also|plus|oh|well|yeah|yes)\W+)*"
    r"(?:it|it's|its|that's|they|they're|he|he's|she|she's|there's|here's|which|wish|same"
    r"|(?:this|that|these|those|there|here)(?!\s+(?:in|at|on|is|was|are|were\b)?\s*(?:weekend|summer|winter|spring|fall|autumn|morning|"
    r"evening|afternoon|night|week|month|year|day|days|time|trip|past|coming|last|next|in\b|at\b|on\b)))\b"
    r"|\b(?:the same way|same here|me too|as well as you)\b"
    r"|^(?:它|他|她|他们|她们|(?:这|那)(?!个|些|天|周|次|时|段|年|月|学期|阵子))",
    re.I,
)
"""A sentence that starts with a pronoun or a "that" ("It made me even more determined",
"That's why I love it", "They give me strength"), or echoes the listener ("I feel the same
way"), means something only beside the turn before it: not a fact on its own. "This",
"that", "these", "there", "here", 这 and 那 before a time or place ("This weekend I …",
"Here in Boston …", "这个周末我…") are determiners, not pronouns."""
_MODALS = {
    "can",
    "could",
    "will",
    "would",
    "should",
    "might",
    "must",
    "may",
    "did",
    "didn't",
    "can't",
    "won't",
    "couldn't",
    "wouldn't",
    "shouldn't",
}
_ADVERBS = r"(?:really|also|always|just|still|never|often|usually|sometimes|even|actually|finally|recently|only|truly|totally|definitely)"
_IRREGULAR_PAST = {
    "went",
    "saw",
    "got",
    "had",
    "made",
    "took",
    "did",
    "was",
    "felt",
    "found",
    "bought",
    "thought",
    "met",
    "ran",
    "came",
    "left",
    "said",
    "told",
    "gave",
    "began",
    "became",
    "wrote",
    "read",
    "kept",
    "lost",
    "won",
    "spent",
    "sent",
    "built",
    "taught",
    "heard",
    "knew",
    "grew",
    "drew",
    "swam",
    "sang",
    "ate",
    "drank",
    "flew",
    "rode",
    "drove",
    "brought",
    "caught",
    "fell",
    "held",
    "paid",
    "put",
    "set",
    "sold",
    "sat",
    "stood",
    "understood",
    "chose",
    "forgot",
    "hit",
    "hurt",
    "let",
    "quit",
    "shut",
    "cut",
}
_VERB_FORM = {
    "am": "is",
    "'m": "is",
    "have": "has",
    "'ve": "has",
    "do": "does",
    "don't": "doesn't",
    "'ll": "will",
    "'d": "would",
    "was": "was",
    "go": "goes",
    "haven't": "hasn't",
    "wanna": "wants to",
    "gonna": "is going to",
    "gotta": "has got to",
}


def _third_person_verb(word: str) -> str:
    """The third-person singular present of an English verb ``word`` in its base form
    (love -> loves, watch -> watches, study -> studies); past forms and modals unchanged."""
    lower = word.lower()
    if lower in _VERB_FORM:
        return _VERB_FORM[lower]
    if lower in _MODALS or lower in _IRREGULAR_PAST or lower.endswith("ed") or not lower.isalpha():
        return word
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return word + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


UNNAMED = "the user"
"""What facts and portraits call the user whose name memcli does not know ("The user's
sister Ana …"); in Chinese, ``UNNAMED_ZH``."""
UNNAMED_ZH = "用户"

_I_VERB = re.compile(rf"\bI(?:'(m|ve|ll|d)\b|\s+((?:{_ADVERBS}\s+)*)([A-Za-z']+))", re.I)


def third_person(sentence: str, name: str) -> str | None:
    """``sentence``, said by ``name`` of themselves in the first person, rewritten in the
    third person by rule ("I love hiking with my dog" -> "Ana loves hiking with Ana's dog";
    "我喜欢绘画" -> "张曼婷喜欢绘画"); None when no rule applies safely (it speaks of "we",
    "myself", or another person's "you")."""
    if _PLURAL.search(sentence) or _SECOND_PERSON.search(sentence):
        return None
    if _CJK.search(sentence):
        name = UNNAMED_ZH if name == UNNAMED else name
        return re.sub("我的", f"{name}的", sentence).replace("我", name)

    def subject(match: re.Match[str]) -> str:
        short, adverbs, verb = match.group(1), match.group(2), match.group(3)
        if short is not None:
            return f"{name} {_VERB_FORM[chr(39) + short.lower()]}"
        return f"{name} {adverbs}{_third_person_verb(verb)}"

    out = _I_VERB.sub(subject, sentence)
    out = re.sub(r"\bmy\b", f"{name}'s", out, flags=re.I)
    out = re.sub(r"\b(me|mine)\b", name, out, flags=re.I)
    if re.search(r"\bI\b", out):
        return None
    return out[0].upper() + out[1:]


_REQUEST = re.compile(
    r"^\W*(?:(?:ok|okay|so|and|now|hey|hi|hello)\W+)*(?:please|kindly|let's|let me|let us|tell|give|write|show|help|remind|recommend|"
    r"suggest|explain|describe|list|find|teach|summari[sz]e|translate|compose|draft|imagine|pretend|say|sing|repeat|book|send|"
    r"look up|search|check|make me|make a|create|name (?:a|some|three|two|five)|(?:can|could|would|will|won't) you|do you|did you)\b"
    r"|^\W*(?:你|您)?(?:请|帮我|帮忙|告诉我|给我|麻烦|能不能|能否|可不可以|可以帮|讲个|讲一个|说说|推荐|(?:记得)?提醒我)",
    re.I,
)
"""A request to the assistant ("Tell me a long story about it.", "Please remind me to call
Ana", "请帮我…", "告诉我…"): an imperative or a polite question, not something its speaker
tells of themselves."""
_QUESTION = re.compile(
    r"^\W*(?:what|when|where|who|whom|whose|why|how|which)(?:'s|\s+(?:do|does|did|am|is|are|was|were|can|could|would|will|"
    r"should|shall|have|has|had|may|might)\b)"
    r"|^\W*(?:do|does|did|am|is|are|was|were|can|could|would|will|shall|should|have|has|may|might|must)\s+(?:i|you|we|he|she|it|"
    r"they|my|your|there|this|that|the)\b"
    r"|[吗呢么][\s。.!！~～]*$"
    r"|(?:多少|哪儿|哪里|哪|什么|几点|几号|谁)了?[\s。.!！~～]*$",
    re.I,
)
"""A question, with or without its question mark ("When am I flying to Tokyo", "Do you
remember my sister's birthday", "我的狗叫什么名字呢", "你记得吗", a Chinese sentence that ends
on its question word: "房东电话是多少", "我的车停在哪了"). A sentence that only ends on a
question mark is read by ``_asks_by_its_mark``."""
_QUESTION_MARK = re.compile(r"[?？][?？!！\s]*$")
_SURPRISE_MARK = re.compile(r"(?:[?？][!！]|[!！][?？])[?？!！\s]*$")
"""'?!' or '!?': surprise at what the sentence tells ("got the job?!", "终于搬家了？！"), not a question."""
_ASKING_INSIDE = re.compile(
    r"\b(?:what|when|where|who|whom|whose|why|how|which|whether|if)\b"
    r"|\b(?:do|does|did|am|is|are|was|were|can|could|would|will|shall|should|have|has|may|might|must)(?:n't)?\s+(?:i|we)\b"
    r"|(?:^|[,;:\u2013\u2014-]\s*)(?:or\s+)?(?:wanna|want\s+to|want\s+me\s+to|fancy|care\s+to|how\s+about|what\s+about)\b",
    re.I,
)
"""An English question inside a sentence that does not start as one ("ok so where do I go?",
"so should I quit?", "I wonder if it's worth it?"), or one to the reader without its "do you"
("I finished the vase - want to see a pic?", "we could go out, or wanna stay in?")."""
_NOT_KNOWING = re.compile(
    r"\b(?:can't|cannot|can\s+not|couldn't|don't|do\s+not|didn't|never)\s+(?:\w+\s+)?(?:remember|recall|know|tell)\b"
    r"|\b(?:forget|forgot|forgotten|dunno|unsure|not\s+(?:\w+\s+)?sure|no\s+idea|no\s+clue)\b"
    r"|忘了|忘记|不记得|记不得|记不住|记不清|想不起|不知道|不确定|不清楚|说不准|拿不准",
    re.I,
)
"""A sentence about not knowing what it names ("I can't remember my locker number?", "I
forget when the MOT is due?", "not sure Sam's flat is 4B?", "我忘了储物柜是几号？",
"不记得密码了？"): with a question mark it asks, and is never evidence of the value."""
_SOFTENER = re.compile(
    r"\bI\s+(?:guess|think|suppose|reckon|believe)\b|\b(?:pretty|fairly|quite)\s+sure\b|\b(?:lol|lmao|haha+|hehe+|kinda|sorta)\b"
    r"|算是|这算|也算|总算|算得上|应该|大概|估计|我猜|我觉得|好像|哈哈|呵呵|嘿嘿|终于",
    re.I,
)
"""A hedge on what a statement tells ("we're official now I guess?", "I think we're a thing
now?", "pretty sure I left it at the office?", "it's a date lol?", "我们这算正式在一起了吧？",
"我应该算是升职了？"): the statement ending on it in a question mark tells, with a doubt of
manner, not of fact. Without one, a statement ending on a single question mark ("I moved to
Denver?", "我搬到丹佛了？", "…了吧？") is a doubt: it asks."""
_ASKING_ZH = re.compile(
    r"[吗呢么嘛]|什么|哪|谁|几|多少|怎|为什么|为啥|啥|咋|如何|是否|还是|难道|(.)[不没]\1|(?:没有?|不)[\s?？!！]*$"
)
"""What makes a Chinese sentence a question: a question particle, a question word, an
alternative (还是), or the A-not-A form ("是不是", "要不要", "有没有", "该不该", "结婚了没有？")."""


def _asks_by_its_mark(sentence: str) -> bool:
    """Whether ``sentence``, which ends on a question mark, asks. It does when it has a
    question in its words (Chinese ``_ASKING_ZH``; English ``_ASKING_INSIDE``), speaks to
    someone ("you", 你) or says its writer does not know (``_NOT_KNOWING``: "I can't remember
    my locker number?", "我忘了储物柜是几号？"). Otherwise it tells only when the mark is
    surprise ("?!", ``_SURPRISE_MARK``: "moved into the new flat today, finally?!") or the
    statement carries a hedge (``_SOFTENER``: "we're official now I guess?", "我们算在一起了
    吧？"); a bare statement in doubt ("I moved to Denver?", "我搬到丹佛了吧？") asks."""
    if not _QUESTION_MARK.search(sentence):
        return False
    if _SECOND_PERSON.search(sentence) or _NOT_KNOWING.search(sentence):
        return True
    if _ASKING_ZH.search(sentence) if _CJK.search(sentence) else _ASKING_INSIDE.search(sentence):
        return True
    return not (_SURPRISE_MARK.search(sentence) or _SOFTENER.search(sentence))


_KEEP = re.compile(
    r"^\W*(?:(?:ok|okay|hey|hi)\W+)?(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:(?:help\s+me\s+)?remember|note(?:\s+down)?|"
    r"make\s+a\s+note|write\s+down|jot\s+down|record(?=\s+that\b)|keep\s+in\s+mind|don't\s+forget)(?:\s+(?:that|this|for\s+me))?[\s:,-]+"
    r"|^\W*(?:你|您)?(?:请)?(?:帮我|给我|替我)?(?:记一下|记下来|记下|记住|记着|记录一下|记录|备忘)(?:一下)?[：:，,\s]*",
    re.I,
)
"""A request to keep something ("remember that my locker is 112", "note: car on level 3",
"帮我记一下车停在B2"): what follows it is a note, not a request."""


def is_request_or_question(sentence: str) -> bool:
    """Whether ``sentence`` asks (a question) or requests (an imperative, "please", "can
    you", 请, 帮我, 告诉我): never a fact, whatever person it is in. A request to remember
    or note something ("帮我记一下车停在B2", "remember that the code is 4412") carries its
    content as a statement: it asks only when that content does ("remember what my PIN
    is?"). A question mark alone does not make a question of a hedged or surprised statement
    (``_asks_by_its_mark``): "moved into my new place today?!" and "we're a couple now I
    guess?" tell; "I moved to Denver?" and "I can't remember my locker number?" ask.

    Given a text of several sentences, the mark is read with the last sentence, the one it
    ends (split_sentences): "Moved to Leeds. Sam's new number?" asks, as a text that starts
    with a question or a request does ("what's my blood type? I never remember")."""
    keep = _KEEP.match(sentence)
    if keep and sentence[keep.end() :].strip():
        sentence = sentence[keep.end() :]
    sentence = sentence.strip()
    if _REQUEST.search(sentence) or _QUESTION.search(sentence):
        return True
    last = split_sentences(sentence)[-1:] if _INNER_END.search(sentence) else [sentence]
    return bool(last) and _asks_by_its_mark(last[0])


_INNER_END = re.compile(r"[.!?。！？;；…]\s*\S")
"""A mark that may end a sentence before the text ends: only such a text is split."""


_NAME_STATEMENT = re.compile(
    r"\b(?i:my name is|my name's|call me|i am called|i'm called)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)"
    r"|我(?:的名字)?(?:叫|是)\s*([\u4e00-\u9fff]{2,4}?)(?=[，,。.!！\s]|$)",
)


def stated_name(sentence: str) -> str | None:
    """The name ``sentence`` gives its speaker ("Hi, my name is Sam." -> "Sam", "call me
    Ana", "我叫张伟。" -> "张伟"), or None. "我是…" counts only as a whole clause of two to
    four characters."""
    match = _NAME_STATEMENT.search(sentence)
    if match is None:
        return None
    if match.group(1):
        return match.group(1)
    return match.group(2) if "叫" in match.group(0) or "名字" in match.group(0) else None


def is_statement_about_oneself(sentence: str) -> bool:
    """Whether ``sentence`` is a declarative statement its speaker makes about themselves:
    in the first person, not about the one addressed ("I'm so happy for you"), not a
    question or a request (``is_request_or_question``), not small talk, of five words or
    more, and one that stands on its own (not leaning on what was said before:
    ``_LEANS_ON_CONTEXT``)."""
    return (
        size(sentence) >= MIN_WORDS
        and not is_request_or_question(sentence)
        and not _SMALL_TALK.search(sentence)
        and not _LEANS_ON_CONTEXT.search(sentence)
        and bool(FIRST_PERSON.search(sentence))
        and not _SECOND_PERSON.search(sentence)
    )


def name_fact(name: str) -> str:
    """The fact that the user is called ``name`` ("The user's name is Sam."), which
    ``named_in`` reads back."""
    return f"The user's name is {name}."


_NAME_FACT = re.compile(r"^The user's name is (.+)\.$")


def named_in(fact: str) -> str | None:
    """The name a ``name_fact`` gives, or None for another fact."""
    match = _NAME_FACT.match(fact)
    return match.group(1) if match else None


def facts_of(turns: Sequence[Any], speakers: set[str]) -> list[tuple[str, Sentence]]:
    """The facts ``turns`` state (Mem0's facts, by extraction): each sentence one of
    ``speakers`` says of themselves (``is_statement_about_oneself``), in the third person
    where a rule can put it there (``third_person``), else as ``speaker: sentence``; with
    the sentence it came from, in the order said. A base model's reply states nothing
    (``sentences_of``)."""
    out: list[tuple[str, Sentence]] = []
    for sentence in sentences_of([t for t in turns if t.speaker in speakers]):
        if is_statement_about_oneself(sentence.text):
            text = third_person(sentence.text, sentence.speaker) or sentence.line()
            out.append((text, sentence))
    return out


def self_descriptions(turns: Sequence[Any], speaker: str) -> list[Sentence]:
    """What ``speaker`` says of their likes, feelings, plans and ways ("I love …", "I've
    been …", "I'm …", "my favourite …", "我喜欢…"), in the order said."""
    return [
        s
        for s in sentences_of([t for t in turns if t.speaker == speaker])
        if is_statement_about_oneself(s.text) and _SELF_DESCRIPTION.search(s.text)
    ]


_KEYWORD_NOISE = frozenset(
    {
        "love",
        "like",
        "really",
        "great",
        "good",
        "fun",
        "thanks",
        "time",
        "things",
        "lot",
        "today",
        "yesterday",
        "feel",
        "feeling",
        "feelings",
        "glad",
        "awesome",
        "amazing",
        "cool",
        "nice",
        "happy",
        "thing",
        "way",
        "day",
        "hey",
        "wow",
        "bit",
        "back",
        "recently",
        "lately",
        # what talking to an assistant is about, not the speaker's topics
        "advice",
        "recommend",
        "recommendation",
        "recommendations",
        "suggestion",
        "suggestions",
        "companion",
        "chat",
        "chatting",
        "talk",
        "help",
        "question",
        "questions",
        # the same in Chinese
        "伴侣",
        "建议",
        "推荐",
        "感觉",
        "地方",
        "我会",
        "问题",
        "时候",
        "事情",
        "东西",
        "今天",
        "最近",
    }
)
"""Words no topic line should carry: praise, feelings, fillers, and the vocabulary of asking
an assistant for help."""


def interests(texts: Sequence[str], top: int = 6, names: Sequence[str] = ()) -> list[str]:
    """The recurring topics of ``texts`` (one speaker's turns): YAKE keywords (Campos et
    al. 2020) of English text, jieba's TF-IDF keywords of Chinese (nouns); at most ``top``, none
    of the ``names`` (the people talking, whom every turn mentions)."""
    text = "\n".join(texts)
    if not text.strip():
        return []
    noise = (
        _KEYWORD_NOISE
        | {n.lower() for name in names for n in name.split()}
        | {n.lower()[:3] for n in names if len(n) > 3}
    )
    if len(_CJK.findall(text)) * 2 > len(text):
        # heavy: jieba loads its dictionary (about a second)
        import jieba
        import jieba.analyse

        jieba.setLogLevel(logging.WARNING)
        # nouns only (jieba's part-of-speech tags): a topic is a thing, not "非常" (very) or "看到" (saw)
        tags = jieba.analyse.extract_tags(text, topK=top * 3, allowPOS=("n", "nz", "vn", "ns", "nt", "nw"))
        return [w for w in tags if w.lower() not in noise][:top]
    # heavy: needed only for keywords
    import yake

    found = yake.KeywordExtractor(lan="en", n=2, top=top * 3, dedupLim=0.7).extract_keywords(text)
    words = [k for k, _ in found if len(k) > 2 and not set(k.lower().split()) & noise]
    first: dict[str, str] = {}
    for word in words:  # one case of each topic, in YAKE's order
        first.setdefault(word.lower(), word)
    return list(first.values())[:top]


def portrait(turns: Sequence[Any], speaker: str, embed: Embed, statements: int = 3) -> str:
    """An extractive portrait of ``speaker`` (MemoryBank's user portrait, from their own
    words): their most salient self-descriptions (``self_descriptions``, ranked by
    ``salience`` and MMR, so what recurs and is central comes first, repeats once), in
    the third person where a rule can put them there, and a line "Interests: …"
    (``interests``). Empty when they said nothing of themselves."""
    pool = self_descriptions(turns, speaker)
    lines: list[str] = []
    if pool:
        vectors = np.asarray(embed([s.text for s in pool]), dtype=np.float32)
        for i in select(salience(pool, vectors), vectors, statements):
            lines.append(third_person(pool[i].text, speaker) or pool[i].line())
    names = sorted({t.speaker for t in turns if t.speaker})
    topics = interests([t.text for t in turns if t.speaker == speaker], names=names)
    if topics and lines:
        lines.append(f"Interests: {', '.join(topics)}.")
    return "\n".join(lines)
