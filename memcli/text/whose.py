"""Whose a sentence is: its writer's, or someone else's (issue 31).

One reading of who a sentence is about, for the two places that need it: supersession at
write time (``memcli.text.updates``: a sentence ``told_of`` someone else states nothing of
the writer, and its clause-level patterns ``OTHERS_EN`` / ``OTHERS_ZH`` are made of the same
words) and the extractive answer (``memcli.recall.answers``: "dad still smoking on the
balcony" is no answer to "am I still a smoker?"). Someone else is named by who they are to
the writer (kin, in-laws, a partner, a friend, a roommate, a colleague, a neighbour, a
boss: "dad", "my sister", "brother-in-law", "roommate", "my manager", "我妈", "老爸",
"同事小李", "闺蜜", "邻居家孩子", "宝宝"), or by name before news only a person has ("kayla got
hired at st mary's ER"); not by a clinician or a teacher, whose words are most often about
the writer's own matter ("dr lowered it to 500", "医生说暂时别下水"), nor by what a boss
does for the writer ("boss approved the transfer").

The subject is read at the head of a sentence, after a time or a filler ("last night my
sister got engaged!!", "上周老公升职了"; Chinese drops the subject, so a clause that opens on
no one is the writer's: "开始吃素了，跟着妈妈一起"); a sentence in which the writer appears
too ("my sister and I signed up", "mom drove me to my new flat", "dad says I should quit",
"我和老公搬到了杭州", "朋友介绍我去了新公司", "kayla (my manager) approved my transfer") is the
writer's as well, but where the writer is only in a remark beside a name ("…, my old unit
lol") or uses what is theirs ("parents still have netflix, i can use theirs lol"). Regular
expressions only: a few microseconds a sentence.
"""

from __future__ import annotations

import re
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
    "child": "kid kids children child baby",
    "wife": "wife",
    "husband": "husband hubby",
    "partner": "partner",
    "boyfriend": "boyfriend",
    "girlfriend": "girlfriend",
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
    "in-law": "mother-in-law father-in-law sister-in-law brother-in-law son-in-law daughter-in-law in-laws",
    "boss": "boss manager supervisor",
}
_KIN_ZH = {
    "mother": "妈妈 老妈 母亲 妈",
    "father": "爸爸 老爸 父亲 爸",
    "sister": "姐姐 妹妹 姐 妹",
    "brother": "哥哥 弟弟 哥 弟",
    "son": "儿子",
    "daughter": "女儿",
    "child": "孩子 宝宝",
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
    "in-law": "婆婆 公公 岳母 岳父 丈母娘 老丈人 嫂子 姐夫 妹夫 弟媳",
    "boss": "老板 领导 上司",
}
"""Who someone is to the writer, by the word each language names them with (a key of one
meaning for both: "mum", "mom" and "妈妈" are one ``"mother"``)."""
_WHO = {w: key for key, listed in _KIN_EN.items() for w in listed.split()} | {
    w: key for key, listed in _KIN_ZH.items() for w in listed.split()
}
_PERSON_EN = "|".join(sorted((w for words in _KIN_EN.values() for w in words.split()), key=len, reverse=True))
_PERSON_ZH = "|".join(sorted((w for words in _KIN_ZH.values() for w in words.split()), key=len, reverse=True))

