"""Extractive answers: the sentence (or two) of the recalled memories that answers a
question, quoted with who said it and when, its relative dates resolved.

What ``memcli ask`` gives on a base model without a chat template (the embedded Gemma 3
270M), which cannot read a prompt of memories and answer from it (issue 22): with the
right memory recalled first, it answered "Last week." to "When did Caroline go to the LGBTQ
support group?". An extractive answer cannot invent; it can only quote the wrong sentence,
or say that nothing recalled answers.

Scoring, per sentence of each recalled memory (sentences by pySBD, ``extractive``):

- overlap: the question's content words (``lexical.tokens``: stemmed English words, jieba
  words of Chinese; stop words and question words left out) found in the sentence or its
  speaker's name, each weighted by its inverse frequency over the candidate sentences
  (IDF, Spärck Jones 1972), so a word every candidate holds counts little;
- context: the same over the whole memory, at ``CONTEXT_WEIGHT`` (the answer is often the
  sentence beside the one that names the topic);
- the question's type: a "when" question favours a sentence that places something in
  time (``dates.says_when``, a clock time), "where" one that names a place, "who" one that
  names a person (``TYPE_BONUS``);
- recall: the memory's rank in the recall (``RANK_WEIGHT``).

The best sentence is the answer, with the next or previous sentence of the same memory
when that one scores close (``SECOND``). The answer is given only when at least
``MIN_COVERAGE`` of the question's content words occur in the memory, and that share of its
subject (its words but the word for the kind of value asked: "number", "password",
``_VALUE_KIND_WORDS``) unless the memory states a value of that kind (a name, a dose): "Our
neighbour at number 14 …" writes "number" and holds nothing of "What is my passport
number?"; otherwise the answer
says nothing recalled answers the question, and cites nothing (``Extracted.answered`` is
False) — unless, last, the person's own current note that recall finds clearly closest
states the kind of value asked (``_closest_own``: by cosine similarity, who wrote it, dates
and kinds of value: an amount of its kind, a labelled value, a code; no phrasing), or the
later of two of their notes on one subject about as close. Recall's cosine similarity alone, for every speaker's memory,
did not tell a paraphrase from a near miss (LoCoMo conv-26 adversarial F1 0.522 → 0.217).

What the answer never quotes and how it follows a life as it changes (issue 31):

- a sentence that asks (a question, a request: ``memcli.text.updates.asks``) is never
  quoted, nor a base model's reply (tagged ``base-model``) while anything else is recalled;
- a memory superseded by a newer one (``Memory.superseded_by``) scores ``SUPERSEDED_SHARE``
  of its score unless the question asks about the past (``retrieval.asks_past``); an
  answer quoting a memory that superseded another recalled one says since when and what
  it replaced: "… 40 mg" [since Tuesday 10 June 2025; before: "… 20 mg …"];
- a date the question writes ("on March 9th", "3月9日", "the 9th") is matched against the
  memory's own date (``DATE_BONUS``), not counted among the words the memory must hold; a
  day named by a question other than "when" is answered only from a memory of that day or
  one whose relative date names it ("yesterday", noted the day after), else not found; a
  question about what happened that day and nothing in particular ("What did I do on March
  9th?", "我上周二干嘛了？") quotes every statement of that day, each cited (its event
  summary when there is one, ``day_summaries``); a
  question's words that name an attribute a memory states in other words ("live" and
  "moved to", "job" and "work as") count as held (``ATTRIBUTE_WORDS``);
- a question that asks for several things ("what are my dogs called", "哪些", "哪几本")
  quotes the best sentence of every memory that holds one (``LIST_SHARE``), citing each,
  and every other memory recall finds about as close to the question (``_add_similar``:
  cosine against the closest item's, a lower share for one that holds the kind asked for,
  a name or a title; for Chinese, whose cosines mislead, only one of that kind);
- a question asking a date that is not the noting of something ("When is Kate's
  birthday?", "几号") or a number only the memory can hold ("my passport number", "多少钱")
  is answered only from a memory that states one (``must_state``); a remark beside the
  question ("need it for a form") is not asked for (``asking_part``);
- a present-tense question is answered by the note that replaced the best one when both are
  recalled, and that note holds what the one it replaced holds; a note that follows a
  question the person noted ("q for Dr Lin: can I take ibuprofen?", then "Dr Lin said…")
  holds what that question holds;
- a present-tense question about the person (a Chinese one naming no one is theirs) quotes
  first their latest note that recall finds close to it too, or that shares a word of the
  best note, then the best one, where no rule read the change (``_later_word``; for
  Chinese, a later note that shares a word with the best one or is closer), when that note
  tells what the question asks: a word of the question's own or a value of the kind asked
  (``_tells_asked``: not "costco run: paper towels" for "what tier is my Costco
  membership?"), and is not another's thing where the asker's own note exists (``_theirs``:
  "Dad's metformin went up" for "how much metformin am I on?");
- a question about what held before ("before I moved to…", "my old dose", "last spring",
  "跳槽之前", ``asks_earlier``; a Chinese one naming no one is theirs) quotes first the person's close note just before the one it
  names as what came after, or before the best when that is their latest (``_earlier_word``);
- a note holding the question's words only in part (``LATER_COVERAGE`` of them, of its
  subject, not the kind of value asked: ``_VALUE_KIND_WORDS``) answers only in a last pass,
  with the person's later close note (or earlier, for the past) or the note it replaced;
- a question asking a day ("What date is…", "几号") is answered only from a memory that
  writes one; an English one asking a name, only from a memory naming something the
  question does not (``names_something_else``); a note quoted for being the latest word
  states what is asked too (a date for "when");
- a question's word and a memory's word of one root meet ("allergic", "allergy";
  ``PREFIX_CHARS``), as do a Chinese word and a memory holding each of its characters.

A relative date in a quoted sentence ("yesterday", "last week", "two days ago", "昨天",
"上周二", "三天前") is resolved against the memory's own date with ``dates.query_dates``
(the recall query dates' code, here with the memory's time as the clock) and written
after it: "yesterday [Sunday 7 May 2023]".
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache, lru_cache

from memcli.dates import DAY_OF_MONTH, DAY_SECONDS, QueryDate, query_dates, says_when, spoken_date
from memcli.memory import ASSISTANT, BASE_MODEL, Kind, Memory
from memcli.models.prompts import cite
from memcli.recall.retrieval import DATE_AFTER_DAYS, asks_past
from memcli.text.entities import _PLACE_WORDS, ENTITY_TYPES, extract
from memcli.text.extractive import FIRST_PERSON, split_sentences
from memcli.text.lexical import has_cjk, stem_of, tokens
from memcli.text.updates import (
    DOSE,
    RESIDENCE,
    answers_asked,
    asks,
    names_medicine,
    statements,
    telling_sentences,
)
from memcli.text.whose import kin_words, people_named, relation, relations_written, told_of

CONTEXT_WEIGHT = 0.3
"""Weight of the question's words found elsewhere in the sentence's memory."""
TYPE_BONUS = 0.25
"""Score added to a sentence of the kind a when/where/who question asks for."""
RANK_WEIGHT = 0.15
"""Score of the first recalled memory's sentences over the last one's (linear in rank)."""
SECOND = 0.6
"""A neighbouring sentence of the same memory joins the answer from this share of the
best sentence's score."""
MIN_COVERAGE = 0.5
"""Share of the question's content words (unweighted) that the answering memory must
hold; below it, nothing recalled answers the question."""

SUPERSEDED_SHARE = 0.5
"""Share of its score a superseded memory's sentence keeps (present-tense questions)."""
DATE_BONUS = 0.3
"""Score added to a sentence of a memory learned on a date the question writes."""
LIST_SHARE = 0.4
"""A list question quotes every memory whose best sentence scores this share of the best."""
LIST_MAX = 6
"""At most this many memories quoted for a list question."""
LIST_SIMILAR = 0.5
"""An English list question also quotes a memory whose cosine similarity to it is this
share of the closest item's that holds its words (``_add_similar``)."""
LIST_SIMILAR_FLOOR = 0.15
"""…and at least this cosine similarity."""
LATER_SIMILAR = 0.5
"""Share of the best memory's cosine similarity to a present-tense question about the person
that a later note of theirs needs to be quoted first, as the latest word (``_later_word``)."""
LATER_COVERAGE = 0.25
"""Share of the question's content words (weighted) that the best note must hold to be
answered by a later note of the person's that recall finds close (``_later_word``), below
``MIN_COVERAGE``."""
CONTINUED_DAYS = 21
"""A note that goes on with a list's item ("oh and …") is one of its items when written
within this many days after it (``_add_continued``)."""
LIST_SIMILAR_FITTING = 0.3
"""…or this share, for a memory that holds the kind of thing the question asks for (a name
for "which restaurants", a person for "who"): the kind is a second sign that it is an item."""
PREFIX_CHARS = 5
"""A question's word is held by a memory word (stems) that begins with it or that it begins
with, both of at least this many letters (``_same_word``)."""
LIST_ITEM_CHARS = 240
"""A list question quotes a memory of up to this many characters whole (its name may be in
the sentence beside the one that names the kind: "Biscuit chewed the sofa. Naughty dog.")."""
SHORT_NOTE_CHARS = 120
"""A note of the person's of up to this many characters is short: the short sentence after
the one quoted joins it ("physio says no running for now. stopped.")."""
SHORT_SENTENCE_WORDS = 2
"""A sentence of up to this many words (English; for Chinese, ``2 *`` as many characters) is
short (``_short_tail``)."""
TITLED = "<title>"
"""An alias of ``ATTRIBUTE_WORDS`` held by a memory that names a work in quotes, 《》 or
capitals ("which films": "watched 《流浪地球》")."""
NAMED = "<name>"
"""An alias of ``ATTRIBUTE_WORDS`` held by a memory that names someone or something in
capitals, other than a place."""
ATTRIBUTE_BONUS = 0.3
"""Score added to a sentence that states the attribute the question asks about in other
words (``memcli.text.updates.answers_asked``)."""
ATTRIBUTE_WORDS = {
    "live": ("move", "reloc", "home", "hous", "flat", "apart", "rent"),
    "job": ("work", "job", "employ", "joined", "teacher", "nurs"),
    "role": ("work", "job", "employ", "joined", "promot", "as ", "i'm a ", "i am a "),
    "change": ("switch", "swap", "replac", "rais", "increas", "lower", "reduc", "moved", "went up", "going up"),
    "work": ("work", "job", "employ", "joined"),
    "dose": ("mg", "mcg", "unit", "rais", "increas", "lower", "reduc", "take"),
    "take": ("mg", "mcg", "unit", "rais", "increas", "lower", "reduc"),
    "med": ("mg", "mcg", "pill", "tablet", "prescri", "medic"),
    "medic": ("mg", "mcg", "pill", "tablet", "prescri", "med "),
    "strength": ("mg", "mcg", "unit"),
    "diet": ("vegan", "vegetarian", "keto", "pescatarian", "eat"),
    "birthday": ("bday", "b-day", "b'day"),
    "appointment": ("appt",),
    "couch": ("sofa",),
    "sofa": ("couch",),
    "buy": ("bought",),
    "run": ("ran ",),
    "far": ("km", "mile"),
    "go": ("went",),
    "eat": ("ate ",),
    "see": ("saw ",),
    "meet": ("met ",),
    "make": ("made",),
    "swim": ("swam",),
    "drink": ("drank",),
    "drive": ("drove",),
    "ride": ("rode",),
    "fly": ("flew",),
    "write": ("wrote",),
    "give": ("gave",),
    "teach": ("taught",),
    "catch": ("caught",),
    "bring": ("brought",),
    "sing": ("sang",),
    "win": ("won",),
    "lose": ("lost",),
    "sell": ("sold",),
    "spend": ("spent",),
    "send": ("sent",),
    "build": ("built",),
    "hear": ("heard",),
    "grow": ("grew",),
    "draw": ("drew",),
    "begin": ("began",),
    "find": ("found",),
    "feel": ("felt",),
    "pay": ("paid",),
    "think": ("thought",),
    "come": ("came",),
    "keep": ("kept",),
    "wear": ("wore",),
    "speak": ("spoke",),
    "sleep": ("slept",),
    "leave": ("left",),
    "name": ("called", "named", NAMED),
    "call": ("named", NAMED),
    "children": ("son", "daughter", "kid", "child", "baby", "twins"),
    "kid": ("son", "daughter", "child", "baby"),
    "pet": ("dog", "cat", "puppy", "kitten", "rabbit", "hamster", "parrot", "budgie", "tortoise", "horse", "goldfish"),
    "languages": (
        "english",
        "french",
        "spanish",
        "german",
        "italian",
        "portuguese",
        "chinese",
        "mandarin",
        "cantonese",
        "japanese",
        "korean",
        "arabic",
        "russian",
        "dutch",
        "polish",
        "hindi",
        "welsh",
        "irish",
        "greek",
        "turkish",
        "swedish",
        "norwegian",
        "danish",
        "finnish",
        "hebrew",
        "urdu",
        "bengali",
        "swahili",
    ),
    "instruments": (
        "piano",
        "guitar",
        "violin",
        "viola",
        "cello",
        "drum",
        "flute",
        "saxophone",
        "trumpet",
        "ukulele",
        "bass",
        "clarinet",
        "harp",
        "banjo",
        "harmonica",
        "oboe",
        "trombone",
        "keyboard",
        "accordion",
    ),
    "sports": (
        "football",
        "soccer",
        "tennis",
        "rugby",
        "cricket",
        "basketball",
        "golf",
        "swim",
        "cycl",
        "run",
        "badminton",
        "volleyball",
        "hockey",
        "climb",
        "yoga",
        "boxing",
    ),
    "hobbies": ("like", "love", "enjoy", "hobby", "into ", "took up", "taking up", "started learning"),
    "recommend": ("should", "suggest", "try", "must", "recommend"),
    "book": ("read", "novel", "author"),
    "film": ("watch", "movie", "cinema"),
    "movie": ("watch", "film", "cinema"),
    "电影": (TITLED,),
    "书": (TITLED,),
    "剧": (TITLED,),
    "歌": (TITLED,),
    "suggest": ("should", "recommend", "try"),
    "住": ("搬",),
    "名字": ("叫",),
    "名": ("叫",),
    "字": ("叫",),
    "工作": ("当", "做", "是一名"),
    "爱好": ("喜欢", "爱上", "热爱", "迷上", "爱好", "开始学", "报了"),
    "孩子": ("儿子", "女儿"),
    "宠物": ("狗", "猫", "兔", "鸟", "鱼"),
    "语言": ("英语", "法语", "德语", "日语", "西班牙语", "韩语", "俄语", "汉语", "中文", "英文", "粤语"),
    "乐器": ("钢琴", "吉他", "小提琴", "大提琴", "鼓", "笛", "琵琶", "古筝", "二胡"),
    "运动": ("跑步", "游泳", "篮球", "足球", "网球", "羽毛球", "乒乓球", "瑜伽", "骑车", "爬山"),
}
"""Question words (Porter stems, or Chinese) and the word stems a memory may state the same
attribute with ("Where do I live?": "I moved from Leeds to York"), the irregular past
forms the stemmer does not bring home ("buy": "bought"), and the kinds of thing a list
question names with what a memory holds of that kind ("languages": "French", "children":
"daughter", "爱好": "喜欢"); ``NAMED``: a name in capitals ("name": "my daughter Ana").
English aliases match at the start of a word."""


_MEDICINE_CLASSES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("steroid", "corticosteroid", "激素"): (
        "prednis",
        "pred ",
        "dexameth",
        "hydrocort",
        "cortison",
        "methylpred",
        "medrol",
        "budeson",
        "泼尼松",
        "强的松",
        "地塞米松",
        "甲泼尼龙",
        "氢化可的松",
    ),
    ("thyroid", "甲状腺", "甲减"): (
        "levothyrox",
        "thyrox",
        "levo ",
        "synthroid",
        "euthyrox",
        "eltroxin",
        "liothyron",
        "cytomel",
        "tirosint",
        "unithroid",
        "levoxyl",
        "优甲乐",
        "雷替斯",
        "左甲状腺素",
        "左旋甲状腺素",
    ),
    ("beta", "blocker", "β受体阻滞剂"): (
        "metoprolol",
        "bisoprolol",
        "propranolol",
        "atenolol",
        "carvedilol",
        "nebivolol",
        "labetalol",
        "nadolol",
        "sotalol",
        "美托洛尔",
        "倍他乐克",
        "比索洛尔",
        "普萘洛尔",
        "阿替洛尔",
        "卡维地洛",
    ),
    ("statin", "cholesterol", "他汀", "降脂药", "降脂"): (
        "atorvastatin",
        "simvastatin",
        "rosuvastatin",
        "pravastatin",
        "lovastatin",
        "lipitor",
        "crestor",
        "zocor",
        "阿托伐他汀",
        "瑞舒伐他汀",
        "辛伐他汀",
        "普伐他汀",
        "立普妥",
        "可定",
    ),
    ("antidepressant", "ssri", "抗抑郁药", "抗抑郁"): (
        "sertraline",
        "zoloft",
        "citalopram",
        "escitalopram",
        "lexapro",
        "cipralex",
        "fluoxetine",
        "prozac",
        "paroxetine",
        "paxil",
        "venlafaxine",
        "effexor",
        "duloxetine",
        "cymbalta",
        "mirtazapine",
        "bupropion",
        "wellbutrin",
        "舍曲林",
        "左洛复",
        "西酞普兰",
        "艾司西酞普兰",
        "来士普",
        "氟西汀",
        "百忧解",
        "帕罗西汀",
        "文拉法辛",
        "度洛西汀",
        "米氮平",
    ),
    ("thinner", "anticoagulant", "抗凝药", "抗凝"): (
        "warfarin",
        "coumadin",
        "apixaban",
        "eliquis",
        "rivaroxaban",
        "xarelto",
        "dabigatran",
        "edoxaban",
        "华法林",
        "利伐沙班",
        "阿哌沙班",
        "达比加群",
    ),
    ("diabetes", "diabetic", "降糖药", "降糖"): (
        "metformin",
        "glucophage",
        "gliclazide",
        "glipizide",
        "sitagliptin",
        "januvia",
        "empagliflozin",
        "jardiance",
        "dapagliflozin",
        "insulin",
        "二甲双胍",
        "格列",
        "胰岛素",
        "阿卡波糖",
        "拜糖平",
        "西格列汀",
        "达格列净",
        "恩格列净",
    ),
}
"""Words for a class of medicine a question may ask by ("what's my steroid dose?", "my thyroid
pill", "the beta blocker", "降糖药") and the names of its medicines, generic and brand, a
note writes instead ("prednisone halved to 20mg", "synthroid raised to 88mcg", "二甲双胍
加到每次1000mg"): a note stating a dose of one holds the class word (``_held``,
``_stated_classes``; a plan holds none) and states the dose asked (``_states_dose``). Names
match at the start of a word, as ``ATTRIBUTE_WORDS``' aliases."""


@cache
def _class_words(chinese: bool) -> frozenset[str]:
    """The class words of ``_MEDICINE_CLASSES`` as ``words`` reads them ("antidepress"), the
    Chinese ones ("降糖药") only when ``chinese``: reading one loads jieba's dictionary (about
    1.2 s), and no word of an English text (all ASCII) is among them."""
    return frozenset(w for class_words in _MEDICINE_CLASSES for w in _read_class_words(class_words, chinese))


def _read_class_words(class_words: tuple[str, ...], chinese: bool) -> set[str]:
    """``class_words`` (a key of ``_MEDICINE_CLASSES`` or ``_SERVICE_CLASSES``) as ``words``
    reads them, the Chinese ones only when ``chinese`` (``_class_words``)."""
    return {w for word in class_words if chinese or word.isascii() for w in words(word)}


_SERVICE_CLASSES: dict[tuple[str, ...], tuple[str, ...]] = {
    # not "subscription": "what tier is my spotify subscription?" names its service, and a note
    # naming spotify ("spotify wrapped came out") does not state one
    ("streaming", "stream", "service", "视频会员", "视频"): (
        "netflix",
        "hulu",
        "mubi",
        "disney+",
        "disney plus",
        "prime video",
        "amazon prime",
        "hbo",
        "apple tv",
        "paramount+",
        "peacock",
        "crunchyroll",
        "now tv",
        "britbox",
        "curiosity stream",
        "spotify",
        "apple music",
        "youtube premium",
        "tidal",
        "deezer",
        "爱奇艺",
        "腾讯视频",
        "优酷",
        "芒果tv",
        "b站",
        "bilibili",
        "哔哩哔哩",
    ),
    ("music", "音乐"): ("spotify", "apple music", "youtube music", "tidal", "deezer", "网易云", "qq音乐"),
    ("carrier", "network", "mobile", "cell", "provider", "sim", "运营商", "手机卡"): (
        "verizon",
        "t-mobile",
        "at&t",
        "mint mobile",
        "cricket wireless",
        "google fi",
        "us mobile",
        "vodafone",
        "giffgaff",
        "o2",
        "tesco mobile",
        "sky mobile",
        "lebara",
        "lycamobile",
        "voxi",
        "smarty",
        "中国移动",
        "中国联通",
        "中国电信",
    ),
    ("gym", "fitness", "健身", "健身房"): (
        "puregym",
        "pure gym",
        "gym group",
        "planet fitness",
        "anytime fitness",
        "equinox",
        "24 hour fitness",
        "la fitness",
        "crunch fitness",
        "david lloyd",
        "nuffield",
        "virgin active",
        "orangetheory",
        "f45",
        "crossfit",
        "climbing cent",
        "climbing gym",
        "bouldering",
        "乐刻",
        "超级猩猩",
        "威尔仕",
        "一兆韦德",
    ),
    ("grocery", "groceries", "warehouse", "wholesale"): (
        "costco",
        "sam's club",
        "bj's",
        "co-op",
        "coop",
        "whole foods",
        "山姆",
        "开市客",
        "盒马",
    ),
}
"""Words for a kind of service a question may ask by ("what streaming service am I
subscribed to?", "who's my mobile network?", "which gym", "grocery membership", "哪个视频会员")
and the names of services of that kind a note writes instead ("killed the netflix sub.
trying mubi", "ported my number over to giffgaff", "改成超级猩猩按次买课"): a note naming one
holds the word (``_held``). Names match at the start of a word, as ``ATTRIBUTE_WORDS``'
aliases."""


