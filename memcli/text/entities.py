"""Entities: the people, places, organisations, pets, works and events one text names, the
aliases it states and the relations it states in plain patterns (issue 26; the entity
extractor and relations generator of Mem0g, Chhikara et al. 2025 §2.2).

Two paths, like consolidation's:

- Offline (``extract``), without a model. English names come from the text's own evidence:
  capitalised runs that a sentence start does not explain (a sentence-initial capital counts
  only when the word is a name elsewhere: in this text, the speakers, or ``known``, the words
  the user's texts write capitalised more than in lower case, ``turn_names``), less words the
  user's texts write in lower case (``common``, ``common_words``), greetings, days,
  nationalities, dishes and acronyms; quoted titles in title case ("…", “…”, '…') are works.
  Chinese words come from jieba's segmentation and its dictionary's part-of-speech tags
  (Sun 2012; ``nr`` person, ``ns`` place, ``nt`` organisation), each checked: a person's name
  starts with a common surname or is a transliteration (泰勒·斯威夫特), a place is in JioNLP's
  gazetteers or carries a place's suffix, an organisation has a name before its suffix
  (清华大学, not 互联网公司); 《》 titles are works. Types come from cues ("in/at/to/from X",
  Inc/University/公司/大学, "my dog named X", "a game called X", a short gazetteer, pinyin
  place names), else "person" (``Mention.typed`` tells which). Relations come from plain
  patterns only ("X's sister Y", "I live in Y", "I went to Y", 我妹妹叫Y, 我住在Y, 我读了《Y》 …),
  asserted (not asked, wished, supposed or denied); first- and second-person words stand
  for the speaker and the addressee.
- With a capable chat model: ``extraction_prompt`` (the prompt), ``GraphOutput`` (the JSON
  schema the model fills) and ``ground`` (drops every entity, alias and relation whose names
  the source does not hold, as ``memcli.consolidation.grounding`` does for facts).

Nothing is invented on either path: every name an ``Extraction`` holds occurs in its text,
except the speaker's and the addressee's for "I"/"you" (我/你). Measured by hand on LoCoMo
and MemoryBank conversations not developed on (``scripts/entities_eval.py``): precision about
0.87 for English entities and 0.9 for Chinese, 0.93 for relations; recall of persons and
places 1.0 (English) and 0.82 (Chinese); about 300 turns a second.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from memcli.memory import ASSISTANT

ENTITY_TYPES = ("person", "place", "organisation", "pet", "work", "event")
"""What an entity is. The user and the assistant are persons."""

VALUE_TYPES = ("date", "number", "text")
"""Object types of relations whose object is a value, not an entity (a birthday, an age,
a job title)."""


@dataclass(frozen=True)
class RelationKind:
    """A kind of relation: whether it is ``single_valued`` (a subject has one current value
    at a time, so a new one closes the old: lives in, works at, partner, age, job title,
    birthday), the types of its subject and object (``ENTITY_TYPES`` or ``VALUE_TYPES``),
    and how a sentence says it in English and Chinese ("Caroline — lives in — Lisbon",
    "张曼婷 — 住在 — 北京")."""

    single_valued: bool
    subject: str
    object: str
    en: str
    zh: str


def _kin(en: str, zh: str, single: bool = False) -> RelationKind:
    return RelationKind(single, "person", "person", en, zh)


RELATIONS: dict[str, RelationKind] = {
    "sister": _kin("has sister", "的姐妹是"),
    "brother": _kin("has brother", "的兄弟是"),
    "mother": _kin("has mother", "的母亲是", True),
    "father": _kin("has father", "的父亲是", True),
    "son": _kin("has son", "的儿子是"),
    "daughter": _kin("has daughter", "的女儿是"),
    "child": _kin("has child", "的孩子是"),
    "wife": _kin("has wife", "的妻子是", True),
    "husband": _kin("has husband", "的丈夫是", True),
    "partner": _kin("has partner", "的伴侣是", True),
    "friend": _kin("has friend", "的朋友是"),
    "boss": _kin("has boss", "的老板是", True),
    "colleague": _kin("has colleague", "的同事是"),
    "lives_in": RelationKind(True, "person", "place", "lives in", "住在"),
    "from": RelationKind(False, "person", "place", "is from", "来自"),
    "works_at": RelationKind(True, "person", "organisation", "works at", "工作于"),
    "job_title": RelationKind(True, "person", "text", "works as", "的职业是"),
    "pet": RelationKind(False, "person", "pet", "has pet", "的宠物是"),
    "birthday": RelationKind(True, "person", "date", "has birthday on", "的生日是"),
    "age": RelationKind(True, "person", "number", "is years old", "的年龄是"),
    "attends": RelationKind(False, "person", "organisation", "attends", "就读于"),
    "visited": RelationKind(False, "person", "place", "visited", "去过"),
    "member_of": RelationKind(False, "person", "organisation", "is a member of", "是成员于"),
    "read": RelationKind(False, "person", "work", "read", "读过"),
    "watched": RelationKind(False, "person", "work", "watched", "看过"),
}
"""The declared relation table: label -> its kind. Relations are labelled from here only."""


@dataclass(frozen=True)
class Mention:
    """A name in a text: its surface form (``name``), its normalised ``key`` (``normalise``),
    its ``type`` (one of ``ENTITY_TYPES``), its span ``start``..``end`` (characters,
    end exclusive) in the text, and whether a cue ``typed`` it (a suffix, a gazetteer, a
    preposition, a pattern) or the type is the default guess, "person" (``entity_type``
    weighs the two over an entity's mentions)."""

    name: str
    key: str
    type: str
    start: int
    end: int
    typed: bool = False


@dataclass(frozen=True)
class Relation:
    """A relation a text states: ``subject`` and ``object`` as surface names (the speaker's
    name for I/me/my, the addressee's for you/your; a value for a value-typed object),
    ``relation`` a label of ``RELATIONS``, ``valid_from`` an ISO date (``YYYY``,
    ``YYYY-MM`` or ``YYYY-MM-DD``) the text gives for it, else None, and the ``evidence``:
    the sentence that states it."""

    subject: str
    relation: str
    object: str
    valid_from: str | None
    evidence: str


@dataclass(frozen=True)
class Extraction:
    """What one text names: its ``mentions`` in text order, its ``relations``, and the
    ``aliases`` it states, as (alias, full name) pairs ("Mel" for "Melanie", 曼婷 for 张曼婷)."""

    mentions: tuple[Mention, ...]
    relations: tuple[Relation, ...]
    aliases: tuple[tuple[str, str], ...]

    def names(self) -> list[str]:
        """The distinct surface names of the mentions, first seen first."""
        return list(dict.fromkeys(m.name for m in self.mentions))


# Normalisation --------------------------------------------------------------------------

_HONORIFIC = re.compile(
    r"^(?:mr|mrs|ms|miss|mx|dr|prof|professor|sir|madam|dame|lady|lord|aunt|auntie|uncle|grandma|grandpa|st|saint)\.?\s+",
    re.I,
)
_HONORIFIC_ZH = re.compile(r"(?:先生|女士|小姐|老师|同学|阿姨|叔叔)$")
_POSSESSIVE = re.compile(r"(?:'s|'|’s|’)$")


def normalise(name: str) -> str:
    """The key two surface forms of one name share: NFKC (width folding: "Ｍｅｌ" -> "Mel",
    "，" -> ","), case folded, a possessive "'s" and an honorific ("Dr.", "Mrs", 先生,
    老师 …) stripped, spaces collapsed. Chinese is unchanged but for width: 曼婷 and 张曼婷
    stay two keys (``Extraction.aliases`` joins them)."""
    text = unicodedata.normalize("NFKC", name).strip()
    text = _POSSESSIVE.sub("", text)
    text = _HONORIFIC.sub("", text)
    if len(text) > 2:
        stripped = _HONORIFIC_ZH.sub("", text)
        text = stripped if len(stripped) >= 2 else text
    return re.sub(r"\s+", " ", text).casefold().strip()


# Shared text helpers -------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SENTENCE_END = re.compile(r"[.!?…。！？；;]+[\"'”’)\]]*\s*|\n+")


def _sentences(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s sentences, by end punctuation and line breaks (a cheap
    splitter: this runs on every turn of a consolidation, where pySBD would cost more than
    the rest of the extraction together)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        # "Dr. Smith", "Mr. Lee", "St. Louis": an abbreviation's period ends no sentence
        if match.group().startswith(".") and re.search(
            r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e)$", text[start : match.start()]
        ):
            continue
        if match.end() > start:
            spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [piece for a, b in spans if text[a:b].strip() for piece in _cut_long_sentence(text, a, b)]


LONGEST_SENTENCE = 600
"""Characters a sentence may have before ``_sentences`` cuts it at a space: a relation's
evidence is its sentence, and a text with no end punctuation would otherwise be one sentence
searched again for each relation in it (quadratic in the text)."""


def _cut_long_sentence(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(start, end) of ``text[start:end]`` in pieces of at most ``LONGEST_SENTENCE``
    characters, each cut after the last whitespace within the bound (or at the bound)."""
    while end - start > LONGEST_SENTENCE:
        cut = text.rfind(" ", start + 1, start + LONGEST_SENTENCE)
        cut = cut + 1 if cut > start else start + LONGEST_SENTENCE
        yield start, cut
        start = cut
    yield start, end


def _sentence_of(spans: list[tuple[int, int]], at: int, text: str) -> str:
    for a, b in spans:
        if a <= at < b:
            return text[a:b].strip()
    return text.strip()


# English ---------------------------------------------------------------------------------

_GREETINGS = frozenset(
    """
    yes yeah yep yup no nope nah ok okay oh ooh ah aw aww awww wow woah whoa hey heya hi hello hiya bye goodbye thanks thank thx
    please sorry congrats congratulations cheers welcome lol haha hahaha hehe omg gosh geez hmm um uh well sure cool dear
    and but so or also yesterday today tonight tomorrow happy merry i i'm i've i'd i'll im ive
    """.split()
)
"""Words a capitalised span may start with that are not part of the name after them
("Hey Mel", "Thanks Caroline", "Yesterday Jon")."""

_NOT_NAMES = _GREETINGS | frozenset(
    """
    i i'm i've i'd i'll im ive id ill me my mine myself we we're we've our ours us you you're you've your yours
    he she it they them his her hers its their theirs him this that these those there here what when where who why how
    which whose whom a an the of in on at to for from by with about into over after before if then than as not
    since until while because though although yet just only even still ever never always sometimes often
    great awesome nice good amazing wonderful fantastic lovely beautiful perfect totally definitely absolutely really
    right true exactly agreed same love like glad happy sad excited proud hope hopefully maybe perhaps actually honestly
    anyway anyways btw what's that's it's there's here's let's let don't can't won't didn't isn't wasn't aren't
    morning evening afternoon night last next every each all some any many much more most
    monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun weekend week month year
    january february march april june july august september october november december
    christmas easter halloween thanksgiving valentine valentine's birthday anniversary holidays
    god lord jesus mom mum dad mommy daddy mama papa grandma grandpa granny nana sis bro dude man guys girl boy baby
    english spanish french german chinese japanese italian american british canadian mexican indian african asian
    european korean russian portuguese swedish dutch irish scottish latin cantonese mandarin sichuanese renaissance
    ai companion internet tv dvd diy ceo lgbtq lgbt lgbtqia usa uk eu
    speaker user assistant
    """.split()
)
"""Words that name nobody on their own: pronouns, function words, interjections, days,
months, holidays, kinship words used as names ("Mom"), nationalities and languages,
common acronyms. ("May" is left out: it is a month, a verb and a name.)"""

_CONNECTORS = frozenset({"of", "the", "de", "da", "del", "van", "von", "and", "&", "for", "on"})
_WORD = r"[A-Z][A-Za-z0-9\u00c0-\u024f'’\-]*"
_RUN_WORD = rf"(?:(?:Dr|Mr|Mrs|Ms|St|Jr)\.(?=\s[A-Z])|[A-Z]\.(?=\s[A-Z])|{_WORD})"
_TOKEN_RUN = re.compile(r"[\w'’\-]+")
_WORD_PIECE = re.compile(r"\w+")
_CAPITAL_RUN = re.compile(
    rf"{_RUN_WORD}(?:(?:(?:\s+(?:of|the|de|da|del|van|von|for|on|&)){{1,2}}\s+|[ ](?=[A-Z])){_RUN_WORD})*"
)
"""Capitalised words in a row, joined by a space, one or two small words ("Lord of the
Rings") or after an initial or a title's period ("George R. R. Martin", "Dr. Dre")."""
_ORG_WORDS = frozenset(
    """inc inc. ltd llc corp corporation company co university college school academy institute hospital clinic
    bank church center centre foundation group association society club agency department studio studios
    lab labs library museum gallery team council committee union network organization organisation shelter
    restaurant cafe café bakery bar pub store shop magazine band choir orchestra gym gyms fitness leisure
    """.split()
)
_PLACE_WORDS = frozenset(
    """city town village county state province country island islands beach park lake river mountain mountains mount
    street st avenue ave road rd valley bay coast falls canyon forest desert hills hill square bridge harbor harbour
    palace temple tower wall garden gardens pass passes peak gorge cave caves lagoon trail district springs heath moor
    lido pier marina
    """.split()
)
_PHRASES = frozenset(
    {
        "bon voyage",
        "bon appetit",
        "bon appétit",
        "happy birthday",
        "merry christmas",
        "happy new year",
        "good luck",
        "well done",
        "oh my god",
    }
)
"""Capitalised expressions that name nothing."""
_FOOD = frozenset(
    """chicken tofu pork beef duck fish lamb tripe noodles noodle rice soup dumplings buns cake cakes tea coffee sauce pie bread
    salad spicy fried roast roasted steamed braised pinot merlot chardonnay cabernet sauvignon riesling""".split()
)
_PLACE_FIRST = frozenset(
    {"mount", "mt", "lake", "fort", "port", "cape", "isle", "san", "santa", "los", "las", "new", "saint"}
)
_EVENT_WORDS = frozenset(
    {
        "festival",
        "conference",
        "parade",
        "marathon",
        "concert",
        "fair",
        "summit",
        "olympics",
        "cup",
        "expo",
        "pride",
        "month",
        "week",
        "day",
        "show",
        "games",
    }
)
_PLACES_EN = frozenset(
    """
    africa america americas antarctica asia australia europe oceania
    afghanistan argentina austria bangladesh belgium bolivia brazil bulgaria cambodia cameroon canada chile china colombia
    croatia cuba czechia denmark ecuador egypt england estonia ethiopia finland france germany ghana greece guatemala
    hungary iceland india indonesia iran iraq ireland israel italy jamaica japan jordan kenya korea laos latvia lebanon
    lithuania luxembourg madagascar malaysia mexico mongolia morocco myanmar nepal netherlands holland nigeria norway
    pakistan panama peru philippines poland portugal romania russia scotland serbia singapore slovakia slovenia spain
    sweden switzerland syria taiwan tanzania thailand tunisia turkey uganda ukraine uruguay venezuela vietnam wales zealand
    alabama alaska arizona arkansas california colorado connecticut delaware florida georgia hawaii idaho illinois indiana
    iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota mississippi missouri montana nebraska
    nevada ohio oklahoma oregon pennsylvania tennessee texas utah vermont virginia washington wisconsin wyoming carolina dakota
    amsterdam athens atlanta austin bangkok barcelona beijing berlin boston brooklyn brussels budapest cairo chicago copenhagen
    dallas delhi denver detroit dubai dublin edinburgh florence hamburg hollywood honolulu houston istanbul jakarta jerusalem
    kyoto lisbon london madrid manhattan melbourne miami milan montreal moscow mumbai munich nashville orlando osaka paris
    philadelphia phoenix porto prague rome seattle seoul shanghai shenzhen guangzhou hangzhou chengdu xian nanjing wuhan
    chongqing tianjin qingdao xiamen suzhou kunming guilin lhasa harbin sydney tokyo toronto vancouver venice vienna warsaw
    zurich portland sacramento vegas orleans yosemite hawaii bali cancun tuscany provence sahara himalayas alps everest
    """.split()
)
"""Countries, continents, US states and well-known cities: a name of these is a place
without a cue ("my home country, Sweden"). Short on purpose: cues type the rest."""

_PINYIN_SYLLABLE = (
    r"(?:zh|ch|sh|[bpmfdtnlgkhjqxrzcsyw])?"
    r"(?:iang|iong|uang|ang|eng|ing|ong|ian|iao|uai|uan|ai|ei|ao|ou|an|en|in|un|ia|ie|iu|ua|uo|ue|ui|er|a|o|e|i|u)"
)
_PINYIN_WORD = re.compile(rf"(?:{_PINYIN_SYLLABLE}){{2,4}}", re.I)
_PINYIN_MARK = re.compile(r"zh|ch|sh|x|q|iang|uang|iao|ong|ing|ang|eng|ou|ui|uo", re.I)
_PLACE_AFTER = re.compile(r"\s*(?:city|province|county|cuisine|food|dishes|style|-style|'s capital)\b", re.I)
_PLACE_CUE = re.compile(
    r"(?:\b(?:in|near|visit|visited|visiting|around|across|through|toward|towards|mount|mt\.?|lake|"
    r"(?:go|goes|going|went|gone|travel|traveled|travelled|traveling|travelling|fly|flew|flying|drive|drove|driving|move|moved|moving|"
    r"trip|vacation|journey|flight|headed|heading|road trip|come|came|coming|back|return|returned|returning|relocated|"
    r"getaway|tour|cruise)(?:\s+\w+){0,3}?\s+(?:to|from)|(?:am|is|are|was|originally|come|comes|came)\s+from|"
    r"live in|lives in|lived in|living in|back to|trip to|flew to|drove to|vacation in|holiday in|born in|grew up in|"
    r"(?:city|town|capital|province|streets|state|country|countries|island|region|cities|places|attractions|spots) (?:of|like|such as|including)|"
    r"home country,|hometown,|hometown of|home town,)\s+(?:the\s+)?)$",
    re.I,
)
_ORG_CUE = re.compile(
    r"(?:\b(?:work at|works at|worked at|working at|work for|works for|worked for|working for|job at|intern at|internship at|"
    r"employed by|joined|study at|studies at|studied at|attend|attends|attended|attending|graduated from|enrolled at|enrolled in|"
    r"group,|group called|club called|band called|organization called|company called|platforms like|platforms such as|apps like|app called)\s+(?:the\s+)?['\"]?)$",
    re.I,
)
_PET_CUE = re.compile(
    rf"\b(?:{'dog|dogs|puppy|pup|cat|cats|kitten|kitty|pet|pets|horse|bunny|rabbit|hamster|parrot|bird|fish|turtle|guinea pig'})\s*,?\s*(?:named|called|is named|is called|name is|'s name is|’s name is)?\s*$",
    re.I,
)
_PET_AFTER = re.compile(
    r"\s*,\s*(?:my|our|your|his|her|their)\s+(?:\w+\s+)?(?:dog|puppy|pup|cat|kitten|pet|horse|bunny|rabbit|hamster|parrot|bird|turtle|guinea pig)\b",
    re.I,
)
_PERSON_CUE = re.compile(
    r"\b(?:sister|brother|mother|mom|mum|father|dad|son|daughter|kid|child|wife|husband|partner|boyfriend|girlfriend|"
    r"friend|buddy|boss|colleague|coworker|co-worker|cousin|aunt|uncle|niece|nephew|grandma|grandpa|grandmother|grandfather|"
    r"neighbor|neighbour|mentor|teacher|named|called|with|met|told|asked|thanks|thank|hey|hi|hello|dear|by)\s*,?\s*$",
    re.I,
)
_WORK_CUE = re.compile(
    r"\b(?:game|games|album|song|track|book|novel|movie|film|show|series|painting|poem|play|plays|played|playing|podcast|anime)"
    r"\s*(?:,|called|named|titled)?\s*['\"“]?$",
    re.I,
)
_DISH_CUE = re.compile(
    r"\b(?:dish|dishes|recipe|meal|snack|drink|cocktail|dessert|cuisine)\s*,?\s*(?:called|named)?\s*['\"“]?$", re.I
)
_WORK_AFTER = re.compile(r"\s+(?:tournament|tournaments|championship)\b|\s+\d\b", re.I)
_NOT_A_NAME_AFTER = re.compile(
    r"\s+(?:mix|mixes|breed|breeds|civilization|civilisation|culture|language|dynasty|empire|"
    r"chicken|tofu|pork|beef|duck|noodles|rice|soup|dumplings|sauce|flooring)\b",
    re.I,
)
_NATIONALITIES = frozenset(
    """english spanish french german chinese japanese italian american british canadian mexican indian african asian european
    korean russian portuguese swedish dutch irish scottish latin cantonese mandarin greek turkish thai vietnamese brazilian
    australian swiss belgian danish norwegian finnish polish egyptian persian arabic hebrew
    western eastern northern southern""".split()
)
_QUOTED = re.compile(r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|(?:(?<=\s)|^)'([^'\n]{2,60})'(?=[\s,.!?;:]|$)")
_SMALL_TITLE_WORDS = frozenset(
    {"a", "an", "the", "of", "and", "or", "in", "on", "at", "to", "for", "with", "by", "from", "is", "&"}
)


def _is_title(phrase: str) -> bool:
    """Whether a quoted phrase reads as a title ("The Great Gatsby", "Charlotte's Web", "Way
    of the Peaceful Warrior: A Book That Changes Lives"): at most twelve words, each
    capitalised but the small ones; speech is rarely written so."""
    words = re.findall(r"[\w'’]+", phrase)
    if not words or len(words) > 12 or not words[0][0].isupper() or phrase.rstrip()[-1:] in "?":
        return False
    if len(words) == 1 and _lower(words[0]) in _NOT_NAMES:
        return False
    return all(w[0].isupper() or w.lower() in _SMALL_TITLE_WORDS or w[0].isdigit() for w in words)


def _sentence_starts(text: str) -> set[int]:
    """Character offsets where a sentence (or a quotation, or a line) starts: a capital
    there is explained by grammar, not by a name."""
    starts = {0}
    for match in re.finditer(r"(?:[.!?…:;]+[\"'”’)\]]*\s+|\n\s*|[\"“(\[]\s*|\s[-–—]+\s+|[-–—]{2,}\s*)(?=\S)", text):
        starts.add(match.end())
    for match in re.finditer(r"^\s+", text):
        starts.add(match.end())
    return starts


@dataclass
class _Candidate:
    name: str
    start: int
    end: int
    type: str | None = None
    typed: bool = False


def _runs(text: str) -> Iterator[re.Match[str]]:
    """The capitalised runs of ``text``, a run cut after a possessive that is not part of a
    name: "Tokyo's Times Square" is Tokyo and Times Square, "McGee's Pub" stays one."""
    for match in _CAPITAL_RUN.finditer(text):
        start = match.start()
        for possessive in re.finditer(r"['’]s\s+([A-Z]\w*)", match.group()):
            if possessive.group(1).lower() not in _ORG_WORDS | _PLACE_WORDS:
                yield _CAPITAL_RUN.match(text, start, match.start() + possessive.end(0) - len(possessive.group(1)) - 1)  # type: ignore[misc]
                start = match.start() + possessive.start(1)
        yield _CAPITAL_RUN.match(text, start, match.end())  # type: ignore[misc]


def _english_candidates(
    text: str, names_elsewhere: set[str], common: Collection[str], known: set[str]
) -> list[_Candidate]:
    """Capitalised spans of ``text`` that name something (see the module docstring); a
    single word that is ``common`` (written in lower case elsewhere) is none."""
    starts = _sentence_starts(text)
    out: list[_Candidate] = []
    for match in _runs(text):
        words = list(re.finditer(r"[\w'’\-&]+", match.group()))
        # at a sentence start any word that names nobody goes ("Then Melanie's"), within a
        # sentence only a greeting ("Hey Mel"): "the Great Wall" keeps its "Great"
        leading = _NOT_NAMES if match.start() in starts else _GREETINGS
        stripped = []
        while words and _lower(_bare(words[0].group())) in leading:
            stripped.append(words.pop(0).group().lower())
        if _NATIONALITIES.intersection(stripped):
            continue  # "My German Shepherds": an adjective of nationality and a common noun
        # "Fri I", "Caroline I": a pronoun or a connector after a name is not part of it; nor is
        # the day or month a connector ties on ("Dr Okafor on Friday", "Dublin on Thursday")
        while words and (
            words[-1].group().lower() in _CONNECTORS
            or words[-1].group() == "I"
            or len(words) > 2
            and _lower(words[-1].group()) in _TIME_WORDS
            and words[-2].group().lower() in _CONNECTORS
        ):
            words.pop()
        # a sentence's first word that is a verb, before a name within the run ("Call Marcus
        # back", "Joined the Riverside Running Club"): the name is the rest
        if match.start() in starts and len(words) > 1 and _leading_verb(words[0].group()):
            words.pop(0)
            while words and words[0].group().lower() in _CONNECTORS:
                words.pop(0)
        if not words or all(_lower(_bare(w.group())) in _NOT_NAMES for w in words):
            continue
        start = match.start() + words[0].start()
        end = match.start() + words[-1].end()
        name = _bare(text[start:end])
        end = start + len(name)
        if len(name) < 2 or name.lower().endswith("-style") or re.search(r"\d", name):
            continue
        first = _bare(words[0].group())
        if start in starts and first.lower() not in names_elsewhere and name.lower() not in names_elsewhere:
            continue
        if start > match.start() and match.start() in starts and first.lower() not in names_elsewhere:
            continue  # after a leading verb, only a word the text writes as a name elsewhere too
        if len(words) == 1 and name.lower() in common and name.lower() not in known or name.lower() in _PHRASES:
            continue  # "Sounds great, See you soon", "my Engineering assignments"
        if words[0].group().lower() in _NATIONALITIES or _NOT_A_NAME_AFTER.match(text, end):
            continue  # "German Shepherds", "Chihuahua mixes", "Aztec civilization"
        if any(w.lower() in _FOOD for w in name.split()) or _DISH_CUE.search(text[max(0, start - 30) : start]):
            continue  # "Kung Pao Chicken", "Mapo Tofu": dishes, not places or people
        if name.isupper() and (len(name) <= 5 or " " in name) or re.fullmatch(r"[A-Z]{2,}s", name):
            continue  # acronyms name topics more often than entities ("LGBTQ", "DIY", "HIIT", "RPGs"); capitals shout
        out.append(_Candidate(name, start, end))
    return out


_TIME_WORDS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat
    january february march april june july august september october november december""".split()
)
"""Days and months (not "May", a name too): a name does not end in one."""
_IMPERATIVES = frozenset(
    """call ring phone text email message meet ask tell remind thank invite visit see buy book pay pick collect""".split()
)
"""Verbs a note starts with before a name ("Call Marcus back", "Ask Priya about it")."""


def _leading_verb(word: str) -> bool:
    """Whether a sentence's first word is a verb rather than the start of a name: a past
    form ("Watched", "Joined") or an imperative of a note ("Call", "Ask"). Not any word
    written in lower case elsewhere: "New Horizons", "New York" keep their "New"."""
    lower = _lower(word)
    return lower in _IMPERATIVES or len(lower) > 4 and lower.endswith("ed")


def _bare(word: str) -> str:
    """``word`` without a possessive "'s" or trailing apostrophe or hyphen."""
    return re.sub(r"(?:['’]s|['’\-])$", "", word)


def _lower(word: str) -> str:
    """``word`` lower-cased with a typographic apostrophe made plain ("I’d" -> "i'd")."""
    return word.replace("’", "'").lower()


def _name_words(names: Iterable[str]) -> set[str]:
    """The lower-cased ``names`` and each of their words."""
    names = list(names)
    return {w.lower() for k in names for w in re.findall(r"[\w'’\-]+", k)} | {k.lower() for k in names}


def _english_names_elsewhere(text: str, known_words: Collection[str]) -> set[str]:
    """Lower-cased words the text (away from sentence starts) writes as names, with
    ``known_words`` (``_name_words`` of the names seen elsewhere)."""
    starts = _sentence_starts(text)
    names = set(known_words)
    written_lower = _written_forms(text)
    for match in re.finditer(rf"\b(?:{_WORD})", text):
        if match.start() not in starts:
            word = _bare(match.group())
            if _lower(word) not in _NOT_NAMES and word.lower() not in written_lower:
                names.add(word.lower())
    return names


_LONGEST_NAME_WORD = 4
"""Most word pieces ("o'neil", "jean-paul") a name word is looked up with in ``_written_forms``."""


def _written_forms(text: str) -> set[str]:
    """Each run of up to ``_LONGEST_NAME_WORD`` word pieces of ``text``, as written, that
    stands between word boundaries within a hyphenated or apostrophised token: the words a
    ``\\b...\\b`` search could find. One pass over the text, so that looking a word up costs
    nothing (a search of the whole text per word made a 200 KB note take minutes)."""
    forms: set[str] = set()
    for run in _TOKEN_RUN.finditer(text):
        token = run.group()
        pieces = [(m.start(), m.end()) for m in _WORD_PIECE.finditer(token)]
        for i, (start, _) in enumerate(pieces):
            for _, end in pieces[i : i + _LONGEST_NAME_WORD]:
                forms.add(token[start:end])
    return forms


def _is_pinyin_place(name: str) -> bool:
    """Whether a one-word name is Chinese pinyin of two to four syllables with a mark of
    pinyin (zh, x, q, -ang …): "Qingdao", "Huangshan", "Zhoushan". In English text such a
    single word is a place far more often than a person (whose names come in two words)."""
    return " " not in name and _PINYIN_WORD.fullmatch(name) is not None and _PINYIN_MARK.search(name) is not None


_CAMEL_CASE = re.compile(r"^(?!Mc|Mac|De|La|Le|Di|Du|Van|Von)[A-Z][a-z]+[A-Z][a-z]")
"""A brand's inner capital ("PureGym", "YouTube"), not a surname's ("McGee", "DeShawn")."""
_AT_CUE = re.compile(r"\bat\s+(?:the\s+)?$", re.I)


def _english_type(text: str, cand: _Candidate, persons: set[str]) -> tuple[str, bool]:
    """The type of a capitalised span, from its own words and the words around it, and
    whether a cue gave it (else it is the default, "person")."""
    words = [w.lower().rstrip(".") for w in cand.name.split()]
    before = text[max(0, cand.start - 40) : cand.start]
    after = text[cand.end : cand.end + 40]
    if cand.name.lower() in persons or words[0] in persons and len(words) <= 2:
        return "person", True
    if words[-1] in _ORG_WORDS or words[0] in {"university", "college", "school", "bank"}:
        return "organisation", True
    if words[-1] in _EVENT_WORDS and len(words) > 1 or words[-1] in {"festival", "parade", "pride"}:
        return "event", True
    if words[-1] in _PLACE_WORDS and len(words) > 1 or words[0] in _PLACE_FIRST and len(words) > 1:
        return "place", True
    if words[-1] in _PLACES_EN or cand.name.lower() in _PLACES_EN:
        return "place", True
    if _PET_CUE.search(before) or _PET_AFTER.match(after):
        return "pet", True
    if _WORK_CUE.search(before) or _WORK_AFTER.match(after):
        return "work", True
    if _ORG_CUE.search(before):
        return "organisation", True
    if _PLACE_AFTER.match(after):
        return "place", True
    if _PERSON_CUE.search(before):
        return "person", True  # "my husband Rui", "with Aisha": not pinyin of a place
    if _is_pinyin_place(cand.name) or _PLACE_CUE.search(before):
        return "place", True
    if _CAMEL_CASE.search(cand.name) or _AT_CUE.search(before) and not re.match(r"['’]s?\b", after):
        return "organisation", True  # "PureGym", "YouTube"; "lunch at Dishoom" (not "at Anna's")
    return "person", False


# Chinese ---------------------------------------------------------------------------------

_POS_LOCK = threading.Lock()
_pos_tokenizer: Any = None
_places_zh: frozenset[str] | None = None


def _posseg() -> Any:
    """jieba's part-of-speech tokenizer over the process's one jieba dictionary
    (``memcli.text.lexical.jieba_tokenizer``), made once."""
    global _pos_tokenizer
    if _pos_tokenizer is None:
        with _POS_LOCK:
            if _pos_tokenizer is None:
                # heavy: jieba loads its dictionary (about a second)
                import jieba.posseg

                # heavy: jieba and JioNLP load only for Chinese names
                from memcli.text.lexical import jieba_tokenizer

                _pos_tokenizer = jieba.posseg.POSTokenizer(jieba_tokenizer())
    return _pos_tokenizer


_SIGHTS_ZH = frozenset(
    "长城 故宫 故宫博物院 颐和园 天安门 外滩 鼓浪屿 九寨沟 华山 珠峰 珠穆朗玛峰 西湖 兵马俑 布达拉宫 黄果树 莫高窟 乐山大佛 八大关 天坛 圆明园 "
    "迪士尼 埃菲尔铁塔 富士山 泰姬陵 金字塔 大峡谷".split()
)


def _chinese_places() -> frozenset[str]:
    """Place names JioNLP's gazetteers hold (China's administrative divisions with their
    short names, the world's continents, countries, capitals and main cities; about 7,000),
    and a few famous sights: jieba tags many common words ``ns`` (美丽, 城市, 登山), so a
    place it tags must be one of these, or carry a place suffix (see ``_zh_place``).
    Loaded once (about 2 s with JioNLP's import)."""
    global _places_zh
    if _places_zh is None:
        with _POS_LOCK:
            if _places_zh is None:
                # heavy: jieba and JioNLP load only for Chinese names
                from memcli.dates import _jio

                jio = _jio()
                names: set[str] = set(_SIGHTS_ZH)

                def walk(node: dict[str, Any], depth: int) -> None:
                    for key, value in node.items():
                        if key.startswith("_") or not isinstance(value, dict):
                            continue
                        names.add(key)
                        # a county's short name is often a common word (友谊, 和平, 新华): full names only there
                        if depth < 2:
                            alias = value.get("_alias")
                            names.update([alias] if isinstance(alias, str) else alias or [])
                        walk(value, depth + 1)

                walk(jio.china_location_loader(), 0)
                for continent, countries in jio.world_location_loader().items():
                    names.add(continent)
                    for country, info in countries.items():
                        names.update([country, info.get("capital", ""), *info.get("main_city", [])])
                _places_zh = frozenset(n for n in names if len(n) >= 2)
    return _places_zh


_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_TRANSLITERATION = frozenset(
    "阿埃艾安奥巴贝比彼波伯布查达戴道德贾迪蒂丁杜多厄恩法菲芬弗福伏盖戈格古哈海汉赫亨胡华霍基吉加杰捷金卡凯坎康柯科克库奎拉莱兰朗劳勒雷蕾黎里理利莉丽廉林琳隆卢鲁路伦罗洛马玛迈麦曼梅门蒙米密摩莫默姆穆纳娜奈南内尼妮纽诺欧帕潘佩皮珀普奇齐乔琼萨塞桑瑟森沙莎尚舍圣施什士斯松苏索塔泰坦汤唐特提汀图托瓦威韦维温沃乌西希夏谢辛休雅亚扬耶伊因英尤约泽扎詹治兹佐尔芙黛娅琪茜宾夫娃芭"
)
"""Characters Chinese writes foreign names with (莎士比亚, 托尔斯泰, 乔治): a word jieba
tags as a name made of these only is a foreign person's name."""
_TAG_TYPES = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "organisation"}
_ZH_NOT_NAMES = frozenset("AI伴侣 伴侣 人工智能 小伙伴 大家 先生 女士 小姐 主人 机器人 中文 英文".split())
_ZH_ORG_SUFFIX = re.compile(
    r"(?:公司|集团|大学|学院|学校|中学|小学|医院|银行|研究所|研究院|俱乐部|协会|工作室|幼儿园|图书馆|博物馆|电视台|出版社|餐厅|乐队)$"
)
_ZH_PLACE_SUFFIX = re.compile(r"(?:市|省|县|镇|村|州|岛|山|湖|江|河|峰|寺|塔|宫|公园|广场|古镇|古城|景区|老街|海滩)$")
_ZH_GENERIC = frozenset(
    "动物园 植物园 游乐园 幼儿园 小公园 大公园 火山 雪山 高山 大山 小山 上山 下山 登山 爬山 深山 名山 江湖 小河 大河 "
    "小岛 海岛 半岛 高峰 山峰 顶峰 巅峰 寺庙 宝塔 灯塔 皇宫 迷宫 子宫 城市 大城市 小城市 大学 中学 小学 公司 医院 银行 "
    "图书馆 博物馆 餐厅 乐队 学校 学院 俱乐部 工作室 研究所".split()
)
"""Common nouns with a name's suffix (雪山, 动物园, 公司)."""
_BOOK_TITLE = re.compile(r"《([^》\n]{1,40})》")
_DOTTED_NAME = re.compile(r"([\u4e00-\u9fff]{1,8})·(?=([\u4e00-\u9fff]{1,8}))")
"""A foreign name with its parts joined by a middle dot (泰勒·斯威夫特, 克里斯·加纳)."""
_ZH_PET_NAME = re.compile(
    r"(?:狗|猫|猫咪|狗狗|小狗|小猫|宠物|兔子|仓鼠|鹦鹉)(?:的名字)?(?:叫做?|名叫|取名叫?|是)([\u4e00-\u9fffA-Za-z]{1,4}?)(?=[，。！？、,.!?\s]|$|的|了|呢|啊|吧)"
)
_ZH_NAMED = re.compile(
    r"(?:叫做?|名叫|名字是)([\u4e00-\u9fff]{2,3}?)(?=[，。！？、,.!?\s]|$|的|了|呢|啊|吧|是|也|今年|在|和)"
)


_ZH_PERSON_CUES = frozenset(
    """朋友 好友 同事 同学 老同学 室友 邻居 老公 老婆 丈夫 妻子 太太 先生 男朋友 女朋友 男友 女友 哥哥 姐姐 弟弟 妹妹 表哥 表姐 表妹 表弟
    儿子 女儿 老板 领导 老师 医生""".split()
)
"""Words before a person's name (朋友李娜, 老公陈浩): a name there is a person even when jieba's
dictionary holds it as a word."""
_ZH_PET_WORDS = frozenset("狗 猫 狗狗 猫咪 小狗 小猫 兔子 仓鼠 鹦鹉".split())


def _zh_person(word: str) -> bool:
    """Whether a word jieba tags as a person's name is one: a common surname and one to
    three more characters (周杰伦, 李华), or a foreign name in transliteration (莎士比亚);
    jieba's dictionary tags many words ``nr`` (宝贵, 才华, 安静)."""
    if not re.fullmatch(r"[\u4e00-\u9fff·]{2,6}", word):
        return False
    if word[0] in _SURNAMES and len(word) <= 3:
        # a dictionary word is common (胡萝卜, 谢谢, 高超), and so is one that holds one (向前走, 白衬衫)
        return _freq(word) < _COMMON_FREQ and not (len(word) == 3 and (_plain_word(word[:2]) or _plain_word(word[1:])))
    # two characters in the dictionary are a word more often than a name: 道德, 科普, 玛雅
    return all(ch in _TRANSLITERATION or ch == "·" for ch in word) and (len(word) > 2 or _freq(word) < 100)


def _plain_word(word: str) -> bool:
    """Whether jieba's dictionary holds ``word`` as a word other than a name, of frequency
    100 or more (向前, 衬衫, 萝卜; not 学友, 24, nor 小龙, a name)."""
    tag = _posseg().word_tag_tab.get(word) or ""
    return _freq(word) >= 100 and not tag.startswith(("nr", "nz"))


def _zh_place(word: str) -> bool:
    """Whether a word jieba tags as a place is one (see ``_chinese_places``)."""
    if word in _ZH_GENERIC:
        return False
    return word in _chinese_places() or len(word) >= 3 and _ZH_PLACE_SUFFIX.search(word) is not None


_GENERIC_TAGS = frozenset({"n", "v", "vn", "a", "ad", "an", "d", "t", "b", "f", "s"})


def _common_noun(word: str) -> bool:
    """Whether jieba's dictionary holds ``word`` as a common word (a noun, verb, adjective …
    of some frequency): 互联网, 现任, 西餐, not 阿里巴巴 (nrt) or 清华 (nz)."""
    return _posseg().word_tag_tab.get(word) in _GENERIC_TAGS and _freq(word) >= 50


def _zh_organisation(word: str) -> bool:
    """Whether a word is an organisation's name: a name before an organisation's suffix
    (阿里巴巴公司, 清华大学, 中央电视台), not the bare common noun (公司, 博物馆) nor a common
    word before it (西餐厅, 互联网公司)."""
    suffix = _ZH_ORG_SUFFIX.search(word)
    if word in _ZH_GENERIC or len(word) < 3 or suffix is None:
        return False
    prefix = word[: suffix.start()]
    return not (_common_noun(prefix) or _common_noun(word) and prefix not in _chinese_places())


_ZH_HEADS = {
    "公园": "place",
    "广场": "place",
    "古镇": "place",
    "景区": "place",
    "老街": "place",
    "湖": "place",
    "山": "place",
    "中学": "organisation",
    "小学": "organisation",
    "大学": "organisation",
    "学院": "organisation",
    "学校": "organisation",
    "幼儿园": "organisation",
    "公司": "organisation",
    "集团": "organisation",
    "医院": "organisation",
    "银行": "organisation",
    "博物馆": "organisation",
    "博物院": "organisation",
    "图书馆": "organisation",
    "书店": "organisation",
    "餐厅": "organisation",
    "咖啡馆": "organisation",
    "酒店": "organisation",
    "健身房": "organisation",
    "俱乐部": "organisation",
    "工作室": "organisation",
}
"""Nouns that end a named place or organisation which jieba cuts in pieces (绿禾 + 公园,
星光 + 中学): the head and the one or two words before it make the name."""
_NAME_PART_TAGS = frozenset({"n", "nz", "ns", "nr", "nrt", "nt", "ng", "a", "j", "x", "nrfg", "eng"})
_COMMON_FREQ = 300
_COMMON_WORD = 2000
"""jieba dictionary frequency from which a word before a head noun is a common noun (城市
25,084 in 城市公园), not a name (星光 in 星光中学)."""
"""jieba dictionary frequency from which a word is common: a surname-initial word as
common as 高超 (317) or 谢谢 (1089) is no name, 孙悦 (32) or a word it lacks may be."""


def _freq(word: str) -> int:
    return int(_posseg().tokenizer.FREQ.get(word, 0) or 0)


def _headed_name(tokens: list[tuple[str, str, int]], i: int) -> _Candidate | None:
    """The name a head noun (``_ZH_HEADS``) at token ``i`` ends, from the one or two words
    before it: 绿禾公园, 星光中学; None when those are common words (城市公园, 大公园)."""
    word, _, end = tokens[i][0], tokens[i][1], tokens[i][2] + len(tokens[i][0])
    parts: list[tuple[str, str, int]] = []
    for j in range(i - 1, max(-1, i - 3), -1):
        w, flag, _ = tokens[j]
        if (
            flag not in _NAME_PART_TAGS
            or not _CJK.fullmatch(w[:1])
            or len("".join(p[0] for p in parts)) + len(w) > 4
            or flag == "x"
            and _FUNCTION_CHARS.intersection(w)
        ):
            break
        parts.insert(0, tokens[j])
    prefix = "".join(p[0] for p in parts)
    if (
        len(prefix) < 2
        or len(parts) == 1
        and (_freq(prefix) >= _COMMON_WORD or _common_noun(prefix) and _freq(prefix) >= 500)
    ):
        return None
    if prefix in _ZH_GENERIC:
        return None
    return _Candidate(prefix + word, parts[0][2], end, _ZH_HEADS[word], True)


_FUNCTION_CHARS = frozenset("去来了的是在说和跟给把被也都就还又个")


def _tagged(text: str) -> Iterator[tuple[str, str]]:
    """The words of ``text`` with their part of speech: jieba's segmentation (its dictionary,
    and an HMM over runs of single characters for words it lacks) and the dictionary's tag
    of each word. A word the dictionary lacks is tagged ``nr`` when it reads as a person's
    name (``_zh_person``: 王峰, 李雪), ``ns`` as a place's, else ``x``. jieba's own tagger
    (``jieba.posseg``) runs a Viterbi over all its tags instead, five times slower for
    about the same names."""
    tags = _posseg().word_tag_tab
    for word in _posseg().tokenizer.cut(text, HMM=True):
        flag = tags.get(word)
        if flag is None and len(word) == 3 and word[0] in _SURNAMES and word[2] in _FUNCTION_CHARS:
            # the HMM glued a verb or particle to a name: 李华去 -> 李华, 去
            yield word[:2], "nr" if _zh_person(word[:2]) else "x"
            yield word[2], "x"
            continue
        if flag is None:
            flag = (
                "nr" if _CJK.match(word) and _zh_person(word) else "ns" if _CJK.match(word) and _zh_place(word) else "x"
            )
        yield word, flag


def _zh_names(names: Iterable[str]) -> set[str]:
    """The Chinese names among ``names`` (two characters or more) and the given names of
    the full ones (曼婷 of 张曼婷): what ``_chinese_candidates`` finds wherever it occurs."""
    found = {n for n in names if len(n) >= 2 and _CJK.match(n)}
    return found | {n[1:] for n in found if len(n) == 3 and n[0] in _SURNAMES}


def _chinese_candidates(text: str, known: Collection[str]) -> list[_Candidate]:
    """Names in the Chinese runs of ``text`` by jieba's tags, checked (``_zh_person``,
    ``_zh_place``, ``_zh_organisation``); names jieba cuts before a head noun (绿禾公园);
    pets by "狗叫X", people by "叫X", 《》 titles as works. ``known`` names (``_zh_names``
    of the speakers and the names seen elsewhere) are persons wherever they occur."""
    out: list[_Candidate] = []
    for m in _BOOK_TITLE.finditer(text):
        out.append(_Candidate(m.group(1).strip(), m.start(1), m.end(1), "work", True))
    for m in _ZH_PET_NAME.finditer(text):
        out.append(_Candidate(m.group(1), m.start(1), m.end(1), "pet", True))
    # known names, and the given names of known full names (曼婷 of 张曼婷), longest first
    for name in sorted({n for n in known if n in text}, key=len, reverse=True):
        for m in re.finditer(re.escape(name), text):
            if not any(c.start <= m.start() < c.end for c in out):
                out.append(_Candidate(name, m.start(), m.end(), "person", True))
    for m in _DOTTED_NAME.finditer(text):
        left = m.group(1)
        keep = len(left)
        while keep > 0 and left[keep - 1] in _TRANSLITERATION:
            keep -= 1
        right = m.group(2)
        stop = 0
        while stop < len(right) and right[stop] in _TRANSLITERATION:
            stop += 1
        name = left[keep:] + "·" + right[:stop]
        start, end = m.start(1) + keep, m.start(2) + stop
        if keep < len(left) and stop and not any(c.start < end and start < c.end for c in out):
            out.append(_Candidate(name, start, end, "person", True))
    tokens: list[tuple[str, str, int]] = []
    position = 0
    for word, flag in _tagged(text):
        start = text.find(word, position)
        if start >= 0:
            tokens.append((word, flag, start))
            position = start + len(word)
    for i, (word, flag, start) in enumerate(tokens):
        end = start + len(word)
        if (
            not _CJK.search(word)
            or word in _ZH_NOT_NAMES
            or any(c.start <= start < c.end or start <= c.start < end for c in out)
        ):
            continue
        if word in _ZH_HEADS and (headed := _headed_name(tokens, i)) is not None:
            if not any(c.start < headed.end and headed.start < c.end for c in out):
                out.append(headed)
            continue
        kind = _TAG_TYPES.get(flag)
        if _zh_organisation(word):
            kind = "organisation"
        elif kind == "organisation":
            kind = None  # jieba's nt without an organisation's suffix is mostly a common phrase (新鲜空气)
        elif kind == "person":
            word, start = _person_word(word, start)
            end = start + len(word)
            if start > 0 and text[start - 1] in "一这那每几某整半":
                kind = None  # 一段时间: jieba glued a measure word to a noun
            elif _zh_place(word):
                kind = "place"
            elif not _zh_person(word):
                kind = None
        elif kind == "place" and not _zh_place(word):
            if any(word[:n] in _chinese_places() for n in (2, 3)) and len(word) >= 4:
                kind = "place"  # 故宫博物院, 杭州西湖: a known place and more
            else:
                kind = "person" if _zh_person(word) and word[0] not in _SURNAMES else None
        elif (
            flag == "nz"
            and i > 0
            and tokens[i - 1][0] == "在"
            and i + 1 < len(tokens)
            and tokens[i + 1][0] in ("上班", "工作", "实习", "任职")
        ):
            kind = "organisation"  # 在腾讯上班
        if kind is None and i > 0 and tokens[i - 1][0] in _ZH_PERSON_CUES and word[0] in _SURNAMES and len(word) <= 3:
            kind = "person"  # 朋友李娜, 老公陈浩: a name after a kin or friend word, though the dictionary knows it
        elif kind is None and i > 0 and tokens[i - 1][0] in _ZH_PET_WORDS and re.fullmatch(r"(.)\1", word):
            kind = "pet"  # 我的狗豆豆: a doubled name after a pet word
        elif kind is None and len(word) >= 4:
            place = next((word[:n] for n in (3, 2) if word[:n] in _chinese_places() and _plain_word(word[n:])), None)
            if place:  # 成都旅游: jieba glued a place to the word after it
                word, end, kind = place, start + len(place), "place"
        if kind is None:
            continue
        out.append(_Candidate(word, start, end, kind, True))
    for m in _ZH_NAMED.finditer(text):
        if not any(c.start <= m.start(1) < c.end for c in out) and m.group(1)[0] in _SURNAMES:
            out.append(_Candidate(m.group(1), m.start(1), m.end(1), "person", True))
    return sorted(out, key=lambda c: c.start)


def _person_word(word: str, start: int) -> tuple[str, int]:
    """A word jieba tags as a person's name without a conjunction it glued on: "和小红" -> "小红"."""
    if len(word) >= 3 and word[0] in "和跟与同给叫让被对" and word[1] in _SURNAMES | {"小", "阿", "老"}:
        return word[1:], start + 1
    return word, start


# Relations ---------------------------------------------------------------------------------

_KIN_EN = {
    "sister": "sister",
    "sis": "sister",
    "brother": "brother",
    "bro": "brother",
    "mother": "mother",
    "mom": "mother",
    "mum": "mother",
    "mommy": "mother",
    "father": "father",
    "dad": "father",
    "daddy": "father",
    "son": "son",
    "daughter": "daughter",
    "kid": "child",
    "child": "child",
    "wife": "wife",
    "husband": "husband",
    "hubby": "husband",
    "partner": "partner",
    "boyfriend": "partner",
    "girlfriend": "partner",
    "fiance": "partner",
    "fiancé": "partner",
    "fiancée": "partner",
    "friend": "friend",
    "best friend": "friend",
    "buddy": "friend",
    "bestie": "friend",
    "boss": "boss",
    "manager": "boss",
    "colleague": "colleague",
    "coworker": "colleague",
    "co-worker": "colleague",
}
_KIN_ZH = {
    "妹妹": "sister",
    "姐姐": "sister",
    "姐妹": "sister",
    "哥哥": "brother",
    "弟弟": "brother",
    "兄弟": "brother",
    "妈妈": "mother",
    "母亲": "mother",
    "老妈": "mother",
    "爸爸": "father",
    "父亲": "father",
    "老爸": "father",
    "儿子": "son",
    "女儿": "daughter",
    "孩子": "child",
    "妻子": "wife",
    "老婆": "wife",
    "太太": "wife",
    "丈夫": "husband",
    "老公": "husband",
    "先生": "husband",
    "男朋友": "partner",
    "女朋友": "partner",
    "男友": "partner",
    "女友": "partner",
    "对象": "partner",
    "未婚夫": "partner",
    "未婚妻": "partner",
    "朋友": "friend",
    "好朋友": "friend",
    "闺蜜": "friend",
    "好友": "friend",
    "同学": "friend",
    "老板": "boss",
    "上司": "boss",
    "领导": "boss",
    "同事": "colleague",
}
_PETS_EN = r"dog|puppy|pup|cat|kitten|kitty|pet|horse|bunny|rabbit|hamster|parrot|bird|turtle|guinea pig"
_KIN_WORDS = "|".join(sorted((re.escape(k) for k in _KIN_EN), key=len, reverse=True))
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_DATE_EN = rf"(?:(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})(?:,?\s+\d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}})"
_DATE_ZH = r"(?:\d{4}年)?[\d一二三四五六七八九十]{1,3}月[\d一二三四五六七八九十]{1,3}[日号]"
_ZH_NUMBERS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


def _zh_number(text: str) -> str:
    """A number written in digits or in Chinese up to 99 ("二十五" -> "25"), as digits."""
    if text.isdigit():
        return str(int(text))
    if "十" not in text:
        return str(_ZH_NUMBERS.get(text, 0)) if len(text) == 1 else text
    tens, _, ones = text.partition("十")
    return str((_ZH_NUMBERS.get(tens, 1) if tens else 1) * 10 + (_ZH_NUMBERS.get(ones, 0) if ones else 0))


_MONTH_NUMBER = (
    {m: i for i, m in enumerate(_MONTHS.split("|")[:12], 1)}
    | {
        m: i
        for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)
    }
    | {"sept": 9}
)


def _valid_from(sentence: str, day: str | None) -> str | None:
    """The ISO date a sentence gives for what it states: a written date ("7 May 2023",
    "May 2023", "in 2022", "2023年5月"), or with ``day`` (the text's own date) a relative
    one ("yesterday", "today", "last year", 昨天, 今天, 去年); None when it gives none."""
    low = sentence.lower()
    if m := re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", low):
        return m.group()
    if m := re.search(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTHS})\.?,?\s+(\d{{4}})\b", low):
        return f"{m.group(3)}-{_MONTH_NUMBER[m.group(2)]:02d}-{int(m.group(1)):02d}"
    if m := re.search(rf"\b({_MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", low):
        return f"{m.group(3)}-{_MONTH_NUMBER[m.group(1)]:02d}-{int(m.group(2)):02d}"
    if m := re.search(rf"\b({_MONTHS})\.?,?\s+(\d{{4}})\b", low):
        return f"{m.group(2)}-{_MONTH_NUMBER[m.group(1)]:02d}"
    if m := re.search(r"(\d{4})年(?:(\d{1,2})月(?:(\d{1,2})[日号])?)?", sentence):
        year, month, dom = m.groups()
        return year + (f"-{int(month):02d}" if month else "") + (f"-{int(dom):02d}" if month and dom else "")
    if m := re.search(r"\b(?:in|since|from)\s+((?:19|20)\d{2})\b", low):
        return m.group(1)
    if day:
        try:
            today = date.fromisoformat(day[:10])
        except ValueError:
            return None
        if re.search(r"\byesterday\b|昨天", low):
            return (today - timedelta(days=1)).isoformat()
        if re.search(r"\btoday\b|\bthis morning\b|\btonight\b|今天|今晚", low):
            return today.isoformat()
        if re.search(r"\blast year\b|去年", low):
            return str(today.year - 1)
        if re.search(r"\bthis year\b|今年", low) and not re.search(
            r"今年\s*[\d一二三四五六七八九十两]+\s*岁", sentence
        ):
            return str(today.year)
    return None


