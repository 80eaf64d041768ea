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

_KIN_EN = {
    "mother": "mum mom mother mama mommy",
    "father": "dad father papa daddy",
    "sister": "sister sis",
    "brother": "brother bro",
    "son": "son",
    "daughter": "daughter",
    "child": "kid kids",
    "wife": "wife",
    "husband": "husband hubby",
    "partner": "partner",
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
}
"""Who someone is to the writer, by the word each language names them with (a key of one
meaning for both: "mum", "mom" and "妈妈" are one ``"mother"``)."""
_WHO = {w: key for key, listed in _KIN_EN.items() for w in listed.split()} | {
    w: key for key, listed in _KIN_ZH.items() for w in listed.split()
}
_PERSON_EN = "|".join(sorted((w for words in _KIN_EN.values() for w in words.split()), key=len, reverse=True))
_PERSON_ZH = "|".join(sorted((w for words in _KIN_ZH.values() for w in words.split()), key=len, reverse=True))

_HEAD_EN = re.compile(
    # "dad still smoking", "my older sister says", "roommate is lactose intolerant", "coworker sam moved"
    r"^[\s\"'“‘(*•>-]*(?:(?:so|and|also|then|today|yesterday|now|lol|ugh|omg|apparently)[,\s]+)*"
    r"(?:(?:my|our|the)\s+)?(?:(?:older|younger|little|big|best|new|old|twin|step)\s+)?"
    rf"(?P<who>{_PERSON_EN})(?=[\s,:]|$)(?!\s+(?:and|&|n)\s+(?:I|me|i)\b)",
    re.IGNORECASE,
)
"""A person named by who they are at the head of an English sentence: its subject."""
_WRITER_EN = re.compile(r"\b(?:i|i'm|i’m|im|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|us|our|ours)(?![\w'’])", re.IGNORECASE)
"""The writer in an English sentence ("i" and "im" as a quick note writes them)."""
_HEAD_ZH = re.compile(
    # "我妈现在天天刷抖音", "老爸说", "同事小李也搬家了", "深圳的朋友说", "邻居家孩子在学钢琴"
    r"^[\s“”\"'（(]*(?:(?:现在|最近|今天|昨天|听说|还有|另外|然后)[，,\s]*)*"
    rf"(?:我的|我|我们的|我们|[\u4e00-\u9fff]{{1,4}}的)?(?P<who>{_PERSON_ZH})"
)
"""A person named by who they are at the head of a Chinese sentence: its subject."""
_OWNER_ZH = re.compile(rf"我(?:的|们的?)?(?={_PERSON_ZH})")
"""The writer as the one whose someone is ("我妈", "我的同事"): not the writer in the sentence."""


def told_of(sentence: str) -> str:
    """Who ``sentence`` tells of, when it is someone other than its writer: the key of who
    they are to the writer ("mother", "friend", "colleague"; one key for both languages) of
    the person it opens on ("dad still smoking on the balcony, ugh" → "father", "roommate is
    lactose intolerant, …" → "roommate", "我妈现在天天刷抖音" → "mother", "同事小李也搬家了" →
    "colleague"), in a sentence where the writer does not appear besides ("I", "me", "my",
    "we"; "我" but as whose someone is: "我妈"). "" for a sentence of the writer's:
    subjectless ("开始吃素了，跟着妈妈一起"), opening on the writer ("我和老公搬到了杭州"), or
    naming the writer further on ("my sister and I signed up for the gym", "mom drove me to
    my new flat", "dad says I should quit", "朋友介绍我去了新公司")."""
    if re.search(r"[\u4e00-\u9fff]", sentence):
        head = _HEAD_ZH.match(sentence)
        if not head or "我" in _OWNER_ZH.sub("", sentence[head.start("who") :]):
            return ""
        return _WHO[head.group("who")]
    head = _HEAD_EN.match(sentence)
    if not head or _WRITER_EN.search(sentence[head.end() :]):
        return ""
    return _WHO[head.group("who").lower()]


def people_named(text: str) -> frozenset[str]:
    """The keys (``told_of``'s) of everyone ``text`` names by who they are to its writer,
    anywhere in it: "what did my sister say her a1c was?" → {"sister"}, "我妈还刷抖音吗" →
    {"mother"}."""
    found = {_WHO[m.group(0).lower()] for m in re.finditer(rf"\b(?:{_PERSON_EN})\b", text, re.IGNORECASE)}
    return frozenset(found | {_WHO[m.group(0)] for m in re.finditer(_PERSON_ZH, text)})