@cache
def _service_words(chinese: bool) -> frozenset[str]:
    """The words of ``_SERVICE_CLASSES``' keys as ``words`` reads them, the Chinese ones only
    when ``chinese`` (as ``_class_words``)."""
    return frozenset(w for class_words in _SERVICE_CLASSES for w in _read_class_words(class_words, chinese))


@lru_cache(maxsize=4096)
def _named_services(text: str, chinese: bool) -> frozenset[str]:
    """The words of the kinds of service (``_SERVICE_CLASSES``, the Chinese ones only when
    ``chinese``) of the services ``text`` names ("mubi": "streaming", "service", …) in a
    sentence that tells of no one else (``_tells_of_another``: "dad finally got netflix" is
    his)."""
    found: set[str] = set()
    for sentence in split_sentences(text):
        lower = sentence.lower()
        named = [
            kinds for kinds, names in _SERVICE_CLASSES.items() if any(_alias_in(n, sentence, lower) for n in names)
        ]
        if named and not _tells_of_another(sentence):
            found |= {w for class_words in named for w in _read_class_words(class_words, chinese)}
    return frozenset(found)


_ASKS_DONE = re.compile(
    r"\b(?:did|have|has)\s+(?:I|we)\s+(?!(?:need|want|plan|mean|have|got|intend|hope|decide|think|wish|ever|still)\w*\b)[a-z]+",
    re.IGNORECASE,
)
"""A question about something done ("Which hotel did I book?", "what have we read so far?"),
not about a need or a plan ("what did I need to buy?")."""
_ONLY_PLANNED = re.compile(
    r"^\W*(?:(?:I|we)\s+)?(?:still\s+|really\s+|prob(?:ably)?\s+)?(?:need|needs|have\s+to|has\s+to|got\s+to|gotta|gonna|"
    r"going\s+to|want\s+to|wanna|should|must|plan(?:ning)?\s+to|hoping\s+to|thinking\s+(?:of|about)|to\s*-?\s*do\b|"
    r"todo\b|maybe)\b",
    re.IGNORECASE,
)
"""A sentence that only plans or needs ("need to figure out a hotel in kyoto", "should book
the dentist", "todo: renew passport"): it tells nothing done (``_ASKS_DONE``)."""
_PLANNED = re.compile(
    r"\b(?:thinking\s+(?:of|about)|plan(?:ning)?\s+to|going\s+to|gonna|might|maybe|wants?\s+to|wonder(?:ing)?|"
    r"should\s+i|asking)\b|打算|想要|考虑|准备",
    re.IGNORECASE,
)
"""Words of a note that plans or wonders rather than states ("thinking of asking the endo to
cut the levo to 100mcg", "打算换药"): the dose in it is not the one taken."""


@lru_cache(maxsize=4096)
def _stated_classes(text: str, chinese: bool) -> frozenset[str]:
    """The class words (``_class_words``, the Chinese ones only when ``chinese``) of the
    medicines whose dose ``text`` states, as memcli's reading of a person's statements finds
    one (``updates.statements``: "synthroid raised to 88mcg"; a plan, "thinking of asking the
    endo to cut the levo", states none)."""
    found: set[str] = set()
    if _PLANNED.search(text):
        return frozenset()
    for s in statements(text):
        kind, _, medicine = s.key.partition(":")
        if kind == DOSE and medicine:
            found |= _medicine_classes(medicine, chinese)
    return frozenset(found)


def _medicine_classes(medicine: str, chinese: bool) -> set[str]:
    """The class words (``_MEDICINE_CLASSES``, as ``words`` reads them; the Chinese ones only
    when ``chinese``) of a ``medicine`` named in a note ("prednisone": "steroid",
    "corticosteroid", "激素")."""
    lower = f"{medicine.lower()} "
    found: set[str] = set()
    for class_words, names in _MEDICINE_CLASSES.items():
        if any(_alias_in(name, lower, lower) for name in names):
            found |= _read_class_words(class_words, chinese)
    return found


_ALIASES: dict[str, tuple[str, ...]] = {}
"""``ATTRIBUTE_WORDS`` by the stems of its question words (filled when first needed)."""
NOT_FOUND = "I don't find that in your memories."
NOT_FOUND_ZH = "我在你的记忆里没有找到答案。"

_EN_STOP_WORDS = """a about above after again all also am an and any are as at be been before being below between both but by can could
    did do does doing done during each few for from further had has have having he her here hers herself him himself his
    how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom whose why will with
    would you your yours yourself yourselves ever again tell told say said mention mentioned talk talked ask asked remember
    recall know think thing things one ones get got go going went us let lets last time day date kind sort much many
    s t d ll re ve m"""
"""English stop words; the last line: what the tokenizer leaves of a contraction or a
possessive ("Where's" → where, s; "mother's" → mother, s), which no memory need hold."""
_EN_STOP = frozenset(_EN_STOP_WORDS.split())
_ZH_STOP_WORDS = """我 你 他 她 它 我们 你们 他们 她们 的 了 吗 呢 吧 啊 呀 是 在 有 和 跟 与 及 也 都 就 还 又 把 被 给 对 向 从 到 去 过 着
    什么 哪 哪里 哪儿 哪个 哪些 哪位 哪天 哪一天 谁 时候 什么时候 何时 几 几号 几月 怎么 怎样 为什么 多少 说 说过 讲 提 提到 告诉
    儿 那 这 那个 这个 个 一 一个 之前 以前 当时 那时 曾经 记得 知道 想 觉得 次 些 上 下 里 中 现在 目前 还"""
_ZH_STOP = frozenset(_ZH_STOP_WORDS.split())
_ZH_STOP_CHARS = frozenset(
    "我你他她它们的了吗呢吧啊是在有和跟也都就还又把被给对向从到去过着么什哪谁时候几号怎样为说个一那这些上下里中最近很多少现目"
)
_EN_STOP_TOKENS: frozenset[str] = frozenset()
_PRONOUN_JOINED = re.compile(r"^[我你他她它][\u4e00-\u9fff]+$")

_WHEN = re.compile(
    r"\b(when|what time|what date|which day|which date|what day|how long ago|what year|what month)\b", re.IGNORECASE
)
_WHERE = re.compile(
    r"\b(where|which (city|country|place|park|restaurant|museum|town|shop|store|school|beach|lake))\b", re.IGNORECASE
)
_WHO = re.compile(r"\b(who|whom|whose)\b|\bwith which (friend|person)\b", re.IGNORECASE)
_WHEN_ZH = re.compile(
    r"什么时候|何时|哪天|哪一天|几号|几月|哪年|哪一年|哪个月|星期几|周几|礼拜几|多久以前|多久前|哪个周末"
)
_WHERE_ZH = re.compile(
    r"哪里|哪儿|在哪|去哪|什么地方|哪个地方|哪座|哪个城市|哪个国家|哪家|哪个公园|哪(?=[了呢啊呀来？?。，!！\s]|$)"
)
"""A Chinese question asking where: "哪里", "在哪", and a bare "哪" at the end of what it asks
("我现在住哪来着", "钥匙放哪了")."""
_WHO_ZH = re.compile(r"谁|哪位|哪个人|哪个朋友")

_CLOCK = re.compile(
    r"\b\d{1,2}(:\d\d)?\s?(am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d\d\b|[0-9一二三四五六七八九十]+点", re.IGNORECASE
)
_PLACE = re.compile(
    r"\b(in|at|to|from|near|visited|visit|around)\s+(the\s+)?[A-Z][\w'-]+|\b(went|go|going|gone|been)\s+to\s+(the|a|an)\s+\w+|"
    r"\b(park|museum|restaurant|beach|city|town|home|school|office|library|cafe|café|gym|hospital|mall|store|shop|lake|"
    r"mountain|river|church|gallery|theater|theatre|stadium|airport|hotel|country|village|street|market|zoo|garden|"
    r"university|college|studio|club|center|centre|bar|camp|island|coast)s?\b|"
    r"(公园|博物馆|美术馆|餐厅|饭店|餐馆|学校|图书馆|咖啡|医院|商场|超市|书店|山|湖|海边|海滩|城市|市|省|国|村|镇|街|路|广场|酒店|机场|"
    r"车站|体育馆|健身房|电影院|剧院|大学|公司|家里|老家)|"
    r"(去|到|在)了?[^，。！？,.!?]{0,8}(场|馆|园|院|店|厅|城|村)|在[^，。！？,.!?在]{1,8}(里|上面|下面|旁边|附近)"
)
_CONTINUES = re.compile(
    r"^\W*(also|oh,?\s+and|and\s+also|plus|one\s+more|p\.?s\.?)\b|^\W*(还有|还得|还要|另外|千万别忘)|别忘了",
    re.IGNORECASE,
)
"""A note that goes on with an earlier one: "also for the flat — …", "oh and …", "还有…",
"别忘了…" (``_add_continued``)."""
_OPENS_WITH_ANOTHER = re.compile(
    r"\W*(?:(?:my|our)\s+)?(?P<who>(?:mum|mom|mam|dad|father|mother|sis|sister|brother|bro|son|daughter|wife|husband|"
    r"partner|boss|friend|gran|grandma|grandpa|nan|aunt|uncle|cousin|neighbou?r|colleague|coworker|roommate|flatmate)s?\b|"
    r"(?!(?:it|that|there|here|what|who|he|she|let|where|how|today|everything|nothing)['’]s\b)[A-Za-z]+['’]s)(?=\s)",
    re.IGNORECASE,
)
"""A sentence opening with someone else: a kin word ("sister says…", "my dad finally got
netflix") or a possessive ("greg's new gf…")."""
_WRITER = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|we|we're|our)\b|我", re.IGNORECASE)
"""The writer as a subject or an owner ("I", "my", "we"; not "asks me"), in a sentence telling of another."""


def _of_another_first(sentence: str, question: str) -> bool:
    """Whether an English ``sentence`` is of someone else, who is its subject: it (or a
    clause of it) opens with them (a kin word, "my sister", or a possessive: "greg's new gf
    posted on ig", "dad finally got netflix") and says nothing of its writer ("I", "my",
    "we"; ``_WRITER``), and the question does not name them ("vet: Mochi's kidney values up"
    for "what food do I buy for Mochi?"). Not Chinese, which leaves its subject out
    ("朋友介绍认识了陈屿" is the writer's)."""
    if has_cjk(sentence) or _WRITER.search(sentence):
        return False
    for clause in re.split(r"(?<=[.!?;,:])\s+", sentence):  # "a1c check booked. brother says his a1c is 6.1"
        opening = _OPENS_WITH_ANOTHER.match(clause)
        if opening is not None and not words(opening.group("who")) & words(question):
            return True
    return False


_NOW = re.compile(r"\bnow\b|现在|目前", re.IGNORECASE)
"""A sentence telling the present: with a place, where one is now ("we're in Seattle now")."""
_PEOPLE_ZH = (
    "朋友|妈妈|母亲|爸爸|父亲|同事|老师|姐姐|哥哥|弟弟|妹妹|老板|同学|男朋友|女朋友|丈夫|妻子|老公|老婆|室友|邻居|奶奶|爷爷|"
    "外婆|外公|儿子|女儿|表姐|表哥|教练|医生"
)
"""People a Chinese text names by who they are to the person ("妈妈", "同事")."""
_PERSON = re.compile(
    r"\b(friend|friends|sister|brother|mom|mother|dad|father|wife|husband|boss|colleague|coworker|teacher|neighbor|"
    r"neighbour|partner|son|daughter|cousin|aunt|uncle|grandma|grandpa|grandmother|grandfather|girlfriend|boyfriend|"
    r"roommate|classmate|mentor|coach|doctor)s?\b|"
    rf"({_PEOPLE_ZH})"
)
_NAME = re.compile(r"(?<=\s)[A-Z][a-z]{2,}\b")
_TITLE_QUESTION = re.compile(
    r"\b(which|what)\s+(\w+\s+)?(film|movie|book|novel|show|series|song|album|band|game|app|dish|recipe|restaurant|painting)s?\b|"
    r"(哪几?部|哪几?本|哪几?首|哪几?道|哪个乐队|哪几?家|什么电影|什么书|什么歌|什么菜|叫什么)",
    re.IGNORECASE,
)
_TITLE = re.compile(r"[\"“《「][^\"”》」]{2,60}[\"”》」]|(?<=\s)[A-Z][a-z]+(\s+[A-Z][a-z]+)+")
_YES_NO = re.compile(
    r"^\s*(?:do|does|did|am|is|are|was|were|have|has|can|could|will|would)\b|吗\s*[？?]?\s*$|是否|有没有|是不是",
    re.IGNORECASE,
)
"""A question answered by yes or no ("Am I still in the choir?", "我还在健身房吗？"), which
the sentence saying a thing ended answers by itself."""


def _ends_only(text: str) -> bool:
    """Whether ``text`` states of its speaker only that things ended ("Left the running
    club."): for a question asking what holds now, what follows it in the memory ("Signed
    up to The Depot climbing wall instead.") is the answer's other half."""
    said = statements(text)
    return bool(said) and all(s.ended for s in said)


_REFERS_BACK = re.compile(
    r"\b(this|these|that|those|such)\s+(?!is\b|was\b|are\b)\w+|^(it|they|he|she)\b|^(这|那|它|他们|她们)", re.IGNORECASE
)

_RELATIVE_EN = re.compile(
    r"\b(the day before yesterday|yesterday|today|tonight|this (morning|afternoon|evening|week|weekend|month|year)|"
    r"last (night|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(a|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|\d+) (days?|weeks?|months?|years?) ago)\b",
    re.IGNORECASE,
)
_RELATIVE_ZH = re.compile(
    r"大前天|前天|昨天|昨晚|今天|今晚|今早|上个?周末|上周[一二三四五六日天]?|上个?星期[一二三四五六日天]?|上个?礼拜[一二三四五六日天]?|这周[一二三四五六日天]?|"
    r"本周|上个月|上月|这个月|去年|前年|今年|[0-9一二三四五六七八九十两]+(天|周|个星期|个月|年)前"
)
_LIST_EN = re.compile(
    r"\b(what|which|who)\s+(are|were)\b|\bwhat\s+(\w+\s+){0,2}(?!is\b|was\b|does\b|has\b)\w{2,}s(?<!ss)\s+(do|did|have|has|am|are|were)\b|\bwhich\s+(\w+\s+)?(?!is\b|was\b|does\b|has\b)\w{2,}s(?<!ss)\b|\blist\b|\ball\s+(the|my)\b|"
    r"\bwhat\s+(kinds|sorts|types)\b|\bwhat\s+(have|has)\s+(i|we|you)\s+\w+ed\b|\bso\s+far\b|\b(allergic|allergies|hobbies)\b|"
    r"\bwhere\s+have\s+(i|we)\s+been\b|\bwhat\s+(do|does|did)\s+(i|we)\s+(still\s+)?need\s+to\s+(buy|get|pack|bring|fix|replace)\b(?!\s+(my|the|a|an|your|our)\b)|"
    r"\bwhat\s+needs\s+(fixing|doing|replacing|buying)\b|\b(ideas|suggestions|recommendations)\b",
    re.IGNORECASE,
)
_LIST_ZH = re.compile(r"哪些|有什么|都有|都是|分别|哪几")
_NAME_QUESTION = re.compile(r"叫什么|什么名字|名字是什么|叫啥")
_FEASTS_EN = (
    r"new\s+years?'?s?(\s+(eve|day))?|christmas(\s+(eve|day))?|xmas|boxing\s+day|valentines?'?s?(\s+day)?|halloween|nye"
)
_FEASTS_ZH = r"元旦|除夕夜?|大年夜|年三十|春节|国庆节?|中秋节?|平安夜|圣诞节?|万圣节(前夜)?|情人节"
_DATE_WORDS = re.compile(
    r"\b(on|in|at|during)?\s*(january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"yesterday|today|\d{1,2}(st|nd|rd|th)|(19|20)\d\d|last\s+(week|month|year|weekend)|"
    r"the\s+((twenty|thirty)[-\s]?)?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
    r"\w+teenth|twentieth|thirtieth)\s+of)\b|"
    rf"\b(on|at|during|over)\s+(the\s+)?({_FEASTS_EN})\b(?!\s+(party|parties|gift|gifts|present|presents|plans?|tree|dinner|card|cards|lights|sweater|list|resolutions?))|"
    rf"({_FEASTS_ZH})(?=那天|那晚|当天|当晚|晚上|早上|上午|下午|中午|期间|假期|放假|的时候|那几天)|"
    r"大年初[一二三四五六七八九十]|\d{1,4}年|\d{1,2}月(\d{1,2}[日号])?|[上下这本]个?(周|星期|礼拜)[一二三四五六日天]?|昨天|前天|今天|今年|去年|前年|上个月|这个月|本月",
    re.IGNORECASE,
)
"""Words that name a date in a question, left out of the words a memory must hold: months,
days, years, ordinals ("the first of"), a feast as a time ("on new year's eve", "over
christmas", 除夕那天, 国庆假期: not "valentine's gift", 情人节礼物, 圣诞树, whose feast is a
word a note must hold) as ``dates.query_dates`` reads them."""
_FILLER = re.compile(
    r"\b(so far|at the moment|these days|right now|currently|current|for a living|still|any ?more|back(?= (in|then|when)\b)|"
    r"(jot|note|write|wrote|written|put) down|remind me(?: of)?)\b",
    re.IGNORECASE,
)
"""Phrases of a question that say nothing of what it asks ("What have I planted so far?",
"Do I still smoke?": whether it holds now, which the memory need not say; "remind me what's
on my reading list": a request to tell)."""
_ZH_HOW_MANY = re.compile(r"哪?几[个本部首位家种条件样所支只张次]|哪[个本部首位家种条件样所支只张]")
"""A Chinese question word with its measure word ("哪几本", "几个", "哪位"), which jieba
joins to the noun after it ("几本书", "本书"): no memory holds it, the noun it asks about is
left."""
_DATE_NUMBER = re.compile(r"[0-3]?\d|(19|20)\d\d")
"""A number of a written date: its day or its year."""
_SAME_DAY = frozenset(("today", "tonight", "this morning", "this afternoon", "this evening", "今天", "今晚", "今早"))
"""Phrases that name the day they were said on (dateparser reads "tonight" as no date)."""


@dataclass(frozen=True)
class Extracted:
    """An extractive answer: its ``text`` and the ids of the memories it quotes (none when
    nothing recalled answers the question)."""

    text: str
    cited: list[str]

    @property
    def answered(self) -> bool:
        """Whether it answers (quotes a memory), not "I don't find that in your memories"."""
        return bool(self.cited)


@dataclass
class _Candidate:
    memory: Memory
    rank: int
    index: int
    text: str
    tokens: frozenset[str]
    score: float = 0.0


def question_type(question: str) -> str:
    """What ``question`` asks for: "when", "where", "who" or "what" (anything else), from
    its question words, English or Chinese."""
    for kind, english, chinese in (("when", _WHEN, _WHEN_ZH), ("where", _WHERE, _WHERE_ZH), ("who", _WHO, _WHO_ZH)):
        if english.search(question) or chinese.search(question):
            return kind
    return "what"


def words(text: str) -> set[str]:
    """The tokens of ``text`` (``lexical.tokens``), and for Chinese each character of its
    words too: jieba cuts a question and the sentence that answers it differently ("射靶"
    in one, "射", "靶" in the other; "学会" and "学"), and the characters still meet."""
    found = set(tokens(text))
    if has_cjk(text):
        found |= {c for t in found if len(t) > 1 and has_cjk(t) for c in t if c not in _ZH_STOP_CHARS}
    return found


def _content(found: set[str]) -> set[str]:
    """Those of the words ``found`` that are no stop word nor question word, English
    (``_EN_STOP`` and its tokens, made once) or Chinese."""
    global _EN_STOP_TOKENS
    if not _EN_STOP_TOKENS:
        _EN_STOP_TOKENS = frozenset(t for word in _EN_STOP for t in tokens(word))
    # a Chinese word jieba joins to a pronoun ("我车" of "我车停哪儿了") is held as its other characters
    return {
        t
        for t in found
        if t not in _EN_STOP_TOKENS and t not in _ZH_STOP and t not in _EN_STOP and not _PRONOUN_JOINED.match(t)
    }


_STOP_NOUNS = frozenset(("date", "time", "day", "kind", "sort", "thing"))
"""The stop words that are nouns ("what date is…", "what kind of…"): a verb written on one's
stem ("dating", "timing", "sorting") is a word of its own, not the stop word."""


@cache
def _stop_noun_stems() -> frozenset[str]:
    """The stems of ``_STOP_NOUNS`` ("day": "dai"), made at first use."""
    return frozenset(stem_of(w) for w in _STOP_NOUNS)


def content_words(text: str) -> set[str]:
    """The words of ``text`` (``words``) without stop words and question words, English
    and Chinese; all of its words when every one is a stop word. A word is a stop word by
    how it is written: "dating" ("who am I dating?") is kept though its stem is that of the
    stop word "date" (``_STOP_NOUNS``; not a plural: "dates", "days")."""
    found = words(text)
    kept = _content(found)
    for written in re.findall(r"[a-z]+", text.lower()):
        stem = stem_of(written)
        plural = written.endswith("s") and written[:-1] in _EN_STOP
        if stem in _stop_noun_stems() and stem in found and written not in _EN_STOP and not plural:
            kept.add(stem)
    return kept or found


_ANY_DOING_WORDS = "do doing did happen happened go went get got up have had 干 干嘛 嘛 做 发生 事 事情 那天 当天 天 忙"
"""Words of a question that ask what happened, not about any one thing ("What did I do
on March 9th?", "我上周二干嘛了？")."""
_ANY_DOING: frozenset[str] = frozenset()
"""``_ANY_DOING_WORDS`` as ``words`` reads them (made once, by ``_any_doing``)."""