_NOT_ASSERTED = re.compile(
    r"\b(?:if|whether|unless|when|once|maybe|perhaps|might|could|would|should|wish|hope|plan|planning|want|wants|wanted|"
    r"thinking of|going to|gonna|will|won't|don't|doesn't|didn't|never|not|no longer|lost|quit|former|previous|ex)\b|如果|要是|假如|的话|想|打算|计划|准备|希望|别|"
    r"没有?(?!想到)|不(?!过|错|仅|久|少|同|管|但|如)",
    re.I,
)
"""Words before a relation's verb that make it a question, a wish, a plan, a condition or a
denial ("if you live in Beijing", "I want to move to Paris", 我没去过): not a fact."""


class _Relations:
    """Relation patterns over one text, with its mentions (a named argument must be one)."""

    def __init__(
        self, text: str, mentions: list[Mention], speaker: str, addressee: str | None, day: str | None
    ) -> None:
        self.text = text
        self.by_start = {m.start: m for m in mentions}
        self.speaker = speaker
        self.addressee = addressee
        self.day = day
        self.spans = _sentences(text)
        self.found: list[Relation] = []

    def person(self, word: str) -> str | None:
        """The name a possessor or subject word stands for: I/my/me -> the speaker, you/your ->
        the addressee; a name as itself (its possessive stripped); None for he/she/they."""
        low = word.lower().strip()
        # "we", "our" (我们) stand for the speaker too: "we moved to Porto", "our dog Rex"
        if low in {"", "i", "my", "me", "i'm", "i’m", "i've", "i'd", "we", "our", "us", "我", "我的", "我们", "我们的"}:
            return self.speaker
        if low in {"you", "your", "you're", "you’re", "你", "你的", "您", "您的"}:
            return self.addressee
        bare = _bare(word.strip())
        start = self.text.find(bare)
        return bare if bare and start >= 0 and any(m.name == bare for m in self.by_start.values()) else None

    def mention_at(self, start: int, types: Collection[str] = ()) -> Mention | None:
        mention = self.by_start.get(start)
        if mention is None:
            # "the Lisbon office": a mention starting after an article
            for skip in ("the ", "The "):
                if self.text.startswith(skip, start):
                    mention = self.by_start.get(start + len(skip))
        if mention is not None and (not types or mention.type in types):
            return mention
        return None

    def add(self, subject: str | None, relation: str, obj: str | None, at: int, end: int) -> None:
        """Keeps a relation unless it lacks an argument, is the assistant's (a companion's
        role-play: "I'm reading 1984"), or is not asserted: asked, supposed or denied."""
        if not subject or not obj or subject == obj or subject == ASSISTANT:
            return
        evidence = _sentence_of(self.spans, at, self.text)
        sentence_start = max((a for a, _ in self.spans if a <= at), default=0)
        clause = re.split(r"[,;:，；：]", self.text[sentence_start:end])[-1]
        if evidence.rstrip().endswith(("?", "？", "吗")) or _NOT_ASSERTED.search(clause):
            return
        # a kinship holds from no date a sentence gives ("my daughter Sara's birthday last year")
        dated = RELATIONS[relation].object not in ("person",) or relation in (
            "wife",
            "husband",
            "partner",
            "boss",
            "colleague",
        )
        rel = Relation(subject, relation, obj, _valid_from(evidence, self.day) if dated else None, evidence)
        if rel not in self.found:
            self.found.append(rel)


