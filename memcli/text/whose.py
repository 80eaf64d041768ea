"""Whose a sentence is: its writer's, or someone else's (issue 31).

One reading of who a sentence is about, for the two places that need it: supersession at
write time (``memcli.text.updates``: "My sister got the senior designer role" changes no
job of the writer's) and the extractive answer (``memcli.recall.answers``: "dad still
smoking on the balcony" is no answer to "am I still a smoker?"). Someone else is named by
who they are to the writer (kin, a partner, a friend, a roommate, a colleague, a
neighbour: "dad", "my sister", "roommate", "我妈", "老爸", "同事小李", "闺蜜",
"邻居家孩子"), or by a pronoun; not by a clinician, a boss or a teacher, whose words are
most often about the writer's own matter ("dr lowered it to 500", "医生说暂时别下水").

The subject is read at the head of a sentence (Chinese drops the subject, so a clause that
opens on no one is the writer's: "开始吃素了，跟着妈妈一起"); a sentence in which the writer
appears too ("my sister and I signed up", "mom drove me to my new flat", "dad says I should
quit", "我和老公搬到了杭州", "朋友介绍我去了新公司") is the writer's as well. Regular
expressions only: a few microseconds a sentence.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from memcli.text.entities import _SURNAMES
from memcli.text.lexical import jieba_tokenizer

_KIN_EN = {
    "mother": "mum mom mother mama mommy",
    "father": "dad father papa daddy",
    "sister": "sister sis",
    "brother": "brother bro",
    "son": "son",
    "daughter": "daughter",
    "child": "kid kids children child",
    "wife": "wife",
    "husband": "husband hubby",
    "partner": "partner fiance fiancé fiancee fiancée",
    "boyfriend": "boyfriend bf",
    "girlfriend": "girlfriend gf",
    "friend": "friend bestie bff",
    "roommate": "roommate flatmate housemate",
    "colleague": "colleague coworker workmate",
    "neighbour": "neighbour neighbor",
    "cousin": "cousin",
    "aunt": "aunt auntie",
    "uncle": "uncle",
    "grandmother": "grandma grandmother gran nan nana granny",
    "grandfather": "grandpa grandfather grandad granddad",
    "classmate": "classmate",
    "parents": "parents folks",
    "family": "family siblings",
}
_KIN_ZH = {
    "mother": "妈妈 老妈 母亲 妈",
    "father": "爸爸 老爸 父亲 爸",
    "sister": "姐姐 妹妹 姐 妹",
    "brother": "哥哥 弟弟 哥 弟",
    "son": "儿子",
    "daughter": "女儿",
    "child": "孩子",
    "wife": "老婆 妻子 媳妇",
    "husband": "老公 丈夫",
    "boyfriend": "男朋友 男友",
    "girlfriend": "女朋友 女友",
    "friend": "闺蜜 好友 朋友 发小 哥们",
    "roommate": "室友 舍友",
    "colleague": "同事",
    "neighbour": "邻居",
    "cousin": "表姐 表哥 表妹 表弟 堂姐 堂哥 堂妹 堂弟",
    "aunt": "阿姨 姑姑 小姨 舅妈",
    "uncle": "叔叔 舅舅 伯伯",
    "grandmother": "奶奶 外婆 姥姥",
    "grandfather": "爷爷 外公 姥爷",
    "classmate": "老同学 同学",
    "parents": "爸妈 父母",
    "family": "家人 家里人 兄弟姐妹",
}
"""Who someone is to the writer, by the word each language names them with (a key of one
meaning for both: "mum", "mom" and "妈妈" are one ``"mother"``)."""
_WHO = {w: key for key, listed in _KIN_EN.items() for w in listed.split()} | {
    w: key for key, listed in _KIN_ZH.items() for w in listed.split()
}
_PERSON_EN = "|".join(sorted((w for words in _KIN_EN.values() for w in words.split()), key=len, reverse=True))
_PERSON_ZH = "|".join(sorted((w for words in _KIN_ZH.values() for w in words.split()), key=len, reverse=True))

_IS_AFTER_EN = (
    r"(?:been|got|gone|going|doing|now|still|just|also|finally|started|stopped|quit|trying|back|off|on|not|never|"
    r"always|dating|seeing|engaged|married|single|moved|moving|a|an)\b"
)
"""A word after "'s" that makes it "is" or "has" ("mum's doing keto now", "sis's been vegan
for years", "my bf's moved to Bristol"), not a possessive ("mum's wifi pw")."""
_HEAD_EN = re.compile(
    # "dad still smoking", "my older sister says", "roommate is lactose intolerant", "coworker sam moved",
    # "mum's doing keto now"
    r"^[\s\"'“‘(*•>-]*(?:(?:so|and|also|then|today|yesterday|now|lol|ugh|omg|apparently)[,\s]+)*"
    r"(?:(?P<the>my|the)\s+)?(?:(?:older|younger|little|big|best|new|old|twin|step)\s+)?"
    rf"(?P<who>{_PERSON_EN})(?:['’]s\s+(?:{_PERSON_EN})|['’]s(?=\s+{_IS_AFTER_EN}))?(?=[\s,:]|$)"
    r"(?!\s+(?:and|&|n)\s+(?:I|me|i)\b)"
    r"(?!\s+(?:doctor|doc|dr|gp|physician|nurse|vet|dentist|therapist|lawyer|home|house|car|business|chat|group|"
    r"plan|room|tree|name|history)\b)",
    re.IGNORECASE,
)
"""A person named by who they are at the head of an English sentence: its subject ("my
neighbour's kids": the neighbour's). "our family" is the writer's own (no match); a word
for someone before a noun is a compound, no person ("family doctor", "family home")."""
_HOUSEHOLD_EN = frozenset(("child", "family"))
"""Who "the" names at a sentence's head as the writer's household ("The kids are loving the
new house in York", "the family moved to leeds"): the writer's matter too."""
_FOR_WRITER_EN = re.compile(
    r"\b(?:propos\w*|help\w*|drove|drives|driving|visit\w*|surprised|introduced|invited|hosted|"
    r"came\s+(?:over|down|up|round|by)|moved\s+(?:us|me))\b|\bthe\s+move\b",
    re.IGNORECASE,
)
"""A verb done to or for the writer, whom a quick note leaves out ("boyfriend proposed last
night, said yes!!", "sister drove down to help w the move to york"): the writer's matter,
kept when in doubt (dropping a right answer costs more than keeping a wrong one)."""
_WRITER_EN = re.compile(r"\b(?:i|im|me|my|mine|myself|we|us|our|ours)\b", re.IGNORECASE)
"""The writer in an English sentence ("i" and "im" as a quick note writes them)."""


def names_writer(text: str) -> bool:
    """Whether an English ``text`` names its writer anywhere (``_WRITER_EN``, any case: "i'm
    doing keto", "started keto myself", "mine went up to 1000mg")."""
    return bool(_WRITER_EN.search(text))


PARTNERS = frozenset(("husband", "wife", "partner", "boyfriend", "girlfriend"))
"""Who the writer's partner is to them (``Subject.who``): a sentence told of them states the
writer's partner ("My boyfriend is called Tom"), a question naming them as the asker's asks
of the asker's own ("what's my husband's name?", "did my mum meet my boyfriend?")."""
PARTNER_WORDS_EN = (
    "(?:"
    + "|".join(sorted((w for w, who in _WHO.items() if who in PARTNERS and w.isascii()), key=len, reverse=True))
    + ")"
)
"""The English words for the writer's partner ("boyfriend", "bf", "fiancée"), as a regular
expression's group."""
_HEAD_ZH = re.compile(
    # "我妈现在天天刷抖音", "老爸说", "同事小李也搬家了", "深圳的朋友说", "邻居家孩子在学钢琴"
    r"^[\s“”\"'（(]*(?:(?:现在|最近|今天|昨天|听说|还有|另外|然后)[，,\s]*)*"
    rf"(?:我的|我|我们的|我们|[\u4e00-\u9fff]{{1,4}}的)?(?P<who>{_PERSON_ZH})(?![圈群节])"
)
"""A person named by who they are at the head of a Chinese sentence: its subject; not the
head of a compound ("朋友圈", "妈妈群", "母亲节")."""
_OWNER_ZH = re.compile(rf"我(?:的|们的?)?(?={_PERSON_ZH})")
"""The writer as the one whose someone is ("我妈", "我的同事"): not the writer in the sentence."""


OTHERS_EN = re.compile(
    r"\b(?:he|she|they|his|her|their|him)\b|\b[Mm]y\s+(?:mum|mom|mother|dad|father|sister|brother|son|daughter|wife|husband|"
    r"partner|friend|boyfriend|girlfriend|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|colleague|neighbou?r|"
    r"dog|cat)(?:'s)?\b|\bthe\s+(?:dog|cat|puppy|kitten|horse|baby|kids?)\b",
    re.IGNORECASE,
)
"""Someone other than the writer named anywhere in an English sentence, by a pronoun or as
"my" someone (a pet too): supersession reads no attribute of the writer's in such a sentence
but where they are company (``names_others_en``)."""
OTHERS_KIN_EN = re.compile(
    r"\b(?:his|their)\b|\b[Mm]y\s+(?:mum|mom|mother|dad|father|sister|brother|son|daughter|wife|husband|partner|friend|"
    r"boyfriend|girlfriend|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|colleague|neighbou?r|dog|cat)(?:'s)?\b|"
    r"\b(?:mum|mom|dad|nan|gran)(?:'s)?\b|\bthe\s+(?:dog|cat|puppy|kitten|horse|baby|kids?)\b",
    re.IGNORECASE,
)
"""``OTHERS_EN`` without the pronouns that may be a clinician's ("she doubled the
metformin"), and kin named without "my" ("mum's", "dad"): a sentence naming kin tells of them."""
OTHERS_ZH = re.compile(
    # 他 alone is no pronoun in a drug's name (阿托伐他汀)
    r"^(?:他|她|它)|(?:他|她|它)(?:们|的|说|在|是|把|也|要|有|去|吃|住|搬|每)|妈|爸|母亲|父亲|哥|姐|弟|妹|老公|老婆|丈夫|妻子|"
    r"儿子|女儿|朋友|同事|邻居|奶奶|爷爷|外婆|外公"
)
"""Someone other than the writer named anywhere in a Chinese sentence or clause."""

OTHERS_SUBJECT_EN = re.compile(
    r"\b(?i:my|his|her|their|our)\s+(?:\w+\s+)?(?:\w+)(?:'s)?\s+(?:(?:is|was|has|had|just|finally|now|also|apparently)\s+)*$|"
    r"\b(?i:he|she|they)(?:'s|\s+is|\s+was|\s+has|\s+just)?\s+(?:(?:now|finally|just|also)\s+)*$|"
    r"(?:^|[,;.!]\s*)(?!(?:I|We|It|This|That|Just|Finally|Officially|Also|Still|Now|Today|Got|Landed)\b)"
    r"[A-Z][a-z]+\s+(?:(?:is|was|has|had|just|finally|now|also|apparently)\s+)*$",
)
"""The clause before a verb, when its subject is someone else ("my friend is", "my sister",
"Jen", "she"): the news that follows is theirs, not the writer's. A capitalised word ending
in -ly is a name as much as any ("Emily just moved")."""


def others_subject(sentence: str, at: int) -> bool:
    """Whether the subject of the clause holding ``sentence[at:]`` is someone other than the
    writer (``OTHERS_SUBJECT_EN`` on the words before ``at``)."""
    before = re.split(r"[,;.!?]\s*|\s[-\u2013\u2014]\s", sentence[:at])[-1]
    return bool(OTHERS_SUBJECT_EN.search(before))


COMPANIONS_EN = re.compile(r"\b(?:with|w/|alongside|plus)\s+$|^\s+(?:and|&)\s+(?:I|me)\b", re.I)
"""Someone named as the writer's company, by the words before ("with the kids") or after
("the kids and I") the name."""


def names_others_en(sentence: str) -> bool:
    """Whether an English ``sentence`` names someone else (``OTHERS_EN``) but as company
    ("moved to Leeds with the kids", "the kids and I moved")."""
    return any(
        not COMPANIONS_EN.search(sentence[: m.start()]) and not COMPANIONS_EN.match(sentence[m.end() :])
        for m in OTHERS_EN.finditer(sentence)
    )


class Subject(NamedTuple):
    """Someone other than the writer a sentence tells of (``told_of``): ``who`` they are to
    the writer, a key of one meaning for both languages ("mother", "friend", "colleague"),
    and their name when the word after it is one ("Leo" of "My son Leo", "小李" of "同事小李",
    "sam" of "coworker sam moved" for a question naming sam; "" for none, as "still" of "dad
    still smoking")."""

    who: str
    name: str


_KIN_OF = {
    "child": {"son", "daughter"},
    "son": {"child"},
    "daughter": {"child"},
    "parents": {"mother", "father"},
    "mother": {"parents"},
    "father": {"parents"},
}
"""Who else a word for someone names: "children" names a son and a daughter, "mum" one of
the parents."""
_ANYONE = re.compile(
    r"\b(?:someone|somebody|anyone|anybody|people|everyone|everybody|others|recommend\w*|suggest\w*)\b|"
    r"别人|大家|他人|有人|推荐|建议",
    re.IGNORECASE,
)
"""Words of a question asking what others did or said, whoever they are ("which restaurants
were recommended to me?", "别人给我推荐过哪些餐厅？")."""


_NAME_ZH = re.compile(rf"[小老阿{''.join(sorted(_SURNAMES))}][\u4e00-\u9fff]")
"""A Chinese name after the word for who someone is ("同事小李", "朋友王芳"): 小, 老 or 阿, or a
common surname (``entities._SURNAMES``), and one character more."""


_FOR_WRITER_ZH = re.compile(r"(?:也|又|还|都|特意|专门)?(?:介绍|推荐|帮|陪|送|请|约|带|给|替)")
"""A verb done for or with the writer, whom Chinese leaves out ("朋友介绍认识了陈屿": the writer
met him; "老公送了一束花"): the sentence is the writer's too."""


_SAYS_EN = re.compile(
    r"[,\s]*(?:says|said|say|tells\s+me|told\s+me|told\s+us|heard|hears|thinks|reckons)\b(?:\s+that\b)?[,:\s]*",
    re.IGNORECASE,
)
"""A verb of saying after the person at a sentence's head ("Dad says", "coworker told me that")."""
_OWN_CLAUSE_EN = re.compile(
    r"(?:he|she|they|his|her|their|him|them|is|was|has|had|will|wants|can|can't|cannot|should|might|may|"
    r"still|also|just|now|finally|never|already|too|quit|stopped|started)\b",
    re.IGNORECASE,
)
"""The opening of what someone says about themself: their pronoun ("sister says her a1c is
5.4") or no subject of its own ("mum says still can't sleep")."""
_SAYS_ZH = re.compile(r"(?:说|讲|告诉我|听说|觉得)[，,：:\s]*")
"""A verb of saying after the person at a Chinese sentence's head ("老爸说", "同事告诉我")."""
_OWN_CLAUSE_ZH = re.compile(
    r"(?:他|她)|(?:也|还|又|要|想|已经|刚|就|会|打算|准备|不|没|正在|在|都|一直|决定|最近|现在)"
)
"""The opening of what someone says about themself in Chinese: their pronoun ("老爸说他也想学
游泳") or no subject ("老公说也想学")."""


def _news_of_another(sentence: str, at: int, chinese: bool) -> bool:
    """Whether ``sentence`` from ``at`` (just after the person at its head, and their name)
    reports what they say of something else ("Dad says Bella can lose the cone",
    "同事说公司年会定在1月18号"): news of its own subject, not of the one who told it."""
    says = (_SAYS_ZH if chinese else _SAYS_EN).match(sentence, at)
    if not says:
        return False
    return not (_OWN_CLAUSE_ZH if chinese else _OWN_CLAUSE_EN).match(sentence, says.end())


_NOT_NAMES_EN = frozenset(
    """a an the and or but so is was are were be been has had have will would can could should may might must
    do does did not no just still also now then finally already again too never always even only really
    says said say told tells heard thinks got gets went goes came comes on in at to for from with of""".split()
)
"""Words that follow a word for someone without being their name ("dad still smoking",
"sister just moved")."""
_NEXT_WORD_EN = re.compile(r"[,\s]+([A-Za-z]+)\b")


def _name_en(sentence: str, at: int, question: str) -> re.Match[str] | None:
    """The name of the person whose word ends at ``at`` in an English ``sentence``: the
    word after it when it is one, capitalised ("My son Leo") or named by ``question`` too
    ("coworker sam moved" for "where did sam move?"), and no function word or inflected
    verb ("still", "moved", "smoking") in lower case ("coworker Will moved" names Will)."""
    word = _NEXT_WORD_EN.match(sentence, at)
    if not word:
        return None
    if word.group(1)[0].isupper():
        return word
    if word.group(1).lower() in _NOT_NAMES_EN or re.search(r"(?:ing|ed|ly)$", word.group(1)):
        return None
    if re.search(rf"\b{word.group(1)}\b", question, re.IGNORECASE):
        return word
    return None


def _whole_word_zh(sentence: str, at: int) -> bool:
    """Whether the character at ``at`` of a Chinese ``sentence`` is a word of its own, as
    jieba segments what follows it ("妈说想要条羊绒围巾": "妈"), not the head of a longer one
    ("哥伦比亚大学", "妈祖庙", "弟子规")."""
    return len(jieba_tokenizer().lcut(sentence[at : at + 8], HMM=False)[0]) == 1


def told_of(sentence: str, question: str = "") -> Subject | None:
    """Whom ``sentence`` tells of (``Subject``), when it is someone other than its writer:
    the person it opens on ("dad still smoking on the balcony, ugh" → "father", "roommate is
    lactose intolerant, …" → "roommate", "我妈现在天天刷抖音" → "mother", "同事小李也搬家了" →
    "colleague"), in a sentence where the writer does not appear besides ("I", "me", "my",
    "we"; "我" but as whose someone is: "我妈"). None for a sentence of the writer's:
    subjectless ("开始吃素了，跟着妈妈一起"), opening on the writer ("我和老公搬到了杭州"), or
    naming the writer further on ("my sister and I signed up for the gym", "mom drove me to
    my new flat", "dad says I should quit", "朋友介绍我去了新公司"), or, Chinese, done for
    the writer left out (``_FOR_WRITER_ZH``: "朋友介绍认识了陈屿"). ``question``: what is asked,
    whose words may name the person in lower case ("coworker sam moved", ``_name_en``)."""
    if re.search(r"[\u4e00-\u9fff]", sentence):
        head = _HEAD_ZH.match(sentence)
        if head and len(head.group("who")) == 1 and not _whole_word_zh(sentence, head.start("who")):
            head = None  # "哥伦比亚大学的录取通知到了", "妈祖庙逛了一圈": no one's mother or brother
        if not head or "我" in _OWNER_ZH.sub("", sentence[head.start("who") :]):
            return None
        name = _NAME_ZH.match(sentence, head.end())
        if _FOR_WRITER_ZH.match(sentence, name.end() if name else head.end()):
            return None  # "朋友介绍认识了陈屿": the writer, left out, is the one introduced
        if _news_of_another(sentence, name.end() if name else head.end(), True):
            return None
        return Subject(_WHO[head.group("who")], name.group(0) if name else "")
    head = _HEAD_EN.match(sentence)
    if not head:
        return None
    name = _name_en(sentence, head.end(), question)
    # "coworker Sam said the standup moved": what is said follows the name
    if _news_of_another(sentence, name.end() if name else head.end(), False):
        return None
    if (head.group("the") or "").lower() == "the" and _WHO[head.group("who").lower()] in _HOUSEHOLD_EN:
        return None
    if _FOR_WRITER_EN.search(sentence, head.end()):
        return None
    says = _SAYS_EN.match(sentence, name.end() if name else head.end())
    # "mum told me she moved": the writer only as the one told
    if _WRITER_EN.search(sentence[says.end() if says else head.end() :]):
        return None
    return Subject(_WHO[head.group("who").lower()], name.group(1) if name else "")


def relation(word: str) -> str:
    """Who a single kin word names to the writer (``Subject.who``: "mum", "mom", "妈妈",
    "mother": "mother"; "boyfriend": "boyfriend", not "partner"); "" for any other word."""
    return _WHO.get(word.lower(), "")


def kin_words() -> frozenset[str]:
    """Every word, English or Chinese, that ``relation`` knows ("mum", "sis", "老爸")."""
    return frozenset(_WHO)


_KIN_NAMED_EN = re.compile(
    rf"(?:(?:^|[.!?;\n]\s*|\b(?:my|our)\s+)(?P<lead>{_PERSON_EN})s?|(?<![\w-])(?P<own>{_PERSON_EN})s?['’]s?)(?![\w-])",
    re.IGNORECASE,
)
"""An English kin word naming someone of the writer's: a possessive ("mum's wifi"), after
"my"/"our", or at a sentence's head ("dad said"); not within a compound ("grand-dad") nor
a word the writer is called ("the kids call me mum")."""


@lru_cache(maxsize=4096)
def relations_written(text: str) -> frozenset[str]:
    """The keys (``Subject.who``) of the people ``text`` names by who they are to its writer
    (``_KIN_NAMED_EN``; a Chinese word whole: "舅妈" is an aunt, not "妈"). Cached: an answer
    asks it of one note for every kin word of a question."""
    found = {_WHO[(m.group("lead") or m.group("own")).lower()] for m in _KIN_NAMED_EN.finditer(text)}
    return frozenset(found | {_WHO[m.group(0)] for m in re.finditer(_PERSON_ZH, text)})


def people_named(text: str) -> frozenset[str]:
    """The keys (``Subject.who``) of everyone ``text`` names by who they are to its writer,
    anywhere in it, with whom the word names besides (``_KIN_OF``; "family", or words asking
    what others did or said, ``_ANYONE``: everyone):
    "what did my sister say her a1c was?" → {"sister"}, "我妈还刷抖音吗" → {"mother",
    "parents"}, "what are my children called?" → {"child", "son", "daughter"}."""
    found = {_WHO[m.group(1).lower()] for m in re.finditer(rf"\b({_PERSON_EN})s?\b", text, re.IGNORECASE)}
    found |= {_WHO[m.group(0)] for m in re.finditer(_PERSON_ZH, text)}
    if "family" in found or _ANYONE.search(text):
        return frozenset(_WHO.values())
    return frozenset(found.union(*(_KIN_OF.get(who, set()) for who in found)))


_NAME_HEAD_EN = re.compile(
    r"^[\s\"'“‘(*•>-]*(?P<n>[A-Z][a-z]+)\s+(?:(?:is|was|has|had|just|finally|now|also|apparently|still)\s+)*"
    r"(?=(?:is|was|has|had|went|goes|gone|got|gets|became|becomes|started|starts|stopped|stops|quit|quits|"
    r"switched|switches|moved|moves|tried|tries|turned|turns|decided|decides|does|did|doing|going|trying|"
    r"dating|seeing|married|single|engaged)\b)"
)
"""A clause opening on a name and a verb of what one is or became ("Dan went vegan", "Sarah
is vegan now", "Jen just started keto")."""
_NOT_NAME_HEADS_EN = frozenset(
    """i we it this that these those there here he she they you just finally officially also still now then so and
    but today tonight yesterday recently lately actually honestly basically literally apparently really only eventually
    gradually slowly mostly totally fully definitely seriously currently again already back
    monday tuesday wednesday thursday friday saturday sunday weekend week month year
    went got quit became began took made kept tried""".split()
)
"""Capitalised words a clause opens on that are no one's name: a note's adverbs and times
("Finally went vegan", "Yesterday went vegan")."""


def head_name(clause: str) -> str:
    """The name an English ``clause`` opens on as its subject (``_NAME_HEAD_EN``: "Dan" of
    "Dan went vegan", "Sarah" of "Sarah is vegan now"), "" for none: not a capitalised
    adverb, a time, a pronoun or a verb of the writer's left-out subject ("Finally went
    vegan", "Yesterday went vegan", "Started going vegan"), nor where the writer appears
    after it ("Jordan is my boyfriend now"). A capitalised head word may still be what the
    clause states ("Keto going great", "Metformin went up to 1000mg"): the caller, which
    reads values, tells (``memcli.text.updates._writers_part``). Follows the subject-verb
    order of an English declarative clause (Quirk et al., *A Comprehensive Grammar of the
    English Language*, 1985) and issue 31."""
    head = _NAME_HEAD_EN.match(clause)
    if not head:
        return ""
    name = head.group("n").lower()
    # "Started going vegan": a verb of the writer's, whose subject is left out ("Ted", "Fred" are names)
    verb = (len(name) > 4 and name.endswith("ed")) or (len(name) > 5 and name.endswith("ing"))
    # "Jordan is my boyfriend now", "Tom moved in with me": the writer's matter too
    if name in _NOT_NAME_HEADS_EN or verb or relation(name) or _WRITER_EN.search(clause, head.end()):
        return ""
    return name


_OWNED_EN = re.compile(
    rf"\b(?:my|our|his|her|their)\s+(?:(?:older|younger|little|big|best|new|old|twin|step)\s+)?(?:{_PERSON_EN})s?(?:['’]s?)?(?!\w)",
    re.IGNORECASE,
)
"""Someone named as whose they are ("my sister's", "our kids", "his girlfriend"): the writer
as whose someone is, not as who is asked about."""


_ASKERS_OWN = re.compile(
    rf"\b(?:my|our)\s+(?:(?:new|current)\s+)?(?P<who>{_PERSON_EN})\b(?!['’]s?\s)|我(?:的|们的?)?(?P<zh>{_PERSON_ZH})(?!的)",
    re.IGNORECASE,
)
"""Someone named as the asker's own ("my boyfriend", "我男朋友"), not as whose another is
("my sister's boyfriend", "我男朋友的妈妈")."""


def asks_of_another(question: str, but: frozenset[str] = frozenset()) -> bool:
    """Whether ``question`` asks about someone other than the asker: it names someone by who
    they are to the asker (a key of ``_KIN_EN`` / ``_KIN_ZH`` other than ``but``) and names the
    asker only as whose someone is ("what diet is my sister on?", "what's my sister's diet?",
    "我姐姐现在吃素吗？"; "who is my sister dating?" with ``but`` the words for a partner). Not
    when the asker is asked of besides ("am I vegan like my sister?", "can I eat meat at my
    mum's?", "what do the kids call me?", "我现在还吃素吗？"). ``but``: who the asker's own
    attribute names ("what's my husband's name?" asks the asker's partner)."""
    named = people_named(question)
    if not named or named == frozenset(_WHO.values()) or named <= but:
        return False
    # "did my mum meet my boyfriend?", "我妈见过我男朋友吗？": the asker's own partner is asked of
    if any(_WHO[(m.group("who") or m.group("zh")).lower()] in but for m in _ASKERS_OWN.finditer(question)):
        return False
    if re.search(r"[\u4e00-\u9fff]", question):
        return "我" not in _OWNER_ZH.sub("", question)
    return not _WRITER_EN.search(_OWNED_EN.sub(" ", question))