def _any_doing() -> frozenset[str]:
    """``_ANY_DOING``, made at its first use."""
    global _ANY_DOING
    if not _ANY_DOING:
        _ANY_DOING = frozenset(w for word in _ANY_DOING_WORDS.split() for w in words(word) | {word})
    return _ANY_DOING


def asks_nothing_in_particular(text: str) -> bool:
    """Whether ``text`` (a question without its dates) asks what happened and about no one
    thing: none of its content words (``_content``; stop words and question words left
    out) is other than a word of ``_ANY_DOING_WORDS`` ("What did I do?", "我干嘛了？")."""
    return not ({t for t in _content(words(text)) if t.strip()} - _any_doing())


def _day_answer_from_statements(kind: str, candidates: Sequence[_Candidate], user: str, chinese: bool) -> Extracted:
    """The answer to a question about what happened on a day ("What did I do on March
    9th?"): every statement of that day's ``candidates`` (already that day's, questions and
    requests left out) that the person made or noted, not the assistant's, each cited with
    its date, oldest first; for a "where" or "who" question, those that name a place or a
    person when any does."""
    told = [c for c in candidates if c.memory.speaker != ASSISTANT and BASE_MODEL not in c.memory.tags]
    fitting = [c for c in told if _fits(kind, c.text)] if kind in ("where", "who") else []
    chosen: dict[str, _Candidate] = {}
    for c in fitting or told:
        chosen.setdefault(c.memory.id, c)
    if not chosen:
        return Extracted(NOT_FOUND_ZH if chinese else NOT_FOUND, [])
    return _each_quoted(sorted(chosen.values(), key=lambda c: c.memory.created_at)[:LIST_MAX], user, chinese)


def _each_quoted(quoted: Sequence[_Candidate], user: str, chinese: bool) -> Extracted:
    """An answer quoting each of ``quoted`` in turn (``_item``), each attributed and cited:
    a list question's items, or a day's statements."""
    parts = [
        _attributed(resolve_relative_dates(_item(c), c.memory.created_at, chinese), c.memory, user, chinese)
        for c in quoted
    ]
    return Extracted(("；" if chinese else "; ").join(parts), [c.memory.id for c in quoted])


def _fits(kind: str, sentence: str) -> bool:
    """Whether ``sentence`` holds what a ``kind`` question asks for ("title": a name in
    quotes or capitals, for "which film", "哪部电影"...; "name": that or one name in
    capitals, for "which cafes")."""
    if kind == "title":
        return bool(_TITLE.search(sentence))
    if kind == "name":
        return bool(_TITLE.search(sentence) or _NAME.search(sentence))
    if kind == "when":
        return says_when(sentence) or bool(_CLOCK.search(sentence))
    if kind == "where":
        return bool(_PLACE.search(sentence))
    if kind == "who":
        return bool(_PERSON.search(sentence) or _NAME.search(sentence))
    return False


def _candidates(memories: Sequence[Memory]) -> list[_Candidate]:
    """The sentences of ``memories`` that may be quoted: not one that asks, nor a base
    model's reply while another memory is recalled."""
    told = [m for m in memories if BASE_MODEL not in m.tags] or list(memories)
    out: list[_Candidate] = []
    for rank, memory in enumerate(memories):
        if memory not in told:
            continue
        for index, sentence in enumerate(telling_sentences(memory.text)):
            out.append(_Candidate(memory, rank, index, sentence, frozenset(words(f"{memory.speaker} {sentence}"))))
    return out


def asking_part(question: str) -> str:
    """The sentences of ``question`` that ask (``updates.asks``), without a remark beside
    them ("What am I allergic to? Need it for a form.", "I need this for the doctor. What
    dose do I take?"), whose words a memory that answers need not hold; all of it when no
    sentence asks or every one does."""
    sentences = split_sentences(question)
    asking = [s for s in sentences if asks(s)]
    return " ".join(asking) if asking and len(asking) < len(sentences) else question


_ASKS_DATE = re.compile(
    r"\bwhen\s+(?:is|are|will|am|'s)\b|\bwhen's\b|\bwhat(?:'s| is| are)\s+the\s+dates?\b|\bthe\s+dates?\s+of\b|"
    r"\bwhat\s+(?:date|day|time)\s+(?:is|are|will)\b|几号|几月几[日号]|哪一?天|星期几|周几|礼拜几|什么时候",
    re.IGNORECASE,
)
"""A question asking the date of something that is not the noting of it ("When is Kate's
birthday?", "What's the date of the recital?", "宝宝下次打疫苗是几号？")."""
_ASKS_NUMBER = re.compile(
    r"\bmy\s+(?:[\w'’-]+\s+){0,3}(?:number|no\.|code|pin)\b|\b(?:number|code)\s+of\s+my\b|\bhow\s+much\s+(?:was|is|were|did|does|do)\b.*\b(?:cost|pay|paid|spend|spent|"
    r"bill|price|charge)|号码|(?:卡|证|牌|账|编)号|号是多少|多少钱|价格|花了多少",
    re.IGNORECASE,
)
"""A question asking a number only the memory itself can hold ("What's my passport
number?", "How much was the vet bill?", "我护照号码是多少？", "我的社保卡号是多少？")."""
_STATES_NUMBER = re.compile(r"\d|[一二三四五六七八九十百千万两]+[块元号]")
_ASKS_DAY = re.compile(
    r"\b(?:what|which)\s+(?:date|day)\b|\bthe\s+exact\s+date\b|几号|几月几[日号]|哪一?天|星期几|周几|礼拜几",
    re.IGNORECASE,
)
"""A question asking the day of something, not merely its time ("What date is the
recital?", "which day is bin collection?", "婚礼是几号？"): "next year" does not answer it."""
_STATES_DAY = re.compile(
    r"\b(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?|"
    r"(?:mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)(?:day)?|tomorrow|tonight|today|\d{1,2}/\d{1,2}|\d{4}-\d\d-\d\d)\b|"
    r"\d{1,2}\s?月\s?\d{1,2}|[周星期礼拜][一二三四五六日天]|明天|后天|今天|今晚",
    re.IGNORECASE,
)
"""A day written in a memory: "June 14", "14th Jun", "sat", "tomorrow", "6/14", "6月14",
"周六"."""


_ASKS_NAME = re.compile(r"\bname\b|\bcalled\b|叫什么|什么名字|名字是|叫啥", re.IGNORECASE)
"""A question asking what someone or something is called ("what's my physio's name?",
"what is the cat called?", "我的牙医叫什么名字？")."""


_VALUE_KIND_WORDS = (
    "type model brand make size colour color number name breed version dose dosage password pin code "
    "型号 品牌 血型 尺码 颜色 号码 名字 剂量 密码"
)
"""Words naming the kind of value a question asks ("what's my blood type?", "what model is
my car?"): a note that does not hold the word answers only by stating such a value, which
an extractive answer cannot tell."""


@cache
def _kind_words(listed: str) -> frozenset[str]:
    """The words of ``listed`` (``_VALUE_KIND_WORDS``, ``_COUNTED_KIND_WORDS``) as ``words``
    reads them, each word whole besides (made at first use, kept). A Chinese kind word is
    kept whole only: each is one word of jieba's dictionary, which ``words`` reads as itself
    (tests/test_answers.py checks it), and segmenting it would load jieba's dictionary
    (about 1.2 s) for every English question."""
    return frozenset(w for word in listed.split() for w in ({word} if has_cjk(word) else {*tokens(word), word}))


def _value_kinds() -> frozenset[str]:
    """``_VALUE_KIND_WORDS`` as ``words`` reads them."""
    return _kind_words(_VALUE_KIND_WORDS)


_NAME_KIND_WORDS = "name 名字"
"""Those of ``_VALUE_KIND_WORDS`` that a labelled value states ("landlord = greg tompkins" is
the landlord's name, not their number)."""
_CODE_KIND_WORDS = "number pin code password 号码 密码"
"""Those of ``_VALUE_KIND_WORDS`` whose value is a code: a note writing one states it
("护照号 E12345678" for "我的护照号码")."""
_CODE = re.compile(r"(?<![\w.])(?=[\w#*-]*\d[\w#*-]*\d[\w#*-]*\d)[\w#*-]{4,}")
"""A code: four characters or more, three digits or more among them ("E12345678", "6821#",
"555-0142")."""


_CLAUSE_START = re.compile(r"[,.;!?，。；！？、\n]")
"""Where a clause ends: a code's label is in its own clause ("room 1204" labels the room)."""
CODE_LABEL_WORDS = 3
"""The words before a code, in its clause, that may label it ("passport no. E1234567")."""


def _states_code(text: str, question: str) -> bool:
    """Whether ``text`` writes a code (``_CODE``) that is not a date ("2029年", "2024-05-01")
    and that is labelled by a thing ``question`` names: one of the ``CODE_LABEL_WORDS`` words
    before it in its clause is one of the question's content words, or, in Chinese, the
    clause before it holds one ("护照号 E12345678" for "我的护照号码", not "快递单号
    SF1234567890"; "passport appointment Thursday, room 1204" gives no passport number)."""
    asked = _content(words(question)) - _value_kinds()
    if not asked:
        return False
    undated = _DATE_WORDS.sub(" ", DAY_OF_MONTH.sub(" ", _STATES_DAY.sub(" ", text)))
    for match in _CODE.finditer(undated):
        before = _CLAUSE_START.split(undated[: match.start()])[-1]
        label = " ".join(before.split()[-CODE_LABEL_WORDS:])
        if _label_conflicts(label, question):  # "home wifi pw 4471" for the office's
            continue
        if _content(words(label)) & asked or any(has_cjk(w) and w in before for w in asked):
            return True
    return False


_COUNTED_KIND_WORDS = "size dose dosage 尺码 剂量"
"""Those of ``_VALUE_KIND_WORDS`` whose value is an amount: a note stating a number may state
it ("Vit D 1000 IU daily" for "what dose of vitamin D …?")."""


def _counted_kinds() -> frozenset[str]:
    """``_COUNTED_KIND_WORDS`` as ``words`` reads them."""
    return _kind_words(_COUNTED_KIND_WORDS)


_LABELLED = re.compile(
    r"(?:^|[.;!?。；！？\n]\s*)(?:my\s+|我的?)?(?P<label>[^\W\d][\w'’/-]{0,20}(?:\s[\w'’/-]{1,20}){0,2}?)\s*"
    r"(?:=|:|：|\s[-–—]\s|\s(?:is|are|was)\s|是|叫)\s*(?P<value>[^,.;!?，。；！？\n]{2,60})",
    re.IGNORECASE,
)
"""A note labelling a value: "landlord = greg tompkins", "vet: dr sarah lee", "plumber is joe
from no. 9", "房东：王建国", "房东叫王建国"."""


LABEL_CJK_CHARS = 4
"""The most characters of a Chinese label ("房东", "物业电话")."""


CODE_CHARS = 4
"""The fewest characters of a labelled code written with words after it ("wifi: 5G band keeps
dropping" labels no password; "locker: 117" and "pin = 4471" do, alone)."""


def _code_value(value: str) -> bool:
    """Whether a labelled ``value`` is a code: its first word holds a digit, and it is that
    word alone or a word of ``CODE_CHARS`` or more ("hunter7 (the 5G one)"), not a count or
    an amount with words after it ("45 min cardio today", "3 shots done for Milo")."""
    parts = value.split()
    return bool(parts) and any(c.isdigit() for c in parts[0]) and (len(parts) == 1 or len(parts[0]) >= CODE_CHARS)


def labelled_value(question: str, text: str, code: bool = False) -> bool:
    """Whether ``text`` states the value of a thing ``question`` names as a label and a value
    (``_LABELLED``), whatever the value's case: its label holds a content word of the question
    (not a kind of value alone: "name", "number") and its value a word the question does not
    ("landlord = greg tompkins" for "what's my landlord called?"). With ``code``, only a
    value whose first word holds a digit: a code, a password, a number ("wifi pw: sunflower42"),
    not a description ("Dr Alvarez — new dermatologist")."""
    asked = _content(words(question)) - _value_kinds()
    if not asked:
        return False
    for match in _LABELLED.finditer(text):
        if has_cjk(match.group("label")) and len(match.group("label").strip()) > LABEL_CJK_CHARS:
            continue  # a clause, not a label ("老张家二胎生了 是个男孩")
        label = _content(words(match.group("label")))
        value = _content(words(match.group("value"))) - _value_kinds()
        if code and not _code_value(match.group("value")):
            continue
        if label & asked and value - asked and not _label_conflicts(match.group("label"), question):
            return True
    return False


_PLACING = frozenset(("at", "in", "for", "from"))
"""Words after which a question names where or whose the thing asked is ("the wifi password
at the office", "the door code for the shed")."""


def _qualifiers(question: str, thing: set[str]) -> set[str]:
    """The content words of ``question`` that qualify the thing it asks about (``thing``: its
    words shared with a label): the word just before one of them ("office" of "office wifi",
    "gym" of "the gym's wifi", "公司" of "公司的wifi") and the word placing it after "at",
    "in", "for", "from" ("the wifi password at the office")."""
    order = [t for t in tokens(question) if t not in ("s", "的")]
    found: set[str] = set()
    for i, t in enumerate(order):
        if t in thing and i > 0:
            found.add(order[i - 1])
        if t in _PLACING:
            after = [w for w in order[i + 1 : i + 4] if _content({w})]
            found.update(after[:1])
    return _content(found) - thing - _value_kinds()


def _label_conflicts(label: str, question: str) -> bool:
    """Whether a value's ``label`` names another thing of the kind ``question`` asks about:
    the label holds a content word the question does not, and the question qualifies the
    thing by a word the label does not hold (``_qualifiers``): "home wifi" for "the wifi
    password at the office", "personal email" for "my work email password". A label that
    says less ("wifi pw" for "the office wifi password") or more ("gym locker" for "my locker
    number") than the question does not; a word of two letters is a short form ("pw")."""
    labelled = {w for w in _content(words(label)) - _value_kinds() if not (w.isascii() and len(w) <= 2)}
    asked = _content(words(question)) - _value_kinds()
    extra = labelled - _held(labelled, frozenset(words(question)), question)
    if not extra:
        return False
    qualifying = _qualifiers(question, labelled & asked)
    return bool(qualifying - _held(qualifying, frozenset(words(label)), label))


def names_something_else(question: str, text: str) -> bool:
    """Whether ``text`` names someone or something that ``question`` does not: a title in
    quotes, 《》 or capitals, a capitalised word inside a sentence, or a mention
    ``entities.extract`` types ("nursery tour went well, Leo loved the sandpit" names only
    the Leo that "what's the name of Leo's nursery?" names)."""
    asked = question.casefold()
    if labelled_value(question, text):
        return True
    found = [m.group(0) for m in _TITLE.finditer(text)] + [m.group(0) for m in _NAME.finditer(text)]
    found += [m.name for m in extract(text, speaker="I").mentions if m.typed or m.start > 0]
    return any(name.strip('"“”《》「」').casefold() not in asked for name in found if name.strip())


def must_state(question: str) -> str:
    """What an answer's memory must state for ``question`` to be answered from it: "date"
    (the question asks the date of something, not when the person noted it: the memory's
    own date is no answer to "When is Kate's birthday?"; a question about the past, "When
    did I move?", is answered by it), "day" (a question asking which day, ``_ASKS_DAY``: a
    year or a season is no answer to "What date is the wedding?"), "number"
    (``_ASKS_NUMBER``), or ""."""
    if _ASKS_NUMBER.search(question):
        return "number"
    if _ASKS_DAY.search(question) and not asks_past(question) and not re.search(r"[了过]", question):
        return "day"
    if _ASKS_DATE.search(question) and not asks_past(question) and not re.search(r"[了过]", question):
        return "date"
    return ""


def _states(needed: str, text: str) -> bool:
    """Whether ``text`` states the ``needed`` ("date", "day", "number") of ``must_state``."""
    if needed == "date":
        return bool(_DATE_WORDS.search(text) or DAY_OF_MONTH.search(text) or _CLOCK.search(text)) or any(
            says_when(s) for s in split_sentences(text)
        )
    if needed == "number":
        return bool(_STATES_NUMBER.search(text))
    if needed == "day":
        return bool(DAY_OF_MONTH.search(text) or _STATES_DAY.search(text))
    return True


_QUANTITY_UNITS = {
    "temperature": r"°|º|degrees?|deg|[fc]|度|摄氏度|华氏度",
    "time": r"am|pm|a\.m\.|p\.m\.|o'?clock|点|点半|:\d\d",
    "duration": r"h|hrs?|hours?|mins?|minutes?|secs?|seconds?|days?|weeks?|months?|years?|yrs?|小时|分钟|秒|天|周|个月|年",
    "money": r"[$£€¥]|dollars?|bucks|quid|usd|eur|gbp|cents?|p|k|元|块|万|/mo|/month|/yr|a month|a year",
    "weight": r"kg|kgs|kilos?|lbs?|pounds?|st|stone|g|grams?|oz|斤|公斤|克",
    "distance": r"km|kms|k|mi|miles?|m|metres?|meters?|ft|feet|foot|yards?|公里|米|里",
    "size": r"cm|mm|in|inch(?:es)?|\"|xs|s|m|l|xl|xxl|码|号|寸",
    "rate": r"%|percent|pct|per\s*cent|bpm|/h|/hr|/hour|an\s+hour|个点|厘",
}
"""The units of each kind of amount a question may ask (``asks_amount``), written after a
number ("230°C", "6h", "$185", "75 kg", "7:30"; a number before "$", "£", "€" too)."""
_ASKS_AMOUNT = (
    (
        "rate",
        re.compile(
            r"\b(?:interest|mortgage|savings|exchange|heart|hourly|day|daily)\s+rates?\b|\b(?:apr|apy)\b|利率|汇率|年化|心率",
            re.I,
        ),
    ),
    (
        "temperature",
        re.compile(r"\b(?:temp|temps|temperature|temperatures|how\s+(?:hot|warm|cold))\b|温度|多少度|几度", re.I),
    ),
    ("time", re.compile(r"\b(?:what|which)\s+time\b|\bwhat\s+hour\b|几点|什么时间", re.I)),
    ("duration", re.compile(r"\bhow\s+long\b(?!\s+ago)|多长时间|多久(?!以前|前)", re.I)),
    (
        "money",
        re.compile(
            r"\b(?:price|prices|cost|costs|premium|rent|fee|fees|fare|salary|wage)\b|"
            r"\bhow\s+much\b.*\b(?:pay|paid|charge|charged|spend|spent)\b|"
            r"多少钱|价格|价钱|费用|工资|薪水|房租|租金|保费|花了多少",
            re.I,
        ),
    ),
    ("weight", re.compile(r"\b(?:weigh|weighs|weighed|weight)\b|体重|多重|几斤|多少斤|多少公斤", re.I)),
    ("distance", re.compile(r"\bhow\s+far\b|多远|几公里|多少公里", re.I)),
    ("size", re.compile(r"\b(?:size|sizes|how\s+(?:big|large|tall|wide))\b|尺码|尺寸|多大|几码|多高", re.I)),
    ("count", re.compile(r"\bhow\s+(?:many|much)\b|多少|几[个次杯片粒]", re.I)),
)
"""A question asking an amount of a kind ("what oven temp do I bake at?", "what time is my
train?", "how long do I steep it?", "how much is my rent?", "多少度", "几点"): its answer
states a number, of that kind's units or of none (``states_amount``)."""
_NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|"
    r"a\s+dozen|half|once|twice"
)
_AMOUNT = re.compile(
    r"(?P<before>[$£€¥])?\s?(?P<number>\d+(?:[.,:]\d+)*|\b(?:"
    + _NUMBER_WORDS
    + r")\b|[一二三四五六七八九十百千万两半]+)"
    r"\s?(?P<unit>[°º\"]|/\w+|[a-z.']+(?:\s+(?:a|per)\s+\w+)?|[\u4e00-\u9fff]{1,3})?",
    re.IGNORECASE,
)
"""A number with what follows it: "230°C", "6h", "$10/mo", "two cups", "75公斤"."""


@cache
def _unit_patterns() -> dict[str, re.Pattern[str]]:
    """Each kind's ``_QUANTITY_UNITS`` as a pattern matching at the start of a unit."""
    return {k: re.compile(rf"^(?:{u})(?![a-z])", re.IGNORECASE) for k, u in _QUANTITY_UNITS.items()}


def asks_amount(question: str) -> str:
    """The kind of amount ``question`` asks (a key of ``_QUANTITY_UNITS``, or "count" for
    "how many", "几个"), or "": "what oven temp do I bake my bread at?" → "temperature";
    the first kind whose words it holds. Not a question for a date ("what time" of a "when"
    question is "time": a clock time answers it)."""
    for kind, pattern in _ASKS_AMOUNT:
        if pattern.search(question):
            return kind
    return ""


def states_amount(kind: str, text: str) -> bool:
    """Whether ``text`` states an amount of ``kind`` (``asks_amount``): a number whose unit
    is of that kind, or a number of no known unit ("bake at 230", "window is 2-8"); not a
    number of another kind only ("starter doubled in 6h" states no temperature). "count":
    any number. A clock time ("7:30", "7pm", "七点") states a time."""
    if not kind:
        return True
    if kind == "time" and _CLOCK.search(text):
        return True
    units = _unit_patterns()
    # a date's numbers are no amount ("renewal due aug 12", "5月10号")
    undated = _DATE_WORDS.sub(" ", DAY_OF_MONTH.sub(" ", _STATES_DAY.sub(" ", text)))
    for match in _AMOUNT.finditer(undated):
        if kind == "count":
            return True
        unit = (match.group("unit") or "").strip()
        if match.group("before"):
            if kind in ("money", "rate"):  # "$80/hr" is an hourly rate
                return True
            continue
        if not unit or units[kind].match(unit):
            return True
        if not any(pattern.match(unit) for pattern in units.values()):
            return True  # a number of a word that is no unit: "bake at 230 for the loaf"
    return False


def is_list_question(question: str) -> bool:
    """Whether ``question`` asks for several things ("What are my dogs called?", "Which
    books did you recommend?", "我有哪些爱好？")."""
    return bool(_LIST_EN.search(question) or _LIST_ZH.search(question))