_EN_SUBJECT = r"(?P<subj>\b(?:I|you|[Ww]e|[A-Z][\w\-]*(?:\s(?!I\b)[A-Z][\w\-]*)?))"
_EN_POSSESSOR = r"(?P<owner>\b(?:my|My|our|Our|your|Your|[A-Z][\w\-]*(?:\s[A-Z][\w\-]*)?['’]s))"
_EN_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # my sister Anna / Caroline's best friend, Anna / my sister named Anna / my sister's name is Anna
    (
        "kin",
        re.compile(
            rf"{_EN_POSSESSOR}\s+(?:(?:older|younger|little|big|baby|twin|step|best|old|close|new)\s+)*(?P<kin>{_KIN_WORDS})(?:\s*,\s*|\s+(?:named|called)\s+|['’]s\s+name\s+is\s+|\s+is\s+(?:named|called)\s+|\s+)(?P<obj>(?=[A-Z]))",
            re.I,
        ),
    ),
    # Anna, my sister / Anna (my sister)
    (
        "kin_after",
        re.compile(
            rf"(?P<objname>\b[A-Z][\w\-]*(?:\s[A-Z][\w\-]*)?)\s*[,(]\s*(?P<owner>my|your|[A-Z][\w\-]*['’]s)\s+(?:(?:older|younger|little|big|baby|twin|best|old|close)\s+)*(?P<kin>{_KIN_WORDS})\b"
        ),
    ),
    (
        "lives_in",
        re.compile(
            rf"{_EN_SUBJECT}\s+(?:(?:still|now|currently|also|just|recently|finally|actually)\s+)*(?:live|lives|lived|am living|is living|are living|have lived|has lived|have been living|has been living|moved|move|am moving|is moving|are moving|have moved|has moved|relocated)\s+(?:back\s+)?(?:in|to)\s+(?P<obj>(?=[A-Z]|the\s))"
        ),
    ),
    (
        "from",
        re.compile(
            rf"{_EN_SUBJECT}(?:\s+(?:am|is|are|was|come|comes|came|originally)|['’]m|['’]re)\s+(?:originally\s+)?from\s+(?P<obj>(?=[A-Z]))"
        ),
    ),
    # my home country, Sweden / my hometown is Porto
    (
        "from",
        re.compile(
            rf"{_EN_POSSESSOR}\s+(?:home\s*country|hometown|home\s+town|birthplace)\s*(?:,|is|was)?\s*(?P<obj>(?=[A-Z]))",
            re.I,
        ),
    ),
    (
        "member_of",
        re.compile(
            rf"{_EN_SUBJECT}(?:\s+(?:just\s+|recently\s+|finally\s+|also\s+)*(?:joined|am a member of|is a member of|are members of|became a member of)|['’]m a member of)\s+(?P<obj>(?=[A-Z]|the\s|['\"“]))"
        ),
    ),
    (
        "member_of",
        re.compile(
            rf"{_EN_POSSESSOR}\s+(?:group|club|team|band|organization|organisation|choir|community)\s*,\s*(?P<obj>(?=['\"“A-Z]))"
        ),
    ),
    # my (new) job at Acme
    (
        "works_at",
        re.compile(
            rf"{_EN_POSSESSOR}\s+(?:new\s+|current\s+|first\s+)?(?:job|internship|position|role)\s+(?:at|with)\s+(?P<obj>(?=[A-Z]|the\s))"
        ),
    ),
    (
        "works_at",
        re.compile(
            rf"{_EN_SUBJECT}\s+(?:(?:still|now|currently|also|just|recently|actually)\s+)*(?:work|works|worked|am working|is working|are working|started working|have worked|has worked|got a job|found a job|started a job|got a new job|have a job|has a job|am employed|is employed|intern|interned)\s+(?:at|for|with)\s+(?P<obj>(?=[A-Z]|the\s))"
        ),
    ),
    (
        "job_title",
        re.compile(
            rf"{_EN_SUBJECT}\s+(?:(?:still|now|currently|also|just|recently|actually)\s+)*(?:work|works|worked|am working|is working|are working|started working)\s+as\s+(?:an?|the)\s+(?P<value>[a-z]+(?:\s[a-z]+)?)\b"
        ),
    ),
    (
        "pet",
        re.compile(
            rf"{_EN_POSSESSOR}\s+(?:(?:new|little|old|sweet|adopted|rescue|two|three)\s+)*(?:{_PETS_EN})s?\s*(?:,\s*|\s+(?:named|called|is named|is called)\s+|['’]s\s+name\s+is\s+|\s+)(?P<obj>(?=[A-Z]))",
            re.I,
        ),
    ),
    (
        "pet_have",
        re.compile(
            rf"{_EN_SUBJECT}\s+(?:have|has|had|got|get|adopted|adopt|rescued|bought)\s+(?:a|an|another|the)\s+(?:(?:new|little|sweet|rescue|cute|black|white|small|big)\s+)*(?:{_PETS_EN})\s+(?:named|called)\s+(?P<obj>(?=[A-Z]))"
        ),
    ),
    # Oscar, my guinea pig
    (
        "pet_after",
        re.compile(
            rf"(?P<objname>\b[A-Z][\w\-]*)\s*[,(]\s*(?P<owner>my|our|your|[A-Z][\w\-]*['’]s)\s+(?:(?:new|little|old|sweet|adopted|rescue)\s+)*(?:{_PETS_EN})\b"
        ),
    ),
    (
        "visited",
        re.compile(
            rf"{_EN_SUBJECT}\s+(?:(?:just|recently|finally|also|once|even|actually)\s+)*(?:went|traveled|travelled|flew|drove|visited|toured|explored|hiked|climbed|have been|'ve been|’ve been|was|were|came back|got back|returned|am back|'m back|’m back|went on (?:a|an) \w+ (?:trip|vacation)|took (?:a|an) \w*\s?trip|had (?:a|an) \w*\s?trip)\s+(?:to\s+|back to\s+|in\s+|up\s+|from\s+)?(?P<obj>(?=[A-Z]|the\s))"
        ),
    ),
    (
        "visited",
        re.compile(
            r"(?:^|(?<=[.!?]\s))(?P<subj>)(?:Just\s+|Recently\s+|Finally\s+)?(?:Went|Took|Had|Visited|Traveled|Travelled|Flew)\b[^.!?,]{0,30}?\b(?:trip|vacation|holiday|getaway|went|visited)\b[^.!?,]{0,20}?\bto\s+(?P<obj>(?=[A-Z]|the\s))"
        ),
    ),
    (
        "read",
        re.compile(
            rf"{_EN_SUBJECT}(?:['’](?:m|ve)\s+|\s+)(?:(?:just|recently|finally|also|once|really|currently|still|have|am|been|started|finished|loved|love|enjoyed|enjoy|like|liked)\s+)*(?:read|reading|re-read|rereading)\s+(?:(?:the|a|an)\s+(?:[\w\-]+\s+){{0,5}}?(?:book|novel|movie|film|show|series|documentary|play|comedy|drama|memoir)s?(?:\s+(?:about|on|of|by)\s+[\w\-]+(?:\s+[\w\-]+)?)?,?\s+(?:called|named|titled)?\s*)?(?P<obj>(?=[\"“'A-Z]))"
        ),
    ),
    (
        "watched",
        re.compile(
            rf"{_EN_SUBJECT}(?:['’](?:m|ve)\s+|\s+)(?:(?:just|recently|finally|also|once|really|currently|still|have|am|been|started|finished|loved|love|enjoyed|enjoy|like|liked)\s+)*(?:watched|watching|saw|seen|re-watched)\s+(?:(?:the|a|an)\s+(?:[\w\-]+\s+){{0,5}}?(?:book|novel|movie|film|show|series|documentary|play|comedy|drama|memoir)s?(?:\s+(?:about|on|of|by)\s+[\w\-]+(?:\s+[\w\-]+)?)?,?\s+(?:called|named|titled)?\s*)?(?P<obj>(?=[\"“'A-Z]))"
        ),
    ),
    ("birthday", re.compile(rf"{_EN_POSSESSOR}\s+birthday\s+is\s+(?:on\s+)?(?P<value>{_DATE_EN})", re.I)),
    (
        "age",
        re.compile(
            rf"{_EN_SUBJECT}(?:\s+(?:am|is|are|just turned|turned|will turn|will be)|['’]m|['’]re)\s+(?P<value>\d{{1,3}})(?:\s+years?\s+old|\s+(?:this|last|next)\s+(?:year|month|week))"
        ),
    ),
    (
        "attends",
        re.compile(
            rf"{_EN_SUBJECT}\s+(?:(?:still|now|currently|also|just)\s+)*(?:attend|attends|attended|am attending|is attending|go to|goes to|am going to|study at|studies at|studied at|am studying at|enrolled at|enrolled in|graduated from)\s+(?P<obj>(?=[A-Z]|the\s))"
        ),
    ),
]
_ZH_SUBJECT = r"(?P<subj>我|你|您)"
_ZH_WHEN = "现在|目前|一直|也|还|就|已经|刚|刚刚|最近|上个月|上周|去年|今年|前几天|昨天|前段时间|不久前"
_ZH_KIN = "|".join(sorted(_KIN_ZH, key=len, reverse=True))
_ZH_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "kin",
        re.compile(
            rf"(?P<owner>我|你|您)(?:的)?(?:亲)?(?:大|小|二|三)?(?P<kin>{_ZH_KIN})(?:的名字)?(?:叫做?|名叫|是|，)?(?P<obj>)"
        ),
    ),
    (
        "lives_in",
        re.compile(rf"{_ZH_SUBJECT}(?:{_ZH_WHEN})*(?:住在|生活在|搬到了?|搬去了?|搬家到了?|定居在|定居于?)(?P<obj>)"),
    ),
    # a clause without a subject is the speaker's own: "，上个月搬到上海了"
    (
        "lives_in",
        re.compile(rf"(?:^|(?<=[，。！？；,]))(?P<subj>)(?:{_ZH_WHEN})*(?:搬到了?|搬去了?|搬家到了?)(?P<obj>)"),
    ),
    ("from", re.compile(r"(?P<owner>我|你|您)(?:的)?(?:家乡|老家|故乡)(?:是|在)(?P<obj>)")),
    ("from", re.compile(rf"{_ZH_SUBJECT}(?:是|来自|出生在|出生于|老家在|家乡在|老家是|家乡是)(?P<obj>)")),
    (
        "works_at",
        re.compile(
            rf"{_ZH_SUBJECT}(?:现在|目前|一直|也|还|已经)*(?:在)(?P<obj>)(?=[^，。！？]{{2,12}}?(?:工作|上班|实习|任职))"
        ),
    ),
    (
        "works_at",
        re.compile(rf"{_ZH_SUBJECT}(?:现在|目前|一直|也|还|已经)*(?:就职于|任职于|工作于|入职了?|加入了?)(?P<obj>)"),
    ),
    (
        "attends",
        re.compile(
            rf"{_ZH_SUBJECT}(?:现在|目前|一直|也|还)*(?:在)(?P<obj>)(?=[^，。！？]{{2,12}}?(?:上学|读书|念书|上大学|读大学|读研|学习))"
        ),
    ),
    ("attends", re.compile(rf"{_ZH_SUBJECT}(?:现在|目前)*(?:就读于|考上了?|毕业于)(?P<obj>)")),
    (
        "visited",
        re.compile(
            rf"(?P<subj>我们?|你|您)(?:{_ZH_WHEN}|和[^，。！？]{{1,6}}?|跟[^，。！？]{{1,6}}?|一起|刚|周末|假期)*(?:去了|去过|到了|游览了|参观了|爬了|登上了|旅游去了|去[^，。！？]{{0,2}}?旅游了?)(?:一次|一趟)?(?P<obj>)"
        ),
    ),
    # 我最近在看一本叫做《活着》的书, 我读了《局外人》、《飘》: read or watched, as the words around say
    (
        "consumed",
        re.compile(
            r"(?P<subj>我们?)(?:[^，。！？《]{0,6}?)(?P<verb>读了?|读过|读完了?|看了?|看过|看完了?|在看|在读|追)(?P<mid>[^，。！？《]{0,14}?(?:，\s*(?:叫做?|名叫|是))?)(?P<obj>)(?=《)"
        ),
    ),
    (
        "pet",
        re.compile(
            r"(?P<owner>我|你|您)(?:的|家的?|养的)?(?:小)?(?:狗|猫|猫咪|狗狗|小狗|小猫|宠物|兔子|仓鼠|鹦鹉)(?:的名字)?(?:叫做?|名叫|取名叫?|是)(?P<obj>)"
        ),
    ),
    ("birthday", re.compile(rf"(?P<owner>我|你|您)的生日是?(?:在)?(?P<value>{_DATE_ZH})")),
    ("age", re.compile(rf"{_ZH_SUBJECT}(?:今年|已经|现在|快)*(?P<value>[\d一二三四五六七八九十两]{{1,3}})岁")),
    (
        "job_title",
        re.compile(
            rf"{_ZH_SUBJECT}(?:现在|目前|也)?是一[名位个](?P<value>[\u4e00-\u9fff]{{0,6}}?(?:师|员|生|家|工|医生|护士|警察|司机|记者|作家|老板|经理))(?=[，。！？,.!?]|$)"
        ),
    ),
]