_WHEN_EN = (
    r"(?:so|and|also|then|now|lol|ugh|omg|apparently|btw|fyi|update|news|guess\s+what|today|yesterday|tonight|"
    r"earlier(?:\s+today)?|last\s+(?:night|week|weekend|month|year|\w+day)|this\s+(?:morning|afternoon|evening|"
    r"week|weekend|month)|on\s+\w+day|over\s+the\s+weekend)"
)
"""Words a quick note opens on before its subject: a filler or a time ("last night my sister
got engaged!!", "yesterday my boss quit", "update: kayla got hired")."""
_HEAD_EN = re.compile(
    # "dad still smoking", "my older sister says", "roommate is lactose intolerant", "coworker sam moved",
    # "mum's been vegan for years", "brother-in-law moved to leeds"
    rf"^[\s\"'“‘(*•>-]*(?:{_WHEN_EN}[,:!\s]+)*"
    r"(?:(?P<the>my|the)\s+)?(?:(?:older|younger|little|big|best|new|old|twin|step)\s+)?"
    rf"(?P<who>{_PERSON_EN})s?(?:['’]s(?:\s+(?:{_PERSON_EN}))?)?(?=[\s,:]|$)(?!\s+(?:and|&|n)\s+(?:I|me|i)\b)"
    r"(?!\s+(?:doctor|doc|dr|gp|physician|nurse|vet|dentist|therapist|lawyer|home|house|car|business|chat|group|"
    r"plan|room|tree|name|history|day)\b)",
    re.IGNORECASE,
)
"""A person named by who they are at the head of an English sentence: its subject ("my
neighbour's kids": the neighbour's; "dad's still smoking": "'s" of "is" or "has" too). "our
family" is the writer's own (no match); a word for someone before a noun is a compound, no
person ("family doctor", "family home", "mother's day")."""
_NAMED_HEAD_EN = re.compile(
    # "kayla got hired at st mary's ER", "Jen is pregnant", "sam just quit": news only a person has
    rf"^[\s\"'“‘(*•>-]*(?:{_WHEN_EN}[,:!\s]+)*(?P<name>[A-Za-z][a-z]+)\s+"
    r"(?:(?:just|finally|officially|also|apparently|now)\s+)?"
    r"(?:got\s+(?:hired|fired|engaged|married|promoted|pregnant|accepted|laid\s+off|(?:a|the|her|his)\s+(?:new\s+)?"
    r"(?:job|role|position|offer))|(?:is|'s|’s)\s+(?:engaged|pregnant|expecting|retiring)\b|quit|retired|resigned|"
    r"graduated)\b"
)
"""A person named by name at the head of an English sentence, before news only a person has
(hired, engaged, pregnant, quit, retired): a name in lower case too, which only this kind
of verb tells from a thing's name ("kayla got hired at st mary's ER"); not a move nor a
start, which things have too ("office moved to austin", "class started at 9")."""
_NOT_NAMED_EN = re.compile(r"(?:ly|ing|ed)$|^(?:i|we|it|this|that|who|which|what|there|everyone|everybody)$", re.I)
"""Words at a sentence's head that are no one's name ("finally quit", "officially moved")."""
_HOUSEHOLD_EN = frozenset(("child", "family"))
"""Who "the" names at a sentence's head as the writer's household, in a sentence about where
they all live ("The kids are loving the new house in York", "the family moved to leeds"):
the writer's matter too. "The kids both have strep" is the children's."""
_HOME_EN = re.compile(r"\b(?:mov\w*|house|home|flat|apartment|place|neighbou?rhood|town|city)\b", re.IGNORECASE)
"""Words of where one lives ("the kids are loving the new house")."""
_FOR_WRITER_EN = re.compile(
    r"\b(?:propos\w*|help\w*|surprised|introduced|invited|hosted|came\s+(?:over|down|up|round|by)|"
    r"drove\s+(?:down|up|over|round)|moved\s+(?:us|me))\b",
    re.IGNORECASE,
)
"""A verb done to or for the writer, whom a quick note leaves out ("boyfriend proposed last
night, said yes!!", "sister drove down to help w the move to york"): the writer's matter,
kept when in doubt (dropping a right answer costs more than keeping a wrong one). Not a
visit nor a drive of their own ("sister visiting her in-laws", "dad drove to leeds")."""
_FOR_WRITER_BOSS_EN = re.compile(
    r"\b(?:approv\w*|sign\w*\s+off|agreed|ok(?:ay)?['’]?d|green-?lit)\b",
    re.IGNORECASE,
)
"""What a boss does for the writer, left out ("boss approved the transfer to austin"): the
writer's own job, not the boss's; not what the boss does of their own ("boss got promoted",
"boss gave notice")."""
_APPOSITION_EN = re.compile(
    r"\([^()]*\)|,\s*(?:my|our)\s+(?:(?!is\b|was\b|has\b|had\b|are\b|got\b|can\b|will\b)[a-z]+\s+){0,2}[a-z]+"
    r"(?:\s+(?:lol|lmao|haha|tho))?\s*[.!]*\s*$",
    re.IGNORECASE,
)
"""A remark set beside a name, no clause of the sentence ("kayla (my manager) approved…",
"…st mary's ER, my old unit lol"): the writer in it is not in the sentence's matter."""
_THEIRS_EN = re.compile(
    r"(?:^|[,;]|\s[-–—]\s|\b(?:and|so|but)\b)[^,;]*?\b(?:theirs|hers|his)\b(?=\s*(?:lol|haha|too|tho|though|[.!,;]|$))"
    r"[^,;]*",
    re.IGNORECASE,
)
"""A clause in which the writer uses what is someone else's ("parents still have netflix, i
can use theirs lol"): the writer as the one it benefits, not whose it is."""
_WRITER_EN = re.compile(r"\b(?:i|im|me|my|mine|myself|we|us|our|ours)\b", re.IGNORECASE)
"""The writer in an English sentence ("i" and "im" as a quick note writes them)."""
_WHEN_ZH = (
    r"(?:现在|最近|今天|昨天|前天|昨晚|今早|今晚|刚才|刚刚|上周末?|这周|本周|上个月|这个月|前几天|周末|去年|今年|"
    r"听说|还有|另外|然后)"
)
"""Words a Chinese note opens on before its subject: a time or a filler ("上周老公升职了")."""
_HEAD_ZH = re.compile(
    # "我妈现在天天刷抖音", "老爸说", "同事小李也搬家了", "深圳的朋友说", "邻居家孩子在学钢琴"
    rf"^[\s“”\"'（(]*(?:{_WHEN_ZH}[，,\s]*)*"
    rf"(?:我的|我|我们的|我们|(?![跟和给对向替帮找陪])[\u4e00-\u9fff]{{1,4}}的)?(?P<who>{_PERSON_ZH})(?![圈群节])"
)
"""A person named by who they are at the head of a Chinese sentence: its subject; not the
head of a compound ("朋友圈", "妈妈群", "母亲节"), nor someone the writer acts with or for
("跟星河的领导提了离职": the writer resigned)."""
WITH_WRITER_ZH = re.compile(rf"我(?:和|跟|同|带着?)(?:我的)?(?:{_PERSON_ZH})(?:一起)?")
"""The writer with someone at a Chinese sentence's head ("我和老公搬到了杭州", "我跟我妈一起"):
both, "我们", the writer among them."""
_OWNER_ZH = re.compile(rf"我(?:的|们的?)?(?={_PERSON_ZH})")
"""The writer as the one whose someone is ("我妈", "我的同事"): not the writer in the sentence."""