def _on_date(memory: Memory, dates: Sequence[QueryDate]) -> bool:
    """Whether ``memory`` was learned on one of the question's ``dates`` (a date written
    without a year matches that day of any year; a month named alone, that month)."""
    moment = datetime.fromtimestamp(memory.created_at)
    for date in dates:
        first = datetime.fromtimestamp(date.start) if date.start else None
        if date.granularity == "month alone":
            if moment.month == date.month:
                return True
        elif date.yearless and first is not None:
            if moment.month == first.month and (date.granularity != "day" or moment.day == first.day):
                return True
        elif date.start <= memory.created_at <= date.end:
            return True
    return False


@lru_cache(maxsize=4096)
def _places_in(text: str) -> frozenset[str]:
    """The names ``entities.extract`` types as places in ``text``."""
    return frozenset(m.name for m in extract(text, speaker="I").mentions if m.type == "place")


def _alias_in(alias: str, text: str, lower: str) -> bool:
    if alias == TITLED:
        return bool(_TITLE.search(text))
    if alias == NAMED:  # a name, not a place: "I moved from Leeds to York" calls nothing "Leeds"
        return any(m.group(0) not in _places_in(text) for m in _NAME.finditer(text))
    if not alias.isascii():
        return alias in lower
    # at the start of a word, or after a number ("10mg")
    return re.search(r"(?<![a-z])" + re.escape(alias), lower) is not None


TYPE_RANK = 2
"""A memory answers by the kind of thing it names (``holding_expected``) only when it is
among this many first recalled memories that tell (not a question, not a base model's
reply, not superseded for a present-tense question)."""
_WHICH = re.compile(
    r"\b(?:which|what)\s+(?!(?:is|are|was|were|am|do|does|did|have|has|had|will|would|can|could|should|kind|kinds|"
    r"sort|sorts|type|types|time|day|date|year|month|about|else|if|happened|i|you|we|they|he|she|it|my|your)\b)"
    r"(?:[a-z]+\s+)?[a-z]+\s+(?:am|is|are|was|were|do|does|did|have|has|had)\b|"
    r"哪家|哪个(?!人|时候)|哪所|哪支|什么(?=[\u4e00-\u9fff]{1,3}(?:[？?]|$))",
    re.IGNORECASE,
)
"""A question asking which one of a kind ("Which gym am I a member of?", "What choir am I
in?", "我现在在哪家公司上班？", "我现在周末参加的是什么社团？"): its answer is a name."""
_OTHERS = re.compile(
    r"\b(?!(?:it|that|there|here|what|who|he|she|let|where|how)'s\b)[A-Za-z]+['’]s\s+\w|\b[a-z]+s['’]\s+\w|"
    r"\b(?:his|her|their)\s+\w|(?:他|她|他们|她们)的",
    re.IGNORECASE,
)
"""A possessive of someone other than the speaker: "Dad's old manager", "kids' dentist",
"his car", "他的车牌"."""
_MY_THING = re.compile(r"\bmy\s+((?:[\w'’-]+\s+){0,2}[\w'’-]+)|我的([\u4e00-\u9fff]{1,4})", re.IGNORECASE)
_THEIR_THING = re.compile(
    r"(?:\b(?!(?:it|that|there|here|what|who|he|she|let|where|how)['’]s\b)([A-Za-z]+)['’]s|\b([a-z]+s)['’]|"
    r"\b(?:his|her|their))\s+((?:[\w-]+\s+){0,2}[\w-]+)|(?:他|她|他们|她们|"
    + _PEOPLE_ZH
    + r")的([\u4e00-\u9fff]{1,4})",
    re.IGNORECASE,
)
_OF_OTHERS = re.compile(r"[他她它你您]|大家|别人")
"""Words of a Chinese question naming someone other than the asker."""


def _theirs(question: str, memories: Sequence[Memory], whole: Mapping[str, frozenset[str]]) -> set[str]:
    """The ids of ``memories`` about another's thing where ``question`` asks about the
    asker's (``_someone_elses``): for a question writing "my", every such memory; for one
    asking about the asker without it (``implied``), only where another memory holds those
    words not as another's: the asker's own note on it exists ("metformin 500mg" beside
    "Dad's metformin went up"), and a note of a name that reads as a possessive ("sam's club
    is 5 min away") is not set aside when nothing else says it (``whole``: each memory's
    words)."""
    found = set()
    for m in memories:
        if _someone_elses(question, m.text):
            found.add(m.id)
            continue
        implied = _someone_elses(question, m.text, implied=True)
        if implied and any(
            implied & whole[o.id] and not _someone_elses(question, o.text, implied=True)
            for o in memories
            if o.id != m.id
        ):
            found.add(m.id)
    return found


def _of_self(question: str) -> bool:
    """Whether ``question`` asks about the asker and no one else, though it writes no "my":
    English in the first person ("how much sertraline am I on?"), Chinese naming no one
    (Chinese leaves the subject out: "降压药现在每天吃几毫克？"); not one naming another's
    thing ("Dad's", "他的") or a person ("妈妈", "my sister")."""
    if _OTHERS.search(question) or _PERSON.search(question):
        return False
    if has_cjk(question):
        return not _OF_OTHERS.search(question)
    return bool(FIRST_PERSON.search(question))


def _someone_elses(question: str, text: str, implied: bool = False) -> set[str]:
    """The words of what ``question`` asks about as the user's own ("my passport", "我的车牌")
    that ``text`` holds only as someone else's ("Ellie's passport expires in March", "Dad's
    old manager", "他的车牌"): a memory about another person's thing holds nothing of what
    is asked about one's own. ``implied``: a question writing no "my" that asks about the
    asker (``_of_self``: "how much metformin am I on?", "降压药现在每天吃几毫克？") asks about
    their own of every word it names."""
    mine = {w for m in _MY_THING.finditer(question) for w in words(m.group(1) or m.group(2))}
    if not mine and implied and _of_self(question):  # "降压药现在每天吃几毫克？": the asker's, not "爸爸的降压药"
        mine = _content(words(question))
    if not mine:
        return set()
    asked = words(question)
    theirs = set()
    for m in _THEIR_THING.finditer(text):
        owner = m.group(1) or m.group(2)
        # "my sister's birthday": "Sister's birthday" is it; "my father's": "dad's" is too
        if not (owner and (words(owner) & asked or any(_same_kin(w, owner) for w in asked))):
            thing = m.group(3) or m.group(4)
            # "Tom's dad's birthday" for "my father's birthday": his father, not mine
            theirs |= words(thing) | {w for w in mine if _same_kin(w, thing)}
    rest_text = _THEIR_THING.sub(" ", text)
    rest = words(rest_text)
    return {w for w in mine & theirs if w not in rest and not _same_kin(w, rest_text)}


_ASKER = re.compile(r"\b(?i:my|me|mine|myself)\b|\bI\b|我")
"""The asker in a question ("where did I move?", "what's my dose?", "我住哪儿？")."""


def _about_the_asker(question: str) -> bool:
    """Whether ``question`` asks about the asker (``_of_self``, or it names them: ``_ASKER``):
    a sentence told of someone else it does not name answers no such question
    (``_someone_elses_sentence``)."""
    return _of_self(question) or bool(_ASKER.search(question))


def _someone_elses_sentence(sentence: str, question: str, asked_of: frozenset[str]) -> bool:
    """Whether ``sentence`` tells of someone other than its writer (``whose.told_of``: "dad
    still smoking on the balcony, ugh", "同事小李也搬家了") whom ``question`` does not name,
    by who they are to the writer (``asked_of``, ``whose.people_named`` of it) nor by name
    ("My son Leo started school" answers "what does Leo like?", "coworker sam moved to
    austin" answers "where did sam move?"): what one's sister says of her a1c answers "what
    did my sister say her a1c was?", not "what's my current diabetes pill dosing?"."""
    subject = told_of(sentence, question)
    if subject is None or subject.who in asked_of:
        return False
    if has_cjk(sentence):
        return not (subject.name and subject.name in question)
    return not (subject.name and re.search(rf"\b{re.escape(subject.name)}\b", question, re.IGNORECASE))


def expected_types(question: str) -> frozenset[str]:
    """What kind of thing ``question`` asks for, as ``memcli.text.entities`` types its
    mentions (``ENTITY_TYPES``): "where" a place (or an organisation: "which restaurant"),
    "who" a person or an organisation ("Who do I work for?"), "which/what NOUN" or
    "哪家/什么NOUN" a name (a work only for a title: "which film"), "what" before a kind of
    place (``entities``' place words: "remind me what city I'm based in") a place; empty for any other
    question. Not an amount: "What is my passport number?" is not answered by "my neighbour
    at number 14" (the thing measured is what the question turns on, and its words must be
    held); nor a date ("when" is ``question_type``'s)."""
    kind = question_type(question)
    if kind == "where":
        return frozenset(("place", "organisation"))
    if kind == "who":
        return frozenset(("person", "organisation"))
    if kind == "when":
        return frozenset()
    if _WHICH.search(question):
        # a title ("which film") is a work; a thing of another kind ("which gym") is not
        return frozenset(ENTITY_TYPES) if _TITLE_QUESTION.search(question) else frozenset(ENTITY_TYPES) - {"work"}
    # "remind me what city I'm based in": the kind named after "what" is a kind of place
    named = _KIND_NAMED.search(question)
    if named and {w.lower() for w in named.groups() if w} & _PLACE_WORDS:
        return frozenset(("place",))
    return frozenset()


_KIND_NAMED = re.compile(r"\b(?:which|what)\s+([a-z]+)(?:\s+([a-z]+))?", re.IGNORECASE)
"""The one or two words after "which"/"what", that may name the kind of thing asked ("what
city", "which home town")."""


def _names_expected(
    text: str, speaker: str, types: frozenset[str], kind: str, user: str, speakers: frozenset[str] = frozenset()
) -> bool:
    """Whether ``text`` (said by ``speaker``) names a thing of one of ``types`` (a mention
    ``entities.extract`` finds, other than the user or the speaker, and not an untyped guess
    at the text's first word), and, unless the question asks "who" (``kind``), says whose it
    is of no one else ("kids' dentist is Dr Okafor", "他的车牌": another person's, not the
    user's), nor a ``speakers``' name (a participant of the conversation, or a short form of
    one: "Mel")."""
    if kind != "who" and _OTHERS.search(text):
        return False
    found = extract(text, speaker=speaker or user or "I")
    # a participant ("Wow, Mel, that sounds awesome!") is who talks, not a thing of the kind asked for
    return any(
        m.type in types
        and m.name not in (user, speaker)
        and not any(s.lower().startswith(m.name.lower()) for s in speakers)
        and (m.typed or m.start > 0)
        for m in found.mentions
    )


def holding_expected(question: str, memories: Sequence[Memory], user: str, now: float | None) -> set[str]:
    """The id of the memory that holds the kind of thing ``question`` asks for
    (``expected_types``) though not its words ("Which company do I work for?": "Started at
    Monzo today"; "Where do I live now?": "Finally settled in Denver"): of the first
    ``TYPE_RANK`` of ``memories`` (recall's order) that tell, of the question's speaker if
    it names one, the latest that names a thing of that kind (for a question about the
    past, the first recalled not learned after the date it names); else empty. A memory of
    another day does not answer a question naming a day (``answer`` checks)."""
    types = expected_types(question)
    if not types:
        return set()
    kind = question_type(question)
    # "我妹妹喜欢什么颜色？": a question about someone else is answered only where they are named
    others = {p.group(0).lower() for p in _PERSON.finditer(question)} if kind != "who" else set()
    past = asks_past(question)
    named = _people_named(question, memories, user)
    speakers = frozenset(m.speaker for m in memories if m.speaker and m.speaker != ASSISTANT)
    # "表姐一家搬去了杭州" tells nothing of the asker of "我现在住在上海哪个区？" (as ``_answer``
    # reads its candidates): it takes no place among the first ``TYPE_RANK``
    about_asker = _about_the_asker(question)
    asked_of = people_named(question)
    telling = [
        m
        for m in memories
        if BASE_MODEL not in m.tags
        and m.speaker != ASSISTANT
        and _tells_expected(m, types, kind, user, speakers)
        and (past or not m.superseded_by)
        and (not named or m.speaker in named)
        and not (about_asker and _told_of_another(m, question, asked_of))
    ]
    if past and now is not None:  # "Where was I working back in early 2024?": not what was noted after it
        ends = [d.end for d in query_dates(question, now) if d.start and not d.yearless]
        telling = [m for m in telling if not ends or m.created_at <= max(ends)]
    fitting = [
        m
        for m in telling[:TYPE_RANK]
        if all(person in m.text.lower() for person in others)
        and _names_expected(" ".join(telling_sentences(m.text)), m.speaker, types, kind, user, speakers)
    ]
    if not fitting:
        return set()
    # the current value is the latest said ("Who do I work for now?"), the first recalled for the past
    return {fitting[0].id if past else max(fitting, key=lambda m: m.created_at).id}


def _told_of_another(memory: Memory, question: str, asked_of: frozenset[str]) -> bool:
    """Whether every sentence of ``memory`` that tells is told of someone ``question`` does not
    name (``_someone_elses_sentence``: "sis went keto", "表姐一家搬去了杭州")."""
    told = telling_sentences(memory.text)
    return bool(told) and all(_someone_elses_sentence(s, question, asked_of) for s in told)


def _tells_expected(memory: Memory, types: frozenset[str], kind: str, user: str, speakers: frozenset[str]) -> bool:
    """Whether ``memory`` tells (a sentence of it does not ask); one that also asks ("moved to
    Leeds! why is unpacking so slow?") only where what it tells names a thing of ``types``:
    a note that asks takes no place among the first ``TYPE_RANK`` for nothing."""
    if not any(asks(s) for s in split_sentences(memory.text)):
        return True
    told = telling_sentences(memory.text)
    return bool(told) and _names_expected(" ".join(told), memory.speaker, types, kind, user, speakers)


def _looked_back(memory: Memory, chinese: bool) -> Iterator[QueryDate]:
    """The dates the relative dates of ``memory`` name ("yesterday", "last month", "上周二"; of
    ``_RELATIVE_ZH`` when ``chinese``, else ``_RELATIVE_EN``; not one naming the day it was
    said: ``_SAME_DAY``), in its order, each read by ``dates.query_dates`` with the memory's
    own time as now, as ``resolve_relative_dates`` reads them."""
    for match in (_RELATIVE_ZH if chinese else _RELATIVE_EN).finditer(memory.text):
        if match.group(0).lower() not in _SAME_DAY:
            yield from query_dates(match.group(0), memory.created_at)


def _tells_of_day(memory: Memory, days: Sequence[QueryDate]) -> bool:
    """Whether ``memory`` tells of one of the question's ``days`` by a relative date in it
    ("Had lunch with Jade yesterday", noted on 13 June, tells of 12 June; ``_looked_back``)."""
    return any(
        found.granularity == "day" and found.start and _on_date(replace(memory, created_at=found.start + 1), days)
        for found in _looked_back(memory, has_cjk(memory.text))
    )


def _item(c: _Candidate) -> str:
    """What a list answer quotes of a memory: all of it when short (``LIST_ITEM_CHARS``),
    else its best sentence."""
    text = " ".join(s for s in split_sentences(c.memory.text) if not asks(s))
    return text if len(c.memory.text) <= LIST_ITEM_CHARS and text else c.text


def _people_named(question: str, memories: Sequence[Memory], user: str) -> set[str]:
    """The speakers of ``memories`` (other than ``user`` and the assistant) that
    ``question`` names: "What instrument does Caroline play?" asks about Caroline."""
    found: set[str] = set()
    for speaker in {m.speaker for m in memories if m.speaker}:
        if speaker == ASSISTANT or _is_user(speaker, user):
            continue
        if has_cjk(speaker):
            if speaker in question:
                found.add(speaker)
        elif re.search(r"\b" + re.escape(speaker) + r"\b", question, re.IGNORECASE):
            found.add(speaker)
    return found


def _about(memory: Memory, person: str) -> bool:
    """Whether ``memory`` is said by ``person`` or names them."""
    return memory.speaker == person or person.lower() in memory.text.lower()


def _held_during(memory: Memory, dates: Sequence[QueryDate], now: float) -> bool:
    """Whether ``memory`` held (was learned and not yet superseded) during one of the
    question's ``dates`` written with a year ("in 2022"), or during the latest month of a
    month named alone that began by ``now`` (unix seconds): "what dose was I on in March?"
    asked in July is about this year's March, asked in January about last year's."""
    for date in dates:
        start, end = date.start, date.end
        if date.granularity == "month alone":
            start, end = _latest_month(date.month, now)
        elif not start or date.yearless:
            continue
        if memory.created_at <= end and (not memory.valid_to or memory.valid_to >= start):
            return True
    return False


def _latest_month(month: int, now: float) -> tuple[float, float]:
    """The latest ``month`` (1-12) that began by ``now``, as unix seconds (start, end), local
    time, the end the last second inside."""
    today = datetime.fromtimestamp(now)
    year = today.year if month <= today.month else today.year - 1
    start = datetime(year, month, 1)
    end = datetime(year + (month == 12), month % 12 + 1, 1)
    return start.timestamp(), end.timestamp() - 1


def _held(wanted: set[str], held: frozenset[str], text: str) -> set[str]:
    """The words of ``wanted`` that a memory of words ``held`` and ``text`` holds, counting
    a word of ``ATTRIBUTE_WORDS`` held when the memory says the attribute otherwise, and a
    Chinese character held when a word holding it is ("爱" of "爱好", held as "喜欢")."""
    if not _ALIASES:
        _ALIASES.update({stem_of(k) if k.isascii() else k: v for k, v in ATTRIBUTE_WORDS.items()})
    found = wanted & held
    lower = text.lower()
    for word in wanted - found:
        if any(_alias_in(alias, text, lower) for alias in _ALIASES.get(word, ())):
            found.add(word)
        elif word.isascii() and len(word) >= PREFIX_CHARS and any(_same_word(word, t) for t in held if t.isascii()):
            found.add(word)
        elif len(word) == 2 and has_cjk(word) and all(c in held for c in word):
            found.add(word)  # "上班" of a memory jieba cut as "这边", "上": both characters are there
        elif _same_kin(word, text):
            found.add(word)  # "mother" of "mum's wifi pw": one relation, in other words
        elif word in _class_words(not word.isascii()) and word in _stated_classes(text, not word.isascii()):
            found.add(word)  # "thyroid" of "synthroid raised to 88mcg": a medicine of that class
        elif word in _service_words(not word.isascii()) and word in _named_services(text, not word.isascii()):
            found.add(word)  # "streaming" of "killed the netflix sub. trying mubi": a service of that kind
    whole = [w for w in found if len(w) > 1 and has_cjk(w)]
    found |= {c for c in wanted - found if len(c) == 1 and any(c in w for w in whole)}
    return found


def _tells_of_another(sentence: str) -> bool:
    """Whether ``sentence`` tells of someone other than its writer at all: a person told of
    (``whose.told_of``), named by who they are (``whose.people_named``) or owning something
    (``_THEIR_THING``: "Sarah's biopsy came back benign", "his new job")."""
    return told_of(sentence) is not None or bool(people_named(sentence)) or bool(_THEIR_THING.search(sentence))


def _same_kin(word: str, text: str) -> bool:
    """Whether the stem ``word`` of a question is a kin word ("mother", "爸") and ``text``
    writes another word for the same relation ("mum", "mom"; "父亲": ``whose.relation``,
    ``whose.relations_written``). "boyfriend" is no "partner", and "grand-dad" no "dad"."""
    kin = _kin_stems().get(word, "")
    return bool(kin) and kin in relations_written(text)


@cache
def _kin_stems() -> dict[str, str]:
    """The relation of each stem of a kin word ("mother": "mother", "mum": "mother", "爸":
    "father"; ``whose.relation``), made at first use."""
    return {stem_of(w) if w.isascii() else w: relation(w) for w in kin_words()}


def _same_word(word: str, other: str) -> bool:
    """Whether two stems are of one word the stemmer brings to different stems ("allergic":
    allerg, "allergy": allergi; "neurologist" and "neuro"): one begins with the other, both
    at least ``PREFIX_CHARS`` long."""
    if len(other) < PREFIX_CHARS:
        return False
    return word.startswith(other) or other.startswith(word)


_WHOLE_DAY_EN = re.compile(
    r"\bwhat\s+(?:did|have|do)\s+(?:we|I|you)\s+(?:\w+\s+)?(?:talk|chat|discuss|speak|say|do)(?:ed)?\b|"
    r"\bwhat\s+(?:we|I)\s+(?:talked|chatted|spoke|discussed|did)\b|\bwhat\s+(?:happened|went\s+on)\b|"
    r"\b(?:how\s+was|tell\s+me\s+about|summari[sz]e|recap\s+of|sum\s+up)\s+(?:my|our|the)?\s*day\b",
    re.IGNORECASE,
)
_WHOLE_DAY_ZH = re.compile(r"(?:聊|谈|说|讨论|发生|做|干)了?(?:些)?什么|聊了啥|干了啥|过得怎么样|那天怎么样")


def asks_whole_day(question: str) -> bool:
    """Whether ``question`` asks about a whole day rather than one thing in it ("What did
    we talk about on May 2nd?", "What happened on 2 May?", "5月2日我们聊了什么？"); only
    with a date in it (``day_summaries`` picks the day)."""
    dated = _DATE_WORDS.search(question) or DAY_OF_MONTH.search(question)
    return bool((_WHOLE_DAY_EN.search(question) or _WHOLE_DAY_ZH.search(question)) and dated)


def _summary_day(memory: Memory) -> float:
    """Noon of the day an event summary is of (``Memory.day``), as unix seconds."""
    try:
        return datetime.strptime(memory.day, "%Y-%m-%d").replace(hour=12).timestamp()
    except ValueError:
        return memory.created_at