_BOOK_WORDS = re.compile(r"书|小说|读|散文|诗集|漫画")
_SCREEN_WORDS = re.compile(r"电影|片|剧|纪录片|节目|动画")
_NEXT_TITLE = re.compile(r"》\s*(?:、|和|与|及|，)?\s*《")


def _consumed(rel: _Relations, m: re.Match[str]) -> None:
    """A Chinese "I read/watched 《X》" (and 《Y》 … listed after it): read when a word of books
    is near (读, 书, 小说), watched when one of screens is (电影, 剧), else nothing."""
    title = _BOOK_TITLE.match(rel.text, m.end("obj"))
    if title is None:
        return
    after = rel.text[title.end() : title.end() + 4]
    context = m.group("verb") + m.group("mid") + after
    label = "read" if _BOOK_WORDS.search(context) else "watched" if _SCREEN_WORDS.search(context) else None
    if label is None:
        return
    subject = rel.person(m.group("subj"))
    while title is not None:
        obj = rel.mention_at(title.start(1), ("work",))
        rel.add(subject, label, obj.name if obj else None, m.start(), m.end())
        joined = _NEXT_TITLE.match(rel.text, title.end() - 1)
        title = _BOOK_TITLE.match(rel.text, joined.end() - 1) if joined else None


def _not_apposition(rel: _Relations, text: str, matched: str, obj: Mention) -> bool:
    """Whether "my girlfriend, Toby" is not an apposition: the name after the comma starts a
    list ("my girlfriend, Toby and I") or is the one spoken to ("sorry about your friend,
    Deb.", to Deborah)."""
    if not matched.rstrip().endswith((",", "，")):
        return False
    if re.match(r"\s*(?:,|and\b|&|or\b|和|、)", text[obj.end :]):
        return True
    addressee = normalise(rel.addressee or "")
    return bool(addressee) and addressee.startswith(obj.key) and re.match(r"\s*[.!?]", text[obj.end :]) is not None