_ELSEWHERE = frozenset(_KIN_EN) - {"child", "family", "parents", "boss"}
"""Who, named anywhere in a clause, makes it theirs (``OTHERS_EN``, ``OTHERS_ZH``): kin, a
partner, a friend, a colleague, a neighbour; not the household, whose news is most often
the writer's too ("moved to York to be near my parents", "my kids start school in York"),
nor a boss, who acts on the writer's own job ("my manager promoted me")."""
_ELSEWHERE_EN = "|".join(sorted((w for k in _ELSEWHERE for w in _KIN_EN[k].split()), key=lambda w: (-len(w), w)))
_BARE_KIN_EN = "|".join(w for k in ("mother", "father", "grandmother") for w in _KIN_EN[k].split() if len(w) <= 4)
"""Kin named without "my" anywhere in a sentence ("mum's", "dad"): the short words only, which
are no other word ("mother tongue")."""
OTHERS_EN = re.compile(
    rf"\b(?:he|she|they|his|her|their|him)\b|\b[Mm]y\s+(?:{_ELSEWHERE_EN}|dog|cat)(?:'s)?\b|"
    r"\bthe\s+(?:dog|cat|puppy|kitten|horse|baby|kids?)\b",
    re.IGNORECASE,
)
"""Someone other than the writer named anywhere in an English sentence, by a pronoun or as
"my" someone (``_ELSEWHERE``; a pet too): supersession reads no attribute of the writer's in
such a sentence but where they are company (``names_others_en``)."""
OTHERS_KIN_EN = re.compile(
    rf"\b(?:his|their)\b|\b[Mm]y\s+(?:{_ELSEWHERE_EN}|dog|cat)(?:'s)?\b|"
    rf"\b(?:{_BARE_KIN_EN})(?:'s)?\b|\bthe\s+(?:dog|cat|puppy|kitten|horse|baby|kids?)\b",
    re.IGNORECASE,
)
"""``OTHERS_EN`` without the pronouns that may be a clinician's ("she doubled the
metformin"), and kin named without "my" ("mum's", "dad"): a sentence naming kin tells of them."""
_ELSEWHERE_ZH = "|".join(
    sorted((w for k in _ELSEWHERE for w in _KIN_ZH.get(k, "").split()), key=lambda w: (-len(w), w))
)
OTHERS_ZH = re.compile(
    # 他 alone is no pronoun in a drug's name (阿托伐他汀)
    rf"^(?:他|她|它)|(?:他|她|它)(?:们|的|说|在|是|把|也|要|有|去|吃|住|搬|每)|{_ELSEWHERE_ZH}"
)
"""Someone other than the writer named anywhere in a Chinese sentence or clause (``_ELSEWHERE``)."""

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
_FOR_WRITER_BOSS_ZH = re.compile(r"(?:也|又|还|都|终于)?(?:批准|批了|同意|答应|安排)")
"""What a boss does for the writer, left out ("领导批了调岗"): the writer's own job."""


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
    lactose intolerant, …" → "roommate", "mum's been vegan for years" → "mother", "last
    night my sister got engaged!!" → "sister", "我妈现在天天刷抖音" → "mother", "同事小李也搬家了"
    → "colleague", "上周老公升职了" → "husband"), or someone named by name before news only a
    person has ("kayla got hired at st mary's ER" → ``SOMEONE``, "kayla"), in a sentence
    where the writer does not appear besides ("I", "me", "my", "we"; "我" but as whose
    someone is: "我妈"; not in a remark beside a name, "(my manager)", ", my old unit lol",
    nor as the one who uses what is theirs, "i can use theirs lol"). None for a sentence of
    the writer's: subjectless ("开始吃素了，跟着妈妈一起"), opening on the writer
    ("我和老公搬到了杭州"), or naming the writer further on ("my sister and I signed up for
    the gym", "mom drove me to my new flat", "dad says I should quit", "朋友介绍我去了新公司",
    "kayla (my manager) approved my transfer"), or done for the writer left out
    (``_FOR_WRITER_EN``, ``_FOR_WRITER_ZH``: "boyfriend proposed last night", "朋友介绍认识了陈屿";
    a boss's approval, ``_FOR_WRITER_BOSS_EN``), or the household at home ("The kids are
    loving the new house"). ``question``: what is asked, whose words may name the person in
    lower case ("coworker sam moved", ``_name_en``)."""
    if re.search(r"[\u4e00-\u9fff]", sentence):
        return _told_of_zh(sentence)
    head = _HEAD_EN.match(sentence)
    if not head:
        return _named_en(sentence)
    who = _WHO[head.group("who").lower()]
    if who == "boss" and (head.group("the") or "").lower() != "my" and head.group("who").lower() != "boss":
        return None  # "manager at tesco now!": a role of the writer's, not someone's
    name = _name_en(sentence, head.end(), question)
    # "coworker Sam said the standup moved": what is said follows the name
    if _news_of_another(sentence, name.end() if name else head.end(), False):
        return None
    if (head.group("the") or "").lower() == "the" and who in _HOUSEHOLD_EN and _HOME_EN.search(sentence):
        return None
    if _FOR_WRITER_EN.search(sentence, head.end()) or (
        who == "boss" and _FOR_WRITER_BOSS_EN.search(sentence, head.end())
    ):
        return None
    says = _SAYS_EN.match(sentence, name.end() if name else head.end())
    # "mum told me she moved": the writer only as the one told
    if _writer_in(sentence[says.end() if says else head.end() :]):
        return None
    return Subject(who, name.group(1) if name else "")


SOMEONE = "someone"
"""The ``Subject.who`` of someone named by name only ("kayla got hired…"), not by who they
are to the writer."""


def _writer_in(text: str) -> bool:
    """Whether the writer is in ``text`` (``_WRITER_EN``), but in a remark beside a name
    (``_APPOSITION_EN``) or a clause using what is someone else's (``_THEIRS_EN``)."""
    return bool(_WRITER_EN.search(_THEIRS_EN.sub(" ", _APPOSITION_EN.sub(" ", text))))


def _named_en(sentence: str) -> Subject | None:
    """Someone named by name at the head of an English ``sentence`` (``_NAMED_HEAD_EN``) of
    whom it tells, the writer not in it (``_writer_in``)."""
    head = _NAMED_HEAD_EN.match(sentence)
    if head is None:
        return None
    name = head.group("name")
    if _NOT_NAMED_EN.search(name) or name.lower() in _NOT_NAMES_EN or re.fullmatch(_WHEN_EN, name, re.I):
        return None  # "finally quit smoking", "lol quit smoking": the writer's, subject left out
    if _writer_in(sentence[head.end("name") :]) or _FOR_WRITER_EN.search(sentence, head.end("name")):
        return None
    return Subject(SOMEONE, name)


def _told_of_zh(sentence: str) -> Subject | None:
    """``told_of`` for a Chinese ``sentence``."""
    head = _HEAD_ZH.match(sentence)
    if head and len(head.group("who")) == 1 and not _whole_word_zh(sentence, head.start("who")):
        head = None  # "哥伦比亚大学的录取通知到了", "妈祖庙逛了一圈": no one's mother or brother
    if not head or "我" in _OWNER_ZH.sub("", sentence[head.start("who") :]):
        return None
    name = _NAME_ZH.match(sentence, head.end())
    at = name.end() if name else head.end()
    who = _WHO[head.group("who")]
    if _FOR_WRITER_ZH.match(sentence, at) or (who == "boss" and _FOR_WRITER_BOSS_ZH.match(sentence, at)):
        return None  # "朋友介绍认识了陈屿": the writer, left out, is the one introduced
    if _news_of_another(sentence, at, True):
        return None
    return Subject(who, name.group(0) if name else "")


def people_named(text: str) -> frozenset[str]:
    """The keys (``Subject.who``) of everyone ``text`` names by who they are to its writer,
    anywhere in it, with whom the word names besides (``_KIN_OF``; "family", or words asking
    what others did or said, ``_ANYONE``: everyone):
    "what did my sister say her a1c was?" → {"sister"}, "我妈还刷抖音吗" → {"mother",
    "parents"}, "what are my children called?" → {"child", "son", "daughter"}."""
    found = {_WHO[m.group(1).lower()] for m in re.finditer(rf"\b({_PERSON_EN})s?\b", text, re.IGNORECASE)}
    found |= {_WHO[m.group(0)] for m in re.finditer(_PERSON_ZH, text)}
    if "family" in found or _ANYONE.search(text):
        return frozenset(_WHO.values()) | {SOMEONE}
    return frozenset(found.union(*(_KIN_OF.get(who, set()) for who in found)))