def day_summaries(question: str, memories: Sequence[Memory], now: float) -> list[Memory]:
    """The event summaries (kind ``event_daily``) among ``memories`` of the day a whole-day
    question names (``asks_whole_day``; its date read by ``dates.query_dates`` against
    ``now``), latest first; empty for any other question or a date that names no single
    day. A date without a year ("May 2nd") matches that day of any year up to ``now``."""
    if not asks_whole_day(question):
        return []
    days = [d for d in query_dates(question, now) if d.granularity == "day" and d.start]
    if not days:
        return []
    found = [
        m
        for m in memories
        if m.kind == Kind.EVENT_DAILY.value
        and _summary_day(m) <= now + 86400
        and _on_date(replace(m, created_at=_summary_day(m)), days)
    ]
    return sorted(found, key=lambda m: -_summary_day(m))


def _day_answer(summary: Memory, chinese: bool) -> Extracted:
    """The answer to a whole-day question: the day's event summary, its lines quoted,
    cited."""
    lines = [line.strip() for line in summary.text.split("\n") if line.strip()]
    day = _day(_summary_day(summary), chinese)
    if chinese:
        return Extracted(f"{day}的事件摘要：“{'；'.join(lines)}” [{cite(summary)}]", [summary.id])
    return Extracted(f'The summary of {day}: "{" / ".join(lines)}" [{cite(summary)}]', [summary.id])


def answer(
    question: str,
    memories: Sequence[Memory],
    user: str = "",
    now: float | None = None,
    similarity: Mapping[str, float] | None = None,
) -> Extracted:
    """The extractive answer to ``question`` from ``memories`` (recalled, best first) of
    ``user``, asked at ``now`` (unix seconds; resolves the question's relative dates, the
    latest memory's time when None); see the module docstring. Chinese for a question with
    CJK characters. ``similarity``: recall's cosine similarity (−1..1) of each memory (by
    id) to the question, which gathers the items of an English list question
    (``LIST_SIMILAR``); never whether to answer. A question about the past is answered last
    by the time order of the notes (``of_its_time``)."""
    found = _answered(question, memories, user, now, similarity or {})
    return of_its_time(question, found, memories, user, now, similarity or {})


def _answered(
    question: str, memories: Sequence[Memory], user: str, now: float | None, similarity: Mapping[str, float]
) -> Extracted:
    """``answer`` by the words of the notes, before their time order is read."""
    found = _answer(question, memories, user, now, set(), similarity or {})
    if found.answered:
        return found
    # Only where no memory holds the question's words: the memory that holds the kind of
    # thing asked for is a weaker sign than one that holds what the question names.
    typed = holding_expected(question, memories, user, now)
    if typed:
        found = _answer(question, memories, user, now, typed, similarity or {})
        if found.answered:
            return found
    # Last, a note holding the question's words in part, with the person's later (or, for the
    # past, earlier) note on it beside it (``LATER_COVERAGE``): a weaker sign than either above.
    found = _answer(question, memories, user, now, set(), similarity or {}, partly=True)
    if found.answered or not similarity:
        return found
    # Last of all, by recall's closeness and no phrasing: the person's own current note that
    # recall finds closest, when it states the kind of value asked (``_closest_own``).
    return _answer(question, memories, user, now, set(), similarity, closest=True)


def _answer(
    question: str,
    memories: Sequence[Memory],
    user: str,
    now: float | None,
    typed: set[str],
    similarity: Mapping[str, float],
    partly: bool = False,
    closest: bool = False,
) -> Extracted:
    """``answer``, counting the memories of ``typed`` as holding what is asked; ``partly``:
    answering only where the best memory holds the question's words in part and the
    person's later or earlier close note answers (``LATER_COVERAGE``)."""
    chinese = has_cjk(question)
    not_found = Extracted(NOT_FOUND_ZH if chinese else NOT_FOUND, [])
    if memories:
        summaries = day_summaries(question, memories, now if now is not None else max(m.created_at for m in memories))
        if summaries:
            return _day_answer(summaries[0], chinese)
    # "dad still smoking on the balcony" says nothing of the asker of "am I still a smoker?":
    # a sentence telling of someone else answers a question about the asker only when it
    # names who they are; "who moved to leeds?" asks of no one in particular
    candidates = _candidates(memories)
    if _about_the_asker(question):
        asked_of = people_named(question)
        candidates = [c for c in candidates if not _someone_elses_sentence(c.text, question, asked_of)]
    if not candidates:
        return not_found
    every = candidates
    when = now if now is not None else max(m.created_at for m in memories)
    # whether the question names a date is read by its date words (feasts too), and the date by
    # ``query_dates``; a span its words do not name ("this year", "4 years ago", 明年) is no
    # day of the memories to match
    dates = query_dates(question, when) if _DATE_WORDS.search(question) or DAY_OF_MONTH.search(question) else []
    asked = _ZH_HOW_MANY.sub(" ", _FILLER.sub(" ", _ZH_PLACING.sub(" ", asking_part(question))))
    undated = DAY_OF_MONTH.sub(" ", _DATE_WORDS.sub(" ", asked))
    wanted = content_words(undated if dates else asked)
    if dates:  # the day and year of "on 4 February", "12 June 2025"
        wanted = {w for w in wanted if not _DATE_NUMBER.fullmatch(w)} or wanted
    if not wanted:
        return not_found
    documents = len(candidates)
    weight = {t: 1.0 + math.log((documents + 1) / (1 + sum(t in c.tokens for c in candidates))) for t in wanted}
    total = sum(weight.values())
    whole = {m.id: frozenset(words(f"{m.speaker} {m.text}")) for m in memories}
    kind = question_type(question)
    if kind == "what" and _TITLE_QUESTION.search(question):
        kind = "title"
    past = asks_past(question)
    dated = {m.id for m in memories if dates and _on_date(m, dates)}
    # "What did I buy on March 9th?": a memory of another day does not answer (issue 31).
    days = [d for d in dates if d.granularity == "day" and d.start]
    by_date = False
    if days and kind != "when":
        dated |= {m.id for m in memories if _tells_of_day(m, days)}
        # the date is the match (issue 31), unless a note of another day holds what is asked,
        # and more of it than any note of the day: then the question is about that subject
        # ("what did I weigh on Jan 1?"), not the day; where the day's note holds as much ("took
        # the car in" and "car wash" for "the verdict on my car last tuesday"), the day decides
        # unless recall finds the other day's note closer; a day's note of someone else's thing
        # ("Dan's blood pressure" for "my blood pressure") counts for nothing
        holds = {id(c): len(_held(wanted, c.tokens, c.text)) for c in candidates}
        days_own = [c for c in candidates if c.memory.id in dated and not _someone_elses(question, c.text, True)]
        on_the_day = max((holds[id(c)] for c in days_own), default=0)
        closest_of_day = max(
            (similarity.get(c.memory.id, 0.0) for c in days_own if holds[id(c)] == on_the_day), default=0.0
        )
        by_date = not any(
            holds[id(c)] >= MIN_COVERAGE * len(wanted)
            and (
                holds[id(c)] > on_the_day
                or (holds[id(c)] == on_the_day and similarity.get(c.memory.id, 0.0) > closest_of_day)
            )
            for c in candidates
            if c.memory.id not in dated
        )
        candidates = [c for c in candidates if c.memory.id in dated]
        if not candidates:
            return not_found
        if asks_nothing_in_particular(undated):
            return _day_answer_from_statements(kind, candidates, user, chinese)
    # "Where did I live in 2022?": of a memory and the one that replaced it, the one that
    # held on that date answers, whatever was noted on it.
    changed = {m.id for m in memories if m.superseded_by} | {m.superseded_by for m in memories if m.superseded_by}
    held_then = {m.id: _held_during(m, dates, when) for m in memories if past and dates and m.id in changed}
    # A sentence that states what is asked in other words ("Which city do I live in?": "We
    # got the keys to our new flat in Bath") holds the whole question.
    # "What's my blood type again? I never remember.": what follows a question in the same
    # memory answers only with the question's own words.
    asking = {m.id for m in memories if any(asks(s) for s in split_sentences(m.text))}
    candidates = [c for c in candidates if c.memory.id not in asking or _held(wanted, c.tokens, c.text)]
    if not candidates:
        return not_found
    # "Which hotel did I book in Kyoto?" is not answered by "need to figure out a hotel in
    # kyoto": a sentence that only plans or needs tells nothing done
    if not chinese and _ASKS_DONE.search(question):
        candidates = [c for c in candidates if not _ONLY_PLANNED.match(c.text)]
        if not candidates:
            return not_found
    needed = must_state(question)
    candidates = [c for c in candidates if _states(needed, c.memory.text)]
    # an amount of a kind with units ("what temperature …?", "how much is my rent?") is stated
    # by a number of that kind or of none; a count may be told in words ("stopped smoking")
    amount = asks_amount(question)
    if amount != "count":
        candidates = [c for c in candidates if states_amount(amount, c.memory.text)]
    # "what's the name of Leo's nursery?": a memory that names nothing but what the question
    # names does not answer (a kind of value, as ``must_state``'s); English only, where a
    # name is written in capitals (a Chinese name is known by no sign of its own)
    if _ASKS_NAME.search(question) and not chinese and not is_list_question(question):
        candidates = [c for c in candidates if names_something_else(question, c.memory.text)]
    if not candidates:
        return not_found
    # of a short note, the whole note's home ("got the keys!! walthamstow place is ours from
    # today": a cue of one's home in one sentence, the place in the next); not its other
    # statements ("Left the running club. Signed up to The Depot" asked whether still in the club).
    # Read once a note, not once each of its sentences.
    home_noted: dict[str, bool] = {}

    def notes_home(memory: Memory) -> bool:
        if memory.id not in home_noted:
            home_noted[memory.id] = (
                not chinese
                and len(memory.text) <= SHORT_NOTE_CHARS
                and any(s.key == RESIDENCE for s in statements(memory.text))
                and answers_asked(question, memory.text)
            )
        return home_noted[memory.id]

    stating = {
        id(c)
        for c in candidates
        if answers_asked(question, c.text) or (c.text != c.memory.text and notes_home(c.memory))
    }
    expecting = expected_types(question) if typed else frozenset()
    stating_memories = {c.memory.id for c in candidates if id(c) in stating}
    answering = _answers_to_noted_questions(memories, asking, whole, user)
    replaced_by: dict[str, list[Memory]] = {}
    for m in memories:
        if m.superseded_by:
            replaced_by.setdefault(m.superseded_by, []).append(m)

    theirs = _theirs(question, memories, whole)

    def held_by(memory: Memory) -> set[str]:
        if memory.id in stating_memories or memory.id in typed:
            return set(wanted)
        if memory.id in theirs:  # of another's thing, the rest of it is not the user's either
            return set()
        found = _held(wanted, whole[memory.id], memory.text)
        if not past:  # what the note it replaced holds ("PureGym membership"), the newer one is about too
            for older in replaced_by.get(memory.id, ()):
                found |= _held(wanted, whole[older.id], older.text)
        for question_note in answering.get(memory.id, ()):  # "q for Dr Lin: can I take…?", then "Dr Lin said…"
            found |= _held(wanted, whole[question_note.id], question_note.text)
        return found

    for c in candidates:
        own = sum(weight[t] for t in (wanted if id(c) in stating else _held(wanted, c.tokens, c.text))) / total
        if c.memory.id in theirs:  # a sentence of another's thing holds nothing of the asker's
            own = 0.0
        context = sum(weight[t] for t in held_by(c.memory)) / total
        c.score = own + CONTEXT_WEIGHT * context + RANK_WEIGHT * (1 - c.rank / max(1, len(memories)))
        if id(c) in stating or (
            c.memory.id in typed and _names_expected(c.text, c.memory.speaker, expecting, kind, user)
        ):
            c.score += ATTRIBUTE_BONUS
        if _fits(kind, c.text):
            c.score += TYPE_BONUS
        if c.memory.id in dated:
            c.score += DATE_BONUS
        if c.memory.superseded_by and not past:
            c.score *= SUPERSEDED_SHARE
        if c.memory.id in held_then:
            c.score = c.score + DATE_BONUS if held_then[c.memory.id] else c.score * SUPERSEDED_SHARE
    best = max(candidates, key=lambda c: c.score)
    # A present-tense question is answered by the note that replaced the best one when it is
    # recalled too: "PureGym membership" holds the words of "which gym am I a member of", and
    # "cancelled PureGym. joined The Arch" says what holds now.
    seen = {best.memory.id}
    while best.memory.superseded_by and not past and best.memory.superseded_by not in seen:
        newer = [c for c in candidates if c.memory.id == best.memory.superseded_by]
        if not newer:
            break
        best = max(newer, key=lambda c: c.score)
        seen.add(best.memory.id)

    named = _people_named(question, memories, user)

    def covers(c: _Candidate) -> bool:
        if named and not any(_about(c.memory, person) for person in named):
            return False
        return len(held_by(c.memory)) >= MIN_COVERAGE * len(wanted)

    # Weighted too: "What is my passport number?" is not answered by "my neighbour at number
    # 14", which holds the common half of the question and not the word it turns on.
    held = held_by(best.memory)
    # A question about what holds now, whose words the best note holds only in part ("How
    # many cigarettes am I smoking a day?": "smoking about 10 a day"), is answered when the
    # person noted on the subject again later, as recall finds (``_later_word``): the later
    # note ("day 1 no cigs. quit") is the current word, quoted first. Two of the person's own
    # notes close to the question at two times are the second sign that it is their subject.
    # A Chinese question naming no one is the asker's own ("降压药现在每天吃几毫克？"): Chinese
    # leaves the subject out.
    about_self = bool(FIRST_PERSON.search(question)) or (
        chinese and not named and not _OTHERS.search(question) and not re.search(r"[他她它你您]|大家|别人", question)
    )
    current = not past and not dates and about_self
    # A note quoted for being the latest or the earlier word states what is asked as well:
    # "need a dress for the wedding" gives no date for "What date is my sister's wedding?".
    # For "when" it is a date: the note's own date tells when it was noted, not when the lease ends.
    every = [c for c in every if _states("date" if kind == "when" else needed, c.memory.text)]
    earlier_question = asks_earlier(question) and about_self and not days
    # Of the question's subject too: the word for the kind of value asked, written in the note
    # ("password sticker is on the back of the router" for "what's the wifi password?") or held
    # by a word that may go with it ("take the bins out at 7" for "what's my vitamin D dose?"),
    # is no part of what the question asks about; a value of that kind the note states is
    # ("adopted Pepper from the shelter" for "what are my dogs' names?").
    kinds = wanted & _value_kinds()
    # a Chinese word's characters are among its words ("血型": "血", "型"): those of a kind's word are of it
    subject = {w for w in wanted - kinds if not (len(w) == 1 and has_cjk(w) and any(w in k for k in kinds))}
    fully = (
        covers(best)
        and sum(weight[t] for t in held) >= MIN_COVERAGE * total
        and (
            len(held & subject) >= MIN_COVERAGE * len(subject)
            or _states_kind(held, best.memory, question, [c.memory for c in candidates])
        )
    )
    whole_note = False
    if closest:
        if fully:
            return not_found  # answered by the passes before
        # "what did we eat on Jan 21?": the date is the match (issue 31), recall's closeness the
        # sign that the day's best note is on the subject: the day's note holding none of the
        # question's other words answers in this last pass only
        on_day = by_date and (not named or any(_about(best.memory, person) for person in named))
        if on_day and similarity:  # of the day's notes, the one recall finds closest
            best = max(candidates, key=lambda c: similarity.get(c.memory.id, 0.0))
            held = held_by(best.memory)
            # chosen as a whole, not by a sentence's words: a short note of the person's is
            # quoted whole ("took the car in. brake pads down to 20%" for "the verdict on my car")
            whole_note = _own(best.memory, user) and len(best.memory.text) <= SHORT_NOTE_CHARS
        if not on_day:
            rivals = [m for m in memories if not days or m.id in dated]
            pick = _closest_own(
                question, wanted, candidates, rivals, similarity, user, asking, past, kind, held_by, bool(days)
            )
            if pick is None:
                return not_found
            best, held = pick, held_by(pick.memory)
    elif partly == fully:
        return not_found  # answered (or not) by the passes before
    # A question for a name, in a language without plurals ("我的猫叫什么名字？"), asks for
    # every one of its kind that is named in full: both cats, when two notes name one each.
    names = bool(_NAME_QUESTION.search(question))

    def gathered(pool: Sequence[_Candidate]) -> Extracted | None:
        """A list question's answer: every memory holding one of its items, or None when
        fewer than two do. Where one item alone holds the question's words, the person's
        later note that tells what is asked (``_later_word`` over ``pool``) is a second: an
        item added, not one replaced ("朋友说南京大牌档不错" after "小李推荐了家火锅 蜀大侠" for
        "大家给我推荐过哪些饭店")."""
        firsts: dict[str, _Candidate] = {best.memory.id: best} if closest or partly else {}
        for c in sorted(candidates, key=lambda c: -c.score):
            if names and not (held_by(c.memory) >= wanted and not c.memory.superseded_by):
                continue
            if c.memory.superseded_by and not past:  # "lisinopril 10 mg" once raised to 20 mg: no item now
                continue
            if c.memory.id not in firsts and c.score >= LIST_SHARE * best.score and covers(c):
                firsts[c.memory.id] = c
        # "which cafes": of a kind named by what the question asks for, a name
        item_kind = "name" if kind == "what" and _WHICH.search(question) else kind
        if similarity and not names:
            _add_similar(firsts, candidates, similarity, past, named, item_kind, chinese, question)
        if not names:
            _add_continued(firsts, candidates, past, named, user)
            if len(firsts) == 1 and current and similarity:
                later = _later_word(question, best, pool, similarity, user, asking, chinese, theirs, of_another=True)
                if later is not None:
                    firsts[later.memory.id] = later
                    _add_similar(firsts, candidates, similarity, past, named, item_kind, chinese, question)
        if len(firsts) < 2:
            return None
        return _each_quoted(sorted(list(firsts.values())[:LIST_MAX], key=lambda c: c.memory.created_at), user, chinese)

    if partly:
        # of the subject: a word naming the kind of value ("dose" of "5 mg") is not the subject
        subject = held - _value_kinds()
        if not (current or earlier_question) or sum(weight[t] for t in subject) < LATER_COVERAGE * total:
            return not_found
        if named and not any(_about(best.memory, person) for person in named):
            return not_found
        if _content(words(" ".join(wanted - held))) & _value_kinds():  # "blood type": no note says one
            return not_found
        # not a note of another's thing ("kids' dentist is Dr Okafor" for "which dentist am I with?")
        stated = [c for c in every if c is best or not _OTHERS.search(c.memory.text)]
        if _ASKS_NAME.search(question):  # "what's my physio's name?": not "physio said my shoulder is better"
            stated = [c for c in stated if names_something_else(question, c.memory.text)]
        if earlier_question:  # the mirror: "我跳到字节之前在哪上班", the note before the change
            earlier = _before_change(question, best, replaced_by, memories, dates) or _earlier_word(
                question, best, stated, similarity, user, asking, dates
            )
            return not_found if earlier is None else _earlier_answer(earlier[0], earlier[1], user, chinese)
        # a list's items, each its own note, before a later note as the latest word ("also for
        # the flat — a doormat" adds to "new flat needs: shower curtain", replaces nothing)
        listed = gathered(stated) if is_list_question(question) else None
        if listed is not None:
            return listed
        later = _later_word(question, best, stated, similarity, user, asking, chinese, theirs)
        if later is not None:
            return _later_answer(later, best, user, chinese)
        # the same second sign when a rule read the change: the best note replaced a recalled
        # one of the person's ("Engaged to Marcus", then "married Marcus today")
        if not (replaced_by.get(best.memory.id) and _own(best.memory, user) and best in stated):
            return not_found
    if is_list_question(question) or names:
        listed = gathered(every)
        if listed is not None:
            return listed
    if earlier_question:
        earlier = _before_change(question, best, replaced_by, memories, dates) or _earlier_word(
            question, best, every, similarity, user, asking, dates
        )
        if earlier is not None:
            return _earlier_answer(earlier[0], earlier[1], user, chinese)
    later = _later_word(question, best, every, similarity, user, asking, chinese, theirs) if current else None
    if later is not None:
        return _later_answer(later, best, user, chinese)
    quoted = [best]
    if whole_note:  # its sentences of the writer's own matters ("Sarah's biopsy came back" is not)
        whole = [c for c in candidates if c.memory is best.memory and (c is best or not _tells_of_another(c.text))]
        quoted = sorted(whole, key=lambda c: c.index)
    beside = [] if whole_note else [c for c in candidates if c.memory is best.memory and abs(c.index - best.index) == 1]
    # The neighbour joins when it scores close, when it holds what the question asks for
    # and the best one does not ("flying on the track" beside "I went to the racetrack"),
    # or when the best one points back to it ("I'll try to watch this TV show").
    joining = [
        c
        for c in beside
        if c.score >= SECOND * best.score
        or (_fits(kind, c.text) and not _fits(kind, best.text))
        or (c.index == best.index - 1 and _REFERS_BACK.search(best.text))
        or (c.index == best.index + 1 and not past and not _YES_NO.search(question) and _ends_only(best.text))
        or (c.index == best.index + 1 and _short_tail(best.memory, c.text, user))
    ]
    if joining:
        quoted.append(max(joining, key=lambda c: c.score))
        quoted.sort(key=lambda c: c.index)
    joiner = "" if has_cjk(best.text) else " "
    text = joiner.join(resolve_relative_dates(c.text, best.memory.created_at, chinese) for c in quoted)
    replaced = [m for m in memories if m.superseded_by == best.memory.id]
    attributed = _attributed(text, best.memory, user, chinese)
    if replaced and not past:
        attributed += _replaced(best.memory, _held_value(best.memory, replaced, memories), chinese)
    return Extracted(attributed, [best.memory.id])


def _short_tail(memory: Memory, sentence: str, user: str) -> bool:
    """Whether ``sentence``, the one after the quoted sentence of ``memory``, is a short
    afterword of a short note of the person's own (``SHORT_NOTE_CHARS``,
    ``SHORT_SENTENCE_WORDS``) that a quote of the sentence before it would cut off ("no
    running for now. stopped.", "signed the lease. Bath!", "戒烟了。第三天。"): a turn of
    someone else's is quoted as it is (its next sentence is another thought)."""
    if not _own(memory, user) or len(memory.text) > SHORT_NOTE_CHARS:
        return False
    if has_cjk(sentence):
        return len(re.sub(r"\s|[。！？!?.,，]", "", sentence)) <= 2 * SHORT_SENTENCE_WORDS
    return len(sentence.split()) <= SHORT_SENTENCE_WORDS