_OBJECT_TYPES = {
    "lives_in": ("place",),
    "from": ("place",),
    "works_at": ("organisation", "place"),
    "attends": ("organisation",),
    "visited": ("place",),
    "read": ("work",),
    "watched": ("work",),
    "member_of": ("organisation",),
}
"""The types a pattern's named object must have."""


def _relations(
    text: str, mentions: list[Mention], speaker: str, addressee: str | None, day: str | None
) -> list[Relation]:
    """The relations ``text`` states in the patterns above (see the module docstring)."""
    rel = _Relations(text, mentions, speaker, addressee, day)
    for label, pattern in _EN_PATTERNS if text.isascii() or not _CJK.search(text) else _EN_PATTERNS + _ZH_PATTERNS:
        for m in pattern.finditer(text):
            groups = m.groupdict()
            if label == "consumed":
                _consumed(rel, m)
                continue
            if label == "pet_after":
                obj = rel.mention_at(m.start("objname"), ("pet", "person"))
                rel.add(rel.person(groups["owner"]), "pet", obj.name if obj else None, m.start(), m.end())
                continue
            if label == "kin_after":
                owner = rel.person(groups["owner"])
                obj = rel.mention_at(m.start("objname"), ("person",))
                rel.add(owner, _KIN_EN[groups["kin"].lower()], obj.name if obj else None, m.start(), m.end())
                continue
            if label in ("kin", "pet"):
                subject = rel.person(groups["owner"])
                kind = label if label == "pet" else (_KIN_ZH.get(groups["kin"]) or _KIN_EN.get(groups["kin"].lower()))
                types = ("pet", "person") if label == "pet" else ("person",)
                obj = rel.mention_at(m.end("obj"), types)
                if obj is not None and kind and not _not_apposition(rel, text, m.group(), obj):
                    rel.add(subject, kind, obj.name, m.start(), m.end())
                continue
            subject = rel.person(groups["subj"]) if "subj" in groups else rel.person(groups["owner"])
            if label == "pet_have":
                obj = rel.mention_at(m.end("obj"), ("pet", "person"))
                rel.add(subject, "pet", obj.name if obj else None, m.start(), m.end())
            elif "value" in groups:
                value = groups["value"].strip()
                rel.add(subject, label, _zh_number(value) if label == "age" else value, m.start(), m.end())
            else:
                types = _OBJECT_TYPES[label]
                at = m.end("obj") + (1 if text.startswith(("《", '"', "“", "'"), m.end("obj")) else 0)
                obj = rel.mention_at(at, types)
                rel.add(subject, label, obj.name if obj else None, m.start(), m.end())
    return rel.found