_PROPER_POSSESSIVE = re.compile(r"\b[A-Z][\w]*['’]s\s+[A-Z]\w*|\b[A-Z]\w*\s+[A-Z]\w*['’]s\b|\b[A-Z]{2,}['’]s\b")
"""A possessive that is a name ("Sam's Club", "Trader Joe's", "BJ's"), not someone else's
thing: a person is not written in capitals ("signed up at BJ's instead")."""
_MY_POSSESSIVE = re.compile(r"\b(?:my|our)\s+([a-z-]+)['’]s\b", re.IGNORECASE)
"""A possessive after "my" or "our": of the writer's thing ("my car's reg", "our flat's
boiler") or of a person ("my sister's hens", "my boss's office"); ``_of_others`` tells which."""


def _of_others(text: str, question: str) -> bool:
    """Whether ``text`` writes a possessive of someone other than its writer (``_OTHERS``),
    other than a name ("Sam's Club", ``_PROPER_POSSESSIVE``) and the writer's own thing that
    ``question`` asks about ("my car's reg is KX19 PLD" for "What's my car registration?": the
    car is the writer's, and so is its registration). Any other "my X's" may be a person's
    ("my boss's new office", "my mate's wedding"): ``whose`` knows kin words, not every word
    for a person, so it stays someone else's."""
    text = _PROPER_POSSESSIVE.sub(" ", text)
    asked = words(question)
    text = _MY_POSSESSIVE.sub(
        lambda m: " " if set(tokens(m.group(1))) & asked and not people_named(m.group(1)) else m.group(0), text
    )
    return bool(_OTHERS.search(text))


_ACRONYM = re.compile(r"\b[A-Z]{2,}\b")
"""A name in capitals ("DASH", "NHS")."""
_COMPANY_ZH = re.compile(r"[跟和同与陪约见找][^，。！？,.!?\s的了]{1,4}")
"""Someone the person kept company with, in Chinese: "跟陈阿姨喝茶", "和老周吃饭"."""
CLOSEST_FLOOR = 0.25
"""Cosine similarity (−1..1) to the question that the person's own closest note needs to
answer it when it holds too few of the question's words (``_closest_own``)."""
CLOSEST_MARGIN = 0.05
"""…and by how much it must be closer than the person's next closest current note."""


def _closest_own(
    question: str,
    wanted: set[str],
    candidates: Sequence[_Candidate],
    rivals: Sequence[Memory],
    similarity: Mapping[str, float],
    user: str,
    asking: set[str],
    past: bool,
    kind: str,
    held_by: Callable[[Memory], set[str]],
    on_day: bool = False,
) -> _Candidate | None:
    """The best sentence of the person's own note that recall finds closest to ``question``
    (cosine ``similarity``), for a question whose words no note holds enough of: "What eating
    plan am I following now?" and "Nutritionist switched me to the DASH diet plan". Only a
    note or turn of the person's (``_own``; not a reply, not the base model's), that asks
    nothing (``asking``), current (not superseded, unless the question asks about the past),
    not about someone else's thing, at least ``CLOSEST_FLOOR`` close and ``CLOSEST_MARGIN``
    closer than any other current note of the person's of ``rivals`` (the recalled memories,
    of the day the question names when it names one, ``on_day``), whether or not that one may
    answer. Within the margin of one other note only, the rest further off, and sharing a word
    with it, the later of the two answers ("day 1 keto", then "keto made me miserable,
    switching to mediterranean": two words on one subject, the later the current one).

    And only when it states the kind of value asked: ``candidates`` already state what
    ``must_state`` needs and, for a name, name something; of the question's words it holds,
    one is not a kind of value ("my neighbour at number 14" for "my passport number"); the
    words it lacks name no kind of value ("blood type", "型号": no note says one), unless a
    number states it (a dose, a size), a label does ("landlord = greg tompkins" a name,
    ``labelled_value``; "wifi pw: sunflower42" a code) or a written code does (a number, a
    password: ``_states_code``); an amount asked is stated by a number of its kind
    (``asks_amount``, ``states_amount``: "starter doubled in 6h" states no oven temperature);
    for "where" or "who", or "which …" when it holds none of the question's words and won no
    tie, it or the person's later close note names something the question does not
    (``names_something_else``, or a name in capitals: "DASH", "YMCA"): the closest when its
    latest later close note names one (the latest-note rule quotes that first), else the
    latest of those that name one ("planet fitness $10/mo", "cancelled PF, joined the YMCA",
    "swim lessons at the Y": the YMCA note).

    For a Chinese question, whose cosines mislead ("我房贷还剩多少没还" and "房贷利率又降了"),
    only the notes sharing a word of the question's subject (not a kind of value) are heard,
    as answer and as rivals, unless the question names a day (``on_day``: that day's notes);
    "who" needs a person or someone kept company ("跟陈阿姨喝茶"), "where" a place. None
    otherwise. Not for "when": a date in a note that lacks the question's words is as likely
    the date of something else ("lease renewal signed by friday" for "when does my lease
    end?")."""
    chinese = has_cjk(question)
    if kind == "when":
        return None
    best_of: dict[str, _Candidate] = {}
    for c in sorted(candidates, key=lambda c: -c.score):
        best_of.setdefault(c.memory.id, c)
    own = [
        c
        for c in best_of.values()
        if _own(c.memory, user)
        and c.memory.id not in asking
        and BASE_MODEL not in c.memory.tags
        and (past or not c.memory.superseded_by)
        and not _someone_elses(question, c.memory.text)
        and (kind == "who" or not _of_others(c.memory.text, question))
    ]
    # For Chinese, whose cosines mislead ("我房贷还剩多少没还" and "房贷利率又降了"), only a note
    # sharing a word of the question's subject, or of the day it names, is heard, and only
    # such notes are its rivals.
    if chinese:
        own = [c for c in own if on_day or held_by(c.memory) - _value_kinds()]
    if not own:
        return None
    top = max(own, key=lambda c: similarity.get(c.memory.id, 0.0))
    close = similarity.get(top.memory.id, 0.0)
    # the margin is over every other current telling note of the person's (of the day asked), stating the value or not
    contenders = [
        m
        for m in rivals
        if m.id != top.memory.id
        and m.id not in asking
        and _own(m, user)
        and BASE_MODEL not in m.tags
        and (past or not m.superseded_by)
        and (not chinese or on_day or held_by(m) - _value_kinds())
    ]
    following = max((similarity.get(m.id, 0.0) for m in contenders), default=0.0)
    won_tie = False
    if close < CLOSEST_FLOOR:
        return None
    # a list question's items are about as close as each other: no margin ("what meds am I on?")
    if close - following < CLOSEST_MARGIN and not is_list_question(question):
        # Two of the person's own notes about as close to the question (within the margin of
        # each other, the rest further off) are two words on one subject: the later one is
        # the current word ("day 1 on keto", then "keto was miserable, switching to ...").
        tied = [m for m in contenders if close - similarity.get(m.id, 0.0) < CLOSEST_MARGIN]
        others = [m for m in contenders if m not in tied]
        low = min(similarity.get(m.id, 0.0) for m in tied)
        if (
            past
            or len(tied) != 1
            or max((similarity.get(m.id, 0.0) for m in others), default=0.0) > low - CLOSEST_MARGIN
        ):
            return None
        # about the same thing: the two share a word ("keto"), not "tiler booked" and "oven arrived"
        if not _long_words(tied[0].text) & _long_words(top.memory.text):
            return None
        won_tie = True
        if tied[0].created_at > top.memory.created_at:
            newer = [c for c in own if c.memory.id == tied[0].id]
            if not newer:
                return None
            top = newer[0]
    held = held_by(top.memory)
    # "my neighbour at number 14" holds "number", not "passport"; but a dose the note states
    # ("endo cut the levo back to 100mcg" holds "dose" by its "mcg") is the value asked, not its kind
    if held and not held - _value_kinds() and not _states_dose(held, top.memory, question, rivals):
        return None
    lacking = _content(words(" ".join(wanted - held))) & _value_kinds()
    # a number states a dose, a size or a number ("Vit D 1000 IU" for "what dose of vitamin D")
    # a labelled value states it whatever its kind ("accountant = bob fenwick" for "the name of my accountant")
    if (
        lacking
        and not (lacking <= _counted_kinds() and _STATES_NUMBER.search(top.memory.text))
        and not (lacking <= _kind_words(_NAME_KIND_WORDS) and labelled_value(question, top.memory.text))
        and not labelled_value(question, top.memory.text, code=True)
        and not (lacking <= _kind_words(_CODE_KIND_WORDS) and _states_code(top.memory.text, question))
    ):
        return None
    # an amount of the kind asked: "what oven temp ...?" is not answered by "starter doubled in 6h"
    if not states_amount(asks_amount(question), top.memory.text):
        return None
    if chinese:
        # Chinese names are written with no sign of their own: "who" needs a person or someone
        # kept company ("跟陈阿姨喝茶", "和老周吃饭")
        if kind == "who" and not (_PERSON.search(top.memory.text) or _COMPANY_ZH.search(top.memory.text)):
            return None
        # and "where" a place ("搬到了万科城小区", not "去小林家吃饭" for "小林住在哪个小区？")
        if kind == "where" and not _fits("where", top.memory.text):
            return None
        return top
    listing = is_list_question(question)  # "what meds am I on?": drug names are written small
    # "which gym …?": a note naming something, or holding a word of the kind asked ("apple music
    # individual now" for "what music subscription do I have?")
    # (a note that won a tie with the person's earlier note on the subject need not: two words
    # on one subject, the later one the current; names are written small in a note)
    which = _WHICH.search(question) and not listing and not held and not won_tie
    if not (kind in ("where", "who") or which):
        return top

    def naming(memory: Memory) -> bool:
        return names_something_else(question, memory.text) or any(
            a.group(0).casefold() not in question.casefold() for a in _ACRONYM.finditer(memory.text)
        )

    if naming(top.memory):
        return top
    # the person's later close note names it ("joined the gym on main st", then "cancelled it,
    # signed up at the YMCA"): the latest-note rule quotes that one first
    later = [
        c
        for c in own
        if c.memory.created_at > top.memory.created_at
        and similarity.get(c.memory.id, 0.0) >= max(LATER_SIMILAR * close, LIST_SIMILAR_FLOOR)
    ]
    if past or not later:
        return None
    if naming(max(later, key=lambda c: c.memory.created_at).memory):
        return top
    # else the latest of the later close notes that names one answers ("planet fitness $10/mo",
    # "cancelled PF, joined the YMCA", "adult swim lessons at the Y": the YMCA note)
    named_later = [c for c in later if naming(c.memory)]
    return max(named_later, key=lambda c: c.memory.created_at) if named_later else None


def _states_dose(held: set[str], memory: Memory, question: str, recalled: Sequence[Memory]) -> bool:
    """Whether the kinds of value of ``held`` that ``memory`` holds are the dose asked, not the
    word for one: every one is of ``_COUNTED_KIND_WORDS``, none is written in it ("dose 2 of
    the booster done" writes "dose"), memcli's reading of a person's statements finds a dose
    in it (``updates.statements``: a number with a unit of dose, "100mcg", "1000 IU"; a plan
    states none), and that dose is of the medicine asked about: ``question`` names it, or
    ``memory`` replaced a ``recalled`` note that stated a dose ("endo cut the levo back to
    100mcg" after "Levothyroxine 125mcg every morning", for "What's my thyroid tablet dose
    now?"). "started melatonin 3mg" does not answer that question."""
    written = frozenset(words(memory.text))
    if not held <= _counted_kinds() or held & written:
        return False
    doses = [s.key.partition(":")[2] for s in statements(memory.text) if s.key.partition(":")[0] == DOSE]
    if not doses:
        return False
    asked = words(question)
    if (
        any(medicine and set(tokens(medicine)) & asked for medicine in doses)
        or _stated_classes(memory.text, has_cjk(question)) & asked
    ):
        return True
    return any(
        m.superseded_by == memory.id and any(s.key.partition(":")[0] == DOSE for s in statements(m.text))
        for m in recalled
    )


def _other_medicine(text: str, question: str) -> bool:
    """Whether ``text`` states a dose of a medicine other than the one ``question`` asks
    about by its class (``_MEDICINE_CLASSES``: "dog's apoquel 16mg daily" for "what's the
    steroid dose I'm on?"): a medicine neither named in the question nor of its class. False
    when the question names no class of medicine, and for a Chinese note."""
    if has_cjk(text):  # a Chinese note's medicine is read too loosely to tell it from the one asked
        return False
    asked = words(question)
    chinese = has_cjk(question)  # an English question's words meet no Chinese class word
    if not asked & _class_words(chinese):
        return False
    return any(
        not ((set(tokens(medicine)) | _medicine_classes(medicine, chinese)) & asked) for medicine in _dosed(text)
    )


@lru_cache(maxsize=4096)
def _dosed(text: str) -> frozenset[str]:
    """The medicines ``text`` states a dose of by name (``statements``: "atorvastatin" of "The
    cardiologist raised my atorvastatin to 40 mg"), lower case; kept, as the best note's is
    read against every later one (``_later_word``)."""
    return frozenset(
        medicine.lower()
        for kind, _, medicine in (s.key.partition(":") for s in statements(text))
        if kind == DOSE and medicine
    )


def _same_medicine(one: str, other: str) -> bool:
    """Whether two medicine names, as ``_dosed`` reads them, may name one medicine: one holds
    the other ("二甲双胍", "把二甲双胍"), they begin alike for ``ABBREVIATION_CHARS`` letters or
    more, or they share a class (``_medicine_classes``: "sertraline" and its brand "zoloft";
    two statins too, which a switch may name)."""
    if one in other or other in one or len(os.path.commonprefix([one, other])) >= ABBREVIATION_CHARS:
        return True
    chinese = has_cjk(one + other)
    return bool(_medicine_classes(one, chinese) & _medicine_classes(other, chinese))


def _another_medicine(text: str, best_text: str) -> bool:
    """Whether ``text`` states doses only of medicines other than every one ``best_text``
    states a dose of (``_dosed``, ``_same_medicine``): "The GP raised my lisinopril dose to
    20 mg", noted later, is no later word on "The cardiologist raised my atorvastatin to 40
    mg" ("How much atorvastatin do I take?"). False when either names none, or a name that
    is not surely a medicine's (``names_medicine``: "levo", "wants" of "doc wants 4000
    IU/day"): then it cannot tell."""
    later, best = _dosed(text), _dosed(best_text)
    if not (later and best) or not all(names_medicine(m) or _medicine_classes(m, has_cjk(m)) for m in later | best):
        return False
    return not any(_same_medicine(m, n) for m in later for n in best)


def _states_kind(held: set[str], memory: Memory, question: str, recalled: Sequence[Memory]) -> bool:
    """Whether ``memory`` states a value of a kind ``held`` names (``_VALUE_KIND_WORDS``) and
    does not only write the word for it: a name, held by a name in capitals or by "called",
    "named" (``ATTRIBUTE_WORDS``; "adopted Pepper from the shelter" for "what are my dogs'
    names?"), or a dose it states (``_states_dose``), the word for it unwritten ("my
    neighbour at number 14" writes "number" and states no passport number)."""
    kinds = (held & _value_kinds()) - frozenset(words(memory.text))
    if not kinds:
        return False
    return kinds <= _kind_words(_NAME_KIND_WORDS) or _states_dose(kinds, memory, question, recalled)


def _is_user(speaker: str, user: str) -> bool:
    """Whether ``speaker`` is ``user``: importers take spaces out of a user's name ("John
    Zhang")."""
    return speaker.replace(" ", "") == user.replace(" ", "")


def _own(memory: Memory, user: str) -> bool:
    """Whether ``memory`` is the person's own: a note, or a turn ``user`` said."""
    return not memory.speaker or _is_user(memory.speaker, user)


def _later_word(
    question: str,
    best: _Candidate,
    candidates: Sequence[_Candidate],
    similarity: Mapping[str, float],
    user: str,
    asking: set[str],
    chinese: bool = False,
    theirs: set[str] | frozenset[str] = frozenset(),
    of_another: bool = False,
) -> _Candidate | None:
    """The latest note or turn of the person's own, noted after ``best``'s memory, that recall
    finds close to the question too (cosine similarity at least ``LATER_SIMILAR`` times
    ``best``'s, from ``similarity``, and ``LIST_SIMILAR_FLOOR``), that is on the question's
    subject (``_on_subject``), asks nothing and is not superseded, of all the recalled
    memories' sentences (``candidates``); its best-scoring sentence, or None. What a person
    noted last on the subject a present-tense question about them asks is the likelier
    current value when no rule read the change ("levothyroxine 75 mcg", then "new script:
    levo 88 mcg"; MemoryBank's recency, at answer time: nothing is marked superseded by it).
    Not a sentence telling of someone else, its writer not its subject ("brother says his a1c
    is 6.1"), unless ``of_another`` (a list's item may be: "朋友说南京大牌档不错" for "大家给我推荐过
    哪些饭店")."""
    # a later note further off (``LIST_SIMILAR_FLOOR``) is on the subject when it shares a word
    # of the best note ("10-punch pass at Movement", then "upgraded to unlimited at Movement")
    # (short notes only: a long chat turn shares some word with anything: "help", "energy")
    subject_words = _long_words(best.memory.text) if len(best.memory.text) <= SHORT_NOTE_CHARS else set()
    # a sentence of another's, who is its subject, is no word of the asker's: "sister says
    # her a1c is 5.4" for "what's my diabetes pill dosing?"
    asked_of_self = _about_the_asker(question) and not of_another
    later = [
        c
        for c in _close_own(best, candidates, similarity, user, asking, subject_words)
        if c.memory.created_at > best.memory.created_at
        and not c.memory.superseded_by
        and c.memory.id not in theirs  # "Dad's metformin went up": not the asker's
        and not _other_medicine(c.memory.text, question)  # "dog's apoquel 16mg" for the steroid dose
        and not _another_medicine(c.memory.text, best.memory.text)
        and not (asked_of_self and _of_another_first(c.text, question))
        and _on_subject(c, best, question, similarity, chinese)
        and _tells_asked(c.memory.text, best.memory.text, question, similarity, c.memory.id, best.memory.id)
    ]
    if not later:
        return None
    latest = max(c.memory.created_at for c in later)
    return max((c for c in later if c.memory.created_at == latest), key=lambda c: c.score)


ABBREVIATION_CHARS = 4
"""The fewest letters of a shortened word ("levo" of "levothyroxine", "pred" of
"prednisone") that ``_on_subject`` counts as the word it begins."""


def _on_subject(c: _Candidate, best: _Candidate, question: str, similarity: Mapping[str, float], chinese: bool) -> bool:
    """Whether the later note of ``c`` is on the subject of ``question`` that ``best``'s note
    answers, and so may be quoted first as the latest word (``_later_word``): in a small store
    every note is recalled, and a cosine relative to the best note's lets an unrelated one
    through ("vet for the cat tues 9am" for "how do I get to the office these days?"). On the subject: it
    shares a content word with the question or the best note (a stem, or one stem beginning
    the other, ``_held``; for Chinese a word or character of the best note's, ``words``, or a
    whole word of the question's), names one of
    their words shortened ("levo" of "levothyroxine", ``ABBREVIATION_CHARS``) or by its
    initials ("AF" of "anytime fitness"), states a value neither states (a number or a name,
    ``_states_new``: "went with Giffgaff instead" after "cancelled the vodafone contract"), or recall
    finds it at least as close to the question as the best note; a Chinese note only by a
    word (its cosines mislead, and a name has no sign of its own)."""
    text = c.memory.text

    def subject(found: set[str]) -> set[str]:
        # a number shared is no subject ("3pm" and "3 days"); nor a kind of value or a word of doing
        return {w for w in found if not w.isdigit() and w not in _value_kinds() and w not in _any_doing()}

    if chinese:
        # a word of the best note or a character of one ("牛奶", "燕麦奶"), a whole word of the
        # question: a character of the question's is too little ("关" of "关于" and "没关系");
        # a time is no subject either ("周" of "这周" and "周末": when, not what)
        mine = _content(words(text)) - _time_words(text)
        theirs = _content(words(best.memory.text)) - _time_words(best.memory.text)
        if bool(subject(mine & theirs | _long_words(text) & _long_words(question))):
            return True
        # "who": a close note of someone kept company is on the subject whatever its words
        # ("跟同事小周在一起了" after "跟阿杰分手了" for "我现在的对象是谁？"); a place or a number is
        # too common a sign, and so is a person addressed ("你好，朋友")
        return question_type(question) == "who" and bool(_COMPANY_ZH.search(text))
    if _held(subject(_content(words(question)) | _content(words(best.memory.text))), frozenset(words(text)), text):
        return True
    known = question + " " + best.memory.text
    return (
        _shortened(text, known)
        or _states_new(text, known)
        or similarity.get(c.memory.id, 0.0) >= similarity.get(best.memory.id, 0.0)
    )


def _time_words(text: str) -> set[str]:
    """The words of ``text`` (``words``) that place something in time (``says_when``: "这周",
    "周末", "yesterday"), with the characters of each."""
    timed = {w for w in words(text) if says_when(w)}
    return timed | {c for w in timed for c in w}


_DAY_HOURS = re.compile(
    r"\b(?:mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)(?:day|urday|nesday|sday|rsday)?s?"
    r"(?:\s*[-–]\s*(?:mon|tue|wed|thu|fri|sat|sun)\w*)?\.?\s+\d{1,2}(?::\d\d)?\s*[-–]\s*\d{1,2}(?::\d\d)?\b",
    re.IGNORECASE,
)
"""A day and the hours of something on it ("Saturdays 7-1", "mon-fri 9-5"): when it is open,
not a value that holds."""


def _tells_asked(
    text: str, best: str, question: str, similarity: Mapping[str, float], text_id: str, best_id: str
) -> bool:
    """Whether a later note (``text``) tells what ``question`` asks, and so may be quoted
    before the ``best`` note as the person's latest word (``_later_word``), by what the
    question asks for rather than by the word it shares: it holds a word of the question's
    own that the best note does not (for Chinese, a word of the question at all: its
    subject, "奶" of "喝什么奶"), or it states a value of the kind asked: an amount of its
    kind (``asks_amount``: "22 units" for "how many units"), a place for "where", a person
    for "who", a name in capitals for "which …" (English; Chinese names have no sign), and,
    for an English question asking no kind, a value neither the question nor the best note
    states (``_states_new``, not a day's hours: "market is Saturdays 7-1"). Or it states an
    attribute of the person or its end (``updates.statements``: "left the fleet feet club,
    running with …"), or, English, recall finds it at least as close as the best note. A
    Chinese question asking no kind: any note on the subject. After a best note that states
    an attribute (``statements``: "so pescatarian now"), only a note naming its subject
    again, holding the question's own words, stating an attribute or a value of the kind
    asked: not recall's closeness nor a new name or number ("salmon from trader joe's, 2x a
    week", "farro salad recipe from Lena"). Not "costco run: paper towels" for "what tier is my Costco membership?", nor
    "给房东转了三个月房租" for "我现在住哪来着".
    ``similarity``: recall's cosine of each memory by id (``text_id``, ``best_id``)."""
    chinese = has_cjk(question)
    plain = {w for w in _content(words(question)) - _value_kinds() if w not in _any_doing()}
    if chinese:
        plain = {w for w in _content(set(tokens(_ZH_HOW_MANY.sub(" ", question)))) - _value_kinds()}
    held = _held(plain, frozenset(words(text)), text)
    if chinese and held:
        return True
    if not chinese and held - _held(plain, frozenset(words(best)), best):
        return True
    if statements(text):  # it states an attribute of the person, or its end: a change of theirs
        return True
    # a best note stating the attribute asked, as a rule reads it ("so pescatarian now"), is
    # outdone only by a note saying the same of the question or the attribute, or naming its
    # subject: recall's closeness or a new name or number tells an aside ("salmon from trader
    # joe's, 2x a week", "farro salad recipe from Lena")
    # (a note naming the best note's subject again still may: "quit AF, going to the JCC")
    # (English: a Chinese note of the change in its own words reads as no statement: "改成只吃
    # 鸡肉和鱼，不吃红肉" after "开始吃素")
    best_said = [] if chinese else statements(best)
    stated = bool(best_said) and not (_long_words(text) & _long_words(best) or _shortened(text, best))
    kind = question_type(question)
    # English: recall finds it as close as the best (Chinese cosines mislead); for a person or
    # a place asked, also after a note stating one: "Eli met my parents" after "third date
    # with Marcus" is the new one, where an aside after "vegetarian now" is no new diet
    close = similarity.get(text_id, 0.0) >= similarity.get(best_id, 0.0) > 0
    if stated and kind == "where" and any(s.key == RESIDENCE for s in best_said):
        # after "first night in the denver apt", only a home stated again ("dentist aug 28 3pm"
        # is none), or a place one is in now: "we're in Seattle now"
        return any(_fits(kind, s) and _NOW.search(s) for s in split_sentences(text))
    if not chinese and close and (not stated or kind in ("where", "who")):
        return True
    amount = asks_amount(question)
    if kind == "when":
        return True  # a date is stated (``_states`` of the notes heard)
    if amount:
        # a number of the kind, or none at all: "quit", "not touching wine at all"
        stops = bool(held) and (any(s.ended for s in statements(text)) or bool(_NEGATION.search(text)))
        return stops or (states_amount(amount, text) and bool(_AMOUNT.search(_DAY_HOURS.sub(" ", text))))
    if kind in ("where", "who"):
        return any(_fits(kind, s) for s in split_sentences(text)) or (not chinese and _names_new(question, text))
    if stated:
        return False
    if _WHICH.search(question):
        known = question + " " + best
        return not chinese and (_names_new(known, text) or _states_new(_DAY_HOURS.sub(" ", text), known))
    if chinese:
        return True
    return _states_new(_DAY_HOURS.sub(" ", text), question + " " + best)


_NEGATION = re.compile(r"\b(?:not|no|never|none|zero)\b|不|没", re.IGNORECASE)
"""A word saying none: an amount of nothing ("not touching wine at all", "不喝了")."""


def _names_new(known: str, text: str) -> bool:
    """Whether ``text`` names in capitals, an acronym or a title something ``known`` does not
    name ("trying Mubi instead"; not a label in lower case: "costco run: paper towels")."""
    asked = {w.casefold() for w in re.findall(r"\w+", known)}
    found = [m.group(0) for pattern in (_TITLE, _NAME, _ACRONYM) for m in pattern.finditer(text)]
    found += [m.name for m in extract(text, speaker="I").mentions if m.typed]
    return any(w.casefold() not in asked for name in found for w in re.findall(r"\w+", name))


def _states_new(text: str, known: str) -> bool:
    """Whether ``text`` states a value that ``known`` (the question and the best note) does
    not: a number ("latanoprost 0.005%" after "eye test done, pressure a bit high"), or a name
    in capitals, an acronym or a title ("went with Giffgaff instead"); a day, a date or a clock
    time is none ("haircut 11am sat", "ring auntie on Sunday": when something happens, not
    what holds)."""
    plain = _CLOCK.sub(" ", _STATES_DAY.sub(" ", DAY_OF_MONTH.sub(" ", _DATE_WORDS.sub(" ", text))))
    numbers = set(re.findall(r"\d+(?:\.\d+)?", known))
    if any(n not in numbers for n in re.findall(r"\d+(?:\.\d+)?", plain)):
        return True
    asked = {w.casefold() for w in re.findall(r"\w+", known)}
    found = [m.group(0) for pattern in (_TITLE, _NAME, _ACRONYM) for m in pattern.finditer(plain)]
    return any(w.casefold() not in asked for name in found for w in re.findall(r"\w+", name))


def _shortened(text: str, other: str) -> bool:
    """Whether ``text`` names a word of ``other`` shortened: a word of at least
    ``ABBREVIATION_CHARS`` letters that begins a longer one ("levo", "levothyroxine"), or a
    word in capitals that spells the initials of consecutive words ("AF", "anytime fitness")."""
    theirs = re.findall(r"[a-z]+", other.lower())
    for word in re.findall(r"[A-Za-z]+", text):
        lower = word.lower()
        if lower in _EN_STOP:
            continue
        if len(word) >= ABBREVIATION_CHARS and any(len(t) > len(lower) and t.startswith(lower) for t in theirs):
            return True
        if 2 <= len(word) <= 5 and word.isupper():
            initials = "".join(t[0] for t in theirs)
            if lower in initials and any(
                "".join(t[0] for t in theirs[i : i + len(word)]) == lower for i in range(len(theirs))
            ):
                return True
    return False


_EARLIER_EN = re.compile(
    r"\b(?:before|used\s+to|previous(?:ly)?|former(?:ly)?|originally|at\s+first|(?<!how\s)old|"
    r"last\s+(?:spring|summer|autumn|fall|winter|year|time))\b",
    re.IGNORECASE,
)
"""Words that place what an English question asks before something else: "before I moved
to…", "used to", "previous", "my old dose", "last spring" (not "how old")."""
_PAST_VERB = re.compile(r"\b(?:was|were|did|had|used\s+to)\b", re.IGNORECASE)
"""A verb of the past tense: "what do I take before breakfast?" asks the present."""
_ZH_CHANGES = "跳槽|搬家|换工作|离职|辞职|转行|结婚|离婚|分手|毕业|退休|入职"
"""Life changes that "前" after them places a question before ("跳槽前")."""
_ZH_PLANS = r"(?:要|还要|还得|得|该|想|准备|打算|需要|必须)"
"""Words after "跳槽前" that make it a plan ("搬家前要做什么？"), not a question about the past."""
_ZH_NEVER = r"(?:从来|从)?(?:没|未|不)"
"""Words after "以前" that make it "ever" ("我以前从没去过日本"), no value held before."""
_EARLIER_ZH = re.compile(
    rf"(?:之前|以前)(?!{_ZH_NEVER})|原来|原先|曾经|当初|早先|去年|上一(?:个|任|家|份|位|套)(?!周末|星期|礼拜|月|季度|周|年)|"
    rf"(?:{_ZH_CHANGES})前(?!{_ZH_PLANS})"
)
"""Chinese words that place what is asked before something else ("跳槽之前", "以前", "上一个
住的地方": the previous one, not "上一次", the latest time, nor "上一个周末"; "跳槽前", a life
change and "前": not "睡前", "饭前", habits of the present, nor "搬家前要做什么", a plan)."""
_ZH_PLACING = re.compile(
    r"之前|以前|原来|原先|曾经|当初|早先|上一(?=[个任家份位套])|(?<="
    + "|".join(w[-2:] for w in _ZH_CHANGES.split("|"))
    + ")前"
)
"""What a Chinese question says only to place what it asks before something ("我以前的私教叫
什么来着？": "以前"; the "前" of "跳槽前", not the change it names): no note of the time it
asks about says "以前" of it, and its characters ("以", "前") are no word a note must hold."""
_BEFORE_CLAUSE = re.compile(r"\bbefore\s+(.+)$|^(.+?)(?:之前|以前)", re.IGNORECASE)
"""What a question's "before …" names (the anchor: "before I moved to the Mission",
"跳槽之前")."""


def asks_earlier(question: str) -> bool:
    """Whether ``question`` asks what held before something else or some time back ("What
    was my job before Datadog?", "what dose was I on last spring?", "what was my old
    address?", "我搬家之前住哪？", "我原来在哪上班？"): an English question needs a past
    verb too ("what do I take before breakfast?" asks the present)."""
    if has_cjk(question):
        return bool(_EARLIER_ZH.search(question))
    return bool(_EARLIER_EN.search(question) and _PAST_VERB.search(question))


def _close_own(
    best: _Candidate,
    candidates: Sequence[_Candidate],
    similarity: Mapping[str, float],
    user: str,
    asking: set[str],
    sharing: frozenset[str] | set[str] = frozenset(),
) -> list[_Candidate]:
    """The sentences of the person's own notes or turns (``candidates``) that recall finds
    close to the question: cosine similarity at least ``LATER_SIMILAR`` times ``best``'s, or,
    a short note (``SHORT_NOTE_CHARS``), sharing one of the words ``sharing`` (the best note's
    own), and ``LIST_SIMILAR_FLOOR`` either way; none that asks. Empty when ``best`` is not the person's own or
    recall gave no similarity."""
    closest = similarity.get(best.memory.id, 0.0)
    if closest <= 0 or not _own(best.memory, user):
        return []
    return [
        c
        for c in candidates
        if _own(c.memory, user)
        and (c.memory.id not in asking or _states_first(c))
        and similarity.get(c.memory.id, 0.0) >= LIST_SIMILAR_FLOOR
        and (
            similarity.get(c.memory.id, 0.0) >= LATER_SIMILAR * closest
            or bool(sharing and len(c.memory.text) <= SHORT_NOTE_CHARS and _long_words(c.memory.text) & sharing)
        )
    ]


def _states_first(c: _Candidate) -> bool:
    """Whether the sentence ``c`` of a note that asks something states, as does the note's
    first sentence: the question is an afterthought ("third date with Priya, she's great. are
    we official now?"), not what the note is ("what's my blood type again? never remember").
    A note only: a turn's question is put to the one it talks with."""
    if c.memory.speaker:  # a turn of a conversation: its question is put to the other ("请教你一个问题")
        return False
    first = split_sentences(c.memory.text)[:1]
    return not asks(c.text) and bool(first) and not asks(first[0])


def _earlier_word(
    question: str,
    best: _Candidate,
    candidates: Sequence[_Candidate],
    similarity: Mapping[str, float],
    user: str,
    asking: set[str],
    dates: Sequence[QueryDate],
) -> tuple[_Candidate, _Candidate] | None:
    """For a question about what held earlier (``asks_earlier``): the person's own note that
    answers it and the later note it is told against, or None. The mirror of ``_later_word``,
    by recall's closeness and dates, not by phrasing: of the person's notes close to the
    question (``_close_own``), the anchor is the one holding most of the words of what the
    question says came after ("before I moved to the Mission": the note naming the Mission;
    "跳槽之前": the note of the change), else ``best`` when it is the latest of them and not
    superseded (an earlier best answers as it is); the answer is the latest close note
    noted before the anchor ("88 Linden St" before "moving day! … Valencia St in the Mission";
    "lamotrigine 100mg" before "increased to 150mg" for "what dose was I on last spring?").
    When the question names X, the answer names no X ("movers booked for Denver" is not what
    came before Denver) and is told against the first note naming X after it; when no close
    note precedes X's first, any of the person's notes before it that recall finds at least
    ``LIST_SIMILAR_FLOOR`` close and about as close as the closest of them (``LATER_SIMILAR``)
    ("sold the corolla" for "what car did I drive before the Civic?").
    A question that names a span ("in 2022") is answered by the latest close note noted before
    its end instead, when that one differs from ``best``."""
    close = _close_own(best, candidates, similarity, user, asking)
    if len({c.memory.id for c in close}) < 2:
        return None
    ends = [d.end for d in dates if d.start and d.end and not d.yearless]
    if ends:
        held = [c for c in close if c.memory.created_at <= max(ends)]
        if not held:
            return None
        latest = max(c.memory.created_at for c in held)
        answer = max((c for c in held if c.memory.created_at == latest), key=lambda c: c.score)
        after = [c for c in close if c.memory.created_at > latest]
        if answer.memory.id == best.memory.id or not after:
            return None
        return answer, min(after, key=lambda c: c.memory.created_at)
    anchor = best
    clause = _BEFORE_CLAUSE.search(question)
    named = _content(words(clause.group(1) or clause.group(2))) if clause else set()
    holding = [(len(_held(named, c.tokens, c.text)), c) for c in close] if named else []
    most = max((n for n, _ in holding), default=0)
    if most:
        anchor = max((c for n, c in holding if n == most), key=lambda c: (c.memory.created_at, c.score))
    elif best.memory.superseded_by or any(c.memory.created_at > best.memory.created_at for c in close):
        return None  # the best is an earlier note already
    if anchor.memory.id == best.memory.id and _SAYS_FROM.search(best.text):
        return None  # "I moved from Leeds to York" names what held before: it answers as it is
    before = [c for c in close if c.memory.created_at < anchor.memory.created_at]
    if most:
        # what came before X is not a note naming X ("movers booked for Denver" before "Denver
        # flat all set up"): the answer names none of it, and is told against the first note
        # naming it after the answer's
        # (by the words it writes: "在腾讯做产品" says no "换工作", though it says work)
        # Recall finds the note before X further off than X's own ("sold the corolla" for "what
        # car did I drive before the Civic?"): any of the person's notes before the first naming X
        # that recall finds close (``LIST_SIMILAR_FLOOR``), about as close as the closest of them.
        first = min((c for n, c in holding if n == most), key=lambda c: c.memory.created_at)
        wider = [
            c
            for c in candidates
            if _own(c.memory, user)
            and c.memory.id not in asking
            and c.memory.created_at < first.memory.created_at
            and similarity.get(c.memory.id, 0.0) >= LIST_SIMILAR_FLOOR
            and not named & _long_words(c.memory.text)
        ]
        nearest = max((similarity.get(c.memory.id, 0.0) for c in wider), default=0.0)
        before = [c for c in before if not named & _long_words(c.memory.text)] or [
            c for c in wider if similarity.get(c.memory.id, 0.0) >= LATER_SIMILAR * nearest
        ]
    if has_cjk(question):  # the embedder's cosine misleads for Chinese: a note about the same thing comes first
        before = [
            c
            for c in before
            if c.memory.superseded_by == anchor.memory.id or _same_subject(c, anchor, question, similarity)
        ] or before
    if not before:
        return None
    latest = max(c.memory.created_at for c in before)
    answer = max((c for c in before if c.memory.created_at == latest), key=lambda c: c.score)
    if most:
        anchor = min(
            (c for n, c in holding if n == most and c.memory.created_at > latest), key=lambda c: c.memory.created_at
        )
    return answer, anchor


_SAYS_FROM = re.compile(
    r"\b(?:mov(?:e|ed|ing)|switch(?:ed|ing)?|went|going|gone|chang(?:e|ed|ing)|transferr(?:ed|ing)|relocat(?:ed|ing)|"
    r"(?:up|down)grad(?:ed|ing)|swapp(?:ed|ing)|jump(?:ed|ing)|rais(?:ed|ing)|increas(?:ed|ing)|reduc(?:ed|ing)|"
    r"lower(?:ed|ing)|dropp(?:ed|ing)|cut|bump(?:ed|ing)|promot(?:ed|ing))\b[^.!?]{0,30}?\bfrom\s+[^\W\d]\S*(?:\s+\S+){0,3}?\s+(?:to|for|into)\s+\S"
    r"|从[^，。！？,.!?]{1,12}?(?:搬到|搬去|换到|换成|调到|跳到|转到|改成)",
    re.IGNORECASE,
)
"""A sentence naming a change's old value beside its new, after a verb of change ("I moved
from Leeds to York", "went from nights to days", "从杭州搬到了苏州"; not "a letter from Mum to
say"): for a question about what held before, the change's own note answers."""


_NAMES_PRESENT = re.compile(r"\b(?:current|present|now)\b", re.IGNORECASE)
"""A "before …" naming the present value ("before my current job", "before the place I
live now"): the change that made it is the anchor, whatever its words."""


def _before_change(
    question: str,
    best: _Candidate,
    replaced_by: Mapping[str, Sequence[Memory]],
    memories: Sequence[Memory],
    dates: Sequence[QueryDate],
) -> tuple[_Candidate, _Candidate] | None:
    """For a question about what held before a change (``asks_earlier``) whose best note is
    the change itself, read as one at write time (it superseded notes: ``replaced_by``, by
    the id of the newer memory; ``Changes.supersede``): the note that held the value it
    replaced (``_held_value``, of ``memories``), told against ``best`` ("Moved into 88
    Linden St" before "moving day! new place is on Valencia St in the Mission" for "where was
    I living before I moved to the Mission?"). None when the best note replaced none: an
    earlier best answers as it is, and a later one is left to ``_earlier_word``; and None
    when the question names a time (``dates``: "what dose was I on last year?" asks what
    held then, which ``_earlier_word`` reads) or, in English, a "before …" that the change
    does not name ("what did I have for breakfast before the wedding?": the wedding, not
    the change of breakfast, is the anchor), unless it names the present value ("before
    my current job": ``_NAMES_PRESENT``)."""
    replaced = replaced_by.get(best.memory.id)
    if not replaced or dates:
        return None
    clause = None if has_cjk(question) else _BEFORE_CLAUSE.search(question)
    named = (
        _content(words(clause.group(1) or "")) if clause and not _NAMES_PRESENT.search(clause.group(1) or "") else set()
    )
    if named and not _held(named, best.tokens, best.text):
        return None
    held = _candidates([_held_value(best.memory, replaced, memories)])
    return (held[0], best) if held else None


def _long_words(text: str) -> set[str]:
    """The content words of ``text`` (``_content`` of ``lexical.tokens``) of more than one
    character: a Chinese word, not a character of one ("家" of "老家" and of "哪家")."""
    return {t for t in _content(set(tokens(text))) if len(t) > 1}


def _same_subject(c: _Candidate, anchor: _Candidate, question: str, similarity: Mapping[str, float]) -> bool:
    """Whether the note of ``c``, told against ``anchor``'s as what came before it, is about
    the same thing (preferred to a closer note that is not, ``_earlier_word``): it shares a word (``_long_words``) with the question or with the
    anchor's note, or recall finds it at least as close to the question as the anchor ("在华为
    做测试" before "跳槽去了小米，做测试开发", not "国庆回老家" between them)."""
    own = _long_words(c.memory.text)
    asked = _long_words(question)
    if own & (asked | _long_words(anchor.memory.text)) or _held(asked, frozenset(words(c.memory.text)), c.memory.text):
        return True
    return similarity.get(c.memory.id, 0.0) >= similarity.get(anchor.memory.id, 0.0)


def _earlier_answer(earlier: _Candidate, later: _Candidate, user: str, chinese: bool) -> Extracted:
    """An answer quoting the ``earlier`` note (``_item``) first, then the ``later`` one it is
    told against, each attributed and cited; no supersession is claimed."""
    return _two_notes(earlier, later, user, chinese, "之后在{day}", "later, on {day}")