# Extraction ----------------------------------------------------------------------------------

_VOCATIVE = re.compile(
    r"(?:(?:^|[.!?]\s+)(?:hey|hi|hello|thanks|thank you|congrats|congratulations|wow|oh|dear|bye|yes|yeah)\s*,?\s+(?P<name>[A-Z][\w\-]+)\b"
    r"|,\s*(?P<tail>[A-Z][\w\-]+)\s*[!?.,])",
    re.I,
)
_CALL_ME = re.compile(
    r"\b(?:call me|everyone calls me|people call me|friends call me|goes by|go by)\s+(?P<alias>[A-Z][\w\-]+)"
)
_ZH_CALL_ME = re.compile(
    r"(?:叫我|喊我|称呼我|我的小名是|我的小名叫|我的昵称是)(?P<alias>[\u4e00-\u9fff]{1,3}?)(?=[，。！？、,.!?\s]|$|就|吧|好|了)"
)


def _full_names(names: Iterable[str]) -> dict[str, list[str]]:
    """Short name → the full names among ``names`` an alias rule of ``_aliases`` can tie it
    to: a Chinese full name's given name (曼婷 → 张曼婷), an English full name's first word
    (John → John Zhang)."""
    out: dict[str, list[str]] = {}
    for full in dict.fromkeys(names):
        if _CJK.match(full) and len(full) >= 2 and full[0] in _SURNAMES:
            out.setdefault(full[1:], []).append(full)
        elif " " in full and not _CJK.search(full):
            out.setdefault(full.split()[0], []).append(full)
    return out