def of_its_time(
    question: str,
    found: Extracted,
    memories: Sequence[Memory],
    user: str,
    now: float | None,
    similarity: Mapping[str, float],
) -> Extracted:
    """``found``, the answer to ``question`` read from the words of ``memories``, checked
    against the time order of the person's notes of the kind asked (``_of_asked_kind``) when
    the question asks about their past (issue 31). It never makes an answer "not found": it
    may only replace the quoted note by an older one it prefers.

    A question naming a span that asks of the past or ended before ``now`` ("What was I
    doing for work in 2023?", "22年上半年我住哪个城市？", read by ``query_dates``; not a list)
    keeps a quote noted by the span's end, within recall's after-window of it
    (``DATE_AFTER_DAYS``: "2024 recap: best 10k was 48:12" noted 2 Jan 2025) or naming the
    span; a later quote gives way to the latest such note noted by its end, when one is.
    A question about a value held before a change (``asks_earlier``, not of a routine or a
    plan: ``_asks_past_value``) is answered by the latest such note noted before the note that
    ``found`` quotes first, or, when it quotes none, before the latest of the notes recall
    finds close (``LATER_SIMILAR``): the note of the change or of the current value, never
    quoted itself. Of the notes before, one sharing no word with that note is preferred (the
    old value: "在美团干了三年" before "京东入职第一天", past "拿到京东的offer了"); ``found``
    stands when none precedes it, and for a question for the first value (``_FIRST_VALUE``).
    Unchanged without ``similarity`` (recall's cosine, by id), for a question of a day
    ("what did I do before work today?") or of someone else's. ``now``: the time asked, in
    unix seconds (the latest memory's time when None)."""
    if not similarity or not memories:
        return found
    chinese = has_cjk(question)
    when = now if now is not None else max(m.created_at for m in memories)
    dates = query_dates(question, when) if _DATE_WORDS.search(question) or DAY_OF_MONTH.search(question) else []
    if any(d.granularity == "day" for d in dates) or not _asks_of_self(question, memories, user):
        return found
    by_id = {m.id: m for m in memories}
    quoted = [by_id[i] for i in found.cited if i in by_id]
    ends = [d.end for d in dates if d.start and d.end and not d.yearless]
    if ends and (asks_past(question) or max(ends) < when):
        end = max(ends)
        if not quoted or _of_the_span(quoted[0], dates) or is_list_question(question):
            return found
        held = [m for m in _of_asked_kind(question, memories, user, similarity) if m.created_at <= end]
        if not held:
            return found
        latest = max(held, key=lambda m: (m.created_at, similarity.get(m.id, 0.0)))
        return _each_quoted(_candidates([latest])[:1], user, chinese)
    if dates or not _asks_past_value(question) or _FIRST_VALUE.search(question):
        return found
    pool = _of_asked_kind(question, memories, user, similarity)
    closest = max((similarity.get(m.id, 0.0) for m in pool), default=0.0)
    close = [m for m in pool if similarity.get(m.id, 0.0) >= LATER_SIMILAR * closest]
    if quoted:
        after = quoted[0]
        if len(quoted) > 1 and quoted[0].created_at < quoted[1].created_at:
            return found  # told against a later note already (``_earlier_answer``)
        if any(_SAYS_FROM.search(s) for s in telling_sentences(after.text)):
            return found  # "I moved from Leeds to York": the change's note names what held before
        if any(m.created_at > after.created_at for m in close):
            return found  # the person wrote on it since: the quoted note may be the old value
    elif close:
        after = max(close, key=lambda m: m.created_at)
    else:
        return found
    before = [m for m in pool if m.created_at < after.created_at]
    if not before:
        return found  # nothing older holds a value: the words' answer stands (as ``_earlier_word``)
    value = _long_words(after.text)
    before = [m for m in before if not _long_words(m.text) & value] or before
    latest = max(before, key=lambda m: (m.created_at, similarity.get(m.id, 0.0)))
    return _earlier_answer(_candidates([latest])[0], _candidates([after])[0], user, chinese)


def _of_the_span(memory: Memory, dates: Sequence[QueryDate]) -> bool:
    """Whether ``memory`` may tell of the span of one of ``dates``: noted within it or on its
    date (``_on_date``), within recall's after-window of its end (``DATE_AFTER_DAYS``, by its
    granularity: "2024 recap: …" noted 2 Jan 2025, "bought a road bike at the end of March"
    noted 2 Apr), or naming a time within it ("2024 recap" noted in February 2025)."""
    if _on_date(memory, dates):
        return True
    spans = [d for d in dates if d.start and d.end and not d.yearless]
    if any(memory.created_at <= d.end + DATE_AFTER_DAYS.get(d.granularity, 0) * DAY_SECONDS for d in spans):
        return True
    named = query_dates(memory.text, memory.created_at) if _DATE_WORDS.search(memory.text) else []
    return any(n.start and n.end and d.start <= n.start and n.end <= d.end for n in named for d in spans)


_PLAN_ZH = re.compile(rf"(?:之前|以前|前)我?(?:都|总|一般)?{_ZH_PLANS}")
"""A Chinese "before …" of a plan ("出发之前要准备什么？"): what is ahead, not a value that changed."""
_ROUTINE_ZH = re.compile(r"(?:每天|每日|每周|每晚|每次|平时|平常|通常|一般|总是|经常|习惯).*?(?:之前|以前|前)")
"""A Chinese "before …" of a routine ("我每天上班之前做什么？"): the routine word placed before
it; after it, "以前" is "formerly" ("我以前每天几点起床？" asks a past value)."""
_CHANGE_ZH = re.compile(rf"(?:{_ZH_CHANGES})(?:之前|以前|前)")
"""A Chinese "before …" naming a life change ("搬家之前"): a past value, whatever follows."""
_FORMERLY_ZH = re.compile(
    r"(?:^|[我你他她，,])(?:之前|以前)|(?:之前|以前)的|原来|原先|曾经|当初|早先|去年|从前|上一(?:个|任|家|份|位|套)"
)
"""Chinese words of a time before, not of an activity before ("我以前…", "我之前的…", "上一任",
"去年"): a bare "上班之前", "上课之前" is a moment of the day, not a value that changed."""
_ROUTINE_EN = re.compile(
    r"\b(?:every|each|usually|always|normally|typically|should|supposed\s+to|need\s+to|have\s+to|going\s+to|will|"
    r"told\s+me\s+to)\b",
    re.IGNORECASE,
)
"""Words of a routine or a plan in an English question ("what did the doctor say I should
take before meals?"): what recurs or is ahead, not a value that changed."""
_EVENT_EN = re.compile(
    r"^(?:(?:a|an|the|my|each|every)\s+)?(?:meals?|eating|bed|bedtime|sleep(?:ing)?|breakfast|lunch|dinner|work|"
    r"school|class(?:es)?|runs?|running|workouts?|(?:the\s+)?gym|trips?|travel(?:l?ing)?|flights?|"
    r"leaving|going\s+out|races?|shifts?|meetings?|today|tonight|then|now)\b",
    re.IGNORECASE,
)
"""What an English "before …" names that recurs or is ahead ("before meals", "before bed",
"before a run", "before my trip"): a moment, not a change of value."""
_CHANGE_EN = re.compile(
    r"\b(?:used\s+to|previous(?:ly)?|former(?:ly)?|(?<!how\s)old|last\s+(?:spring|summer|autumn|fall|winter|year))\b",
    re.IGNORECASE,
)
"""English words that ask a value held before another on their own ("my old address",
"my previous job", "used to")."""


def _asks_past_value(question: str) -> bool:
    """Whether ``question`` asks a value held before it changed (``asks_earlier``), not what
    comes before a routine or a plan ("我每天上班之前做什么？", "出发之前要准备什么？", "what did
    the doctor say I should take before meals?"). A Chinese one names no plan after its
    "之前" (``_PLAN_ZH``), and a life change before it (``_CHANGE_ZH``: "搬家之前一般在哪买菜？")
    or, with no routine word before it (``_ROUTINE_ZH``), a time before
    (``_FORMERLY_ZH``: "我以前…", "上一任"; not a bare "上班之前"). An English one asks of a change: a "before
    …" naming a past event of the person's ("before I moved", "before I went vegan":
    ``_PAST_CLAUSE``), a value held before another ("old", "previous", "used to":
    ``_CHANGE_EN``), or, naming no routine or plan (``_ROUTINE_EN``), a "before …" naming a
    value or a change, not a moment that recurs or is ahead (``_EVENT_EN``), nor nothing at
    all ("did I ever meet Tom before?")."""
    if not asks_earlier(question):
        return False
    if has_cjk(question):
        if _PLAN_ZH.search(question):
            return False
        if _CHANGE_ZH.search(question):
            return True
        return not _ROUTINE_ZH.search(question) and bool(_FORMERLY_ZH.search(question))
    clause = re.search(r"\bbefore\s+(\w.*)$", question, re.IGNORECASE)
    if clause and _PAST_CLAUSE.match(clause.group(1)):
        return True
    if _CHANGE_EN.search(question):
        return True
    if _ROUTINE_EN.search(question):
        return False
    return bool(clause) and not _EVENT_EN.search(clause.group(1))


_PAST_CLAUSE = re.compile(
    r"(?:I|we)\s+(?:\w+ed|went|got|left|quit|took|began|became|sold|bought|swapped|switched)\b", re.IGNORECASE
)
"""An English "before …" naming a past event of the person's ("I moved to Denver", "I went
vegan"), not one that recurs ("I go to bed")."""


_FIRST_VALUE = re.compile(r"\b(?:originally|at\s+first|first)\b|最初|起初|一开始|刚开始", re.IGNORECASE)
"""Words asking for the first value ("what dose was I originally prescribed?"), not the one
before a change: the earliest note answers, which the words of the notes find."""


def _asks_of_self(question: str, memories: Sequence[Memory], user: str) -> bool:
    """Whether ``question`` asks of the asker's own life: in the first person, or, in
    Chinese, which leaves the subject out, naming no one else ("我上一任叫什么名字？",
    "以前住哪？")."""
    if FIRST_PERSON.search(question):
        return True
    named = _people_named(question, memories, user)
    return (
        has_cjk(question)
        and not named
        and not _OTHERS.search(question)
        and not re.search(r"[他她它你您]|大家|别人", question)
    )


def _of_asked_kind(
    question: str, memories: Sequence[Memory], user: str, similarity: Mapping[str, float]
) -> list[Memory]:
    """The person's own notes of ``memories`` that may hold a value of the kind ``question``
    asks: they tell (a sentence does not ask), are not told of someone else
    (``_told_of_another``), state what the question needs stated (``must_state``, an amount
    of its unit: ``asks_amount``) and recall finds them at least ``LIST_SIMILAR_FLOOR``
    close (``similarity``, by id)."""
    needed = must_state(question)
    amount = asks_amount(question)
    asked_of = people_named(question)
    about_asker = _about_the_asker(question)
    return [
        m
        for m in memories
        if _own(m, user)
        and BASE_MODEL not in m.tags
        and telling_sentences(m.text)
        and not (about_asker and _told_of_another(m, question, asked_of))
        and _states(needed, m.text)
        and (amount == "count" or states_amount(amount, m.text))
        and similarity.get(m.id, 0.0) >= LIST_SIMILAR_FLOOR
    ]


def _later_answer(later: _Candidate, earlier: _Candidate, user: str, chinese: bool) -> Extracted:
    """An answer quoting the ``later`` note (``_item``) first, then the ``earlier`` one it may
    have changed, each attributed and cited; no supersession is claimed."""
    return _two_notes(later, earlier, user, chinese, "最近一条；更早在{day}", "the latest; earlier, on {day}")


def _two_notes(first: _Candidate, second: _Candidate, user: str, chinese: bool, zh: str, en: str) -> Extracted:
    """``first`` quoted and attributed, then ``second`` in brackets after the words ``zh`` or
    ``en`` (``{day}``: the day ``second`` was noted), each with its relative dates resolved
    at its own time and cited, ``first`` first."""
    text = resolve_relative_dates(_item(first), first.memory.created_at, chinese)
    quoted = _attributed(text, first.memory, user, chinese)
    other = resolve_relative_dates(_item(second), second.memory.created_at, chinese)
    day = _day(second.memory.created_at, chinese)
    if chinese:
        quoted += f"［{zh.format(day=day)}：“{other}” [{cite(second.memory)}]］"
    else:
        quoted += f' [{en.format(day=day)}: "{other}" [{cite(second.memory)}]]'
    return Extracted(quoted, [first.memory.id, second.memory.id])


def _answers_to_noted_questions(
    memories: Sequence[Memory], asking: set[str], whole: Mapping[str, frozenset[str]], user: str
) -> dict[str, list[Memory]]:
    """The memories that answer a question the person noted, by id, each with the questions
    it answers: of ``memories`` that ask (``asking``) and are the person's own (a note, or
    said by ``user``; in a conversation between others, every turn follows a question), the
    first of the person's own noted after it that asks nothing and shares a content word
    with it (``whole``: each memory's words) — "q for Dr Lin: can I take ibuprofen?", then
    "Dr Lin said no ibuprofen, paracetamol only"; "车钥匙放哪了？？", then "找到了 在鞋柜上".
    That memory holds what the question it answers holds."""
    found: dict[str, list[Memory]] = {}
    by_time = sorted(
        (m for m in memories if m.speaker in ("", user) and BASE_MODEL not in m.tags), key=lambda m: m.created_at
    )
    for i, question_note in enumerate(by_time):
        if question_note.id not in asking:
            continue
        own = _content(set(whole[question_note.id]))
        for later in by_time[i + 1 :]:
            if later.id in asking:
                continue
            if own & _content(set(whole[later.id])):
                found.setdefault(later.id, []).append(question_note)
            break
    return found


def _add_similar(
    firsts: dict[str, _Candidate],
    candidates: Sequence[_Candidate],
    similarity: Mapping[str, float],
    past: bool,
    named: set[str],
    kind: str,
    chinese: bool,
    question: str = "",
) -> None:
    """Add to a list answer's items (``firsts``, by memory id, those that hold the
    question's words) each other memory of ``candidates`` that recall finds about as close
    to the question as the closest of them: cosine similarity at least ``LIST_SIMILAR``
    of theirs and ``LIST_SIMILAR_FLOOR`` ("Which restaurants did I want to try?": "must try
    Dishoom" holds its words, "Padella - fresh pasta, queue early" is as close to it);
    not one superseded (unless the question asks about the past), nor one not about the
    person the question names; up to ``LIST_MAX`` items, the closest first. A memory that
    holds the kind of thing the question asks for (``_fits`` its ``kind``: a name for
    "which restaurants", a person for "who", a title for "哪几本书") needs only
    ``LIST_SIMILAR_FITTING`` of that similarity ("Jess rec: Bao Bao on King st"). For a
    ``chinese`` question, only such a memory or one holding a word of the ``question`` ("还要买个
    电饭煲" for "搬家要买的东西有哪些？"), or one recall finds at least as close as the furthest of two or
    more items that hold its words and no closer than the closest (within their band): the embedder's cosine is a weak sign for Chinese (a note about a grave visit was closer to "which books
    did I finish" than two of the books)."""
    if not firsts:
        return
    closest = max(similarity.get(i, 0.0) for i in firsts)
    floor = max(LIST_SIMILAR_FLOOR, LIST_SIMILAR * closest)
    fitting_floor = max(LIST_SIMILAR_FLOOR, LIST_SIMILAR_FITTING * closest)
    typed = kind in ("who", "where", "title", "name")
    # the question's own words (jieba's), not their characters: "东" of "东西" is not "房东"
    asked = _content(set(tokens(_ZH_HOW_MANY.sub(" ", question)))) if chinese else set()
    best_of: dict[str, _Candidate] = {}
    for c in sorted(candidates, key=lambda c: -c.score):
        best_of.setdefault(c.memory.id, c)
    wordless: list[_Candidate] = []
    for memory_id, c in sorted(best_of.items(), key=lambda item: -similarity.get(item[0], 0.0)):
        close = similarity.get(memory_id, 0.0)
        if len(firsts) >= LIST_MAX or close < min(floor, fitting_floor if typed else floor):
            break
        if memory_id in firsts or (c.memory.superseded_by and not past):
            continue
        fits = typed and any(_fits(kind, s) for s in split_sentences(c.memory.text) if not asks(s))
        if chinese and not fits:
            # a Chinese item holds a word of the question ("还要买个电饭煲" for "搬家要买的东西"),
            # or recall finds it within the band of the items that do
            if not asked & set(words(c.memory.text)):
                wordless.append(c)
                continue
        elif close < floor and not fits:
            continue
        if named and not any(_about(c.memory, person) for person in named):
            continue
        firsts[memory_id] = c
    # the band the Chinese items holding the question's words span: a note recall finds as close
    # as the furthest of two or more is one of them too ("阳台门锁坏了" between "空调不制冷了" and
    # "水龙头一直滴水，要找人修" for "家里有哪些东西需要修？")
    # (not one closer than every item: "周末去爬山了" for "我今年看了哪些电影", a distractor)
    if len(firsts) > 1:
        low = min(similarity.get(i, 0.0) for i in firsts)
        high = max(similarity.get(i, 0.0) for i in firsts)
        for c in wordless:
            if len(firsts) < LIST_MAX and low <= similarity.get(c.memory.id, 0.0) <= high:
                if not (named and not any(_about(c.memory, person) for person in named)):
                    firsts[c.memory.id] = c


def _add_continued(
    firsts: dict[str, _Candidate], candidates: Sequence[_Candidate], past: bool, named: set[str], user: str
) -> None:
    """Add to a list answer's items (``firsts``, by memory id) each recalled note of the
    person's that goes on with one of them: it opens with a word that adds to what was
    said ("also for the flat — a doormat", "oh and smoke detector battery!!", "还有…",
    "别忘了量尺寸订窗帘") and was written within ``CONTINUED_DAYS`` days after an item. Such
    a note may share no word with the question, and recall may find it far from it. Not
    one superseded (unless the question asks about the past), nor one not about the person
    the question names; up to ``LIST_MAX`` items."""
    if not firsts:
        return
    starts = [c.memory.created_at for c in firsts.values()]
    for c in sorted(candidates, key=lambda c: c.memory.created_at):
        memory = c.memory
        if len(firsts) >= LIST_MAX:
            return
        if memory.id in firsts or (memory.superseded_by and not past) or not _own(memory, user):
            continue
        if not _CONTINUES.search(memory.text) or asks(memory.text):
            continue
        if not any(0 < memory.created_at - start <= CONTINUED_DAYS * DAY_SECONDS for start in starts):
            continue
        if named and not any(_about(memory, person) for person in named):
            continue
        firsts[memory.id] = c
        starts.append(memory.created_at)


def _states_end_only(memory: Memory) -> bool:
    """Whether ``memory`` states an end and no value (``statements``: "离职手续办完了")."""
    found = statements(memory.text)
    return bool(found) and all(s.ended for s in found)


def _held_value(current: Memory, replaced: Sequence[Memory], memories: Sequence[Memory]) -> Memory:
    """Of the memories ``current`` superseded (``replaced``, not empty), the one that held the
    value it replaced: the earliest stating a value or nothing, not only an end (the notes
    after it on the way to the change tell its end). When each only ends one ("last day at
    work, handed in badge"), the note before the end that held it: what they superseded in
    turn, else of ``memories`` (recalled, closest first) noted before them, the closest
    stating a value of the attribute ended (``statements``: "working at Deloitte"); the end
    itself when none does (never a note of another subject: "dentist cleaning done")."""
    seen = {m.id for m in replaced}
    while all(_states_end_only(m) for m in replaced):
        before = [m for m in memories if m.superseded_by in seen and m.id not in seen]
        if not before:
            start = min(m.created_at for m in replaced)
            ended = {s.key for m in replaced for s in statements(m.text)}
            held = [
                m
                for m in memories
                if m.created_at < start and any(s.key in ended and not s.ended for s in statements(m.text))
            ]
            return held[0] if held else min(replaced, key=lambda m: m.created_at)
        replaced = before
        seen |= {m.id for m in before}
    return min(replaced, key=lambda m: (_states_end_only(m), m.created_at))


def _replaced(current: Memory, older: Memory, chinese: bool) -> str:
    """What an answer quoting ``current`` adds about the ``older`` memory it superseded."""
    if chinese:
        return f"［自{_since(current, True)}起；之前：“{older.text}”］"
    return f' [since {_since(current, False)}; before: "{older.text}"]'


def _since(current: Memory, chinese: bool) -> str:
    """Since when ``current`` (a memory that superseded another) holds, as an answer writes
    it: the day, week, month or year it looks back to by a relative date (``_looked_back``:
    "I moved from Leeds to York last month", noted on 3 November 2026: "October 2026";
    "上个月搬到了苏州"); else the day it was noted."""
    for found in _looked_back(current, chinese):
        if found.start and found.start < current.created_at and not found.yearless:
            return _span(found.start, found.end, found.granularity, chinese)
    return _day(current.created_at, chinese)


def _day(moment: datetime | float, chinese: bool) -> str:
    moment = moment if isinstance(moment, datetime) else datetime.fromtimestamp(moment)
    if chinese:
        return f"{moment.year}年{moment.month}月{moment.day}日"
    return spoken_date(moment)


def _span(start: float, end: float, granularity: str, chinese: bool) -> str:
    """A resolved date as an answer writes it: the day, the week (of its Monday), the
    month or the year."""
    first = datetime.fromtimestamp(start)
    if granularity == "day" or end - start < 86400:
        return _day(first, chinese)
    if granularity == "week":
        return f"{_day(first, chinese)}那一周" if chinese else f"the week of {spoken_date(first, weekday=False)}"
    if granularity == "month":
        return f"{first.year}年{first.month}月" if chinese else f"{first:%B %Y}"
    if granularity == "year":
        return f"{first.year}年" if chinese else str(first.year)
    last = datetime.fromtimestamp(end)
    return f"{_day(first, chinese)}–{_day(last, chinese)}"


def resolve_relative_dates(sentence: str, said_at: float, chinese: bool = False) -> str:
    """``sentence`` with each relative date in it ("yesterday", "last week", "two days
    ago", "昨天", "上周二", "三天前") followed by the date it names when said at
    ``said_at`` (unix seconds), in brackets: "yesterday [Sunday 7 May 2023]". Dates are
    read by ``dates.query_dates`` with ``said_at`` as now; a phrase it cannot read is left
    as it is."""
    pattern = _RELATIVE_ZH if has_cjk(sentence) else _RELATIVE_EN
    out: list[str] = []
    last = 0
    for match in pattern.finditer(sentence):
        phrase = match.group(0)
        out.append(sentence[last : match.end()])
        last = match.end()
        if phrase.lower() in _SAME_DAY:
            when = _day(said_at, chinese)
        else:
            found = query_dates(phrase, said_at)
            if not found or not found[0].start:
                continue
            when = _span(found[0].start, found[0].end, found[0].granularity, chinese)
        out.append(f"［{when}］" if chinese else f" [{when}]")
    out.append(sentence[last:])
    return "".join(out)


def _attributed(text: str, memory: Memory, user: str, chinese: bool) -> str:
    """The quoted ``text`` with who said it, the memory's date and its cited id."""
    cited = f"[{cite(memory)}]"
    day = _day(memory.created_at, chinese)
    speaker = memory.speaker
    if _is_user(speaker, user):
        speaker = user
    if chinese:
        who = "你" if not speaker or speaker == user else "助手" if speaker == ASSISTANT else speaker
        verb = "记下" if not speaker else "说"
        return f"{who}在{day}{verb}：“{text}” {cited}"
    if not speaker:
        who, verb = "You", "noted"
    elif speaker == user:
        who, verb = "You", "said"
    elif speaker == ASSISTANT:
        who, verb = "The assistant", "said"
    else:
        who, verb = speaker, "said"
    return f'{who} {verb} on {day}: "{text}" {cited}'