def _aliases(
    text: str, mentions: list[Mention], speaker: str, addressee: str | None, known: KnownNames
) -> list[tuple[str, str]]:
    """The aliases ``text`` states: a short name the speaker calls the addressee by ("Hey
    Mel!", "That's great, Mel!" to Melanie), "call me X" (叫我X), a given name beside the
    full Chinese name (曼婷 beside 张曼婷, here or among ``known``), a first name beside its
    full English name ("John" beside "John Zhang")."""
    out: list[tuple[str, str]] = []
    names = [m.name for m in mentions]
    here = [*names, speaker, *([addressee] if addressee else [])]
    for m in _VOCATIVE.finditer(text):
        short = m.group("name") or m.group("tail")
        if addressee and short != addressee and len(short) >= 3 and normalise(addressee).startswith(normalise(short)):
            out.append((short, addressee))
    for m in [*_CALL_ME.finditer(text), *_ZH_CALL_ME.finditer(text)]:
        out.append((m.group("alias"), speaker))
    # the full names by their short name, so that a text of many names is not read name by name
    here_fulls = _full_names(here)
    for name in dict.fromkeys(names):
        for full in dict.fromkeys([*here_fulls.get(name, ()), *known.fulls.get(name, ())]):
            if full == name or not full:
                continue
            if _CJK.match(name) and len(full) == len(name) + 1 and full[0] in _SURNAMES and full.endswith(name):
                out.append((name, full))
            elif " " in full and not _CJK.search(full) and full.split()[0] == name:
                out.append((name, full))
    return list(dict.fromkeys(a for a in out if a[0] != a[1]))


_COORDINATION = re.compile(r"^(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+|\s*、\s*|和|与|及)$")


def _coordinated_types(mentions: list[Mention], text: str) -> list[Mention]:
    """Names in one list ("Huangshan, Yangshuo, and Zhangjiajie", 北京和上海) share the type a
    cue gave one of them, when the others have only the default."""
    groups: list[list[int]] = []
    for i, m in enumerate(mentions):
        if groups and _COORDINATION.match(text[mentions[i - 1].end : m.start]):
            groups[-1].append(i)
        else:
            groups.append([i])
    out = list(mentions)
    for group in groups:
        cued = {mentions[i].type for i in group if mentions[i].typed and mentions[i].type not in ("person", "work")}
        if len(group) > 1 and len(cued) == 1:
            kind = cued.pop()
            for i in group:
                if not mentions[i].typed:
                    out[i] = replace(mentions[i], type=kind, typed=True)
    return out


@dataclass(frozen=True)
class KnownNames:
    """Names seen elsewhere (``extract``'s ``known``), with what extraction looks up in them
    made once: a consolidation passes one to every text it reads instead of going through
    every name at each text (which made extraction slow down as a user's names grew).

    ``words``: the lower-cased names and their words; ``lower``: the lower-cased names;
    ``chinese``: the Chinese names and given names (``_zh_names``); ``fulls``: short name →
    full names (``_full_names``)."""

    names: tuple[str, ...] = ()
    words: frozenset[str] = frozenset()
    lower: frozenset[str] = frozenset()
    chinese: frozenset[str] = frozenset()
    fulls: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, names: Iterable[str]) -> KnownNames:
        """The known names ``names`` (in order, each once)."""
        names = tuple(dict.fromkeys(n for n in names if n))
        return cls(
            names,
            frozenset(_name_words(names)),
            frozenset(n.lower() for n in names),
            frozenset(_zh_names(n for n in names if _CJK.search(n))),
            _full_names(names),
        )


def extract(
    text: str,
    *,
    speaker: str,
    addressee: str | None = None,
    day: str | None = None,
    known: Collection[str] | KnownNames = (),
    common: Collection[str] = (),
) -> Extraction:
    """The entities, relations and aliases one text (a turn, a note, a fact) states, without
    a model (see the module docstring).

    ``speaker`` is who said it (I/me/my/我 stand for them), ``addressee`` who it was said to
    (you/your/你), ``day`` its date (``YYYY-MM-DD``, to date "yesterday I moved to …"), and
    ``known`` names seen elsewhere (other turns, the speakers; ``turn_names`` gathers them;
    a ``KnownNames`` made once for many texts saves reading every name at each text),
    which let a sentence-initial capital count as a name, and ``common`` the lower-case
    words the user's texts write in lower case more often than capitalised
    (``common_words``), which a capital alone does not make a name ("See you soon"). Chinese text loads jieba and
    JioNLP's gazetteers on first use (about 3 s)."""
    speakers = [n for n in (speaker, addressee) if n]
    persons = {normalise(n) for n in speakers}
    known = known if isinstance(known, KnownNames) else KnownNames.of(known)
    names_elsewhere = _english_names_elsewhere(text, known.words | _name_words(speakers))
    candidates = _english_candidates(text, names_elsewhere, common, known.lower | {w.lower() for w in speakers})
    for c in candidates:
        c.type, c.typed = _english_type(text, c, persons)
    for m in _QUOTED.finditer(text):
        group = next(g for g in (1, 2, 3) if m.group(g) is not None)
        title = m.group(group).strip().rstrip(",.")
        start = m.start(group) + m.group(group).index(title[:1]) if title else m.start(group)
        if _is_title(title):
            before = text[max(0, m.start() - 30) : m.start() + 1]
            candidates = [c for c in candidates if not start <= c.start < start + len(title)]
            if _DISH_CUE.search(before):
                continue  # "a new dish called "Hui Guo Rou"": food, not a work
            kind = "organisation" if _ORG_CUE.search(before) else "work"
            candidates.append(_Candidate(title, start, start + len(title), kind, True))
    if _CJK.search(text):
        zh = _chinese_candidates(text, _zh_names(speakers) | known.chinese)
        candidates = [c for c in candidates if not any(z.start <= c.start < z.end for z in zh)] + zh
    mentions: list[Mention] = []
    for c in sorted(candidates, key=lambda c: (c.start, -c.end)):
        if mentions and c.start < mentions[-1].end:
            continue
        key = normalise(c.name)
        if key:
            mentions.append(Mention(c.name, key, c.type or "person", c.start, c.end, c.typed))
    mentions = _consistent_types(_coordinated_types(mentions, text), persons)
    relations = _relations(text, mentions, speaker, addressee, day)
    aliases = _aliases(text, mentions, speaker, addressee, known)
    return Extraction(tuple(mentions), tuple(relations), tuple(aliases))


def _consistent_types(mentions: list[Mention], persons: set[str]) -> list[Mention]:
    """One type per name within a text: the speakers are persons; otherwise a type a cue
    gave wins over the default."""
    typed: dict[str, tuple[str, bool]] = {}
    for m in mentions:
        if m.key in persons:
            typed[m.key] = ("person", True)
        elif m.typed:
            typed.setdefault(m.key, (m.type, True))
    return [replace(m, type=typed[m.key][0], typed=True) if m.key in typed else m for m in mentions]


def entity_type(mentions: Iterable[Mention]) -> str:
    """The type of an entity from its mentions (in one text or many): the most frequent type
    a cue gave, else the most frequent; "person" for none."""
    counts: dict[tuple[bool, str], int] = {}
    for m in mentions:
        counts[(m.typed, m.type)] = counts.get((m.typed, m.type), 0) + 1
    if not counts:
        return "person"
    return max(counts.items(), key=lambda item: (item[0][0], item[1]))[0][1]


# Model path ---------------------------------------------------------------------------------

EntityType = Literal["person", "place", "organisation", "pet", "work", "event"]
RelationLabel = Literal[
    "sister",
    "brother",
    "mother",
    "father",
    "son",
    "daughter",
    "child",
    "wife",
    "husband",
    "partner",
    "friend",
    "boss",
    "colleague",
    "lives_in",
    "from",
    "works_at",
    "job_title",
    "pet",
    "birthday",
    "age",
    "attends",
    "member_of",
    "visited",
    "read",
    "watched",
]
NAME_CHARS = 60
ENTITIES_PER_CALL = 20
RELATIONS_PER_CALL = 12


class EntityOutput(BaseModel):
    """One entity the model names: its ``name`` as the text writes it, and its type."""

    name: str = Field(min_length=1, max_length=NAME_CHARS)
    type: EntityType


class RelationOutput(BaseModel):
    """One relation the model reads: subject, a label of ``RELATIONS``, object (a name as the
    text writes it, or a value for birthday/age/job_title), and the date it holds from."""

    subject: str = Field(min_length=1, max_length=NAME_CHARS)
    relation: RelationLabel
    object: str = Field(min_length=1, max_length=NAME_CHARS)
    valid_from: str | None = Field(default=None, pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$")


class AliasOutput(BaseModel):
    """A short or other name the text gives for someone."""

    alias: str = Field(min_length=1, max_length=NAME_CHARS)
    name: str = Field(min_length=1, max_length=NAME_CHARS)


class GraphOutput(BaseModel):
    """What a capable chat model returns for entity extraction (``GraphOutput.model_json_schema()``
    constrains its decoding)."""

    entities: list[EntityOutput] = Field(default_factory=list, max_length=ENTITIES_PER_CALL)
    relations: list[RelationOutput] = Field(default_factory=list, max_length=RELATIONS_PER_CALL)
    aliases: list[AliasOutput] = Field(default_factory=list, max_length=ENTITIES_PER_CALL)


EXTRACT_ENTITIES = (
    "List the people, places, organisations, pets, works (books, films, songs) and events the "
    "messages below name, with their type, and the relations between them that the messages "
    "state plainly: {relations}. Write every name exactly as the messages write it; for I, me "
    "and my write the speaker's name, for you and your the name of the one spoken to. Give "
    "valid_from (YYYY-MM-DD) only when the messages date the relation. Add nothing the messages "
    "do not say. Answer in JSON: "
    '{{"entities": [{{"name": "...", "type": "person"}}], '
    '"relations": [{{"subject": "...", "relation": "lives_in", "object": "...", "valid_from": null}}], '
    '"aliases": [{{"alias": "...", "name": "..."}}]}}'
)
"""The prompt of the model path (Mem0g's entity extractor and relations generator, in one
call). ``extraction_prompt`` fills it."""


def extraction_prompt(text: str, speakers: Collection[str] = ()) -> str:
    """The user message asking a chat model for ``GraphOutput`` over ``text`` (the messages,
    one ``Speaker: text`` line each), naming the relation labels and ``speakers``."""
    labels = ", ".join(f"{label} ({kind.en})" for label, kind in RELATIONS.items())
    who = f"Speakers: {', '.join(speakers)}.\n" if speakers else ""
    return f"{EXTRACT_ENTITIES.format(relations=labels)}\n\n{who}Messages:\n{text}"


def _occurs(name: str, source: str, folded: str) -> bool:
    """Whether ``name`` occurs in the source, as written or after case and width folding,
    whole words for Latin names."""
    if not name.strip():
        return False
    if _CJK.search(name):
        return unicodedata.normalize("NFKC", name) in folded
    return re.search(rf"(?<!\w){re.escape(normalise(name))}(?!\w)", folded) is not None


def ground(extraction: GraphOutput | Extraction, text: str, *, speakers: Collection[str] = ()) -> Extraction:
    """The part of a model's (or the offline) extraction that ``text`` grounds: entities whose
    names occur in it, aliases whose both names occur (or name a speaker), relations whose
    subject and object occur (or are a speaker; a value-typed object must occur as written,
    an age's number as digits), with a ``valid_from`` that is a date. Mentions get the span
    of the name's first occurrence; a relation's evidence is the sentence naming its object.
    Follows ``memcli.consolidation.grounding``: a weak model's invented names must not enter memory."""
    folded = normalise(text) if not _CJK.search(text) else unicodedata.normalize("NFKC", text).casefold()
    allowed = {normalise(s) for s in speakers if s}

    def holds(name: str) -> bool:
        return normalise(name) in allowed or _occurs(name, text, folded)

    if isinstance(extraction, Extraction):
        entities = [(m.name, m.type) for m in extraction.mentions]
        relations = [(r.subject, r.relation, r.object, r.valid_from) for r in extraction.relations]
        aliases = list(extraction.aliases)
    else:
        entities = [(e.name, e.type) for e in extraction.entities]
        relations = [(r.subject, r.relation, r.object, r.valid_from) for r in extraction.relations]
        aliases = [(a.alias, a.name) for a in extraction.aliases]
    mentions: list[Mention] = []
    for name, kind in dict.fromkeys(entities):
        if kind not in ENTITY_TYPES or not _occurs(name, text, folded):
            continue
        start = _find(text, name)
        if start is not None:
            mentions.append(Mention(text[start : start + len(name)], normalise(name), kind, start, start + len(name)))
    spans = _sentences(text)
    kept: list[Relation] = []
    for subject, label, obj, valid_from in relations:
        kind = RELATIONS.get(label)
        if kind is None or not holds(subject):
            continue
        if kind.object in VALUE_TYPES:
            if not (obj in text or label == "age" and re.search(rf"(?<!\d){re.escape(obj)}(?!\d)", text)):
                continue
        elif not holds(obj):
            continue
        if valid_from is not None and not re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", valid_from):
            valid_from = None
        at = _find(text, obj)
        relation = Relation(subject, label, obj, valid_from, _sentence_of(spans, at or 0, text))
        if relation not in kept:
            kept.append(relation)
    grounded_aliases = tuple(dict.fromkeys((a, n) for a, n in aliases if a != n and holds(a) and holds(n)))
    return Extraction(tuple(sorted(mentions, key=lambda m: m.start)), tuple(kept), grounded_aliases)


def _find(text: str, name: str) -> int | None:
    """Where ``name`` first occurs in ``text``, case-insensitively; None when it does not."""
    index = text.find(name)
    if index >= 0:
        return index
    index = text.casefold().find(name.casefold())
    return index if index >= 0 else None


def _word_counts(texts: Iterable[str]) -> tuple[dict[str, int], dict[str, int]]:
    """How often each word is written capitalised away from a sentence start, and how
    often in lower case (by its lower-case form), over ``texts``."""
    capital: dict[str, int] = {}
    lower: dict[str, int] = {}
    for text in texts:
        starts = _sentence_starts(text)
        for match in re.finditer(r"\b[\w'’\-]+", text):
            word = _bare(match.group())
            if word[:1].isupper():
                if match.start() not in starts and _lower(word) not in _NOT_NAMES:
                    capital[word] = capital.get(word, 0) + 1
            elif word[:1].islower():
                lower[word] = lower.get(word, 0) + 1
    return capital, lower


def turn_names(texts: Iterable[str]) -> list[str]:
    """The words that a set of texts (one user's conversations) writes as names: capitalised
    away from a sentence start more often than in lower case ("Caroline", not "Sounds" nor
    "Cooking", which also start sentences, nor "Pottery", written "pottery" elsewhere). The
    ``known`` that ``extract`` takes for those texts, gathered in one pass."""
    capital, lower = _word_counts(texts)
    return [w for w, n in capital.items() if n > lower.get(w.lower(), 0)]


def common_words(texts: Iterable[str]) -> set[str]:
    """The lower-case words a set of texts writes in lower case at least as often as
    capitalised away from a sentence start: the ``common`` that ``extract`` takes."""
    capital, lower = _word_counts(texts)
    folded: dict[str, int] = {}
    for word, n in capital.items():
        folded[word.lower()] = folded.get(word.lower(), 0) + n
    return {w for w, n in lower.items() if n >= folded.get(w, 0)}
