"""What a sentence says about a single-valued attribute of the person who says it, for
supersession at write time (issue 31): where one lives, one's job, the dose of a named
medicine, one's diet, a membership, and a habit one has stopped ("I stopped drinking
coffee", "no longer", "不再", "戒了").

The rules path of Mem0's update phase (Chhikara et al. 2025, ADD / UPDATE / DELETE /
NOOP) for the default install, where no capable model is configured: a new statement
*updates* an older one of the same speaker when both state the same attribute
(``Statement.key``) with another value, or when the new one says a habit or membership has
ended and the older one states it. Nothing else: "I ran 5 km" and "I ran 10 km" state no
attribute, so they are two runs, and additive facts (a second dog, a new hobby) have no
single value to replace. Questions and requests state nothing.

Only what the person says of themselves counts: a sentence in the first person ("I",
"my", "we"; "我"), or one that names no one else, as a diary's notes drop their subject
("moved to York", "got the keys!", "回老家成都了": ``_speaker_said``). The slot of such a
sentence comes from a lexicon of each slot's words (verbs of moving, starting, leaving,
stopping; nouns of a home, a job, a diet, a gym or choir, a couple) and its value from
what the sentence names (a capitalised place or employer, a role's head noun, a drug's
name by its ending, a place of JioNLP's gazetteers for Chinese), not from sentence
lists. Values are read by their kind, not by the sentence around them (Graphiti's edge
invalidation, Rasmussen et al. 2025: a newer fact of the same subject with another value
ends the older): a dose is a number and a unit beside a medicine's name or its
abbreviation; a diet is a word of the lexicon of diets standing as a value; a role is a
title's head noun beside an employer ("@" too); a habit's end is a stop said near a
subject, matched by stem against an older note keeping the habit with a frequency
(``keeps_habit``). English and Chinese; regular expressions and the Porter stemmer
(``memcli.text.lexical.stem_of``), no model: tens of microseconds a text (the Chinese
gazetteer loads once, about 2 s, at the first Chinese note of a home).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcli.text.entities import _PLACES_EN, _SURNAMES, _chinese_places, extract
from memcli.text.extractive import is_request_or_question, split_sentences
from memcli.text.lexical import stem_of
from memcli.text.whose import (
    COMPANIONS_EN,
    OTHERS_EN,
    OTHERS_KIN_EN,
    OTHERS_ZH,
    PARTNER_WORDS_EN,
    PARTNERS,
    asks_of_another,
    head_name,
    names_others_en,
    names_writer,
    others_subject,
    told_of,
)

RESIDENCE, JOB, DOSE, DIET, MEMBERSHIP, HABIT, PARTNER = (
    "residence",
    "job",
    "dose",
    "diet",
    "membership",
    "habit",
    "partner",
)
"""The attributes the rules read (the first part of ``Statement.key``)."""

CUES: dict[str, tuple[str, ...]] = {
    RESIDENCE: (
        "live in",
        "living in",
        "reside in",
        "moved",
        "relocated",
        "home is in",
        "house is in",
        "flat is in",
        "house in",
        "flat in",
        "room in",
        "apartment in",
        "place in",
        "home in",
        "based in",
        "settled in",
        "we're in",
        "we're now in",
        "we are in",
        "we are now in",
        "for good",
        "现在在",
        "如今在",
        "目前在",
        "住",
        "搬",
        "定居",
        "安家",
        "落户",
        "flat",
        "apartment",
        "landlord",
        "lease",
        "council tax",
        "new address",
        "the keys",
        "租",
        "房子",
        "宿舍",
        "老家",
    ),
    JOB: (
        "work as",
        "work at",
        "work for",
        "new job",
        "joined",
        "'m a ",
        "am a ",
        "'m an ",
        "am an ",
        "working as",
        "employed",
        "job",
        "started",
        "hired",
        "promoted",
        "retired",
        "当",
        "做",
        "是一名",
        "工作",
        "上班",
        "入职",
        "跳槽",
        "退休",
        "辞职",
        "离职",
        "升职",
        "晋升",
        "first day",
        "first week",
        "shift",
        "grind",
        "stand-up",
        "standup",
        "overtime",
        "on-call",
        "on call",
        "desk",
        "1:1",
        "offer",
        "onboarding",
        "orientation",
        "induction",
        "freelanc",
        "position",
        "week 1",
        "last day",
        "teaching",
        "engineer",
        "manager",
        "报到",
        "被裁",
    ),
    DOSE: ("mg", "mcg", "µg", "unit", "iu", "毫克", "微克", "单位"),
    DIET: (
        "vegan",
        "vegetarian",
        "veggie",
        "plant-based",
        "pescatarian",
        "pescetarian",
        "flexitarian",
        "keto",
        "diet",
        "gluten",
        "carb",
        "fasting",
        "素",
        "吃肉",
        "断食",
        "生酮",
        "低碳",
        "麸质",
        "少食",
        "饮食",
    ),
    MEMBERSHIP: (
        "member",
        "年卡",
        "月卡",
        "季卡",
        "次卡",
        "会员卡",
        "健身卡",
        "不续",
        "joined",
        "signed up",
        "会员",
        "退出",
        "取消",
        "加入",
        "gym",
        "choir",
        "singers",
        "chorus",
        "orchestra",
        "plan",
        "subscription",
    ),
    HABIT: (),
    PARTNER: (
        "boyfriend",
        "girlfriend",
        "partner",
        "husband",
        "wife",
        "fianc",
        "dating",
        "seeing",
        "married",
        "engaged",
        "broke up",
        "split up",
        "divorc",
        "single",
        "男朋友",
        "女朋友",
        "老公",
        "老婆",
        "丈夫",
        "妻子",
        "对象",
        "未婚",
        "结婚",
        "订婚",
        "在一起",
        "分手",
        "离婚",
        "单身",
        "anniversary",
        "date w",
        "proposed",
        "asked me to be",
        "领证",
        "official",
        "date with",
        "ended things",
        "确定关系",
        "确定了关系",
        "交往",
    ),
}
"""Lower-case substrings that every text stating an attribute holds (at least one): what
the store is searched for before the rules read the candidates (``statements``). Kept as
narrow as the rules: each candidate costs a parse, and a needle such as "live" finds every
"olive" and "deliver" of a 10,000-memory user."""

_PLACE = r"(?P<v>[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,2})"
_HOME = r"(?:home|house|flat|apartment|place|cottage|bungalow|condo)"
_RESIDENCE_EN = [
    re.compile(
        r"\b(?:I|[Ww]e)(?:'m|'re|\s+am|\s+are)?\s+(?:now\s+|still\s+|currently\s+)?"
        r"(?:living|live|reside|based|settled|settling|renting)\s+(?:down\s+)?in\s+" + _PLACE
    ),
    re.compile(
        r"\b(?:I|[Ww]e)(?:'ve|\s+have|\s+had)?\s+(?:just\s+|recently\s+|finally\s+|now\s+)?"
        r"(?:moved|relocated|settled|emigrated)(?:\s+(?:house|home|back|over|out|away|abroad))?"
        r"(?:\s+from\s+[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?)?\s+(?:to|in)\s+" + _PLACE
    ),
    re.compile(
        r"\b(?:I|[Ww]e)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?moved\s+in(?:to)?\s+(?:a|an|the|my|our)\s+(?:new\s+)?"
        + _HOME
        + r"\s+in\s+"
        + _PLACE
    ),
    re.compile(r"\b[Mm]y\s+(?:home|house|flat|apartment)\s+is\s+in\s+" + _PLACE),
    re.compile(r"\b(?:[Mm]y|[Oo]ur)\s+(?:new\s+)?" + _HOME + r"\s+(?:is\s+)?(?:now\s+)?in\s+" + _PLACE),
    re.compile(
        r"\b(?:got|collected|picked\s+up|have|'ve\s+got)\s+the\s+keys?\s+(?:to|for)\s+(?:my|our|the)\s+(?:new\s+)?"
        + _HOME
        + r"\s+in\s+"
        + _PLACE
    ),
    re.compile(r"\b(?:house|flat|home|apartment)\s+in\s+" + _PLACE + r"\s+and\s+moved\b"),
    re.compile(r"\bI\s+(?:rent|own)\s+(?:a|an)\s+(?:flat|house|room|apartment)\s+in\s+" + _PLACE),
    # a home said as where one is, no move word, only with "for good": "I'm in Denver for good", "We're now in
    # Denver for good" (not "we're in Seattle now", a trip's; nor "I'm in Denver for work": the clause ends there)
    re.compile(
        r"\b(?:I|[Ww]e)(?:'m|'re|\s+am|\s+are)\s+(?:(?:now|officially|finally|properly)\s+)*in\s+"
        + _PLACE
        + r"(?:\s+now)?\s+for\s+good(?=\s*(?:[,.;!~]|$))"
    ),
]
_ZH_VALUE = r"(?P<v>[\u4e00-\u9fff]{2,6}?)"
_ZH_END = r"(?:了|啦|住|生活|工作|定居)?(?:第?[一二三四五六七八九十两几半\d]+(?:年|个月|周|天)(?:了|啦)?)?(?:[。，,.！!；;]|$)"
"""The end of a Chinese clause after its value, a duration allowed ("当语文老师第五年", "干了三年了")."""
_RESIDENCE_ZH = [
    re.compile(
        r"我(?:们)?(?:现在|目前|一直|已经)?(?:住在|定居在|定居于|定居|安家在|落户在|落户)" + _ZH_VALUE + _ZH_END
    ),
    re.compile(r"我(?:们)?(?:现在|目前|已经)?在" + _ZH_VALUE + r"(?:定居|安家|落户|住)" + _ZH_END),
    re.compile(
        r"我(?:们)?(?:上个月|上周|去年|今年|最近|刚刚|刚|已经|终于|现在)?(?:搬家到|搬家去|搬回到?|搬到|搬去)了?"
        + _ZH_VALUE
        + _ZH_END
    ),
]
_ROLE = r"(?P<t>[a-z][a-z-]+(?:\s+(?!at\b|for\b|in\b|with\b|on\b)[a-z][a-z-]+)?)"
_ORG = r"(?P<o>(?:the\s+)?[A-Z][\w'’&-]+(?:\s+[A-Z][\w'’&-]+){0,3})"
_LOWER_ORG = r"(?P<o>the\s+(?!weekend|weekends|moment|same|time|end|start|front|back|top|bottom|minute|gym\b)[a-z]+(?:\s+[a-z]+)?)"
_JOB_EN = [
    re.compile(r"\bI\s+(?:now\s+)?work\s+(?:as\s+(?:a|an)\s+" + _ROLE + r"(?:\s+(?:at|for|in)\s+" + _ORG + r")?)"),
    re.compile(r"\bI\s+(?:now\s+|still\s+)?work\s+(?:at|for)\s+" + _ORG + r"(?:\s+as\s+(?:a|an)\s+" + _ROLE + r")?"),
    re.compile(r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:a|an)\s+" + _ROLE + r"\s+(?:at|for|with)\s+" + _ORG),
    re.compile(
        # "my new job as", not "(lost) my job as"
        r"\b(?:(?:I\s+(?:started|got|have|took|accepted|landed)|I've\s+(?:started|got|taken|accepted|landed))\s+"
        r"(?:a\s+|the\s+)?(?:new\s+)?|my\s+new\s+)(?:job|role|position)\s+as\s+(?:a|an)\s+"
        + _ROLE
        + r"(?:\s+(?:at|for|with)\s+(?:the\s+)?"
        + _ORG.replace("(?:the\\s+)?", "")
        + r")?"
    ),
    re.compile(r"\b(?:and|but|I)\s+now\s+work\s+(?:at|for)\s+" + _ORG),
    re.compile(r"\bI\s+joined\s+" + _ORG + r"\s+as\s+(?:a|an)\s+" + _ROLE),
    re.compile(
        r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?(?:started|begun|began)\s+(?:a\s+(?:new\s+)?(?:job|role|position)|"
        r"work(?:ing)?|my\s+(?:new\s+)?(?:job|role))\s+(?:at|with|for)\s+" + _ORG
    ),
    re.compile(r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?started\s+at\s+" + _ORG + r"\s+as\s+(?:a|an)\s+" + _ROLE),
    re.compile(
        r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?(?:got|landed|accepted|taken|took)\s+(?:a|the)\s+(?:new\s+)?(?:job|role|position)\s+"
        r"(?:at|with)\s+" + _ORG
    ),
    re.compile(
        r"\bI(?:'ve\s+been|\s+have\s+been|\s+was|\s+got|\s+am|'m|\s+just\s+got)\s+(?:just\s+)?hired\s+(?:by|at)\s+"
        + _ORG
        + r"(?:\s+as\s+(?:a|an)\s+"
        + _ROLE
        + r")?"
    ),
    re.compile(
        r"\bI(?:'ve\s+been|\s+have\s+been|\s+was|\s+got|\s+am|'m)\s+(?:just\s+)?hired\s+as\s+(?:a|an)\s+" + _ROLE
    ),
    re.compile(
        r"\bI(?:'ve\s+been|\s+have\s+been|\s+was|\s+got|'ve|\s+have)\s+(?:just\s+|finally\s+)?promoted\s+to\s+(?:a\s+|an\s+)?"
        + _ROLE
    ),
    re.compile(r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:working|employed)\s+as\s+(?:a|an)\s+" + _ROLE),
    re.compile(r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:working|employed)\s+(?:at|by|for)\s+" + _ORG),
    re.compile(r"\b[Mm]y\s+(?:new\s+)?(?:employer|company)\s+is\s+" + _ORG),
    re.compile(r"\b[Mm]y\s+(?:new\s+)?job\s+is\s+(?:at|with|for)\s+" + _ORG),
    re.compile(r"\b[Mm]y\s+(?:new\s+)?job\s+is\s+(?:as\s+)?(?:a|an)\s+" + _ROLE),
    re.compile(
        r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?joined\s+(?P<o>[A-Z][\w'’&-]+(?:\s+[A-Z][\w'’&-]+){0,3})"
        r"(?=.*\b(?:team|company|firm|startup|staff|job|role|position|employer|office|engineer|developer|manager)\b)"
    ),
    re.compile(
        r"\bI\s+(?:now\s+)?work\s+in\s+(?!the\b|a\b|an\b|my\b|our\b|there\b|here\b|town\b|the\s)(?P<t>[a-z]+(?:\s+(?!now\b|these\b|nowadays\b)(?:and\s+)?[a-z]+)?)"
        r"(?=\s*(?:now|these\s+days|nowadays)?\s*[,.;!]|$)"
    ),
    re.compile(
        r"\bI\s+(?:now\s+|still\s+)?work\s+(?:at|for)\s+" + _LOWER_ORG + r"(?:\s+as\s+(?:a|an)\s+" + _ROLE + r")?"
    ),
]
_JOB_END_EN = [
    (re.compile(r"\bI(?:'ve|\s+have|'m|\s+am)?\s+(?:just\s+|now\s+|finally\s+)?retired\b"), "retired", True),
    (
        re.compile(
            r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?(?:quit|left|resigned\s+from|lost|handed\s+in\s+my\s+notice\s+at)\s+"
            r"my\s+(?:job|position|role)\b"
        ),
        "",
        True,
    ),
    (
        re.compile(r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?(?:resigned|been\s+made\s+redundant|was\s+made\s+redundant)\b"),
        "",
        True,
    ),
    (re.compile(r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:unemployed|out\s+of\s+work|between\s+jobs)\b"), "", True),
]
_NOT_ROLES = frozenset(
    "big huge little bit fan member part lot couple few bit good great new real total bad mess pretty very".split()
)
_ROLE_ZH = (
    r"(?:经理|主管|总监|主任|老师|教师|工程师|程序员|设计师|医生|护士|会计|律师|销售|开发|运营|策划|编辑|记者|司机|厨师|"
    r"店长|助理|专员|顾问|分析师|研究员|实习生|架构师|产品|客服|文员|保安|主播|翻译)"
)
"""The heads of Chinese job titles: a title is named by its head ("部门经理", "后端开发")."""
_JOB_ZH = [
    re.compile(
        r"(?:我|，|,)(?:现在|目前)?在(?P<o>[\u4e00-\u9fff]{2,10}?)(?:做|当|担任)(?P<t>[\u4e00-\u9fff]{2,4}?)" + _ZH_END
    ),
    re.compile(
        r"(?:入职|加入|跳槽到|跳槽去|换到|去了)了?(?P<o>[\u4e00-\u9fff]{2,10}?)[，,](?:现在)?(?:做|当|担任)(?P<t>[\u4e00-\u9fff]{2,4}?)"
        + _ZH_END
    ),
    re.compile(r"(?:入职|跳槽到|跳槽去)了?(?P<o>[\u4e00-\u9fff]{2,10}?)" + _ZH_END),
    re.compile(
        r"我(?:现在|目前)?(?:是一名|是一位|当上了|当了|当|成了一名|成为了?一名)(?P<t>[\u4e00-\u9fff]{2,4}?)" + _ZH_END
    ),
    re.compile(r"(?:升职|晋升|升)(?:为|成|到|当)了?(?P<t>[\u4e00-\u9fff]{2,6}?)" + _ZH_END),
    re.compile(
        # "我在华为上班", "开始在阿里上班了", "下周一到华为上班", "正式去字节工作了"; not a wish ("想去华为工作")
        r"我(?:现在|目前|如今|已经|正式|开始|今天|明天|下周[一二三四五六日天]?|下个?月|这周[一二三四五六日天]?|周[一二三四五六日天])*"
        r"(?:在|到|去)(?!(?:当前|现在|目前|这家|那家|一家|本)的?(?:公司|单位))(?P<o>[\u4e00-\u9fffA-Za-z]{2,10}?)(?:上班|工作|干)"
        + _ZH_END
    ),
    re.compile(
        r"我(?:现在|目前|如今)?(?:是|成了|成为了?)(?:一名|一位|一个|个)?(?P<t>[\u4e00-\u9fff]{0,4}?"
        + _ROLE_ZH
        + ")"
        + _ZH_END
    ),
    re.compile(
        # a move inside a company or to another: "转岗批下来了，下周一去市场部，做品牌策划", "调岗到财务部当会计"
        r"(?:转岗|调岗|换岗|跳槽|入职|换了?工作|新工作)[^。！!]*?(?:去|到|进|调到|调去|转到)了?"
        r"(?P<o>[\u4e00-\u9fff]{2,10}?)[，,]?(?:做|当|担任)(?P<t>[\u4e00-\u9fff]{2,6}?)" + _ZH_END
    ),
    re.compile(
        r"(?:换了?工作|换工作了|新工作|转岗|调岗|换岗)[^。！!]*?(?:现在|目前)?(?:是|做|当)(?P<t>[\u4e00-\u9fff]{2,6}?)"
        + _ZH_END
    ),
]
_JOB_ZH.append(
    # the title of a clause of its own, after where one works: "我在杭州上班了，做产品经理"
    re.compile(r"[，,](?:现在|目前)?(?:做|当|担任)(?P<t>[\u4e00-\u9fff]{0,4}?" + _ROLE_ZH + ")" + _ZH_END)
)
_COMPANY_NAMED_ZH = re.compile(r"(?:公司|单位|东家)(?:的?名字?)?(?:叫|是)(?P<o>[\u4e00-\u9fffA-Za-z]{2,12}?)" + _ZH_END)
"""The employer a Chinese job note names apart ("…做产品经理，公司叫星辰能源"): it stands for
the vaguer one of the job's clause ("一家做储能的创业公司")."""
_JOB_END_ZH = [
    (re.compile(r"我(?:已经|刚刚|刚|终于|去年|今年|前年|上个月|这个月|上周)?退休了?"), "退休", True),
    (re.compile(r"我(?:已经|刚刚|刚|去年|今年|上个月|这个月|上周)?(?:辞职|离职|失业|被裁员?)了?"), "", True),
]
_UNIT = r"(?P<u>mg|mcg|µg|micrograms?|milligrams?|units?|iu|IU|(?<=\d)u)"
_DOSE_EN = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s?" + _UNIT + r"\b", re.IGNORECASE)
_DOSE_ZH = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s?个?(?P<u>毫克|微克|mg|mcg|µg|单位|iu|IU)(?![A-Za-z])")
_VITAMIN = re.compile(
    # a vitamin by its letter, however it is written: "vitamin D", "vit D3", "D3", "维生素D", "维他命B12"
    r"(?:\b(?i:vitamin|vit)\.?\s*|维生素|维他命)(?P<l>[A-Ka-k])(?P<d>\d{0,2})(?![A-Za-z])|"
    r"(?<![A-Za-z0-9])(?P<m>[A-K])(?P<e>\d{1,2})(?![A-Za-z0-9])"
)
"""A vitamin named by its letter; D2 and D3 are vitamin D, B12 is its own (``_vitamin``)."""
_GLUE = frozenset("to at on of is was now my the dose from by up down back its".split())
"""Words that may stand between a medicine's name and its dose ("upped my Ozempic to 1 mg")."""
_FUNCTION_WORDS = frozenset(
    "a about above after again against all almost also am an and any around as at be because been before below "
    "between both but by can could did do does doing down during each either even every few for from further get "
    "gets getting give go going got had has have having he her here hers him his how i if in into is it its just "
    "least less like limit max maximum maybe me might min minimum more most much must my near nearly need needs no "
    "nor not now of off on once only or other our out over own per perhaps plus probably same she should since so "
    "some still such than that the their them then there these they this those through to too try trying tried "
    "under until up upto us very want was we well were what when where which while who why will with within would "
    "you your total approx approximately roughly around another extra".split()
)
"""Function words, quantifiers and verbs of trying: never a medicine's name, whatever stands
next to a dose ("we could try 150mg", "under 1500mg sodium")."""
_DOSE_CHANGE_EN = re.compile(
    r"\b(?:cut|raised|upped|bumped|increased|reduced|lowered|doubled|halved|dropped|switched|swapped|changed|"
    r"going\s+(?:up|down)|back\s+to|down\s+to|up\s+to|started\s+(?:me\s+)?on)\b",
    re.IGNORECASE,
)
_CHANGED_TO_EN = re.compile(
    # a verb of changing in any tense, or one of moving with "up"/"down": "go up to", "stepped down to", "titrated to"
    r"\b(?:cut|rais(?:e|ed|es|ing)|upped|bump(?:ed|s)?|increas(?:e|ed|es|ing)|reduc(?:e|ed|es|ing)|lower(?:ed|s|ing)?|"
    r"drop(?:ped|s)?|chang(?:e|ed|es|ing)|titrat(?:e|ed|es|ing)|"
    r"(?:go|goes|going|went|gone|come|comes|coming|came|step|stepped|move|moved|put|puts|ramp|ramped|bring|brought)"
    r"\s+(?:up|down))\b(?:\s+(?:me|it|my\s+dose|the\s+dose|us|(?:the|my)\s+[a-z-]+(?:\s+[a-z-]+)?))?"
    r"(?:\s+(?:up|down|back))?\s+to\s*$|"
    # "doc doubled it, so 10mg now", "halved my dose - 25 mg": the change, then what the dose is now
    r"\b(?:doubled|tripled|halved|upped|bumped|increased|raised|lowered|reduced|cut|dropped)\s+(?:it|my\s+dose|the\s+dose)"
    r"(?:\s+(?:up|down))?\s*(?:[,;:]|\s[-–—])?\s*(?:(?:so|and|now)\s+)?(?:(?:i'm|im|i\s+am)\s+(?:now\s+)?on\s+|"
    r"(?:it's|its|it\s+is)\s+(?:now\s+)?|now\s+)?$|"
    # a diary's note that opens on the new dose: "down to 5mg, last week of it", "now down to 10mg"
    r"^\W*(?:(?:and|now|then|finally)\s+)?(?:down|dropped)\s+to\s*$",
    re.IGNORECASE,
)
"""A dose changed to a number ("GP bumped me to", "dose went up to", "cut the long acting down
to", "doubled it, so"): before a dose that names no medicine."""
_OTHERS_DOSE_EN = re.compile(
    r"\b(?:(?P<n>[A-Z][a-z]+)|(?:roommate|flatmate|housemate|room-mate|friend|mate|neighbou?r|colleague|coworker|"
    r"boss|mum|mom|dad|nan|gran|sister|brother|son|daughter|wife|husband|partner|boyfriend|girlfriend|bf|gf)s?)['’]s?\s",
)
"""Someone else named as whose a dose or its prescriber is ("Jess's GP bumped it up", "Tom's
dose went up", "roommate's meds"): their dose, not the writer's (``_others_dose``)."""
_CHANGED_TO_ZH = re.compile(r"(?:加量|减量|加|增加|减|减少|降|降低|调|调整|改|提高|上调|下调)(?:到|为|至|成)了?$")
_UNIT_CLASSES = {
    "mg": "mg",
    "milligram": "mg",
    "毫克": "mg",
    "mcg": "mcg",
    "µg": "mcg",
    "microgram": "mcg",
    "微克": "mcg",
}


def dose_unit(value: str) -> str:
    """The unit of a dose's value ("88 mcg" -> "mcg"), one name for each ("毫克" and
    "milligram" are "mg"; "µg" and "微克" are "mcg"); units, IU and 单位 are "unit"."""
    unit = value.rpartition(" ")[2].lower()
    return _UNIT_CLASSES.get(unit, "unit")


UNNAMED_DOSE = f"{DOSE}:"
"""The key of a dose changed without the medicine's name (``_CHANGED_TO_EN``): the medicine
of the same unit its writer noted before (``memcli.recall.changes``)."""
_DRUG_ZH = re.compile(
    # the endings of Chinese drug names (INN stems as Chinese writes them: -地平 -dipine, -他汀 -statin,
    # -普利 -pril, -沙坦 -sartan, -洛尔 -olol, -双胍, -西林 -cillin, -霉素 -mycin, -沙星 -floxacin, -拉唑 -prazole)
    r"[\u4e00-\u9fff]{1,5}?(?:地平|他汀|普利|沙坦|洛尔|双胍|胰岛素|西林|霉素|沙星|拉唑|替丁|格列[\u4e00-\u9fff]|列净|列汀|"
    r"甲状腺素|西泮|唑仑|曲坦|匹林|芬|酮)"
)
_DRUG = re.compile(
    r"^[a-z]{2,}(?:pril|statin|olol|sartan|formin|azole|cillin|mycin|cycline|pine|xine|prazole|tidine|zepam|zolam|"
    r"oxetine|aline|profen|amol|sone|lone|nide|mide|zide|parin|farin|gliptin|flozin|tide|lukast|tropium|terol|"
    r"triptan|dronate|barb|vir|pram|triptyline|azepam|tadine)$"
)
_KNOWN_DRUGS = frozenset(
    "insulin aspirin paracetamol acetaminophen ibuprofen warfarin digoxin lithium melatonin methotrexate "
    "levothyroxine thyroxine prednisolone prednisone vitamin iron folic magnesium zinc calcium".split()
)
_NOT_DRUGS = frozenset(
    "i my me the a an of to at in on and dose dosage daily day days once twice morning evening night nightly "
    "take took taking use used using raised increased lowered reduced changed cut put doubled halved upped gp doctor "
    "nurse cardiologist endocrinologist pharmacist every each per with from now tablet tablets pill pills "
    "takes raise increase lower reduce change bumped bump up down dropped drop switched switch went go going back "
    "onto again today new my dose doses dosage medication medicine meds prescription prescribed inject injected "
    "injection injections weekly monthly still only just also capsule capsules shot shots was is am are be been "
    "has have had got get be mine her his our their am pm mg mcg back over off out from tomorrow tonight slow release "
    "caps cap swapped going the cholesterol kept keep stay stayed step stepped goes gone come came coming move moved "
    "ramp ramped titrate titrated bring brought".split()
)
_ZH_DOSE_VERBS = re.compile(
    r"(?:加量|减量|加|增加|增|减|减少|降|降低|调|调整|改|换|提高|上调|下调|升|涨)?(?:到|为|至|成)了?$|(?:现在|目前|每天|每日|每晚|每早)$"
)
_ZH_WHEN_TAKEN = re.compile(
    r"(?:(?:一天|一日|每天|每日|每晚|每早|早上|晚上|早晚|睡前|饭前|饭后|空腹|早饭后|晚饭后)(?:吃|服|各)?)+$"
)
"""When a Chinese note says a medicine is taken, written between its name and its dose
("优甲乐一天50微克", "二甲双胍早晚各500毫克"): no part of the name."""
_DIET_EN = [
    re.compile(
        r"\bI(?:'m|\s+am)\s+(?:now\s+|still\s+)?(?:a\s+|an\s+)?"
        r"(?P<v>vegetarian|vegan|pescatarian|pescetarian|flexitarian|keto|gluten-free|dairy-free)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bI\s+(?:went|have\s+gone|'ve\s+gone|turned|became|have\s+become|'ve\s+become)\s+(?:a\s+)?"
        r"(?P<v>vegetarian|vegan|pescatarian|pescetarian|keto)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bI\s+(?:now\s+)?(?:follow|eat|am\s+on|'m\s+on|do)\s+(?:a|the)\s+(?P<v>[\w-]+)\s+diet\b", re.IGNORECASE
    ),
    re.compile(
        r"\bI(?:'ve|\s+have)?\s+(?:now\s+)?(?:switched|changed|moved|went|gone|started)\s+(?:over\s+)?(?:to|on)\s+(?:a|the)\s+"
        r"(?P<v>[\w-]+)\s+diet\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:eating|going)\s+(?P<v>vegetarian|vegan|pescatarian|pescetarian|keto)\b",
        re.IGNORECASE,
    ),
]
_OMNIVORE_EN = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:started|begun|began|gone\s+back\s+to|went\s+back\s+to|am\s+back\s+to|'m\s+back\s+to)\s+"
    r"eating\s+meat(?:\s+again)?\b|\bI\s+eat\s+meat\s+again\b|\bI(?:'m|\s+am)\s+no\s+longer\s+(?:a\s+)?"
    r"(?:vegetarian|vegan)\b",
    re.IGNORECASE,
)
_DIET_ZH = [
    (re.compile(r"我(?:已经|现在)?(?:不再|不)吃素了?|我(?:已经|现在)?不是素食(?:者|主义者)了"), "omnivore"),
    (re.compile(r"我(?:现在|目前)?(?:又|重新)?开始吃肉|我(?:现在)?又吃肉了"), "omnivore"),
    (re.compile(r"我(?:现在|目前|已经)?(?:开始|改成|改为)?(?:是纯素食者|吃纯素)"), "vegan"),
    (re.compile(r"我(?:现在|目前|一直|已经)?(?:开始|改成|改为)?(?:是素食者|吃素|是素食主义者)"), "vegetarian"),
]
_MEMBER_EN = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:now\s+|still\s+)?(?:a\s+)?member\s+of\s+(?:the\s+)?(?P<o>[^,.;!?]{3,60})"
)
_MEMBER_JOIN_EN = re.compile(
    r"\b(?:I|[Ww]e)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?(?:joined|signed\s+up\s+(?:to|for|at|with)|enrolled\s+(?:in|at))\s+"
    r"(?:the\s+|a\s+|our\s+|my\s+|local\s+)*(?P<o>[^,.;!?]{3,60}?)(?:\s+(?:last|this|in|on|at|after|because|as|with|yesterday|today|recently|and|that|who|which|where|to|for)\b"
    r"[^,.;!?]*)?(?:[,.;!?]|$)"
)
_MEMBER_LAPSE_EN = re.compile(
    r"\bI\s+(?:let|have\s+let|'ve\s+let)\s+my\s+(?P<o>[^,.;!?]{3,60}?)\s+membership\s+(?:lapse|expire|run\s+out)|"
    r"\bI\s+(?:didn't|did\s+not|won't|will\s+not)\s+renew\s+my\s+(?P<p>[^,.;!?]{3,60}?)\s+membership"
)
_MEMBER_END_EN = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?(?:cancelled|canceled|ended|quit|left|stopped)\s+(?:my\s+|the\s+|our\s+)?"
    r"(?P<o>[^,.;!?]{3,60}?)(?:\s+membership)?(?:\s+(?:last|this|in|on|after|because)\b[^,.;!?]*)?(?:[,.;!?]|$)"
)
_MEMBER_ZH = re.compile(r"我(?:现在)?是(?P<o>[\u4e00-\u9fff]{2,12}?)的?会员")
_MEMBER_JOIN_ZH = re.compile(
    r"我(?:已经|刚刚|刚|最近)?(?:加入了?|参加了?|报名了?|办了)(?P<o>[\u4e00-\u9fff]{2,12}?(?:俱乐部|协会|社团|合唱团|乐团|球队|队|社|会|健身房))"
    r"(?:的?会员卡?)?"
)
_MEMBER_END_ZH = re.compile(
    r"我(?:已经)?(?:退出了?|取消了?|退了)(?P<o>[\u4e00-\u9fff]{2,12}?)(?:的?会员(?:资格)?)?(?:[。，,.！!]|$)"
)
_MEMBER_HELD_EN = re.compile(
    # a membership held by what one does with it: "renewed Costco executive membership", "got a National Trust membership"
    r"\b(?:renewed|got|bought|have|'ve\s+got|paid\s+for|took\s+out|started|upgraded)\s+(?:my\s+|a\s+|an\s+|the\s+|our\s+)?"
    r"(?P<o>[^,.;!?]{2,40}?)\s+membership\b",
    re.IGNORECASE,
)
_MEMBER_EXPIRED_EN = re.compile(
    r"\b(?:my\s+|the\s+|our\s+)?(?P<o>[^,.;!?]{2,40}?)\s+membership\s+(?:has\s+|just\s+)?(?:expired|lapsed|ran\s+out|ended)\b",
    re.IGNORECASE,
)
_CARD_ZH = r"(?:年卡|月卡|季卡|次卡|会员卡|健身卡)"
_CARD_HELD_ZH = re.compile(
    # a pass one holds at a gym or a pool, one at a time: "办了奥体中心游泳馆的年卡", "在威尔士办了张年卡", "乐刻月卡"
    r"(?:在(?P<a>[\u4e00-\u9fff]{2,10}?))?(?:办了?|买了?|续了?|充了?)(?:张|一张)?(?P<o>[\u4e00-\u9fff]{0,10}?)的?"
    + _CARD_ZH
)
_CARD_NAMED_ZH = re.compile(r"(?:^|我|[，,])(?P<b>[\u4e00-\u9fff]{2,8}?)的?" + _CARD_ZH)
_NOT_RENEWED_ZH = r"(?:已经)?(?:到期了?)?[，,]?(?:不续了|不续费了|没续|不再续|不续|退了|退掉了)"
_CARD_ENDED_ZH = re.compile(
    r"(?:^|我|[，,])(?P<o>[\u4e00-\u9fff]{2,8}?)(?:的?(?:" + _CARD_ZH[3:-1] + r"|卡))?" + _NOT_RENEWED_ZH
)
"""A pass one let go: "乐刻到期不续了", "健身房年卡到期了，不续了"."""
_MEMBER_PAID_ZH = re.compile(
    # a paid membership of a service: "开了爱奇艺会员", "充了个B站大会员", "爱奇艺会员到期了，不续了"
    r"(?:开了?|充了?|续了?|办了?)(?:个|一个)?(?P<o>[\u4e00-\u9fffA-Za-z]{2,8}?)(?:的)?(?:大)?(?:会员|VIP|vip)(?!卡)"
)
_MEMBER_LAPSED_ZH = re.compile(r"(?:^|我|[，,])(?P<o>[\u4e00-\u9fffA-Za-z]{2,8}?)(?:的)?(?:大)?会员" + _NOT_RENEWED_ZH)
CARD = "卡"
"""The key of a pass to a place (``_CARD_HELD_ZH``: a gym, a pool), of which one holds one at
a time, as a gym."""
_ONLINE_ZH = re.compile(r"视频|音乐|网盘|云|阅读|听书|[Aa]pp|APP|B站|爱奇艺|腾讯|优酷|芒果|网易")
"""A pass to something online (a video or music service), not to a place: many are held at once."""
_ORG_WORDS = frozenset(
    "club gym society group team choir league association union library class circle orchestra band guild "
    "ramblers scouts federation chapter lodge".split()
)
_HABIT_EN = re.compile(
    r"(?:\bI(?:'ve|\s+have)?\s+|\bI(?:'m|’m|\s+am)\s+(?=not\s)|"
    r"(?:^|[,;:]|\s[-–—]|\b(?:and|so|now)\b)\s*(?=stopped|quit|gave|given|ditched|kicked|uninstalled|no\s+more|not\s+\w+ing\b))"
    r"(?:(?:stopped|quit|given\s+up|gave\s+up|cut\s+out|kicked|ditched|cancell?ed|canceled|uninstalled)\s+|no\s+longer\s+|"
    r"no\s+more\s+(?=\w+ing\b)|(?:don't|do\s+not)\s+(?=\w+\b.*\b(?:anymore|any\s+more))|"
    r"not\s+(?=\w+ing\b[^,.;!?]*?\b(?:anymore|any\s+more)\b))"
    r"(?!by\b|at\b|in\b|for\b|to\b|with\b|my\s+job\b|it\b|that\b|this\b|them\b|him\b|her\b)(?P<o>[^,.;!?]{2,60})",
    re.IGNORECASE,
)
"""An ended habit: "I stopped drinking coffee", "I no longer…", "I don't … anymore", "(I'm) not
drinking anymore", or a
diary's clause that opens on the stopping ("gave up coffee completely", "no caffeine, gave
up coffee", "deleted my account, quit gaming for good"), or on "no more" and a doing ("no
more running for me"; "no more milk" is none)."""
_DELETED_APP_EN = re.compile(
    # "deleted my Instagram account", "deleted the TikTok app": the use of it ended; "deleted the photos" is none
    r"(?:\bI(?:'ve|\s+have)?\s+|^\W*|[,;:]\s*|\b(?:and|so|now)\s+)(?:deleted|removed)\s+(?:my\s+|the\s+)?"
    r"(?P<o>[\w'’-]+(?:\s+[\w'’-]+)?)\s+(?:account|app|profile)\b",
    re.IGNORECASE,
)
_BARE_STOP = re.compile(
    # a note that only says a habit ended, the habit its writer noted before: "quit.", "Sober from today.",
    # "stopped, for good this time", "戒了！", "戒了三个月了"
    r"^\W*(?:I(?:'ve|\s+have|'m|\s+am)?\s+)?(?:just\s+|finally\s+|officially\s+)?(?:quit|stopped|sober|戒了|戒掉了|彻底戒了)"
    r"(?:\s*(?:for\s+good|from\s+today|as\s+of\s+today|since\s+\w+|today|now|this\s+time|cold\s+turkey|"
    r"for\s+\d+\s+\w+|[0-9一二三四五六七八九十两几半]+个?(?:天|周|年|月|星期|礼拜)(?:了|啦)?|[,，]))*\W*$",
    re.IGNORECASE,
)
RECURS = re.compile(
    r"\b(?:every|each)\s+(?:other\s+)?(?:day|night|morning|evening|week|weekend|lunch|time|"
    r"mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\b|\bmost\s+(?:days|nights|mornings|evenings)\b|"
    r"\b(?:a|per|/)\s*(?:day|night|week)\b|\b(?:daily|nightly|again|still)\b|\b\d+\s*(?:x|times)\b|"
    r"每天|每晚|每周|每个|天天|又|还在|一天",
    re.IGNORECASE,
)
"""A habit as a note of it goes: a frequency ("10 cigarettes a day", "most nights", "每天"), or
again, still ("valorant till 2am again", "又喝了五杯奶茶"): what a bare note of its end
(``_BARE_STOP``) ends."""
RECURS_NEEDLES = (
    "every",
    "each",
    "most ",
    " a day",
    " a night",
    " a week",
    "per ",
    "/day",
    "/week",
    "daily",
    "nightly",
    "again",
    "still",
    "times",
    "x/",
    "每天",
    "每晚",
    "每周",
    "每个",
    "天天",
    "又",
    "还在",
    "一天",
)
"""Lower-case substrings one of which every text ``RECURS`` reads holds (the store's search)."""
BARE_HABIT = f"{HABIT}:"
"""The key of a habit ended without its name (``_BARE_STOP``, in any sentence of a note):
the one noted before it that shares a word with the note (``Statement.words``:
``_note_words``), else the only one noted before it."""
_HABIT_STOP = re.compile(
    r"\b(?:in|on|at|last|this|since|after|before|because|and|but|so|when|for|anymore|any\s+more|a\s+while|ago|now|"
    r"completely|altogether|entirely|for\s+good|yesterday|today)\b"
)
_HABIT_ZH = re.compile(
    r"(?:我|(?<=[，,])|以后|从此|今后|再也)(?:已经|现在|就)?(?:不再|戒掉了?|戒了|戒)"
    r"(?![0-9一二三四五六七八九十两几半]+个?(?:天|周|年|月|星期|礼拜))(?P<o>[\u4e00-\u9fff]{1,6}?)"
    r"(?:(?:了|啦)?(?:[。，,.！!]|$)|(?=[0-9一二三四五六七八九十两几半]+(?:个|天|周|年|月|星期|礼拜)))|"
    r"我(?:已经|现在)?不(?P<p>[喝抽吃玩打跑][\u4e00-\u9fff]{1,5}?)了(?:[。，,.！!]|$)|"
    r"(?:停了|停掉了?|戒掉了?|取消了?)(?P<q>[\u4e00-\u9fff]{1,4}?)(?:[。，,.！!]|$)|"
    # the habit first, then its end: "奶茶戒了", "烟终于戒掉了", "咖啡也戒了"
    r"(?:^|我|[，,])(?P<r>[\u4e00-\u9fff]{1,4}?)(?:已经|也|都|终于|彻底|总算|算是)?(?:戒了|戒掉了?)"
)

_STOP_NEAR_EN = re.compile(
    # a stop said near the habit, in whatever tense or voice: "physio says stop running for now", "no running
    # for now", "no more caffeine", "day 1 no cigs", "three weeks off caffeine", "six months since my last
    # cigarette", "sugar-free since May"
    r"\b(?:says|said|told\s+me\s+to|decided\s+to|had\s+to|orders?|advice|advised\s+me\s+to)\s*:?\s+(?:to\s+)?"
    r"(?:stop|quit|give\s+up|drop|ditch|cut\s+out|pause)\s+"
    r"(?!by\b|at\b|in\b|for\b|to\b|with\b|it\b|that\b|this\b|them\b|him\b|her\b|me\b|you\b|us\b|my\s+job\b|now\b)"
    r"(?P<o>[^,.;!?—–()]{2,40})|"
    # "no more" and a thing, as a clause of its own: "no more caffeine — doc said"; "no more milk, need to buy some"
    # is a shopping note
    r"\bno\s+more\s+(?P<p>\w+ing\b[^,.;!?—–()]{0,40}|[a-z][\w-]*(?=\s*(?:[—–.!]|\s-\s|$|for\s+now|from\s+today|since\b|for\s+good|any\s*more)))|"
    r"\bno\s+(?P<q>[a-z][\w-]*)(?=\s+(?:for\s+now|anymore|any\s+more|since\b|for\s+(?:\d+|a|one|two|three|a\s+few)\s+(?:days?|weeks?|months?)))|"
    r"\bday\s+\w+\s*[:,-]?\s*no\s+(?P<u>[a-z][\w-]*)|"
    r"\b(?:days?|weeks?|months?|years?)\s+(?:off|without|free\s+of)\s+(?P<r>[a-z][\w-]*)|"
    r"\bsince\s+my\s+last\s+(?P<s>[a-z][\w-]*)|"
    r"\b(?P<t>[a-z][\w]*)[- ]free\s+(?:since|now|as\s+of|for\s+(?:\d+|a|one|two|three|a\s+few)\s+(?:days?|weeks?|months?|years?))\b",
    re.IGNORECASE,
)
"""A habit's end said near its subject, not as a first-person sentence of stopping
(``_HABIT_EN``): what it names is a habit only when its writer noted one of the same
subject (``keeps_habit``)."""
_NOT_STOPPED_EN = re.compile(
    r"\b(?:can't|cannot|can\s+not|couldn't|won't|never|don't|didn't|doesn't|not|need\s+to|needs\s+to|want\s+to|"
    r"should|must|going\s+to|gonna|try(?:ing)?\s+to|have\s+to|has\s+to|got\s+to|gotta|plan\s+to|will|would)\s+$",
    re.IGNORECASE,
)
"""What before a stop makes it none: a negation or an intention ("can't stop thinking",
"need to stop vaping")."""
_NOT_HABITS = frozenset(
    "problem idea way time one thing worri doubt chanc clue luck plan rush sign news word answer repli signal "
    "reason wonder matter point need choic excus".split()
)
"""Stems a "no …" names that are no habit ("no problem", "no idea", "no time")."""
_STOP_NEAR_ZH = re.compile(
    # the habit, then its end: "太极停了", "跑步先停了", "晨跑暂时不跑了"
    r"(?:^|我|[，,])(?P<s>[\u4e00-\u9fff]{1,4}?)(?:也|都|已经|先|就|暂时|彻底)?"
    r"(?:停了|停掉了?|不做了|不练了|不去了|不打了|不跑了|不写了|放弃了)"
)
_LIGHT_VERBS = frozenset("drink eat take play go do have use get make buy".split())
"""Verbs a habit is done with, not the habit: its head is the word after ("stopped drinking coffee": coffee)."""
_LIGHT_VERBS_ZH = "打玩喝吃抽去做看练"
_COMPANY_ZH = re.compile(r"(?:跟|和|同)[\u4e00-\u9fff]{1,4}?(?:他们|她们|一起)")
"""The people one does a thing with ("跟老王他们打麻将"): company, not someone else's doing."""

_PARTNER_WORDS = PARTNER_WORDS_EN
_ASKED_TO_BE_EN = re.compile(
    r"\b(?P<v>[A-Z][a-z]+)\s+asked\s+me\s+to\s+be\s+(?:his|her|their)\s+" + _PARTNER_WORDS + r"\b"
)
"""A partner by the asking: "Leo asked me to be his gf!!" (a sentence that names someone
else, which ``statements`` otherwise leaves out)."""
_SINGLE_EN = re.compile(
    r"^\W*(?:now\s+|officially\s+)?single(?:\s+again|\s+now)?\s*(?:[.!,;]|$|at\b)|"
    r"\bdivorce\s+(?:papers\s+)?(?:is\s+|was\s+|were\s+|are\s+|has\s+been\s+|have\s+been\s+)?(?:finali[sz]ed|final|through|came\s+through|granted|done|signed)\b",
    re.IGNORECASE,
)
"""A diary's note that a relationship is over: "single again at 52", "divorce finalised"."""
_PARTNER_STATE_ZH = re.compile(r"(?:结婚|领证|领了证|订婚)(?:了|啦)")
"""A Chinese sentence saying the speaker got engaged or married without naming the
partner ("今天领证了！", "订婚啦")."""
_COUPLE_ZH = re.compile(r"确定了?关系|在一起[了啦](?=[。！!，,~～]|$)|交往了|成了男女朋友")
_OTHERS_COUPLE_ZH = re.compile(
    r"(?P<x>[^，,。！!；;~～\s和跟与]*)(?:和|跟|与)[\u4e00-\u9fff]{1,4}?(?:现在|已经|终于|正式|也)*"
    r"(?:在一起|确定了?关系|交往|谈恋爱|结婚|订婚|领证|领了证)"
)
"""A couple's clause, with who is before "和" (``x``): the writer's only when that ends in 我 or
我们 ("我和小美在一起了"); "阿杰和小美在一起了" is two others."""
_FAMILIAR_NAME_ZH = re.compile("[小老阿][" + "".join(sorted(_SURNAMES)) + "]")
_PARTNER_EN = [
    re.compile(
        r"\b[Mm]y\s+(?:new\s+)?" + _PARTNER_WORDS + r"(?:'s\s+name\s+is|\s+is\s+called|\s+is\s+named|\s+is|,)?\s+"
        r"(?P<v>[A-Z][a-z]+)\b(?!'s)"
    ),
    re.compile(
        r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:dating|going\s+out\s+with|engaged\s+to|married\s+to|in\s+a\s+relationship\s+with)\s+"
        r"(?!Dr\b|Mr\b|Mrs\b|Ms\b)(?P<v>[A-Z][a-z]+)\b"
    ),
    re.compile(
        r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?(?:married|got\s+married\s+to|got\s+engaged\s+to|started\s+dating|"
        r"started\s+seeing|been\s+seeing|moved\s+in\s+with)\s+"
        r"(?!(?:Dr|Mr|Mrs|Ms|Mum|Mam|Mom|Dad|Nan|Gran|Grandma|Grandpa|Granny)\b)(?P<v>[A-Z][a-z]+)\b"
    ),
]
_PARTNER_END_EN = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?(?:broke|broken|split)\s+up\s+with\s+(?:my\s+\w+\s+)?(?P<v>[A-Z][a-z]+)\b|"
    r"\b(?:(?P<w>[A-Z][a-z]+)\s+and\s+I|[Ww]e)\s+(?:have\s+|'ve\s+|just\s+)*(?:broke|broken|split)\s+up\b(?!\s+(?:the|a|an|it|this|that|them|our|my|his|her)\b)|"
    r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:single|divorced|separated)\b|\bI(?:'ve|\s+have)?\s+(?:just\s+)?got\s+divorced\b|"
    r"\b(?:[A-Z][a-z]+\s+and\s+I|[Mm]y\s+"
    + _PARTNER_WORDS
    + r"\s+and\s+I|[Ww]e)\s+(?:have\s+|'ve\s+)?(?:got\s+|just\s+)?"
    r"(?:divorced|separated)\b(?!\s+(?:the|a|an|it|them|our|my|his|her)\b)|"
    r"\bI\s+(?:divorced|left)\s+my\s+" + _PARTNER_WORDS
)
_PARTNER_ZH = re.compile(
    r"我(?:的)?(?:男朋友|女朋友|男友|女友|老公|老婆|丈夫|妻子|对象|未婚夫|未婚妻)(?:叫|是)(?P<v>[\u4e00-\u9fff]{2,3}?)(?:[，。,.！!]|$)|"
    r"我(?:现在)?(?:和|跟)(?P<w>[\u4e00-\u9fff]{2,3}?)(?:结婚|订婚|在一起|谈恋爱|交往)了?"
)
_PARTNER_END_ZH = re.compile(
    r"我(?:已经)?(?:和|跟)(?P<v>[\u4e00-\u9fff]{2,3}?)(?:分手|离婚)了?|我(?:们)?(?:已经)?(?:分手|离婚)了|我(?:现在)?(?:是)?单身"
)

_VERBS = frozenset("drink eat smoke take use play go do have drinking eating taking using playing going doing".split())
_FIRST_PERSON_EN = re.compile(r"\b(?:I|I'm|I've|my|we|We|My)\b")


_HOME_CUE_EN = re.compile(
    r"\b(?:(?:my|our|the|new|rented|a\s+new)\s+(?:new\s+)?(?:flat|house|apartment|apt|place|home|condo|bungalow|cottage|digs)|"
    r"landlord|landlady|lease|rent|council\s+tax|new\s+address|(?:got|collected|picked\s+up)\s+the\s+keys|keys\s+collected|"
    r"(?:moved|moving|relocat\w*)\s+(?:(?!us\b|them\b|him\b|her\b|it\b|everything\b|everyone\b)\w+\s+){0,3}?(?:to|into|in|back)|"
    r"settled\s+in|first\s+night\s+(?:sleeping\s+)?in|(?:last\s+)?box(?:es)?\s+unpacked)\b|"
    r"\b(?:flat|house|apartment|apt|condo|studio|bungalow|cottage)\s+in\s+(?=[A-Z])",
    re.IGNORECASE,
)
_MOVE_CUE_EN = re.compile(
    r"\b(?:moved|moving|move|relocat\w*|new\s+(?:flat|house|apartment|apt|place|home|address|condo)|"
    r"(?:got|collected|picked\s+up)\s+the\s+keys|signed\s+(?:the\s+|a\s+|my\s+|our\s+)?(?:new\s+)?(?:lease|tenancy)|closed\s+on)\b",
    re.IGNORECASE,
)
"""A move, by which a street in the same note is one's new home (``_ADDRESS_EN``)."""
_STREET_EN = (
    r"(?:St|Street|Rd|Road|Lane|Ln|Mews|Ave|Avenue|Close|Drive|Dr|Way|Court|Ct|Place|Pl|Terrace|Crescent|Gardens|"
    r"Row|Square|Sq|Parade|Boulevard|Blvd|Grove|Hill|Walk)\b\.?"
)
_ADDRESS_EN = re.compile(
    # a house number and a street ("7 Ecclesall Mews", "14 Harcourt Rd") or a street one is on ("on Larimer St")
    r"(?:\b\d{1,5}[A-Za-z]?,?\s+|\b(?:on|onto|off)\s+(?:the\s+)?)"
    r"(?P<s>(?:[A-Z][\w'’-]*\s+){1,3}" + _STREET_EN + r")"
)
"""An address's street, as a note of a move writes it: the number's or the "on"'s street,
kept without its number (a value "#street" of ``Statement.value``)."""
_PLACE_NAME = r"[A-Z][a-z][\w'’-]*(?:\s+[A-Z][a-z][\w'’-]*){0,2}"
_LOCATED_EN = re.compile(
    # a place where a sentence locates something: "in Leeds", "to the Dublin office", "the Bristol flat",
    # "in Ancoats, Manchester", "14 Cavendish Rd, Leeds"
    r"\b(?:in|to|into|from|near|at)\s+(?:the\s+)?(?P<a>" + _PLACE_NAME + r")(?:,\s+(?P<b>" + _PLACE_NAME + r"))?|"
    r"\bthe\s+(?P<c>" + _PLACE_NAME + r")\s+(?:flat|house|apartment|apt|place|home|office)\b|"
    r"\b(?:Rd|Road|St|Street|Parade|Lane|Ave|Avenue|Row|Close|Crescent|Drive|Way|Terrace|Gardens|Square)\.?,\s+(?P<d>"
    + _PLACE_NAME
    + r")"
)
_KIN_OR_FRIEND_EN = (
    r"parents|folks|mum|mom|mam|mother|dad|father|sisters?|brothers?|sons?|daughters?|kids|children|grandparents|"
    r"grandma|grandmother|grandpa|grandfather|nan|gran|aunt|uncle|cousins?|in-laws|family|friends?|mates?|bestie|"
    r"colleagues?|coworkers?|neighbou?rs?|roommates?|flatmates?|housemates?|boss|ex|niece|nephew|son-in-law|"
    r"daughter-in-law|sister-in-law|brother-in-law"
)
"""Whom "my …" names that is someone other than the writer (kin, friends, work, neighbours)."""
_MOVED_THINGS_EN = (
    r"meetings?|calls?|appointments?|dates?|deadlines?|dinner|lunch|party|session|class(?:es)?|flights?|trip|"
    r"reservation|booking|wedding|game|match|shift|interview|event|cars?|truck|van|stuff|things|boxes|money|funds|"
    r"savings|account|pension|shares|furniture|couch|sofa|desk|table|bed|piano|plants?|files?|photos|servers?|"
    r"website|office|company|business|shop|store|team|department|bike|boat|kids|dog|cat"
)
"""What a sentence says was moved that is no home ("moved the meeting to Seattle")."""
_OTHER_MOVES_EN = re.compile(
    # someone named moving; a sentence's opening adverb ("Finally moved into…") names no one
    r"\b(?:he|she|they|(?-i:(?!(?:Finally|Just|Now|Today|Yesterday|Recently|Also|Then|So|And|Already|Officially|"
    r"Eventually|Actually|Literally)\b)[A-Z][a-z]+))\s+(?:is\s+|has\s+|'s\s+|just\s+|finally\s+)*(?:moved|moving|relocat\w*)\b|"
    r"\b(?:his|her|their)\s+(?:new\s+)?(?:flat|house|place|home|apartment|landlord|rent)\b|"
    # one's kin or friends moving: "my parents moved to Phoenix", "our neighbours are moving to Leeds"
    r"\b(?:my|our)\s+(?:(?:best|old|older|younger|little|big|eldest|oldest|twin|close|grand)\s+)*(?:"
    + _KIN_OR_FRIEND_EN
    + r")(?:\s+and\s+\w+)?\s+(?:(?:is|are|has|have|had|'s|'re|'ve|just|finally|both|also|all)\s+)*"
    r"(?:moved|moving|relocat\w*)\b|"
    # a thing moved, not one's home: "we moved the meeting to Seattle", "moved the couch to the garage"
    r"\b(?:moved|moving|move|relocat\w*)\s+(?:(?:the|a|an|our|my|this|that|these|those|some|all|his|her|their)\s+)*"
    r"(?:\w+\s+)?(?:" + _MOVED_THINGS_EN + r")\b",
    re.IGNORECASE,
)
_STAY_ZH = re.compile(
    r"住(?:在)?[^，,。！!；;]{0,10}?(?:酒店|宾馆|民宿|旅馆|招待所|青旅|客栈|饭店)|"
    r"(?:公司|单位|办公室|工厂|门店|店铺|工作室|部门|团队)[^，,。！!；;]{0,6}?(?:搬|迁)"
)
"""A stay or a move that is no home of the writer's: a hotel ("这周住在上海的酒店"), a
workplace moving ("我们公司搬到上海了")."""
_HOME_CUE_ZH = re.compile(r"搬|住|房子|房租|租的|租了|租约|宿舍|定居|老家|房东|新家|安家|落户|安顿|新小区|入住|钥匙")
_DIVISION_SUFFIXES_ZH = ("区", "县", "市", "新区")
"""The suffixes of China's divisions a short name drops (海淀 of 海淀区, 浦东 of 浦东新区)."""
_PARENTS_HOME_ZH = re.compile(r"(?<=住)(?:在)?(?:爸妈|父母|爸爸妈妈|我爸|我妈|爷爷奶奶|外公外婆)(?:的)?家")
"""One's parents' home, where one lives on moving back ("先住爸妈家"): one's home, not a
sentence about them."""
_NOT_PLACE_WORDS = frozenset(
    "i i'm i've i'd we the a an my our new flat rd road st street ave avenue lane apt apartment house home place "
    "got moved moving finally still just first last next this that so and but also today tonight yesterday "
    "council rent keys boxes gp dr mr mrs ms mon tue tues wed weds thu thur thurs fri sat sun monday tuesday wednesday "
    "thursday friday saturday sunday jan feb mar apr may jun jul aug sep sept oct nov dec january february march april "
    "june july august september october november december christmas xmas easter mum mam mom dad mother father "
    "nan gran grandma grandpa sister brother".split()
)

_ROLE_HEADS = (
    r"engineer|developer|programmer|manager|nurse|teacher|lecturer|professor|analyst|associate|assistant|designer|"
    r"consultant|director|officer|accountant|auditor|lawyer|solicitor|barrister|doctor|surgeon|pharmacist|barista|chef|"
    r"cook|driver|clerk|technician|scientist|researcher|pm|lead|intern|apprentice|electrician|plumber|carpenter|"
    r"mechanic|cashier|receptionist|administrator|admin|paramedic|midwife|physio|physiotherapist|therapist|"
    r"architect|editor|writer|journalist|librarian|secretary|coordinator|specialist|executive|representative|rep|"
    r"supervisor|cleaner|porter|carer|caregiver|tutor|coach|trainer|vet|dentist|postman|postwoman|sister|head|"
    r"founder|partner|ceo|cto|cfo|vp|dev|swe|sre|tester|nanny|postdoc|bartender|waiter|waitress|chemist|principal|"
    r"translator|interpreter|instructor|programme\s+manager|product\s+owner"
)
ROLE_HEAD_WORDS = tuple(h for h in _ROLE_HEADS.split("|") if h.isalpha() and len(h) > 2)
_ROLE_HEAD_SET = frozenset(ROLE_HEAD_WORDS)
"""The heads of job titles as words, by which a note that may state a job is found
(``memcli.recall.changes``): "still a line cook at Rosie's" holds no word of ``CUES``."""
_ROLE_MODIFIER = r"(?!(?:a|an|the|my|our|met|saw|with|and|to|for|at|got|landed|became|made)\s)[a-z][a-z-]*\s+"
_ROLE_AT = re.compile(
    r"(?:^|[\s,(])(?P<t>(?:"
    + _ROLE_MODIFIER
    + r"){0,2}(?:"
    + _ROLE_HEADS
    + r"))(?:\s+[IVX]{1,3}\b)?(?:\s+(?:at|for|with)\s+|\s*@\s*)"
    r"(?:the\s+)?(?P<o>[A-Z][\w'’&-]*(?:\.[A-Za-z]+)*(?:\s+[A-Z][\w'’&-]*){0,3})"
)
"""A role at an employer, "at" written as "@" too ("product manager @ Shopify", "library
assistant at the Westfield branch")."""
_NOW_A_ROLE_EN = re.compile(
    # a clause that opens on the new role: "switched careers — now a junior dev", "now an ICU nurse!"
    r"(?:^|[,;:]|\s[-–—]|—)\s*now\s+(?:a|an)\s+(?P<t>(?:" + _ROLE_MODIFIER + r"){0,2}(?:" + _ROLE_HEADS + r"))\b",
    re.IGNORECASE,
)
_JOB_START_NOUN = re.compile(
    r"(?:\b(?:first|1st)\s+(?:day|week|shift|month)|\bweek\s+(?:1|one)|\bday\s+(?:1|one))\s+"
    r"(?:(?:as\s+(?:a|an)\s+|as\s+)(?P<t>(?:" + _ROLE_MODIFIER + r"){0,2}(?:" + _ROLE_HEADS + r"))\s*)?"
    # the employer in capitals, whatever the case of the rest: "first day at Monzo done" names Monzo
    r"(?:(?:at|with|for)\s+(?P<o>(?:the\s+)?(?-i:[A-Z][\w'’&.-]*(?:\s+[A-Z][\w'’&-]*){0,3})))?",
    re.IGNORECASE,
)
_PROMOTED = re.compile(
    r"\bpromot(?:ed|ion)\b[!.\s]*(?:to\s+)?(?:a\s+|an\s+)?(?P<t>(?:"
    + _ROLE_MODIFIER
    + r"){0,2}(?:"
    + _ROLE_HEADS
    + r"))\b",
    re.IGNORECASE,
)
_WORK_GAP_EN = (
    r"(?!\s+(?:out|up|off|on|through|around|away|back|over|home)\b)"
    r"(?:(?!\b(?:my|his|her|our|their|your|him|them|me|us|to|the\s+kids?)\b)[^,.;!?]){0,30}?"
)
"""What may stand between a verb of work and the place it is done at ("working nights at", "teaching
year 5 at"): no particle nor an object of the verb's own ("working out at Equinox", "driving my
kids to school at Lincoln Elementary", "teaching my son to swim at the Y" tell of no job)."""
_JOB_MORE_EN = [
    re.compile(
        r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:a|an)\s+(?P<t>(?:" + _ROLE_MODIFIER + r"){0,2}(?:" + _ROLE_HEADS + r"))\b"
    ),
    re.compile(
        r"\bI(?:'ve|\s+have|'m|\s+am)?\s+(?:just\s+)?(?:started|starting|begun|began)\s+as\s+(?:a\s+|an\s+)?"
        r"(?P<t>(?:" + _ROLE_MODIFIER + r"){0,2}(?:" + _ROLE_HEADS + r"))\b(?:\s+(?:at|with|for|on)\s+"
        r"(?P<o>(?:the\s+)?[A-Z][\w'’&.-]*(?:\s+[A-Z][\w'’&-]*){0,3}))?"
    ),
    re.compile(r"\bI\s+(?:just\s+)?started\s+(?:at|with)\s+(?P<o>[A-Z][\w'’&-]+(?:\s+[A-Z][\w'’&-]+){0,3})"),
    re.compile(
        # "going full time at Notion as product designer", "back at Arup as a senior engineer"
        r"\bat\s+(?P<o>[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*){0,3})\s+as\s+(?:a\s+|an\s+)?"
        r"(?P<t>(?:" + _ROLE_MODIFIER + r"){0,2}(?:" + _ROLE_HEADS + r"))\b"
    ),
    re.compile(
        r"\bI\s+joined\s+(?P<o>[A-Z][\w'’&-]+(?:\s+[A-Z][\w'’&-]+){0,3})\s+as\s+(?:a\s+|an\s+)?"
        r"(?P<t>(?:" + _ROLE_MODIFIER + r"){0,2}(?:" + _ROLE_HEADS + r"))\b",
        re.IGNORECASE,
    ),
    _PROMOTED,
    re.compile(
        # the work's verb with no particle nor object of its own: not "working out at Equinox", "driving my kids to
        # school at Lincoln Elementary", "teaching my son to swim at the Y"
        r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:working|driving|teaching|nursing|lecturing|consulting|cleaning|freelancing)\b"
        + _WORK_GAP_EN
        + r"\b(?:at|for)\s+(?P<o>(?:the\s+)?[A-Z][\w'’&.-]*(?:\s+[A-Z][\w'’&-]*){0,3}|"
        r"(?:a|an|the)\s+(?:[a-z]+\s+){0,2}(?:firm|company|startup|agency|school|hospital|bank|charity|council))"
    ),
]
_CLOCK_TIME = re.compile(r"\b\d{1,2}(?::\d{2}|\.\d{2}\s*(?:am|pm)|\s*(?:am|pm|a\.m\.|p\.m\.))(?!\w)", re.IGNORECASE)
"""A time of day, by which a role named with a name ("vet for Biscuit 3:30") is an appointment."""
_TITLE_EN = (
    r"(?:[A-Z][\w'’-]*\s+){0,3}(?:of|for)\s+(?:[A-Z][\w'’&-]*\s*){1,3}|"
    r"(?:[A-Z][\w'’-]*\s+){0,3}(?:" + "|".join(h.capitalize() for h in _ROLE_HEADS.split("|")) + r")\b"
)
"""A job's title as a title is written, in capitals ("Head of Procurement", "Operations Manager")."""
_ANNOUNCED_TITLE_EN = re.compile(
    # "I'm the new Head of Procurement", "I'm now the Operations Manager", "I'm the new team lead"
    r"\bI(?:'m|\s+am)\s+(?:now\s+|officially\s+|going\s+to\s+be\s+)*the\s+(?:"
    r"(?:new\s+|acting\s+|interim\s+)?(?P<t>" + _TITLE_EN + r")|"
    r"(?:new|acting|interim)\s+(?P<u>(?:" + _ROLE_MODIFIER + r"){0,2}(?:" + _ROLE_HEADS + r"))\b)"
)
_OFFER_EN = re.compile(
    # an offer taken: "accepted the offer from Monzo", "took the Deloitte offer", "signed my offer with Arup"
    r"\b(?:accepted|took|signed|said\s+yes\s+to)\s+(?:the\s+|their\s+|an?\s+|my\s+)?(?:job\s+)?offer\s+(?:from|with|at)\s+"
    r"(?P<o>[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*){0,3})|"
    r"\b(?:accepted|took|signed)\s+(?:the\s+)?(?P<p>[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*){0,2})\s+(?:job\s+)?offer\b"
)
_FREELANCE_EN = re.compile(
    # a living by a doing: "freelance translating full-time now", "freelancing as a designer", "tutoring full time now"
    r"\bfreelanc(?:e|ing)\s+(?:as\s+(?:a|an)\s+)?(?P<t>[a-z]+)|"
    r"\b(?P<u>[a-z]{3,}ing)\s+(?:full[- ]time|part[- ]time)\s+(?:now|these\s+days|nowadays)\b",
    re.IGNORECASE,
)
_JOB_END_MORE_EN = re.compile(
    r"\b(?:last\s+day|final\s+day|last\s+shift)\s+(?:at|with)\s+(?P<o>[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*){0,3})|"
    r"\bhanded\s+in\s+(?:my\s+)?(?:notice|resignation)|\b(?:been|got|was)\s+(?:laid\s+off|let\s+go|sacked|fired)\b|"
    r"\bleft\s+(?:my\s+job|work\s+for\s+good|teaching|nursing|the\s+(?:army|navy|police|force|company|firm))\b",
    re.IGNORECASE,
)
_GENERIC_PLACES_EN = frozenset(
    "school work uni university college nursery kindergarten preschool daycare camp home gym class classes office job "
    "practice church placement new old same last next first this that my our their his her its a an the weekend "
    "weekends moment time hospital clinic site store shop it".split()
)
"""Nouns of a kind of place, not an employer's name: "first day at school", "at work", "at the office"."""
_NAME_STOP_EN = frozenset(
    "on in at for with from to as and but or so then today tonight tomorrow yesterday done over finally officially "
    "again now this next last week weeks day days month monday tuesday wednesday thursday friday saturday sunday "
    "mon tue tues wed thu thur thurs fri sat sun is was are were went go going starts start started starting was "
    "lol haha omg tho though yay team".split()
)


def _lower_org(after: str) -> str:
    """The employer a job's slot names in ``after`` (the text after "at", "from", "with"),
    however it is written ("accenture", "blue bottle", "the nhs trust"): one to three
    words up to punctuation or a word of time, place or joining (``_NAME_STOP_EN``);
    "" for a noun of a kind of place ("school", "work", "the office": ``_GENERIC_PLACES_EN``)
    or for no name."""
    words: list[str] = []
    capitals = False
    for word in re.match(r"[^,.;:!?()\u2014\u2013]*", after.strip()).group(0).split()[:4]:
        lower = word.lower().strip("'’\"")
        if lower in ("the",) and not words:
            continue
        if not words:
            capitals = word[:1].isupper()
        elif capitals and not (word[:1].isupper() or word in ("&", "of")):
            break  # a name in capitals ends with them: "Barclays ran over"
        if (
            lower in _NAME_STOP_EN
            or lower in _ROLE_HEAD_SET
            or not re.match(r"^[\w&'’.+-]+$", lower)
            or (words and not capitals and re.search(r"(?:ed|ing)$", lower))
        ):
            break
        words.append(lower)
        if len(words) == (3 if capitals else 2):
            break
    name = " ".join(words).strip(".")
    if not name or name in _GENERIC_PLACES_EN or words[0] in _GENERIC_PLACES_EN or name.isdigit():
        return ""
    return name


_WORK_AT_EN = re.compile(
    # work done at a named place, the job it tells of: "still grinding at Barclays", "Stand-up at Barclays ran
    # over", "night shifts at the Amazon warehouse", "long shift at the bakery"
    r"\b(?:grind(?:ing)?|shifts?|stand-?ups?|overtime|on[- ]call|desk|1:1|one-on-one|clocked\s+(?:in|out))\b"
    r"[^,.;!?]{0,25}?\bat\s+(?P<a>[^,.;:!?()]{2,40})",
    re.I,
)
WORK_CONTEXT = "context"
"""``Statement.state`` of a job a note only tells of by work done at a place ("still grinding at
Barclays"): ended by a job elsewhere, never ending one (``updates``)."""
SELF_EMPLOYED = "self"
"""The employer of a freelance living: oneself, another employer than any before."""


_FOR_OTHERS_EN = re.compile(
    r"\b(?:for|to)\s+(?:my|his|her|their|our)\s+(?:mum|mom|mother|dad|father|sister|brother|son|daughter|wife|husband|"
    r"partner|friend|boyfriend|girlfriend|aunt|uncle|cousin|colleague|neighbou?r|kids?)\b|"
    r"\b(?:he|she|they)\s+(?:(?:just|finally)\s+)?(?:accepted|took|is\s+taking|is\s+accepting|said\s+yes|signed|got|starts?)\b|"
    r"\b(?:is|are)\s+(?:accepting|taking)\s+it\b",
    re.I,
)
"""A job's news told for someone else ("for my son", "to my wife and she accepted", "my
brother is accepting it")."""
_JOB_NEWS_VERBS_EN = re.compile(
    r"\b(?:got|gets|landed|won|took|accepted|accepting|started|promoted|joined|last)\b", re.I
)


def _someone_elses_job(sentence: str, for_others: bool = True) -> bool:
    """Whether an English ``sentence`` tells of someone else's job rather than the writer's:
    a verb of a job's news whose subject is another ("My sister got the senior designer
    role", "Jen got the promotion", "my husband landed…": ``others_subject``), or news told
    for another (``_FOR_OTHERS_EN``)."""
    if for_others and _FOR_OTHERS_EN.search(sentence):
        return True
    return any(others_subject(sentence, m.start()) for m in _JOB_NEWS_VERBS_EN.finditer(sentence))


def _offer_taken(text: str) -> str:
    """The employer of an offer ``text`` names and says was taken ("offer from stripe!!
    accepting", "KPMG made an offer and I accepted"; not "offer from Arup, not sure I'll
    take it" nor one declined), as ``_lower_org`` reads it; "" otherwise."""
    offer = _OFFER_TAKEN_EN.search(text)
    if not offer or not _TAKEN_EN.search(text) or _NOT_TAKEN_EN.search(text[offer.start() :]):
        return ""
    return _lower_org(offer.group("a") or offer.group("b") or "")


_OFFER_TAKEN_EN = re.compile(
    # an offer named, then taken in the same note: "offer from stripe!! accepting", "KPMG made an offer and I accepted"
    r"\boffer\s+(?:from|with|at)\s+(?P<a>[^,.;:!?()]{2,40})|"
    r"\b(?P<b>[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*){0,2})\s+(?:made|gave|sent)\s+(?:me\s+)?(?:an?\s+|the\s+)?(?:job\s+)?offer\b"
)
_TAKEN_EN = re.compile(
    r"\b(?:accept(?:ed|ing)?|said\s+yes|signed\s+(?:it|the\s+contract)|taking\s+it|took\s+it)\b", re.I
)
_NOT_TAKEN_EN = re.compile(
    r"\b(?:not|n't|whether|if|should|might|maybe|could|to)\s+(?:\w+\s+)?(?:accept|accepting|take|taking|sign)\b|"
    r"\b(?:declined|turned\s+(?:it\s+)?down|rejected|said\s+no)\b",
    re.I,
)
_ONBOARDING_EN = re.compile(
    # a start by its first days: "stripe onboarding week", "onboarding at Stripe", "induction at the trust"
    r"(?:^|[,;:(]\s*|\s[-\u2013\u2014]\s*)(?!(?i:I|I'm|I’m|we|we're|we’re|I've|we've)\s)(?P<a>[\w&'’.+-]+(?:\s+[\w&'’.+-]+)?)\s+"
    # the start itself, not a meeting or a thing of it ("Acme onboarding call", "onboarding deck")
    r"(?:onboarding|orientation|induction)\b(?!\s+(?!(?:week|day|days|month|done|over|starts?|begins?|today|tomorrow|"
    r"this|next|went|is|was|all|complete|finished|again|at|with|for)\b)[a-z])|"
    r"\b(?:onboarding|orientation|induction)\s+(?:week\s+|day\s+)?(?:at|with|for)\s+(?P<b>[^,.;:!?()]{2,40})",
    re.I,
)
_NOT_EMPLOYERS_EN = frozenset(
    "customer customers client clients user users employee employees staff vendor vendors supplier suppliers hire "
    "hires starter starters student students patient patients team my our the this that new first".split()
)
"""Whose onboarding a worker runs, not an employer ("client onboarding", "new hire onboarding")."""
_POSITION_TAKEN_EN = re.compile(
    # a title taken: "got the shift lead position", "landed the senior designer role", "Got the ward sister job!"
    r"\b(?:got|landed|accepted|took|offered|was\s+offered|won)\s+(?:the\s+|a\s+|an\s+)?(?P<t>(?:"
    + _ROLE_MODIFIER
    + r"){0,2}(?:"
    + _ROLE_HEADS
    + r"))\s+(?:position|job|role|post|promotion)\b",
    re.I,
)
_TEACHING_AT_EN = re.compile(
    # a living by a doing at a place named in any case: "teaching 5th grade at lincoln elementary"
    r"\bI(?:'m|\s+am)\s+(?:now\s+|still\s+)?(?P<t>teaching|nursing|lecturing|driving|cleaning|working)\b"
    + _WORK_GAP_EN
    + r"\b(?:at|for)\s+(?P<a>[^,.;:!?()]{2,40})",
    re.I,
)
_DOERS = {
    "teaching": "teacher",
    "nursing": "nurse",
    "lecturing": "lecturer",
    "driving": "driver",
    "cleaning": "cleaner",
}
_JOB_ZH_MORE = [
    re.compile(r"(?:去|到|在)(?P<o>[\u4e00-\u9fff]{2,10}?)报到"),
    # an offer taken, not one only received: "接了字节的offer", "美团的offer签了", "接受了腾讯的录用"
    re.compile(r"(?:接了|签了|接受了|答应了)(?P<o>[\u4e00-\u9fffA-Za-z]{2,10}?)的\s*(?:offer|Offer|OFFER|录用)"),
    re.compile(
        r"(?:^|[，,。！!])(?:我|最后|还是)*(?P<o>[\u4e00-\u9fffA-Za-z]{2,10}?)的\s*(?:offer|Offer|OFFER)(?:已经|最后|还是)?(?:接了|签了|接受了)"
    ),
    re.compile(
        r"(?:我|，|,)(?:现在|目前)?在(?P<o>[\u4e00-\u9fff]{2,12}?)(?:做|当|担任)(?P<t>[\u4e00-\u9fff]{2,6}?)" + _ZH_END
    ),
]

_DIETS_EN = {
    "vegan": "vegan",
    "plant-based": "vegan",
    "plant based": "vegan",
    "vegetarian": "vegetarian",
    "veggie": "vegetarian",
    "pescatarian": "pescatarian",
    "pescetarian": "pescatarian",
    "flexitarian": "flexitarian",
    "keto": "keto",
    "ketogenic": "keto",
    "low carb": "low carb",
    "low-carb": "low carb",
    "paleo": "paleo",
    "gluten free": "gluten free",
    "gluten-free": "gluten free",
    "dairy free": "dairy free",
    "dairy-free": "dairy free",
    "intermittent fasting": "fasting",
    "fasting": "fasting",
    "carnivore": "carnivore",
    "mediterranean diet": "mediterranean",
    "mediterranean": "mediterranean",
    "low sodium": "low sodium",
    "low salt": "low sodium",
    "low fat": "low fat",
    "halal": "halal",
    "eating meat": "omnivore",
    "eat meat": "omnivore",
    "meat eater": "omnivore",
    "kosher": "kosher",
}
"""Diets a person follows, as English writes them, and the diet each names."""
_DIET_TERMS_EN = re.compile(
    r"\b(?:" + "|".join(sorted((re.escape(k) for k in _DIETS_EN), key=len, reverse=True)) + r")\b", re.IGNORECASE
)
_DIETS_ZH = {
    "纯素": "vegan",
    "吃素": "vegetarian",
    "素食": "vegetarian",
    "轻断食": "fasting",
    "断食": "fasting",
    "生酮": "keto",
    "低碳": "low carb",
    "无麸质": "gluten free",
    "少食多餐": "small meals",
    "清真": "halal",
    "无肉不欢": "omnivore",
    "吃肉": "omnivore",
}
CUES[DIET] = tuple(
    dict.fromkeys((*CUES[DIET], *(d for d in (*_DIETS_EN, *_DIETS_ZH) if not any(c in d for c in CUES[DIET]))))
)
"""Every diet of the lexicons is a needle: "I'm doing paleo" names no other diet's word."""
_DIET_TERMS_ZH = re.compile(
    "|".join(sorted(_DIETS_ZH, key=len, reverse=True))
    # a diet a doctor orders by what it limits: "低嘌呤饮食", "低盐饮食", "清淡饮食", "地中海饮食"
    + r"|(?:低|高|无|少|清淡|地中海)[\u4e00-\u9fff]{0,2}?饮食"
)
_STOP_VERBS_EN = re.compile(
    r"\b(?:stop(?:ped|ping)?|quit|gave\s+up|give\s+up|given\s+up|dropp?(?:ed)?|ditch(?:ed)?|no\s+longer|off|done\s+with|"
    r"finished\s+with|forget|ended?)\b",
    re.IGNORECASE,
)
_STOP_VERBS_ZH = re.compile(r"停|戒|不再|放弃|结束|取消|退了|退出|不吃|不做")
_PARTNER_CUE_EN = re.compile(
    r"\b(?:anniversary(?:\s+(?:dinner|lunch|trip|meal|drinks))?|(?:\w+\s+)?date|dating|valentine'?s?)\s+(?:w/|with)\s+"
    r"(?P<v>[A-Z][a-z]+)\b|"
    r"\b(?P<w>[A-Z][a-z]+)\s+and\s+I\s+(?:are|'re)\s+(?:done|over|finished)\b|\b(?:we're|we\s+are)\s+(?:done|over)\b",
)
_NOT_PARTNER_NAMES = (
    r"someone|somebody|anyone|anybody|him|her|them|the|my|his|their|our|again|now|for|this|that|apps?|online|around|"
    r"people|guys|girls|men|women|new|it|me|you|us|here|there|today|tonight|friends|mates|more|other|others|each|"
    r"someone's|life|work|things|stuff|some|all|and|but|was|is|are|who|because"
)
_PERSON_EN = r"(?:(?!(?:Dr|Mr|Mrs|Ms|Mum|Mam|Mom|Dad)\b)[A-Z][a-z]+|(?!(?:" + _NOT_PARTNER_NAMES + r")\b)[a-z]{3,})\b"
"""A partner's name as a quick note writes it, capitalised or not ("jake", "priya"): in a
partner's slot only (``_PARTNER_LOWER_EN``), and never a pronoun or a word of time."""
_NOTPARTNERS_EN = frozenset(
    "mum mom mam mother dad father parents grandma grandpa grandmother grandfather nan nana nanna gran granny "
    "sister brother son daughter kids kid aunt uncle cousin family client clients boss colleague colleagues "
    "coworker coworkers friend friends team manager destiny fate back from".split()
)
"""Who a date is had with that is no partner (kin, work, a friend) and the words "date with"
or "dating" runs into that name no one ("date with destiny", "dating back to 1800")."""


_PARTNER_LOWER_EN = re.compile(
    # the couple's slots, whatever the case of the name: "broke up with jake", "alex and i split up", "dating
    # priya now", "jake & i official now", "started seeing someone - alex", "first date w/ jake"
    r"\b(?:broke|split)\s+up\s+with\s+(?P<e>" + _PERSON_EN + r")|"
    r"(?:^|[,;.!]\s*)(?P<f>"
    + _PERSON_EN
    + r")\s+(?:and|&)\s+[Ii]\s+(?:have\s+|'ve\s+|just\s+)*(?:broke|broken|split)\s+up\b|"
    r"\bended\s+things\s+with\s+(?P<g>" + _PERSON_EN + r")|"
    r"\b(?:(?:dating|going\s+out\s+with)\s+(?:someone(?:\s+new)?\s*[-\u2013\u2014,:]\s*)?|"
    r"seeing\s+someone(?:\s+new)?\s*[-\u2013\u2014,:]\s*)(?P<s>" + _PERSON_EN + r")|"
    r"(?:^|[,;.!]\s*)(?P<t>"
    + _PERSON_EN
    + r")\s+(?:and|&)\s+[Ii]\s+(?:are\s+|'re\s+)?(?:now\s+|officially\s+)?official\b|"
    r"(?<!play\s)(?<!play-)(?<!play)\bdate\s+(?:w/|with)\s+(?P<u>" + _PERSON_EN + r")"
)
_PROPOSED_ZH = re.compile(
    r"(?:他|她)(?:终于|今天|昨天|竟然)?(?:跟我|向我|和我)?求婚了|(?:他|她)答应了?(?:我的)?求婚|我答应了?(?:他|她)的求婚"
)
"""The same in Chinese: "他求婚了！", "她答应了我的求婚", "我答应了他的求婚"."""
_PARTNER_MET_AS_ZH = re.compile(
    r"(?<=[跟和与])[\u4e00-\u9fff]{0,2}?(?:同事|朋友|同学|邻居|网友)(?=[\u4e00-\u9fff]{2,3}?(?:正式)?(?:在一起|确定了?关系|交往|结婚|订婚|领证))"
)
"""How the writer knows a partner, said before the name in a couple's clause ("跟同事小周在一起了",
"和大学同学阿杰确定关系了"): not someone else the clause is about."""
_MARRIED_ZH = re.compile(r"结婚|领证|老公|老婆|丈夫|妻子")
_ENGAGED_ZH = re.compile(r"订婚|求婚|未婚夫|未婚妻")
_PARTNER_STATUS_ZH = re.compile(
    r"我(?:现在)?(?:和|跟)(?P<w>[\u4e00-\u9fff]{2,3}?)(?:正式)?(?:确定了?关系|在一起|交往|谈恋爱|结婚|订婚)"
)
_CATEGORY_WORDS = {
    "gym": "gym",
    "gyms": "gym",
    "choir": "choir",
    "choirs": "choir",
    "chorus": "choir",
    "singers": "choir",
    "chorale": "choir",
    "orchestra": "orchestra",
    "band": "band",
}
"""Kinds of membership one usually holds one of at a time, by the words naming them: a
gym joined after another is a switch; clubs and societies are additive."""
_SWITCH_EN = re.compile(
    r"\b(?:switched|changed|swapped|moved)\s+(?P<c>gyms?|choirs?)\b[^A-Za-z]*(?:to\s+)?(?:the\s+)?"
    r"(?P<o>[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*){0,3})?",
    re.IGNORECASE,
)
_PARTICIPATE_EN = re.compile(
    r"\b(?:sang|sing|singing|sings|rehearsed|rehearsal|played|playing|auditioned\s+for|got\s+into|got\s+in\s+to|"
    r"joined|signed\s+up\s+(?:to|for|at|with)|member\s+of)\s+(?:w/|with|in|for|at)?\s*(?:the\s+)?"
    r"(?P<o>(?:[A-Z][\w'’&-]*\s+){0,4}(?:[a-z]+\s+)?(?:[Cc]hoir|[Cc]horus|Singers|[Cc]horale|[Oo]rchestra)|"
    r"[A-Z][\w'’&-]*[Gg]ym\b|[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*){0,3}\s+[Gg]ym)"
)


def _places(text: str, chinese: bool) -> frozenset[str]:
    """The place names ``text`` holds: for Chinese, the names of JioNLP's gazetteers
    (``memcli.text.entities``), longest first; for English, the capitalised names it
    locates something at ("in Leeds", "to the Dublin office", "the Bristol flat",
    "Marine Parade, Brighton": ``_LOCATED_EN``) but weekdays, months, kin and street words
    (``_NOT_PLACE_WORDS``), and the countries and cities of ``entities._PLACES_EN``,
    lower-cased."""
    if chinese:
        names = _chinese_places()
        found: set[str] = set()
        i = 0
        while i < len(text):
            for size in (4, 3, 2):
                if text[i : i + size] in names:
                    found.add(text[i : i + size])
                    i += size - 1
                    break
            i += 1
        # a district or county by its short name ("新家在海淀", "搬到上海浦东了"): two or three
        # characters whose full name, with the suffix of a division, is in the gazetteers, where
        # a place is written (after 在/到/住 or a known place, before 附近/这边); no tagger is
        # loaded for it (jieba's POS tagger costs seconds at its first use in a process)
        for size in (3, 2):
            for i in range(len(text) - size + 1):
                word = text[i : i + size]
                if (
                    word not in names
                    and not any(word in f for f in found)
                    and any(word + suffix in names for suffix in _DIVISION_SUFFIXES_ZH)
                    and (
                        re.search(r"(?:在|到|去|回|住|搬)$", text[:i])
                        or any(text[max(0, i - n) : i] in names for n in (2, 3))
                        or re.match(r"附近|这边|那边|一带|周边", text[i + size :])
                    )
                ):
                    found.add(word)
        return frozenset(found)
    found = set()
    for m in _LOCATED_EN.finditer(text):
        for name in (m.group(g) for g in "abcd"):
            words = [w for w in (name or "").split() if w.lower().strip("'’") not in _NOT_PLACE_WORDS]
            if words:
                found.add(" ".join(words).lower())
    found.update(w.lower() for w in re.findall(r"\b[A-Z][a-z]+\b", text) if w.lower() in _PLACES_EN)
    return frozenset(found)


@dataclass(frozen=True)
class Statement:
    """An attribute a text states of its speaker: ``key`` (the attribute, such as
    "residence" or "dose:lisinopril"), its ``value`` as the text says it ("York", "20 mg";
    "" for an ended habit or membership), ``ended`` (the text says it stopped: "I stopped
    drinking coffee", "I cancelled my gym membership", "不再"), and for an ended habit the
    ``words`` an older statement of the habit holds (Porter stems, or Chinese characters)."""

    key: str
    value: str
    ended: bool = False
    words: frozenset[str] = frozenset()
    state: str = ""
    """For a partner: "engaged" or "married" when the text says so ("" otherwise)."""


def asks(text: str) -> bool:
    """Whether ``text`` asks rather than tells: a question ("Where do I live?", "我住在哪里？",
    "你喜欢什么吗") or a request ("tell me a story about…", "请帮我…"): consolidation's test
    (``memcli.text.extractive.is_request_or_question``). A text that asks states nothing
    about its speaker.

    A note headed by a label ("book club pick: Piranesi", "check-up: moved to Thursday",
    "新书单：《三体》") tells what follows the label: it asks only when that does ("Q: where do
    I live?", "todo: book the dentist"), unless the label itself asks something of someone
    ("remind me: …", "请问：…"). A request word written as part of a noun ("check-up",
    "book-keeping") is no request."""
    label = _LABEL.match(text)
    if label and _LABEL_ASKS.search(label.group("l")):
        return True
    if label and not _WH_LABEL.match(label.group("l")):
        return is_request_or_question(label.group("v"))
    return is_request_or_question(_NOUN_COMPOUND.sub(r"\1", text, count=1))


_LABEL = re.compile(r"^\W*(?P<l>[^\W\d][^:：?？!！。\n]{0,30}?)\s*[:：]\s*(?P<v>\S.*)$", re.DOTALL)
"""A note's label and what it tells: a short head of one to four words (or a Chinese phrase
of up to 30 characters) before a colon."""
_LABEL_ASKS = re.compile(
    r"^\W*(?:q|question|ask|请问|问题|问)\W*$"
    r"|^\W*(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+)?(?:remind|tell|ask|show|help|let|give|send|find|get)\s+(?:me|us)\b"
    r"|请|帮我|告诉我|提醒我",
    re.IGNORECASE,
)
"""A label that asks itself ("Q:", "question:", "请问：") or asks someone with a request
verb at its start ("remind me:", "tell us:", "can you tell me:", "帮我："): the note asks.
A label that reports what was said or given ("doctor told me:", "GP gave me:", "thank
you:") and "me: still in Leeds", a label of its writer, tell."""
_WH_LABEL = re.compile(r"^\W*(?:what|when|where|who|why|how|which)\W*$", re.IGNORECASE)
"""A label of one question word ("When: Tuesday 3pm"): the note is read whole."""
_NOUN_COMPOUND = re.compile(r"^(\W*)(?:book|check|list|send|search|find|look|help|write|show)-(?=[a-z])", re.IGNORECASE)
"""A request word opening a noun compound ("check-up", "write-up"), no imperative."""


_ASKING_TAIL = re.compile(r"(?<=[!?！？])\s*(?=\S)")
"""Where pySBD leaves two sentences together: after "!" or "?" before a lower-case word
("moved in today! where do I even start?")."""


def telling_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that do not ask (``asks``), a sentence pySBD leaves
    joined to a question ("moved into the flat today! where do I even start?") told apart
    from it (``_ASKING_TAIL``): what a memory holding a question states besides."""
    told: list[str] = []
    for sentence in split_sentences(text):
        if not asks(sentence):
            told.append(sentence)
            continue
        parts = [p.strip() for p in _ASKING_TAIL.split(sentence) if p.strip()]
        if len(parts) > 1:
            told += [p for p in parts if not asks(p)]
    return told


def _norm(value: str) -> str:
    return " ".join(
        re.sub(r"^(?:the|a|an)\s+", "", value.strip().rstrip(".!?,;:"), flags=re.IGNORECASE).lower().split()
    )


def _english_stems(text: str) -> frozenset[str]:
    return frozenset(_stems_in_order(text))


def _stems_in_order(text: str) -> list[str]:
    """The stems of the words of ``text`` longer than two letters, but drug-name
    look-alikes (``_NOT_DRUGS``), in text order (repeats kept)."""
    return [stem_of(w) for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2 and w not in _NOT_DRUGS]


def _vitamin(text: str) -> str:
    """The vitamin ``text`` names (``_VITAMIN``), as one name for each: "vitamin d" for
    "vitamin D", "D3", "维生素D"; "vitamin b12" for "B12"; "" for none."""
    m = _VITAMIN.search(text)
    if not m:
        return ""
    letter = (m.group("l") or m.group("m")).lower()
    digits = m.group("d") if m.group("l") else m.group("e")
    return f"vitamin {letter}" + ("" if letter in "dk" else digits or "")


def names_medicine(name: str) -> bool:
    """Whether ``name`` (a medicine as ``statements`` keys a dose of it, lower case) is
    surely one: a known medicine (``_KNOWN_DRUGS``, "vitamin d") or a word of a drug's
    ending ("atorvastatin", "lisinopril"; ``_DRUG``, ``_DRUG_ZH`` for Chinese), not a word
    read as one for want of better ("wants" of "doc wants 4000 IU/day", "levo")."""
    head = name.split()[0] if name.split() else ""
    return bool(head) and (head in _KNOWN_DRUGS or bool(_DRUG.match(head)) or bool(_DRUG_ZH.fullmatch(name)))


def _medicine_like(word: str) -> bool:
    """Whether ``word`` (lower-case) may be a medicine's name or its abbreviation ("levo",
    "pred"): a word of three letters or more that is no function word, quantifier or verb
    of trying (``_FUNCTION_WORDS``), no word of dosing or time (``_NOT_DRUGS``), and no
    past tense or -ing form."""
    return (
        len(word) > 2
        and word not in _FUNCTION_WORDS
        and word not in _NOT_DRUGS
        and word not in _TIME_WORDS
        and word not in ("next", "last", "this")
        and not (len(word) > 4 and word.endswith(("ed", "ing")))
        and word.isalpha()
    )


def _medicine(sentence: str, match: re.Match[str], own: bool, first: bool) -> str:
    """The medicine a dose of ``sentence`` is of: a word of a drug's ending or a known one,
    or a vitamin (``_vitamin``); else the name next to the dose, in its clause: the first
    word before the number that is not a glue word (``_GLUE``: "upped my Ozempic to 1
    mg", "new script: levo 88 mcg"), or the word after the unit ("down to 20 mg pred",
    "50 mcg of X"), when it is medicine-like (``_medicine_like``: "we could try 150mg"
    and "under 1500mg sodium" name no "try" or "under"). An abbreviation stands for the
    medicine it starts (``same_key``): Mem0's update phase by rules, the same subject with
    a value of the same kind. A sentence that is not the speaker's own (``own``
    False: "she doubled the metformin") names its medicine by a drug's ending only; "of X"
    names it in the first person only ("I take 50 mcg of X"; "the cake has 200 mg of
    sugar" names none)."""
    vitamin = _vitamin(sentence[max(0, match.start() - 24) : match.end() + 16])
    if vitamin:
        return vitamin
    before_words = re.findall(r"[A-Za-z][A-Za-z-]+", sentence[: match.start()])
    after_words = re.findall(r"[A-Za-z][A-Za-z-]+", sentence[match.end() :])
    for word in [*reversed(before_words), *after_words]:  # the name nearest the dose
        lower = word.lower()
        if lower not in _NOT_DRUGS and (lower in _KNOWN_DRUGS or _DRUG.match(lower)):
            return lower
    if not own:
        return ""
    clause = re.split(r"[,:;()]|\s[-–—]\s|—", sentence[: match.start()])[-1]
    for word in reversed(re.findall(r"[A-Za-z][A-Za-z-]*", clause)[-4:]):
        lower = word.lower()
        if lower in _GLUE:
            continue
        if _medicine_like(lower):
            return lower
        break
    of = r"(?:of\s+(?:my\s+|the\s+)?)?" if first else ""
    after = re.match(r"\s+" + of + r"([A-Za-z][A-Za-z-]+)", sentence[match.end() :])
    if after and _medicine_like(after.group(1).lower()):
        return after.group(1).lower()
    return ""


def _zh_medicine(sentence: str, match: re.Match[str]) -> str:
    named = [m.group(0) for m in _DRUG_ZH.finditer(sentence[: match.start()])]
    if named:
        return re.split(r"我|吃|服用|服|用|打|把|的|了|开|给|是|后|说|让|换成|改成|换|改|停掉|停", named[-1])[-1]
    clauses = [c.strip() for c in re.split(r"[，,。；;：:]", sentence[: match.start()])]
    vitamin = _vitamin(clauses[-1])
    if vitamin:
        return vitamin
    # the medicine's name ends the clause before the dose ("优甲乐 50微克", "每天吃二甲双胍500毫克"),
    # or the one before it when the dose's own clause holds only when it is taken ("优甲乐，早上 50微克")
    for clause in reversed(clauses[-2:]):
        run = re.search(r"[\u4e00-\u9fff]+$", clause)
        if not run:
            return ""
        name = _ZH_DOSE_VERBS.sub("", _ZH_WHEN_TAKEN.sub("", _ZH_DOSE_VERBS.sub("", run.group(0))))
        name = re.sub(r"(?:的)?(?:剂量|用量|药量|量)$", "", _ZH_DOSE_VERBS.sub("", name))
        name = re.split(r"我|吃|服用|服|用|打|把|的|后|说|让|了|医生|复诊|今天|昨天|现在", name)[-1]
        if name or _ZH_WHEN_TAKEN.sub("", clause):
            return name if 2 <= len(name) <= 8 else ""
    return ""


def _sentences(text: str) -> list[str]:
    # a full stop ends an English sentence only before a space: "0.25 mg" is one number
    return [_zh_clauses(s) for s in re.split(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*", text) if s.strip()]


def _zh_clauses(sentence: str) -> str:
    """``sentence`` with a space between two Chinese characters written as the comma it
    stands for: a quick Chinese note parts its clauses with spaces ("新工作第一天 在…做产品经理
    公司叫…"), which the rules read as they read commas."""
    return re.sub(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])", "，", sentence)


def _without_others_zh(sentence: str) -> str:
    """The clauses of a Chinese ``sentence`` (parted by commas) that name no one else
    (``OTHERS_ZH``), joined again: "开始吃素了，跟着妈妈一起" says of its writer what
    "开始吃素了" says; "" when every clause names someone else."""
    return "，".join(c for c in re.split(r"[，,]", sentence) if c and not OTHERS_ZH.search(c))


_PAST_IRREGULAR = frozenset(
    "got went gave quit left began took made became sold bought found met broke split moved cut kept won lost "
    "sent brought held ran spent paid put set told".split()
)
_LEADING_ADVERBS = re.compile(r"^(?:(?:just|finally|officially|now|today|recently|also|then|so|and|already)\s+)+", re.I)


_LEADING_TIME_EN = re.compile(
    r"^(?:(?:yesterday|today|tonight|earlier(?:\s+today)?|this\s+(?:morning|afternoon|evening|week|month)|"
    r"last\s+(?:night|week|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b,?\s+)+",
    re.I,
)
"""A time a diary's note opens on before its subjectless verb ("Yesterday got the job at
Stripe", "last week moved to York"): moved after the verb when the subject is given back."""
_CLAUSES_EN = re.compile(r"\s*(?:[,;]|\s[-\u2013\u2014]\s|\bbut\b)\s*")
_OTHERS_POSSESSED_EN = re.compile(
    r"\b[A-Z][a-z]+['’]s\s+(?:bf|gf|boyfriend|girlfriend|partner|husband|wife|fianc\w*|mum|mom|dad|sister|brother|"
    r"son|daughter|kids?|family|boss)\b"
)
"""Someone else named by whose they are ("Mia's bf", "Tom's sister")."""
_OTHERS_LEAD_EN = re.compile(r"^\s*(?:(?:and|so|then|now)\s+)?$", re.I)


def _own_clauses_en(sentence: str) -> str:
    """The clauses of an English ``sentence`` that speak of its writer, joined again, when
    some other clause names someone else (``OTHERS_EN``): "started at Monzo as a designer,
    he drove me in" says of its writer what its first clause says. A clause naming someone
    else only as company ("moved to Leeds with the kids", "the kids and I…") stays the
    writer's; a subjectless clause after one whose subject is someone else is theirs
    ("She moved to Leeds, bought a flat" tells of her flat), not the writer's; "" when no
    clause is left or none named anyone else."""
    kept: list[str] = []
    theirs = False
    dropped = False
    for clause in _CLAUSES_EN.split(sentence):
        if not clause.strip():
            continue
        named = [
            m
            for m in OTHERS_EN.finditer(clause)
            if not COMPANIONS_EN.search(clause[: m.start()]) and not COMPANIONS_EN.match(clause[m.end() :])
        ] + list(_OTHERS_POSSESSED_EN.finditer(clause))
        if named:
            dropped = True
            theirs = any(_OTHERS_LEAD_EN.match(clause[: m.start()]) for m in named)
            continue
        if re.search(r"\b(?:I|I'm|I've|we|We|we're|We're)\b", clause):
            theirs = False
        elif theirs:
            continue
        kept.append(re.sub(r"^(?:(?:and|so|then|also)\s+)+", "", clause.strip(), flags=re.I))
    return ", ".join(kept) if dropped and kept else ""


def _speaker_said(sentence: str, chinese: bool) -> tuple[str, bool, bool, bool]:
    """(sentence, first, others, implicit): whether ``sentence`` speaks in the first person
    (``first``), names someone else (``others``), or neither (``implicit``: a diary's note
    drops its subject, "moved to York", "got the keys!", "回老家成都了", and speaks of its
    writer). A subjectless English sentence that opens with a verb in the past tense, in
    -ing or with "been" gets its subject back ("I moved to York", "I'm moving to York",
    "I've been seeing Lena"), a Chinese one
    我, so that the first-person rules read it; ``first`` is then True."""
    first = "我" in sentence if chinese else bool(_FIRST_PERSON_EN.search(sentence))
    others = bool(OTHERS_ZH.search(sentence)) if chinese else names_others_en(sentence)
    implicit = not first and not others
    if others or (first and (chinese or re.search(r"\b(?:I|[Ww]e)\b", sentence))):
        return sentence, first, others, False
    if chinese:
        return "我" + sentence, True, False, True
    body = sentence.lstrip(" -–—*•>")
    when = _LEADING_TIME_EN.match(body)
    if when and len(body) > when.end():  # "Yesterday got the job": the verb first, the time after it
        body = body[when.end() :] + ", " + when.group(0).strip().rstrip(",")
    lead = _LEADING_ADVERBS.match(body)
    rest = body[lead.end() :] if lead else body
    word = re.match(r"[A-Za-z]+", rest)
    verb = word.group(0).lower() if word else ""
    if verb in _PAST_IRREGULAR or (len(verb) > 4 and verb.endswith("ed") and not verb.endswith("eed")):
        return "I " + body[:1].lower() + body[1:], True, False, True
    if verb == "been":  # "been seeing Lena for a couple of months": a present perfect
        return "I've " + body[:1].lower() + body[1:], True, False, True
    if len(verb) > 4 and verb.endswith("ing") and verb not in ("nothing", "something", "anything", "everything"):
        return "I'm " + body[:1].lower() + body[1:], True, False, True
    return sentence, first, False, implicit


_CLAUSE_ZH = re.compile(r"[，,；;]")


def _states_itself(clause: str, word: str) -> bool:
    """Whether the capitalised ``word`` an English ``clause`` opens on is what the clause,
    read as its writer's, states ("Keto going great": the diet keto; "Metformin went up to
    1000mg": the metformin dose; "Ozempic is now 1 mg weekly"), and so no one's name (but
    "Dan went vegan": vegan is stated, not Dan). A dose whose medicine the dose reader cannot
    name ("Ozempic got bumped to 1 mg": "dose:") is the head word's: a dose is a medicine's,
    and a person's dose is written as theirs ("Dan's dose went up")."""
    said, first, others, implicit = _speaker_said(clause, False)
    return any(
        word in s.key.lower().split(":") or word in s.value.lower().split() or s.key == f"{DOSE}:"
        for s in _sentence_statements(said, False, first, others and first, implicit)
    )


def _writers_part(sentence: str, keep: frozenset[str] = frozenset()) -> str:
    """``sentence`` without its clauses told of someone else (``whose.told_of``: "sister
    doing keto now, we cannot share a meal lol", "我姐姐在吃素"; or, English, opening on a
    name: ``whose.head_name``, "Dan went vegan", not what the clause states: ``_states_itself``) and the clauses after one of them that
    name no subject of their own ("sis moved to Leeds, bought a flat": hers); the sentence
    itself when no clause is told of anyone else, "" when every clause is. Their state is
    theirs: it answers a question about them (``memcli.recall.answers`` reads the note), not
    the writer's. ``keep``: who a clause may be told of and stay (``whose.Subject.who``)."""
    chinese = bool(re.search(r"[\u4e00-\u9fff]", sentence))
    clauses = (_CLAUSE_ZH if chinese else _CLAUSES_EN).split(sentence)
    kept: list[str] = []
    theirs = dropped = False
    for clause in clauses:
        if not clause.strip():
            continue
        subject = told_of(clause)
        name = "" if chinese else head_name(clause)
        if (subject is not None and subject.who not in keep) or (name and not _states_itself(clause, name)):
            theirs = dropped = True
            continue
        if theirs and ("我" not in clause if chinese else not names_writer(clause)):
            continue
        theirs = False
        kept.append(clause.strip())
    if not dropped:
        return sentence
    return ("，" if chinese else ", ").join(kept)


def statements(text: str) -> list[Statement]:
    """The attributes ``text`` states of its speaker (``Statement``), at most one per key,
    in text order; none for a text that asks (``asks``) or a sentence that speaks of
    someone else (``_writers_part``, ``_speaker_said``)."""
    found: dict[str, Statement] = {}
    sentences = []
    partners = set()
    for whole in _sentences(text):
        sentence = _writers_part(whole)
        # "My boyfriend is called Tom", "我男朋友叫阿杰": told of the partner, the writer's
        # partner all the same (but "husband still doing 16:8" is his diet)
        of_partner = _writers_part(whole, PARTNERS)
        if of_partner and of_partner != sentence:
            partners.add(of_partner)
            sentences.append(of_partner)
        if not sentence:
            continue
        own = "" if re.search(r"[\u4e00-\u9fff]", sentence) else _own_clauses_en(sentence)
        # a sentence naming someone else is read whole, then its writer's own clauses alone
        sentences += [sentence, own] if own else [sentence]
    for sentence in sentences:
        if asks(sentence):
            continue
        chinese = bool(re.search(r"[\u4e00-\u9fff]", sentence))
        # an English proposal told by a pronoun is not read: "he proposed a new plan", "Jake
        # proposed to Emma! she said yes" and "she said yes to the dress" are no engagement of the writer's
        if chinese and _PROPOSED_ZH.search(sentence) and not re.search(r"[妈爸哥姐弟妹]|朋友|同事|闺蜜", sentence):
            # "他求婚了": the writer's partner by a pronoun (named, if at all, elsewhere in the note)
            found.setdefault(PARTNER, Statement(PARTNER, "", state="engaged"))
        if chinese:
            # "跟同事小周在一起了": the colleague is the partner, named after how the writer knows them
            sentence = _PARTNER_MET_AS_ZH.sub("", sentence)
        if chinese and "我" not in sentence and OTHERS_ZH.search(sentence):
            sentence = _without_others_zh(sentence)
            if not sentence:
                continue
        sentence, first, others, implicit = _speaker_said(sentence, chinese)
        asked = None if chinese else _ASKED_TO_BE_EN.search(sentence)
        if asked:
            found.setdefault(PARTNER, Statement(PARTNER, asked.group("v").lower()))
        # A note about one's own medicine often names no one ("Ramipril upped to 10 mg",
        # "阿司匹林减到50毫克了"); one that names someone else may be about their dose.
        if not first and others:
            if chinese or OTHERS_KIN_EN.search(sentence) or not _DOSE_CHANGE_EN.search(sentence):
                continue
            # "she doubled the metformin", "GP says drop the levothyroxine": a clinician's
            # pronoun; a named medicine's dose is still the speaker's (read by name only)
            first = False
        for statement in _sentence_statements(sentence, chinese, first, others and first, implicit):
            if sentence in partners and statement.key != PARTNER:
                continue
            if statement.key == JOB and not chinese and _someone_elses_job(sentence, for_others=not statement.ended):
                continue  # "My sister got the senior designer role": her job, not the writer's
            if (
                statement.key not in found
                or (found[statement.key].ended and not statement.ended)
                or (found[statement.key].state == WORK_CONTEXT and statement.state != WORK_CONTEXT)
            ):
                found[statement.key] = statement
    chinese = bool(re.search(r"[\u4e00-\u9fff]", text))
    if (
        JOB not in found
        and len(_sentences(text)) > 1
        and _may_state(JOB, text, None, chinese)
        and not OTHERS_KIN_EN.search(text)
        and not asks(text)
    ):
        # a note cut by its exclamations ("PROMOTED!! staff engineer from April 1st") read whole
        job = _noun_job(re.sub(r"\s+", " ", text), chinese)
        if job:
            found[JOB] = job
    partner = found.get(PARTNER)
    if partner and not partner.value and not partner.ended:
        # "Dinner with Marco. he proposed!!", "小周约我看电影。我们在一起了": the one person the note names
        found[PARTNER] = Statement(PARTNER, _only_person(text, chinese), state=partner.state)
    found.update((s.key, s) for s in _switched_from(text, chinese, found) if s.key not in found)
    unnamed = found.get(UNNAMED_DOSE)
    named = _named_medicine(text) if unnamed and not chinese else ""
    if named and not any(k.startswith(f"{DOSE}:") and k != UNNAMED_DOSE for k in found):
        # "on amlodipine since May. doc doubled it, so 10mg now": the medicine the note names
        del found[UNNAMED_DOSE]
        found[f"{DOSE}:{named}"] = Statement(f"{DOSE}:{named}", unnamed.value)
    if not found and any(
        _BARE_STOP.match(part)
        for sentence in _sentences(text)
        # a Chinese note's bare stop is a clause of its own: "戒了一个月了，居然没那么想喝"
        for part in (_CLAUSE_ZH.split(sentence) if chinese else [sentence])
    ):
        found[BARE_HABIT] = Statement(BARE_HABIT, "", True, _note_words(text))
    if RESIDENCE not in found and _may_state(RESIDENCE, text, None, chinese):
        home = _home(text)
        if home:
            found[RESIDENCE] = home
    return list(found.values())


_SWITCH_CUE_EN = re.compile(
    r"\b(?:stop(?:ped|ping|s)?|(?:came|come|coming|get|got|getting|be|being)\s+off|switch(?:ed|ing)?|swap(?:ped|ping)?|replac(?:e|ed|ing)|"
    r"instead\s+of|change[ds]?\s+from|no\s+more)\b",
    re.IGNORECASE,
)
_SWITCH_CUE_ZH = re.compile(r"停掉|停了|停用|不吃|换成|换为|改成|改为|替换")


def _only_person(text: str, chinese: bool) -> str:
    """The one person ``text`` names (``memcli.text.entities.extract``; for Chinese a name
    as friends call one, "小周"), lower-cased, who is no kin nor a word of time; "" when it
    names none or several."""
    named = {x.name for x in extract(text, speaker="我" if chinese else "me").mentions if x.type == "person"}
    if chinese:
        named |= {m.group(0) for m in _FAMILIAR_NAME_ZH.finditer(text)}
    names = {
        n.lower()
        for n in named
        if n.lower() not in _NOTPARTNERS_EN and n.lower() not in _FUNCTION_WORDS and (chinese or not n.isupper())
    }  # a word in capitals is shouted ("I PROPOSED"), not a name
    return names.pop() if len(names) == 1 else ""


def _switched_from(text: str, chinese: bool, found: dict[str, Statement]) -> list[Statement]:
    """The medicine a note says its writer came off for another, ended: a note that gives
    the dose of one medicine (in ``found``), names exactly one other and says a switch or a
    stop ("Stopping it; switching to losartan 50mg" after "it's the amlodipine",
    "switched from atorvastatin to rosuvastatin 10 mg", "停掉阿托伐他汀，换成瑞舒伐他汀 10mg")."""
    doses = [key.partition(":")[2] for key in found if key.startswith(f"{DOSE}:")]
    if len(doses) != 1 or not (_SWITCH_CUE_ZH if chinese else _SWITCH_CUE_EN).search(text):
        return []
    if chinese:
        named = {
            re.split(r"我|吃|服用|服|用|打|把|的|了|开|给|是|后|说|让|换成|改成|换|改|停掉|停", m.group(0))[-1]
            for m in _DRUG_ZH.finditer(text)
        }
    else:
        named = {
            w
            for w in re.findall(r"[a-z][a-z-]+", text.lower())
            if w not in _NOT_DRUGS and (w in _KNOWN_DRUGS or _DRUG.match(w))
        }
    others = {n for n in named if n and not same_key(f"{DOSE}:{n}", f"{DOSE}:{doses[0]}")}
    if len(others) != 1 or asks(text):
        return []
    (other,) = others
    return [Statement(f"{DOSE}:{other}", "", True)]


def _is_place_zh(name: str) -> bool:
    """Whether a Chinese employer's slot holds a place, not an employer ("我在北京工作",
    "在杭州上班", "在浦东新区上班"): the name, or the name without a division's suffix, is a
    place of JioNLP's gazetteers (``_places``), and nothing else."""
    if not name:
        return False
    places = _places(name, True)
    return name in places or any(name == p + suffix for p in places for suffix in ("", *_DIVISION_SUFFIXES_ZH))


_LOWER_WORD = r"(?!(?:the|my|our|his|her|their|this|that|your)\b)[a-z][a-z'’-]{2,}"
_LOWER_WORDS = _LOWER_WORD + r"(?:\s+" + _LOWER_WORD + r")?"
_LOWER_PLACE_EN = [
    re.compile(p)
    for p in (
        # "in the denver apt", "at the leeds flat", "the jersey city place"
        r"\b(?:in|into|to|at|on)\s+(?:the\s+|my\s+|our\s+)?(?P<v>"
        + _LOWER_WORDS
        + r")\s+(?:flat|house|apartment|apt|place|studio|condo)\b",
        # "walthamstow place is ours"
        r"(?:^|[.!?]\s*)(?P<v>"
        + _LOWER_WORDS
        + r")\s+(?:flat|house|apartment|apt|place|studio|condo)\s+is\s+(?:ours|mine|home)\b",
        # "house in eugene", "lease in portland"
        r"\b(?:flat|house|apartment|apt|condo|studio|lease)\s+in\s+(?P<v>" + _LOWER_WORDS + r")",
        # a move of the writer's: "moved to york", "finally moved to leeds"; not "jess moved to jersey city"
        r"(?:^|[.!?,;]\s*|\b(?i:i|we|i've|we've|i'm|we're|finally|just|officially|have|has)\s+)(?:moved|relocated)\s+"
        r"(?:back\s+|over\s+)?(?:to|in)\s+(?:the\s+)?(?P<v>" + _LOWER_WORDS + r")",
        r"\bfirst\s+night\s+(?:sleeping\s+)?in\s+(?:the\s+)?(?P<v>" + _LOWER_WORDS + r")",
    )
]
"""A place of one's home written in lower case, where a note with a cue of one's home puts it
(``_lower_places``)."""
_NOT_LOWER_PLACE_WORDS = _NOT_PLACE_WORDS | frozenset(
    "little big small tiny nice lovely cute cosy cozy old green blue red white yellow pink grey gray black brown "
    "same other shared rented own studio bed room one two three for with on near by at of off from to in into is was "
    "now here there and but the his her their its this that these those your some any each every all cheap "
    "amazing gorgeous perfect dream tmrw tomorrow soon week weekend month year end start top bottom back front "
    "campus suburbs centre center country countryside area neighbourhood neighborhood".split()
)
"""Words that are no place in ``_lower_places`` (sizes, colours, function words, an area as
such; a town as such is one of ``_PLACE_TAILS``)."""
_PLACE_TAILS = frozenset("city town village heights park hill island".split())
"""Words that end a place's name after another ("jersey city"), and are none alone."""


def _lower_places(text: str) -> frozenset[str]:
    """The places of one's home ``text`` writes in lower case (``_LOWER_PLACE_EN``: "first
    night in the denver apt", "got the keys!! walthamstow place is ours"), each of at most
    two words, none a word of ``_NOT_LOWER_PLACE_WORDS`` ("into the green house" names
    none). English only; ``_home`` reads them only in a sentence with a cue of one's home."""
    found: set[str] = set()
    for m in (m for pattern in _LOWER_PLACE_EN for m in pattern.finditer(text)):
        name = m.group("v")
        kept: list[str] = []
        for word in name.split():  # "the denver", "york last": the words of the place alone
            if word in _PLACE_TAILS:  # "jersey city"; "the park" alone names none
                if kept:
                    kept.append(word)
                    break
                continue
            if word in _NOT_LOWER_PLACE_WORDS or word.endswith(("'s", "’s")):
                if kept:
                    break
                continue
            kept.append(word)
        if kept:
            found.add(" ".join(kept))
    return frozenset(found)


def _home(text: str) -> Statement | None:
    """Where ``text`` says its speaker lives when no rule of ``_RESIDENCE_EN`` /
    ``_RESIDENCE_ZH`` reads it: a sentence of the speaker's (or of no one named) with a
    cue of one's home (a move, "my flat", the landlord, the rent, the keys; 搬, 房子, 老家)
    and the place names of it and of the sentence after it (``_places``: "got the keys!!!
    Flat 3, 27 Marine Parade, Brighton."). The value is every place so named, joined by
    "|" (``updates`` compares them as sets)."""
    sentences = _sentences(text)
    places: set[str] = set()
    for i, whole in enumerate(sentences):
        # "sis moved to Leeds, i moved to York": the sister's clause names no home of the writer's
        sentence = _writers_part(whole)
        if not sentence or asks(sentence):
            continue
        chinese = bool(re.search(r"[\u4e00-\u9fff]", sentence))
        if chinese:
            sentence = _PARENTS_HOME_ZH.sub("老家", sentence)
        if not (_HOME_CUE_ZH if chinese else _HOME_CUE_EN).search(sentence):
            continue
        if (OTHERS_ZH if chinese else OTHERS_KIN_EN).search(sentence):
            continue
        if not chinese and OTHERS_EN.search(sentence) and not re.search(r"\b(?:I|me|my|we|our|us)\b", sentence):
            continue
        if chinese and (re.search(r"(?:他|她)(?:们)?(?:住|搬|家)", sentence) or _STAY_ZH.search(sentence)):
            continue
        if not chinese and _OTHER_MOVES_EN.search(sentence):
            continue
        places |= _places(" ".join([sentence, *sentences[i + 1 : i + 2]]) if not chinese else sentence, chinese)
        if not chinese and not places:
            places |= _lower_places(" ".join([sentence, *sentences[i + 1 : i + 2]]))
        if not chinese and _MOVE_CUE_EN.search(sentence):
            places |= {
                "#" + _norm(m.group("s")).rstrip(".")
                for m in _ADDRESS_EN.finditer(" ".join([sentence, *sentences[i + 1 : i + 2]]))
            }
    return Statement(RESIDENCE, "|".join(sorted(places))) if places else None


def _sentence_statements(sentence: str, chinese: bool, first: bool, others: bool, implicit: bool) -> list[Statement]:
    out: list[Statement] = []
    dose = (_DOSE_ZH if chinese else _DOSE_EN).search(sentence)
    if dose and not others and (chinese or not _others_dose(sentence[: dose.start()])):
        medicine = _zh_medicine(sentence, dose) if chinese else _medicine(sentence, dose, first or implicit, first)
        unit = dose.group("u").lower().rstrip("s")
        unit = "unit" if unit == "u" else unit  # "14u" is 14 units
        if medicine:
            out.append(Statement(f"{DOSE}:{medicine}", f"{float(dose.group('n')):g} {unit}"))
        elif (first or implicit) and (_CHANGED_TO_ZH if chinese else _CHANGED_TO_EN).search(sentence[: dose.start()]):
            # "GP bumped me to 88 mcg", "dose went up to 20mg", "医生让加到20毫克": the medicine noted before
            out.append(Statement(UNNAMED_DOSE, f"{float(dose.group('n')):g} {unit}"))
    if not first and not implicit:
        return out
    if not first:
        out.extend(_noun_statements(sentence, chinese))
        return [*out, *_habit(sentence, chinese, out)]
    for pattern in _RESIDENCE_ZH if chinese else _RESIDENCE_EN:
        m = pattern.search(sentence)
        if m and chinese and _STAY_ZH.search(sentence):
            break  # "我现在住在酒店，出差上海": a stay, not a home
        if m:
            out.append(Statement(RESIDENCE, m.group("v") if chinese else _norm(m.group("v"))))
            break
    for pattern in [*_JOB_ZH, *_JOB_ZH_MORE] if chinese else [*_JOB_EN, *_JOB_MORE_EN]:
        m = pattern.search(sentence)
        if m:
            groups = m.groupdict()
            title = _norm(groups.get("t") or "")
            org = _norm(groups.get("o") or "")
            if title.split(" ")[0] in _NOT_ROLES:
                continue
            named = _COMPANY_NAMED_ZH.search(sentence) if chinese else None
            org = named.group("o") if named else re.sub(r"了$", "", org) if chinese else org
            if chinese and not named and _is_place_zh(org):
                org = ""  # "我在北京工作": where one works, not whom for
            if title or org:
                out.append(Statement(JOB, f"{title}|{org}"))
                break
    if not any(s.key == JOB for s in out):
        for pattern, title, ended in _JOB_END_ZH if chinese else _JOB_END_EN:
            if pattern.search(sentence):
                out.append(Statement(JOB, f"{title}|", ended))
                break
    if chinese:
        for pattern, value in _DIET_ZH:
            if pattern.search(sentence):
                out.append(Statement(DIET, value))
                break
    elif _OMNIVORE_EN.search(sentence):
        out.append(Statement(DIET, "omnivore"))
    else:
        for pattern in _DIET_EN:
            m = pattern.search(sentence)
            if m:
                out.append(Statement(DIET, _DIETS_EN.get(m.group("v").lower(), m.group("v").lower())))
                break
    out.extend(s for s in _noun_statements(sentence, chinese) if s.key not in {o.key for o in out})
    if not any(s.key.startswith(MEMBERSHIP) and s.state != BY_NAME for s in out):
        # a membership read whole ("I cancelled my Costco membership") stands for the one read by name
        stated = _membership(sentence, chinese)
        keys = {s.key for s in stated}
        out = [s for s in out if s.key not in keys] + stated
    partner = _partner(sentence, chinese)
    if partner and not any(s.key == PARTNER for s in out):
        out.append(partner)
    return [*out, *_habit(sentence, chinese, out)]


def _named_medicine(text: str) -> str:
    """The one medicine an English ``text`` names by a drug's ending or as a known one
    (``_DRUG``, ``_KNOWN_DRUGS``), "" for none or two: what a dose changed in it without
    the medicine's name is of."""
    names = {
        w
        for w in re.findall(r"[a-z][a-z-]+", text.lower())
        if w not in _NOT_DRUGS and (w in _KNOWN_DRUGS or _DRUG.match(w))
    }
    return next(iter(names)) if len(names) == 1 else ""


def _others_dose(before: str) -> bool:
    """Whether the words ``before`` a dose name someone else as whose it is
    (``_OTHERS_DOSE_EN``: "Jess's GP bumped it up to", "my roommate's dose went up to"): a
    capitalised name's possessive that is no medicine's, no time's and not the writer's."""
    for m in _OTHERS_DOSE_EN.finditer(before):
        name = (m.group("n") or "").lower()
        if not name:
            return True
        if name in _KNOWN_DRUGS or _DRUG.match(name) or name in _TIME_WORDS or name in _WHEN_WORDS:
            continue
        if name in ("today", "tonight", "yesterday", "tomorrow", "i", "it", "that", "what", "there", "here", "let"):
            continue
        return True
    return False


def _habit(sentence: str, chinese: bool, found: list[Statement]) -> list[Statement]:
    """The habit ``sentence`` says its speaker stopped, unless what stopped is a
    membership already ``found`` in it: by a sentence of stopping (``_HABIT_EN`` /
    ``_HABIT_ZH``), or by a stop said near a subject (``_STOP_NEAR_EN`` /
    ``_STOP_NEAR_ZH``: "physio says no running for now", "太极停了"), not negated nor
    meant for later (``_NOT_STOPPED_EN``). ``Statement.words``: the habit's words (an
    older note holding them all states it, ``states_habit``); ``Statement.value``: its
    head (``_habit_head``), by which an older note of a habit kept with a frequency states
    it too (``keeps_habit``). Mem0's DELETE by rules: the stop ends the memory it
    contradicts, found by the subject, not by a list of habits."""
    if any(s.key.startswith(MEMBERSHIP) and s.state != BY_NAME for s in found):
        return []
    habit = (_HABIT_ZH if chinese else _HABIT_EN).search(sentence) or (
        None if chinese else _DELETED_APP_EN.search(sentence)
    )
    near = None
    if not habit and not any(s.key == DIET for s in found):  # "vegan now, no more cheese": the diet says it
        for m in (_STOP_NEAR_ZH if chinese else _STOP_NEAR_EN).finditer(sentence):
            if chinese or not _NOT_STOPPED_EN.search(sentence[max(0, m.start() - 16) : m.start()]):
                near = m
                break
    said = habit or near
    if not said:
        return []
    groups = said.groupdict()
    obj = next((groups[g] for g in "opqrstu" if groups.get(g)), "")
    words = _habit_words(obj, chinese)
    head = _habit_head(obj, chinese)
    if not words or (near and (not head or head in _NOT_HABITS)):
        return []
    return [Statement(f"{HABIT}:{' '.join(sorted(words))}", head, True, words)]


def _habit_head(obj: str, chinese: bool) -> str:
    """The head of a stopped habit's words ``obj``: for English the stem of its first
    word that is no verb it is done with (``_LIGHT_VERBS``: "drinking coffee" -> "coffe",
    "the journal tbh" -> "journal", "running" -> "run"); for Chinese its characters but
    those verbs (``_LIGHT_VERBS_ZH``: "打太极" -> "太极", "跑步" -> "跑步")."""
    if chinese:
        chars = "".join(c for c in obj if "\u4e00" <= c <= "\u9fff")
        chars = re.sub(r"今天|现在|从此|以后|今后|已经|终于|开始|这次|真的|[了的我啦也就都还再]", "", chars)
        return chars.lstrip(_LIGHT_VERBS_ZH)[:4] or chars[:4]
    stems = _stems_in_order(re.split(r"\s[-–—]\s|—", _HABIT_STOP.split(obj, maxsplit=1)[0])[0])
    heads = [w for w in stems if w not in _FUNCTION_WORDS]
    return ([w for w in heads if w not in _LIGHT_VERBS] or heads or [""])[0]


_SLOT_WORDS_EN = {
    JOB: frozenset(_ROLE_HEADS.split("|"))
    | frozenset(
        "day week shift month notice resignation laid sacked fired left promoted offer freelance freelancing full "
        "teaching nursing lecturing onboarding orientation induction position role post job grind grinding shifts "
        "stand standup standups overtime call desk".split()
    ),
    RESIDENCE: frozenset(
        "flat house apartment apt place home condo bungalow cottage digs landlord landlady lease rent council "
        "address keys moved moving relocated relocating relocate settled night".split()
    ),
    DIET: frozenset(
        "vegan plant vegetarian veggie pescatarian pescetarian flexitarian keto ketogenic carb paleo gluten dairy "
        "fasting carnivore halal kosher meat mediterranean sodium salt fat".split()
    ),
    MEMBERSHIP: frozenset("gym gyms choir choirs chorus singers chorale orchestra".split()),
    PARTNER: frozenset(
        "anniversary date dating valentine valentines done over finished married wedding engaged proposed "
        "fiance fiancee fiancé fiancée hitched single divorce official seeing split broke ended".split()
    ),
}
"""Words without one of which an English sentence states nothing of a slot by
``_noun_statements`` / ``_home``: checked on the sentence's word set before any of the
slot's patterns run, so that most sentences cost a set intersection, not a regex search."""
_SLOT_CHARS_ZH = {
    JOB: "报到做当工作上班签接录",
    RESIDENCE: "搬住房租宿定老家安落",
    DIET: "素断酮碳麸少清饮肉",
    PARTNER: "在交恋关婚证",
}


_SUB_WORDS_EN = frozenset(
    "plan membership subscription sub cancelled canceled dropped ditched quit left ended expired lapsed lapse expire "
    "joined signed".split()
)
"""Words without one of which an English sentence states no membership by ``_subscriptions``."""


def _slot_words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-zé]+", text.lower()))


def _may_state(slot: str, text: str, words: frozenset[str] | None, chinese: bool) -> bool:
    """Whether ``text`` holds a word of ``slot`` (``_SLOT_WORDS_EN`` on ``words``, its
    word set, or one of ``_SLOT_CHARS_ZH``), or "gym" in a compound ("PureGym")."""
    if chinese:
        return any(c in text for c in _SLOT_CHARS_ZH.get(slot, ""))
    if words is None:
        words = _slot_words(text)
    return (
        bool(words & _SLOT_WORDS_EN[slot])
        or (slot == MEMBERSHIP and "gym" in text.lower())
        or (slot == JOB and "1:1" in text)
        or (slot == DIET and "window" in words and bool(_FASTING_WINDOW_EN.search(text)))
    )


def _noun_statements(sentence: str, chinese: bool) -> list[Statement]:
    """What a sentence of the speaker's says without a first-person verb, as a diary's
    notes do: a job by its noun ("first day at Deloitte, audit associate", "software
    engineer II at Stripe", "last day at Hillside", "被裁了"), a diet by its name next to a
    verb of following or stopping it ("veggie since new year", "断食先停，改成少食多餐"), a
    membership of a kind one holds one of (a gym, a choir: "switched gyms -> Mill Lane
    leisure centre"), a partner by a cue of dating, engagement or marriage ("third date w/
    Priya", "married Tom today", "和阿杰正式确定关系啦"). Each by a lexicon of the slot's
    words, not by sentence."""
    out: list[Statement] = []
    words = None if chinese else _slot_words(sentence)
    reads = (
        (JOB, _noun_job),
        (DIET, _diet),
        (MEMBERSHIP, lambda text, zh: None if zh else _category_membership(text)),
        (PARTNER, _partner_state),
    )
    for slot, read in reads:
        if _may_state(slot, sentence, words, chinese):
            said = read(sentence, chinese)
            if said:
                out.append(said)
    if not chinese and not any(s.key.startswith(MEMBERSHIP) for s in out) and _SUB_WORDS_EN & words:
        out.extend(_subscriptions(sentence))
    return out


def _noun_job(sentence: str, chinese: bool) -> Statement | None:
    if chinese:
        for pattern in _JOB_ZH_MORE:
            m = pattern.search(sentence)
            if m:
                groups = m.groupdict()
                org = "" if _is_place_zh(groups.get("o") or "") else groups.get("o") or ""
                if groups.get("t") or org:
                    return Statement(JOB, f"{groups.get('t') or ''}|{org}")
        return None
    if _someone_elses_job(sentence, for_others=False):
        return None
    ended = _JOB_END_MORE_EN.search(sentence)
    if ended:
        return Statement(JOB, f"|{_norm(ended.group('o') or '')}", True)
    if _someone_elses_job(sentence):
        return None
    promoted = _PROMOTED.search(sentence)
    if promoted:
        return Statement(JOB, f"{_norm(promoted.group('t'))}|")
    announced = _ANNOUNCED_TITLE_EN.search(sentence)
    if announced:
        return Statement(JOB, f"{_norm(announced.group('t') or announced.group('u'))}|")
    offer = _OFFER_EN.search(sentence)
    if offer:
        return Statement(JOB, f"|{_norm(offer.group('o') or offer.group('p'))}")
    taken = _offer_taken(sentence)
    if taken:
        return Statement(JOB, f"|{taken}")
    position = _POSITION_TAKEN_EN.search(sentence)
    if position:
        return Statement(JOB, f"{_norm(position.group('t'))}|")
    living = _FREELANCE_EN.search(sentence)
    if living:
        # one's own employer: another employer than any before
        doing = living.group("t") or living.group("u")
        return Statement(JOB, f"{'freelance ' if living.group('t') else ''}{doing.lower()}|{SELF_EMPLOYED}")
    start = _JOB_START_NOUN.search(sentence)
    if start and not start.group("o"):
        at = re.match(r"\s*(?:at|with|for)\s+", sentence[start.end() :])
        org = _lower_org(sentence[start.end() + at.end() :]) if at else ""
        if org:
            return Statement(JOB, f"{_norm(start.group('t') or '')}|{org}")
    if start and (start.group("t") or start.group("o")):
        return Statement(JOB, f"{_norm(start.group('t') or '')}|{_norm(start.group('o') or '')}")
    onboarding = _ONBOARDING_EN.search(sentence)
    if onboarding:
        named = onboarding.group("a") or onboarding.group("b")
        org = _lower_org(named) if named.split()[0].lower() not in _NOT_EMPLOYERS_EN else ""
        if org and org not in _NOT_EMPLOYERS_EN:
            return Statement(JOB, f"|{org}")
    doing = _TEACHING_AT_EN.search(sentence)
    if doing:
        org = _lower_org(doing.group("a"))
        if org:
            return Statement(JOB, f"{_DOERS.get(doing.group('t').lower(), '')}|{org}")
    # a role at an employer, where the note opens with it or names it as one's own
    role = _ROLE_AT.search(sentence)
    if role and _CLOCK_TIME.search(sentence[role.end() :]):
        role = None  # "vet for Biscuit 3:30", "dentist at Smile Dental 4pm": an appointment
    if (
        role
        and (
            re.match(
                r"^\W*(?:(?:now|currently|still|officially)\s+(?:(?:a|an)\s+)?)?$",
                re.split(r"[,;:]|\s[-–—]\s|—", sentence[: role.start("t")])[-1],
                re.IGNORECASE,
            )
            # a role taken: "as", "I'm", "got shift lead at Target", "made senior engineer at Arup"
            or re.match(
                r"(?:.*\b(?:as|I'm|I\s+am|I'm\s+now)|(?:^\W*|.*\b(?:I|we)\s+)(?:just\s+|finally\s+)?(?:got|landed|became|made))"
                r"\s+(?:a\s+|an\s+)?$",
                sentence[: role.start("t")],
                re.I,
            )
        )
    ):
        return Statement(JOB, f"{_norm(role.group('t'))}|{_norm(role.group('o'))}")
    now = _NOW_A_ROLE_EN.search(sentence)
    if now:
        return Statement(JOB, f"{_norm(now.group('t'))}|")
    work = _WORK_AT_EN.search(sentence)
    if work and not re.search(r"(?:'s|’s|\bhis|\bher|\btheir)\s+(?:\w+\s+)?$", sentence[: work.start()], re.I):
        org = _lower_org(work.group("a"))
        if org:
            return Statement(JOB, f"|{org}", state=WORK_CONTEXT)
    return None


def _diet(sentence: str, chinese: bool) -> Statement | None:
    """The diet a sentence says its speaker follows: a term of the lexicon of diets
    (``_DIETS_EN`` / ``_DIETS_ZH``, eating meat among them) said as followed, by a verb
    before it ("going fully vegan", "trying keto", "back to eating meat") or by standing as
    a value, not before a noun it qualifies ("officially vegetarian as of today", "went
    full vegan after that documentary"; "vegan cake", "pescatarian thing" state none);
    of several, the one a switch introduces ("低碳太难坚持了，改成地中海饮食"), else the
    first. When it only says one stopped ("断食先停", "forget the low carb stuff"), that
    one, ended; meat not eaten ("I don't eat meat") states nothing."""
    followed: list[tuple[int, str]] = []
    stopped: list[str] = []
    if chinese:
        for m in _DIET_TERMS_ZH.finditer(sentence):
            diet = _DIETS_ZH.get(m.group(0), m.group(0).removesuffix("饮食"))
            if diet == "omnivore":
                if not re.search(r"(?:不|没|别|不再)$", sentence[max(0, m.start() - 2) : m.start()]):
                    followed.append((m.start(), diet))
                continue
            near = sentence[max(0, m.start() - 3) : m.end() + 3]
            if _STOP_VERBS_ZH.search(near):
                stopped.append(diet)
            else:
                followed.append((m.start(), diet))
    else:
        for m in _DIET_TERMS_EN.finditer(sentence):
            before = sentence[max(0, m.start() - 24) : m.start()].lower()
            after = sentence[m.end() : m.end() + 16].lower()
            value = _DIETS_EN[m.group(0).lower()]
            negated = re.search(r"(?:\bnot|n't|\bno\s+more|\bnever)\s+(?:\w+\s+)?$", before)
            if value == "omnivore":
                if not negated and not _STOP_VERBS_EN.search(before.split(",")[-1]):
                    followed.append((m.start(), value))
                continue
            if _THING_IS_EN.search(sentence[: m.start()]):
                continue  # "it's dairy-free and so easy": a dish's, not the speaker's
            if _STOP_VERBS_EN.search(before.split(",")[-1]) or negated:
                stopped.append(value)
            elif _ONE_MEAL_EN.match(sentence[m.end() :]):
                continue  # "moving to mediterranean food for lunch at work": one meal's cuisine, not a diet
            elif re.search(
                r"(?:\b(?:am|'m|be|being|went|go|going|gone|turned|became|become|stay|staying|strict|fully|eat|eating|on|"
                r"trying|try|doing|follow|following|started|start|(?:switch|switched|switching|moved|moving|changed|"
                r"changing|swapped|swapping)\s+(?:over\s+)?to)\s+(?:a\s+|the\s+)?(?:fully\s+|full\s+|strict\s+|strictly\s+)?$)",
                before,
            ) or _stands_as_value(after):
                followed.append((m.start(), value))
    window = None if chinese else _fasting_window(sentence)
    if window:
        # a fasting schedule by its hours, a value of its own kind: "16:8", "moved to 18:6, window is 2-8pm"
        hours = (int(window.group("f")), int(window.group("e")))
        if sum(hours) == 24 and (not followed or all(d == "fasting" for _, d in followed)):
            return Statement(DIET, f"fasting {hours[0]}:{hours[1]}")
    if followed:
        switch = _SWITCH_CUE_ZH if chinese else _DIET_SWITCH_EN
        cues = [c.end() for c in switch.finditer(sentence)]
        chosen = [d for at, d in followed if cues and at >= cues[-1]]
        return Statement(DIET, (chosen or [d for _, d in followed])[0])
    if stopped:
        return Statement(DIET, stopped[0], True)
    return None


_FASTING_WINDOW_EN = re.compile(r"(?<![\d:])(?P<f>1[2-9]|2[0-3])\s?[:/]\s?(?P<e>[1-9]|1[0-2])(?![\d:])")
"""Hours fasted and hours eating, as a fasting schedule is written ("16:8", "18/6"): the
two sum to a day (``_diet``)."""
_THING_IS_EN = re.compile(
    r"\b(?:it|this|that|they|these|those|which|he|she)(?:'s|’s|\s+is|\s+was|'re|\s+are|\s+were)\b", re.I
)
"""A sentence that says what a thing or someone else is ("it's dairy-free", "this is vegan"):
a diet's name in it qualifies that, not the speaker."""
_ONE_MEAL_EN = re.compile(
    r"[^,;.!?]*?\b(?:for|at|with|this|tonight's|today's)\s+(?:(?:the|my|our|a|an|work|team|office|family)\s+){0,2}"
    r"(?:breakfast|brunch|lunch|dinner|supper|tea|meal|party|picnic|bbq|barbecue)\b|[^,;.!?]*?\btonight\b",
    re.I,
)
"""A meal named after a diet's name in its clause: the cuisine of that meal, not a diet."""
_DIET_SWITCH_EN = re.compile(
    r"\b(?:switched|changed|moved|swapped|went)\s+(?:over\s+)?to\b|\binstead\b|\bfrom\s+[\w-]+(?:\s+[\w-]+)?\s+to\b",
    re.I,
)
"""A switch to the diet named after it ("switched to keto", "went from vegetarian to vegan")."""


_FASTING_WORDS_EN = re.compile(r"\b(?:fasting|fast|IF|eating\s+window|window)\b")


def _fasting_window(sentence: str) -> re.Match[str] | None:
    """The hours of a fasting schedule an English ``sentence`` gives (``_FASTING_WINDOW_EN``,
    the numbers as written: "16:08" is a time), where the words of fasting govern them: in
    the same clause ("doing 16:8 fasting", "IF 18/6"), or a switch to them in a note that
    names its eating window ("changed to 20:4, eating window 2-6pm"); not "the score was
    20:4 at half time, fasting tomorrow"."""
    for m in _FASTING_WINDOW_EN.finditer(sentence):
        start = max([0, *(p.end() for p in re.finditer(r"[,;.!?]\s|\s[-\u2013\u2014]\s", sentence[: m.start()]))])
        end = re.search(r"[,;.!?](?:\s|$)|\s[-\u2013\u2014]\s|$", sentence[m.end() :]).start() + m.end()
        if _FASTING_WORDS_EN.search(sentence[start:end]):
            return m
        if re.search(r"\b(?:to|back\s+to)\s+$", sentence[start : m.start()]) and re.search(
            r"\beating\s+window\b|\bwindow\s+(?:is|of|from)\b", sentence
        ):
            return m
    return None


def _stands_as_value(after: str) -> bool:
    """Whether the words ``after`` a diet's name leave it standing as a value, not
    qualifying a noun: nothing, punctuation or an emoji, a duration, "diet", or a function
    word or a word of time ("vegetarian as of today", "vegetarian 2 yrs now", "vegan after
    that documentary", "keto since May"; not "vegan cake")."""
    if re.match(r"\s*\d+\s*(?:yrs?|years?|months?|mos?|weeks?|wks?|days?)\b", after):  # "vegetarian 2 yrs now"
        return True
    word = re.match(r"\s*([a-z]+)", after)
    if not word:
        return not re.match(r"\s*[\w'’-]", after)
    return word.group(1) in _FUNCTION_WORDS or word.group(1) in _TIME_WORDS or word.group(1) == "diet"


_TIME_WORDS = frozenset(
    "now today tonight yesterday tomorrow since from again forever life good day week month year monday tuesday "
    "wednesday thursday friday saturday sunday".split()
)


def _category_membership(sentence: str) -> Statement | None:
    """A membership of a kind one holds one at a time (``_CATEGORY_WORDS``: a gym, a
    choir) that a sentence says is held ("joined PureGym", "sang w/ the Harmonia community
    choir", "auditioned for the Cathedral Chamber Singers and got in") or switched
    ("switched gyms -> Mill Lane leisure centre"); the key is the kind, the value the
    one named."""
    switch = _SWITCH_EN.search(sentence)
    if switch:
        kind = _CATEGORY_WORDS[switch.group("c").lower()]
        return Statement(f"{MEMBERSHIP}:{kind}", _norm(switch.group("o") or "another"))
    joined = _PARTICIPATE_EN.search(sentence)
    if joined:
        name = joined.group("o")
        words = name.lower().split()
        kind = next((_CATEGORY_WORDS[w] for w in words if w in _CATEGORY_WORDS), "gym" if "gym" in name.lower() else "")
        if kind:
            return Statement(f"{MEMBERSHIP}:{kind}", _norm(name))
    return None


BY_NAME = "by name"
"""``Statement.state`` of a membership a note says ended by its name alone ("cancelled PF",
"netflix cancelled", "let costco lapse"): it ends a membership of that name stated before
(``same_key``: by its name or its initials), and reads nothing else (no habit is left out
for it)."""
_PRICE_EN = re.compile(
    r"[$£€]\s?\d|\b\d+(?:\.\d+)?\s?(?:/\s?mo(?:nth)?\b|/\s?m\b|/\s?yr\b|a\s+month|per\s+month|a\s+year|per\s+year|pcm)",
    re.I,
)
"""A price paid again and again: what a subscription or a membership costs."""
_SUB_NAME = r"(?P<n>[\w+&'’.-]+(?:\s+[\w+&'’.-]+){0,3}?)"
_SUB_HELD_EN = re.compile(
    # a plan or membership of a name: "Netflix standard plan", "costco exec membership renewed"
    r"(?:^|[,;:.!]\s*|\b(?:renewed|got|bought|started|on|my|our|have|the)\s+)" + _SUB_NAME + r"\s+"
    r"(?:(?:standard|family|basic|premium|annual|individual|monthly|student|duo|gold|exec|executive|yearly)\s+"
    r"(?:plan|membership|subscription|sub)|membership|subscription)\b",
    re.I,
)
_SUB_JOINED_EN = re.compile(
    r"\b(?:joined|signed\s+up\s+(?:at|for|to|with))\s+(?:the\s+|a\s+)?"
    + _SUB_NAME
    + r"(?=[,;:.!?]|\s+[-\u2013\u2014]|$)",
    re.I,
)
_SUB_ENDED_EN = re.compile(
    r"\b(?:cancell?ed|dropped|ditched|quit|left|ended)\s+(?:my\s+|the\s+|our\s+)?"
    + _SUB_NAME
    + r"(?:\s+(?:membership|subscription|sub|plan))?(?=[,;:.!?]|\s+[-\u2013\u2014]|\s+(?:today|yesterday|instead|for\s+good)\b|$)|"
    r"(?:^|[,;:.!]\s*)(?!(?:I|we|you|he|she|they|it|i)\b)(?P<m>[\w+&'’.-]+(?:\s+[\w+&'’.-]+){0,2}?)\s+(?:(?:membership|subscription|sub|plan)\s+)?"
    r"(?:cancell?ed|ended|expired|lapsed)(?=\s*(?:[,;:.!?]|$)|\s+(?:today|yesterday|finally|again|for\s+good)\b)|"
    r"\blet\s+(?:my\s+|the\s+|our\s+)?(?P<l>[\w+&'’.-]+(?:\s+[\w+&'’.-]+){0,2}?)\s+(?:(?:membership|subscription|sub)\s+)?"
    r"(?:lapse|expire|run\s+out)\b",
    re.I,
)
_NOT_SUB_NAMES = frozenset(
    "it that this them him her everything all one my our the a an work job school home office house class it's "
    "thing things stuff plans plan membership subscription".split()
)


def _sub_key(raw: str) -> str:
    """The key of a membership ``raw`` names (``_org_key`` of its name: a gym or a choir by
    its kind), "" when it names no one thing ("that", "everything", "work")."""
    name = re.sub(r"^(?:the|my|our|a|an|that|this)\s+", "", raw.strip(), flags=re.I)
    if not name or name.lower() in _NOT_SUB_NAMES or name.split()[0].lower() in _NOT_SUB_NAMES:
        return ""
    if not re.search(r"[A-Za-z]", name) or name.lower() in _FUNCTION_WORDS:
        return ""
    if re.fullmatch(
        r"[a-z]+ing", name.lower()
    ):  # a doing ("quit gaming", "quit smoking") is a habit's, not a membership
        return ""
    if re.fullmatch(r"[A-Z]{2,5}", name):  # an initialism ("PF", "YMCA"), kept in capitals (``initialism_of``)
        return name
    return _org_key(name, False)


_THINGS_OF_A_SERVICE = frozenset(
    "show shows series episode episodes season film movie playlist playlists podcast album song class classes session "
    "sessions lesson lessons hike trip run order delivery match game event tour concert booking appointment party "
    "meeting meetup practice rehearsal".split()
)
"""What a service, a club or a shop gives its members, by which a name written all in lower
case ends on a thing of it, not on the membership ("netflix show cancelled", "costco run")."""


def _names_the_membership(name: str) -> bool:
    """Whether ``name``, what a note says ended, is the membership itself and not a thing of
    its service: the head of an English noun phrase is its last word, so "Netflix show",
    "Spotify playlist", "Sierra Club hike", "Gym class" name a show, a playlist, a hike, a
    class (a name in capitals followed by a word in lower case, or a kind of club before
    another word), while "Planet Fitness", "amazon prime", "hbo" name the membership."""
    words = re.findall(r"[\w+&'’.-]+", name)
    if len(words) < 2:
        return True
    if name == name.lower() and words[-1] in _THINGS_OF_A_SERVICE:
        return False  # written all in lower case, no capital tells the name: "netflix show", "spotify playlist"
    if words[-1].lower() in _CATEGORY_WORDS:  # "Riverside climbing gym": a gym
        return True
    if words[0][:1].isupper() and any(w[:1].islower() for w in words[1:]):
        return False
    return not any(w.lower() in _CATEGORY_WORDS for w in words[:-1])


def _subscriptions(sentence: str) -> list[Statement]:
    """The memberships and subscriptions an English sentence of the speaker's says are held
    (a named plan or membership: "Netflix standard plan", "costco exec membership renewed";
    one joined at a price: "joined planet fitness, $10/mo") or ended by name ("cancelled
    PF", "netflix cancelled", "let costco lapse", "dropped spotify": ``BY_NAME``). Keyed by
    the name (``_org_key``), so that an initialism stands for the name it abbreviates
    (``same_key``)."""
    out: list[Statement] = []
    seen: set[str] = set()
    for m in _SUB_ENDED_EN.finditer(sentence):
        name = m.group("n") or m.group("m") or m.group("l") or ""
        if re.match(r"(?:quit|left)\b", m.group(0), re.I) and not re.search(
            r"\b(?:membership|subscription|sub|plan)\b", m.group(0), re.I
        ):
            continue  # one quits or leaves a place or a job ("left Costco early", "quit Accenture Consulting")
        if not re.search(r"\b(?:membership|subscription|sub|plan)\b", m.group(0), re.I) and not _names_the_membership(
            name
        ):
            continue  # the head of what ended is a thing of the service ("Netflix show ended")
        key = _sub_key(name)
        if key and key not in seen:
            seen.add(key)
            out.append(Statement(f"{MEMBERSHIP}:{key}", "", True, state=BY_NAME))
    held = [m.group("n") for m in _SUB_HELD_EN.finditer(sentence)]
    if _PRICE_EN.search(sentence) or re.search(r"\b(?:membership|pass|plan|subscription)\b", sentence, re.I):
        held += [m.group("n") for m in _SUB_JOINED_EN.finditer(sentence)]
    for name in held:
        key = _sub_key(name)
        if key and key not in seen:
            seen.add(key)
            out.append(_held_membership(name, False))
    return out


def _partner_state(sentence: str, chinese: bool) -> Statement | None:
    """A partner a sentence names by a cue of a couple ("anniversary w/ Jake", "third date
    w/ Priya", "和阿杰正式确定关系啦"), a couple it says is over ("Jake and I are done"),
    or the state of one ("engaged!!! Tom asked", "married Tom today": ``Statement.state``)."""
    if chinese:
        for couple in _OTHERS_COUPLE_ZH.finditer(sentence):
            if not re.search(r"我们?(?:现在|已经|终于|正式|也)*$", couple.group("x")):
                return None  # "阿杰和小美在一起了", "我朋友阿杰和小美结婚了": a couple the writer is not of
        m = _PARTNER_STATUS_ZH.search(sentence)
        state = "married" if _MARRIED_ZH.search(sentence) else "engaged" if _ENGAGED_ZH.search(sentence) else ""
        if m:
            return Statement(PARTNER, m.group("w"), state=state)
        if _COUPLE_ZH.search(sentence):  # "相亲认识的陈浩，…已经确定关系了": the person it names
            named = [x.name for x in extract(sentence, speaker="我").mentions if x.type == "person"]
            # a name as friends call one, a surname after 小, 老 or 阿 ("小周送了我一束花，我们在一起了")
            named = named or sorted({m.group(0) for m in _FAMILIAR_NAME_ZH.finditer(sentence)})
            if len(named) == 1:
                return Statement(PARTNER, named[0], state=state)
        if _PARTNER_STATE_ZH.search(sentence) or (_COUPLE_ZH.search(sentence) and "我们" in sentence):
            # "我们在一起了" with no name: a couple of the writer's, whoever the partner is
            return Statement(PARTNER, "", state=state)
        return None
    if _SINGLE_EN.search(sentence) and not OTHERS_KIN_EN.search(sentence):
        return Statement(PARTNER, "", True)
    m = _PARTNER_CUE_EN.search(sentence)
    if m and (m.group("w") or re.search(r"\b(?:done|over|finished)\b", m.group(0))):
        return Statement(PARTNER, (m.group("w") or "").lower(), True)
    lower = _PARTNER_LOWER_EN.search(sentence)
    if lower:
        said = next(v for v in lower.groupdict().values() if v)
        if (
            said.lower() in _NOTPARTNERS_EN
            or said.lower() in _FUNCTION_WORDS
            or others_subject(sentence, lower.start())
        ):
            lower = None  # "date with mum", "dating back to", "my friend is dating priya": no partner of one's own
    if lower and not re.search(r"\b(?:married|engaged|proposed|wedding|fianc)", sentence, re.I):
        groups = lower.groupdict()
        ended = next((groups[g] for g in "efg" if groups.get(g)), "")
        if ended:
            return Statement(PARTNER, ended.lower(), True)
        return Statement(PARTNER, next(groups[g] for g in "stu" if groups.get(g)).lower(), state="dating")
    state = "married" if re.search(r"\b(?:got\s+)?married\b|\bwedding\s+day\b", sentence, re.I) else ""
    state = state or ("engaged" if re.search(_ENGAGED_EN + r"|\bproposed\b|\bfianc[ée]e?\b", sentence, re.I) else "")
    if m:
        return Statement(PARTNER, m.group("v").lower(), state=state)
    if state == "engaged" and not _own_engagement(sentence):
        return None  # "Jake proposed to Emma", "he proposed a new plan", "Sara got engaged": not the writer's
    if state == "married" and not _own_marriage(sentence):
        return None  # "Tom and Priya got married", "my best friend is getting married to Rob": not the writer's
    if state:
        names = [w for w in re.findall(r"\b[A-Z][a-z]+\b", sentence) if w.lower() not in _NOT_PLACE_WORDS]
        named = re.search(
            r"\b(?:married|to)\s+(?P<v>[A-Z][a-z]+)\b|\b(?P<w>[A-Z][a-z]+)\s+(?:and\s+I|asked|proposed)\b", sentence
        )
        name = (named.group("v") or named.group("w")) if named else (names[0] if len(names) == 1 else "")
        return Statement(PARTNER, name.lower(), state=state)
    return None


INITIALS = "^"
"""The mark of a held membership's ``Statement.words`` that holds its name's initials in the
order written ("^pf" of "Planet Fitness"), what an initialism is compared with
(``initialism_of``): its key's words are sorted."""


def _held_membership(raw: str, chinese: bool) -> Statement:
    """A membership held of the name ``raw`` (keyed by ``_org_key``), with the initials of
    the key's words in the order written (``INITIALS``) where the name has two or more."""
    key = _org_key(raw, chinese)
    if chinese or len(key.split()) < 2:
        return Statement(f"{MEMBERSHIP}:{key}", "member")
    org = re.sub(r"\bmembership\b", "", raw)
    named = [w for w in re.findall(r"[A-Za-z][\w'’-]*", org) if w[0].isupper() and w.lower() not in _NOT_PLACE_WORDS]
    words = named or [
        w for w in re.findall(r"[a-z]+", org.lower()) if w not in _WHEN_WORDS and stem_of(w) in key.split()
    ]
    initials = "".join(w[0].lower() for w in words)
    if len(initials) != len(key.split()):
        return Statement(f"{MEMBERSHIP}:{key}", "member")
    return Statement(f"{MEMBERSHIP}:{key}", "member", words=frozenset({INITIALS + initials}))


def _membership(sentence: str, chinese: bool) -> list[Statement]:
    """A membership ``sentence`` states as held ("I'm a member of…", "I joined the … club",
    "我加入了…俱乐部") or as ended ("I left the … club", "I let my … membership lapse",
    "我退出了…")."""
    member = (_MEMBER_ZH if chinese else _MEMBER_EN).search(sentence)
    if member:
        return [_held_membership(member.group("o"), chinese)]
    joined = (_MEMBER_JOIN_ZH if chinese else _MEMBER_JOIN_EN).search(sentence)
    if joined and (chinese or _ORG_WORDS & set(joined.group("o").lower().split()) or "member" in sentence.lower()):
        return [_held_membership(joined.group("o"), chinese)]
    ended = (_MEMBER_END_ZH if chinese else _MEMBER_END_EN).search(sentence)
    if ended and (chinese or "member" in sentence.lower() or _ORG_WORDS & set(ended.group("o").lower().split())):
        return [Statement(f"{MEMBERSHIP}:{_org_key(ended.group('o'), chinese)}", "", True)]
    lapsed = None if chinese else _MEMBER_LAPSE_EN.search(sentence) or _MEMBER_EXPIRED_EN.search(sentence)
    if lapsed:
        groups = lapsed.groupdict()
        return [Statement(f"{MEMBERSHIP}:{_org_key(groups.get('o') or groups.get('p') or '', False)}", "", True)]
    if chinese:
        lapsed = _MEMBER_LAPSED_ZH.search(sentence)
        if lapsed:
            return [Statement(f"{MEMBERSHIP}:{_org_key(re.sub(r'^我', '', lapsed.group('o')), True)}", "", True)]
        paid = _MEMBER_PAID_ZH.search(sentence)
        if paid:
            return [Statement(f"{MEMBERSHIP}:{_org_key(paid.group('o'), True)}", "member")]
        held = _CARD_HELD_ZH.search(sentence) or _CARD_NAMED_ZH.search(sentence)
        if held and not re.search(r"不续|没续|到期", sentence[held.end() : held.end() + 4]):
            groups = held.groupdict()
            name = re.sub(r"^(?:我|了|张|的是|的|是)+", "", groups.get("a") or groups.get("o") or groups.get("b") or "")
            if _ONLINE_ZH.search(held.group(0)):  # a service's pass is its membership ("充了腾讯视频年卡")
                return [Statement(f"{MEMBERSHIP}:{_org_key(name, True)}", "member")] if name else []
            return [Statement(f"{MEMBERSHIP}:{CARD}", name or "another")]
        ended = _CARD_ENDED_ZH.search(sentence)
        if ended:
            return [Statement(f"{MEMBERSHIP}:{CARD}", re.sub(r"^我", "", ended.group("o")), True)]
        return []
    held = _MEMBER_HELD_EN.search(sentence)
    if held:
        return [_held_membership(held.group("o"), False)]
    return []


def _partner(sentence: str, chinese: bool) -> Statement | None:
    """The partner ``sentence`` names ("My boyfriend is called Tom", "I'm engaged to Alex",
    "我男朋友叫小李"), or a relationship it says has ended ("Tom and I broke up", "我离婚了";
    the value is the partner's name when it is given)."""
    ended = (_PARTNER_END_ZH if chinese else _PARTNER_END_EN).search(sentence)
    if ended:
        groups = ended.groupdict()
        return Statement(PARTNER, (groups.get("v") or groups.get("w") or "").lower(), True)
    for pattern in [_PARTNER_ZH] if chinese else _PARTNER_EN:
        m = pattern.search(sentence)
        if m:
            groups = m.groupdict()
            return Statement(
                PARTNER, (groups.get("v") or groups.get("w") or "").lower(), state=_couple_state(m.group(0))
            )
    return None


_NOT_A_PROPOSAL_EN = re.compile(
    r"\s+(?:to\s+(?!me\b)|a\b|an\b|the\b|that\b|this\b|some\b|my\b|his\b|her\b|their\b|our\b|in\b|at\b|on\b)",
    re.IGNORECASE,
)
"""What follows "proposed" when it is no proposal to the writer: "proposed to Emma", "proposed
a new plan", "proposed in Paris" (told of someone else's engagement)."""


_ENGAGED_EN = (
    r"\bengaged\b(?!\s+in\s+(?!(?-i:[A-Z\d])|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|spring|summer|autumn|fall|winter)))"
    r"(?!\s+to\s+be\s+(?!married|wed\b))"
)
"""Engaged to marry, not busy: "I'm engaged in a lawsuit", "got engaged in a heated argument"
and "engaged to be the best man" are not ("got engaged in Paris", "in June", "engaged to be
married" are)."""
_OWN_CLAUSE_OPENING_EN = re.compile(
    r"^(?:(?:just|finally|officially|got|get|getting|so|and|today|yesterday|recently|actually|we|also)\s+)*$",
    re.IGNORECASE,
)


def _own_marriage(sentence: str) -> bool:
    """Whether the marriage ``sentence`` tells is the writer's: a clause of "I" or "we"
    ("I married Alex today", "Alex and I got married", "we're getting married"), of "my/our
    wedding day", or of no subject ("Got married today!"); not someone else's ("Tom and
    Priya got married", "my best friend is getting married to Rob", "she married Tom")."""
    for m in re.finditer(r"\bmarried\b|\bwedding\s+day\b", sentence, re.IGNORECASE):
        before = re.split(r"[,;.!?]\s*|\s[-\u2013\u2014]\s", sentence[: m.start()])[-1]
        if m.group(0).lower() != "married":
            if re.search(r"\b(?i:my|our)\s+$", before):
                return True
            continue
        if others_subject(sentence, m.start()) and not re.search(r"\bto\s+me\b", sentence[m.end() :], re.I):
            continue
        if re.search(r"\b(?:I|I'm|I've|[Ww]e|[Ww]e're|[Ww]e've|me)\b|\b(?i:i|i'm|i've)\b", before):
            return True
        if _OWN_CLAUSE_OPENING_EN.match(before.strip() + " " if before.strip() else ""):
            return True
    return False


def _own_engagement(sentence: str) -> bool:
    """Whether the engagement ``sentence`` tells ("engaged", "proposed", "fiancée") is the
    writer's: "I'm engaged", "Alex and I got engaged", "Alex proposed!", "he proposed to me",
    "my fiancé"; not someone else's ("Sara got engaged", "Jake proposed to Emma", "Kate's
    engagement party, he proposed in Paris") nor another proposal ("he proposed a new plan")."""
    for m in re.finditer(_ENGAGED_EN + r"|\b(?:proposed|fianc[ée]e?)\b", sentence, re.IGNORECASE):
        word = m.group(0).lower()
        if word.startswith("fianc"):
            if re.search(r"\b(?i:my|our)\s+(?:\w+\s+)?$", sentence[: m.start()]):
                return True
            continue
        if others_subject(sentence, m.start()) and not re.search(r"\bto\s+me\b", sentence[m.end() :], re.I):
            continue
        if word == "proposed":
            if _NOT_A_PROPOSAL_EN.match(sentence[m.end() :]):
                continue
            if re.search(r"(?i:\b(?:he|she|they)\s+(?:\w+\s+)?)$", sentence[: m.start()]) and not re.match(
                r"\s+to\s+me\b", sentence[m.end() :], re.IGNORECASE
            ):
                continue  # a pronoun's proposal is the writer's only when it says "to me"
            return True
        before = re.split(r"[,;.!?]\s*", sentence[: m.start()])[-1]
        if re.search(r"\b(?:I|[Ww]e)\b|\b(?i:i)\b", before) or not before.strip():
            return True
    return False


_COUPLE_STATES = ("dating", "engaged", "married")
"""The states of a couple, in the order a couple goes through them (``updates``)."""


def _couple_state(said: str) -> str:
    """The state of a couple the words naming the partner say: married ("my wife", "married
    to", "老公"), engaged ("my fiancée", "engaged to", "未婚妻"), dating ("my girlfriend",
    "dating", "男朋友"), or "" ("my partner")."""
    if re.search(r"\b(?:husband|wife|married)\b|老公|老婆|丈夫|妻子|结婚", said, re.IGNORECASE):
        return "married"
    if re.search(r"\b(?:fianc[ée]e?|engaged)\b|未婚|订婚", said, re.IGNORECASE):
        return "engaged"
    if re.search(
        r"\b(?:boyfriend|girlfriend|bf|gf|dating|going\s+out\s+with|seeing)\b|男朋友|女朋友|男友|女友|谈恋爱|交往",
        said,
        re.IGNORECASE,
    ):
        return "dating"
    return ""


def _org_key(org: str, chinese: bool) -> str:
    if chinese:
        return re.sub(r"(?:的)?会员.*$", "", org)
    org = re.sub(r"\bmembership\b", "", org)
    kind = next((_CATEGORY_WORDS[w] for w in re.findall(r"[a-z]+", org.lower()) if w in _CATEGORY_WORDS), "")
    if kind:  # a gym or a choir is one at a time: keyed by its kind, as _category_membership keys it
        return kind
    # a name, where the club has one, is the club ("the Ramblers" and "the Ramblers walking club"); a day or a
    # month is no name, nor a word of when it meets ("the Tuesday night chess club" is the chess club)
    named = [w for w in re.findall(r"[A-Za-z][\w'’-]*", org) if w[0].isupper() and w.lower() not in _NOT_PLACE_WORDS]
    if named:
        return " ".join(sorted(_english_stems(" ".join(named))))
    return " ".join(
        sorted({stem_of(w) for w in re.findall(r"[a-z]+", org.lower()) if w not in _WHEN_WORDS} & _english_stems(org))
    )


_WHEN_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "morning mornings evening evenings night nights weekly monthly daily weekend weekends local new".split()
)
"""Words of when or where a club meets, no part of which club it is."""


SAME_HABIT = {
    "caffein": "coffe",
    "espresso": "coffe",
    "latt": "coffe",
    "cappuccino": "coffe",
    "cig": "smoke",
    "cigarett": "smoke",
    "fag": "smoke",
    "tobacco": "smoke",
    "smoker": "smoke",
    "jog": "run",
    "journal": "diari",
    "gambl": "bet",
    "booz": "drink",
    "alcohol": "drink",
}
"""Words (Porter stems) that name the same habit as another (caffeine and coffee,
cigarettes and smoking, jogging and running, a journal and a diary), by the one they stand
for: a habit stopped in one word ended the habit named in the other."""


_HABIT_KINDS_EN = {
    "alcohol": "wine wines beer beers booze boozing alcohol alcoholic pint pints lager lagers ale ales cider ciders vodka "
    "gin whisky whiskey rum tequila cocktail cocktails prosecco champagne spirits sake bourbon brandy drunk hungover "
    "hangover hangovers sober sobriety",
    "caffeine": "coffee coffees tea teas latte lattes espresso espressos cappuccino cappuccinos caffeine americano "
    "americanos matcha chai decaf mocha mochas cola coke",
    "soft": "water juice juices soda sodas milk smoothie smoothies kombucha lemonade squash",
    "smoking": "smoke smokes smoking smoked smoker cig cigs cigarette cigarettes cigar cigars fag fags tobacco",
    "vaping": "vape vapes vaping vaped vaper juul ecig ecigs",
}
_HABIT_KIND_OF = {stem_of(w): kind for kind, words in _HABIT_KINDS_EN.items() for w in words.split()}
"""Porter stem -> the kind of habit it names: a stop of one kind ends no habit of another
("quit drinking" ends the wine, not the morning coffee; "quit vaping" ends no cigarettes)."""
_DRINK = stem_of("drinking")
_ALCOHOL_STEMS = frozenset(w for w, kind in _HABIT_KIND_OF.items() if kind == "alcohol")


def _habit_kinds(stems: frozenset[str]) -> frozenset[str]:
    """The kinds of habit (``_HABIT_KINDS_EN``) English ``stems`` name: drinking with no
    drink named, or drinks, is alcohol ("quit drinking", "drinks with work every Friday");
    with coffee, tea or water named it is that drink."""
    kinds = {_HABIT_KIND_OF[w] for w in stems if w in _HABIT_KIND_OF}
    if _DRINK in stems and not kinds & {"caffeine", "soft"}:
        kinds.add("alcohol")
    return frozenset(kinds)


def _kind_stems(text: str) -> frozenset[str]:
    """The Porter stems of ``text`` as ``_habit_kinds`` reads them ("e-cig" one word)."""
    text = re.sub(r"\be-(?=cig)", "e", text.lower())
    return frozenset(stem_of(w) for w in re.findall(r"[a-z]+", text))


def _same_kind(stop: frozenset[str], stems: frozenset[str]) -> bool:
    """Whether the habit of the stems of a stop (``stop``) may be the one a sentence of
    ``stems`` keeps: when the stop names a kind of habit (``_habit_kinds``), the sentence
    names that kind too."""
    kinds = _habit_kinds(stop)
    return not kinds or bool(kinds & _habit_kinds(stems))


def habit_stems(stems: frozenset[str]) -> frozenset[str]:
    """``stems`` with each word of ``SAME_HABIT`` as the one it stands for, besides itself."""
    return stems | {SAME_HABIT[w] for w in stems if w in SAME_HABIT}


def _habit_words(obj: str, chinese: bool) -> frozenset[str]:
    if chinese:
        obj = re.sub(r"今天|现在|从此|以后|今后|已经|终于|开始|这次|真的", "", obj)
        return frozenset(c for c in obj if c not in "了的我啦也就都还再")
    clause = _HABIT_STOP.split(obj, maxsplit=1)[0]
    # the first four in the clause's order: a set's order changes from one process to the next
    stems = list(dict.fromkeys(_stems_in_order(clause)))[:4]
    return frozenset(SAME_HABIT.get(w, w) for w in stems)


def states_habit(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` states the habit of ``words`` (``Statement.words`` of an ended
    habit) as going on: it holds every one of them, in the first person, names their kind
    of habit when they have one (``_same_kind``: drinking with no drink named is alcohol,
    not coffee), and neither asks nor says it stopped."""
    for sentence in _sentences(text):
        if asks(sentence):
            continue
        chinese = bool(re.search(r"[\u4e00-\u9fff]", sentence))
        sentence, first, _, implicit = _speaker_said(sentence, chinese)
        if not (first or implicit):
            continue
        if chinese:
            if words <= set(sentence) and not _HABIT_ZH.search(sentence):
                return True
        elif not _HABIT_EN.search(sentence):
            stems = habit_stems(frozenset(stem_of(w) for w in re.findall(r"[a-z]+", sentence.lower())))
            if words <= stems and _same_kind(words, _kind_stems(sentence)):
                return True
    return False


def _note_words(text: str) -> frozenset[str]:
    """The words of ``text`` that may name a habit: Porter stems (each with the one it
    stands for, ``habit_stems``) of three letters or more but function words, words of
    stopping and of time; for Chinese, its characters but the commonest."""
    if re.search(r"[\u4e00-\u9fff]", text):
        return frozenset(c for c in text if "\u4e00" <= c <= "\u9fff" and c not in "了的我啦也就都还再戒掉彻底今天")
    stems = {
        stem_of(w)
        for w in re.findall(r"[a-z]+", text.lower())
        if len(w) > 2 and w not in _FUNCTION_WORDS and w not in _NOT_DRUGS
    }
    return habit_stems(frozenset(stems - {"stop", "quit", "sober", "good", "time", "real", "turkei", "cold"}))


def shares_habit_word(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` (an older note of a habit) shares one of ``words`` (``_note_words``
    of a bare note of a habit's end): the nearer habit, when its writer keeps two."""
    return bool(words & _note_words(text))


def habit_names(head: str) -> frozenset[str]:
    """The words (stems) that name the habit of ``head`` (a stopped habit's
    ``Statement.value``): itself, the one it stands for in ``SAME_HABIT`` and the others
    that stand for that one ("caffein" -> caffein, coffe, espresso, latt, cappuccino)."""
    target = SAME_HABIT.get(head, head)
    names = {head, target, *(w for w, t in SAME_HABIT.items() if t == target)}
    if target == _DRINK:  # drinking, with no drink named, is alcohol: the wine, the beer
        names |= _ALCOHOL_STEMS
    return frozenset(names)


def keeps_habit(text: str, head: str) -> bool:
    """Whether ``text`` notes the habit of ``head`` (a stopped habit's ``Statement.value``,
    ``_habit_head``) as kept: a sentence of the speaker's (the people one does it with do
    not count: "跟老王他们打麻将") that gives it a frequency or says it again (``RECURS``:
    "running 5k every morning", "journaling nightly", "每周六早上去公园打太极"), names it
    (English: a word of the same stem, or one standing for it, ``habit_names``; Chinese:
    the head's first character and half of its characters), names the head's kind of habit
    when it has one (``_same_kind``: "quit drinking" keeps the coffee), and does not itself
    stop a habit. The subject is matched by stem, not by a list of habits (Graphiti's edge
    invalidation: a new fact about the same subject ends the one it contradicts)."""
    if not head:
        return False
    chinese_head = bool(re.match(r"[\u4e00-\u9fff]", head))
    names = frozenset() if chinese_head else habit_names(head)
    for sentence in _sentences(text):
        if asks(sentence) or not RECURS.search(sentence):
            continue
        chinese = bool(re.search(r"[\u4e00-\u9fff]", sentence))
        if chinese != chinese_head:
            continue
        if chinese:
            sentence = _COMPANY_ZH.sub("", sentence)
        sentence, first, _, implicit = _speaker_said(sentence, chinese)
        if not (first or implicit):
            continue
        if chinese:
            if (
                head[0] in sentence
                and 2 * sum(c in sentence for c in head) >= len(head)
                and not _HABIT_ZH.search(sentence)
                and not _STOP_NEAR_ZH.search(sentence)
            ):
                return True
        elif not _HABIT_EN.search(sentence) and not _STOP_NEAR_EN.search(sentence):
            stems = _kind_stems(sentence)
            if names & stems and _same_kind(frozenset({head}), stems):
                return True
    return False


def _employer_name(org: str) -> list[str]:
    """The words of an employer as a job's slot parsed it, up to the first word that is no
    part of a name: a function word, a word of time or a number ("accenture for good",
    "accenture after 6 years", "accenture with the team" are Accenture)."""
    words: list[str] = []
    for word in org.lower().split():
        if words and (word in _FUNCTION_WORDS or word in _TIME_WORDS or re.match(r"\d", word)):
            break
        words.append(word)
    return words


def same_employer(a: str, b: str) -> bool:
    """Whether two employers a job's slot parsed (lower case) are one: by their names
    (``_employer_name``), the one's words the start of the other's ("google" and "google
    cloud"), not by the words that trail them."""
    x, y = _employer_name(a), _employer_name(b)
    if not x or not y:
        return a == b
    short, long = sorted((x, y), key=len)
    return long[: len(short)] == short


def same_key(a: str, b: str) -> bool:
    """Whether two ``Statement.key``s name the same attribute: equal, or the doses of one
    medicine named in full and cut short ("levothyroxine" and "levo", "甘精胰岛素" and
    "甘精": one name starts with the other, of at least 4 letters or 2 Chinese characters)."""
    if a == b:
        return True
    attribute, _, x = a.partition(":")
    other, _, y = b.partition(":")
    if attribute == MEMBERSHIP and other == MEMBERSHIP and x and y:
        return initialism_of(x, y) or initialism_of(y, x)
    if attribute != DOSE or other != DOSE or not x or not y:
        return False
    short, long = sorted((x, y), key=len)
    return long.startswith(short) and len(short) >= (2 if re.match(r"[\u4e00-\u9fff]", short) else 4)


def may_be_initialism(name: str) -> bool:
    """Whether a membership's key ``name`` is an initialism ("PF", "YMCA": ``_sub_key`` keeps
    one in capitals, two to five letters)."""
    return bool(re.fullmatch(r"[A-Z]{2,5}", name))


def initialism_of(short: str, name: str) -> bool:
    """Whether ``short`` (a membership's key) is the initialism of ``name`` (another's key, its
    words' stems in sorted order: ``_org_key``): "PF" of "fit planet" (Planet Fitness),
    "YMCA" of four words. The letters are compared as a multiset, the key's words being
    sorted."""
    words = name.split()
    return (
        may_be_initialism(short)
        and len(words) == len(short) > 1
        and sorted(short.lower()) == sorted(w[0] for w in words)
    )


def key_needle(key: str) -> str:
    """What a stored text that states ``key`` (a dose's) holds for sure, lower-cased: the
    medicine's name cut to what ``same_key`` matches (4 letters, 2 Chinese characters)."""
    name = key.partition(":")[2]
    return name[:2] if re.match(r"[\u4e00-\u9fff]", name) else name[:4]


def key_needles(key: str) -> list[str]:
    """What a stored text that states the dose ``key`` holds, one of them for sure,
    lower-cased: the medicine's name cut as ``key_needle`` cuts it, or for a vitamin each
    way of writing one ("vit", "维生素", "维他命", or its letter and a digit: "d3")."""
    name = key.partition(":")[2]
    if name.startswith("vitamin "):
        letter = name.split(" ", 1)[1][:1]
        return ["vit", "维生素", "维他命", *(f"{letter}{d}" for d in "0123456789")]
    return [key_needle(key)]


def _split_streets(value: str) -> tuple[set[str], set[str]]:
    """(streets, places) of a residence's value ("#ecclesall mews|sheffield")."""
    parts = [p for p in value.split("|") if p]
    return {p for p in parts if p.startswith("#")}, {p for p in parts if not p.startswith("#")}


def updates(new: Statement, old: Statement) -> bool:
    """Whether ``new`` (stated later) updates ``old`` (stated earlier, of the same speaker):
    the same attribute with another value; for a job, another title or another employer
    where both say one; a membership ended after it was stated, or stated again after it
    ended. The same value again is a restatement, not an update (Mem0's NOOP)."""
    if not same_key(new.key, old.key):
        return False
    if new.key != old.key and new.key.startswith(f"{MEMBERSHIP}:"):
        # one key the initialism of the other: the initials in the order the name was written
        short, held = (new, old) if may_be_initialism(new.key.partition(":")[2]) else (old, new)
        if INITIALS + short.key.partition(":")[2].lower() not in held.words:
            return False
    if new.key == RESIDENCE:
        # streets ("#…") are compared with streets, places with places: a move in one city
        # names another street; a note of the street alone names no city
        new_streets, new_places = _split_streets(new.value)
        old_streets, old_places = _split_streets(old.value)
        if new_streets and old_streets:
            return not new_streets & old_streets
        if new_places and old_places:
            return not new_places & old_places
        return bool(new.value and old.value)
    if new.key == PARTNER:
        if new.ended and old.ended:
            return False
        if new.ended != old.ended:
            # a break-up ends that partner only; a new partner after a break-up is the current one
            return not (new.value and old.value and new.value != old.value) or not new.ended
        if new.value and old.value and new.value != old.value:
            return True
        # the same partner (or one unnamed) in a later state: dating, then engaged, then married
        return bool(
            new.state in _COUPLE_STATES
            and old.state in _COUPLE_STATES
            and _COUPLE_STATES.index(new.state) > _COUPLE_STATES.index(old.state)
        )
    if new.key == JOB and (new.state == WORK_CONTEXT or old.state == WORK_CONTEXT):
        # work told of at a place ends nothing; a job elsewhere, or one's job ended, ends it
        new_org, old_org = new.value.split("|")[1], old.value.split("|")[1]
        if new.state == WORK_CONTEXT:
            return False
        return bool(new_org and not same_employer(new_org, old_org)) or (
            new.ended and (not new_org or same_employer(new_org, old_org))
        )
    if new.key == JOB and new.ended != old.ended:
        # the end of a job at one employer ends no job at another ("last day at Accenture" after "offer from Stripe")
        new_org, old_org = new.value.split("|")[1], old.value.split("|")[1]
        return not (new.ended and new_org and old_org and not same_employer(new_org, old_org))
    if new.key == JOB:
        new_title, new_org = new.value.split("|")
        old_title, old_org = old.value.split("|")
        return bool(
            (new_title and old_title and new_title != old_title)
            or (new_org and old_org and not same_employer(new_org, old_org))
        )
    if new.key == DIET and not new.ended and not old.ended and old.value.startswith(f"{new.value} "):
        return False  # "fasting" said again keeps the schedule noted ("fasting 16:8"): less said, not a change
    if new.key == DIET and new.ended:
        # "dropped keto" ends keto, not the vegetarian diet noted before it
        return not old.ended and (old.value == new.value or old.value.startswith(f"{new.value} "))
    return new.ended != old.ended or new.value != old.value


_ASKS_RESIDENCE = re.compile(
    r"\b(?:do|did)\s+(?:I|we)\s+(?:live|reside|rent)\b|\b(?:I|we)\s+(?:live|reside)\b|"
    r"\b(?:my|our)\s+(?:(?:current|new|present|home)\s+)?(?:home|house|flat|apartment|address)\b|"
    r"\b(?:am\s+I|are\s+we)\s+(?:based|living|settled|renting)\b|\b(?:I|we)\s+(?:move|moved|relocate|relocated)\b|"
    r"\b(?:I'm|we're)\s+(?:living|renting|based)\b|\bwhere(?:'s|\s+is)\s+home\b|"
    r"\b(?:which|what)\s+(?:city|town|country|place|neighbou?rhood|area|village|district|street)\s+(?:do|am|are|did|I'm|we're)\s*(?:I|we)?\b|"
    r"我(?:们)?现在在哪(?:个城市|里|儿)|"
    r"我(?:们)?(?:现在|目前)?(?:住|定居|搬)|我(?:们)?(?:的)?家(?:在|是)",
    re.IGNORECASE,
)
_ASKS_JOB = re.compile(
    r"\b[Mm]y\s+(?:job|work|occupation|profession|employer|company|role|position|career)\b|"
    r"\b(?:do|did)\s+I\s+(?:do\s+for\s+(?:a\s+)?(?:work|living)|work)\b|\bI\s+work\b|\bam\s+I\s+(?:still\s+)?(?:working|employed|retired|in\s+work)\b|"
    r"\bwhat\s+do\s+I\s+do\b|我(?:的)?(?:工作|职业|公司|单位|岗位|职位)|我(?:现在|目前)?(?:是)?(?:做|干)(?:的是)?什么|"
    r"我(?:现在|目前)?(?:在)?哪(?:里|儿|家公司|个公司|家单位|个单位)?(?:上班|工作)|我(?:还|现在)?在?(?:上班|工作)吗|我退休|"
    r"(?:什么|哪个)(?:岗位|职位|工作)",
    re.IGNORECASE,
)
_ASKS_DOSE = re.compile(
    r"\b(?:dose|dosage|much|many|mg|mcg|strength|take|taking|on)\b|剂量|多少|毫克|几毫克|吃|用量", re.I
)
_ASKS_DIET = re.compile(
    r"\bdiet\b|\b(?:vegan|vegetarian|pescatarian|keto)\b|\beat\s+meat\b|\b(?:can|should|may)\s+I\s+(?:eat|have)\b|"
    r"\ballowed\s+to\s+eat\b|吃素|饮食|素食|吃肉|怎么吃|能吃|能不能吃|可以吃|"
    # a way of eating named as such, and the asker's: "my eating plan", "what eating plan am I
    # following", "the way I eat"; not a plan alone (a phone plan), not another person's
    r"\bmy\s+(?:eating|dietary)\s+(?:plan|regimen?|window|schedule|pattern|style|habits?)\b|"
    r"\b(?:eating|dietary)\s+(?:plan|regimen?|window|schedule|pattern|style|habits?)\s+(?:am|do|should|must)\s+I\b|"
    r"\bthe\s+way\s+I\s+(?:eat|am\s+eating)\b",
    re.IGNORECASE,
)
_ASKS_PARTNER = re.compile(
    r"\b(?:boyfriend|girlfriend|partner|husband|wife|fianc[ée]e?|dating|married|single|engaged|relationship|bf|gf)\b|"
    r"\b(?:am\s+I|are\s+we)\s+(?:still\s+)?(?:with|together\s+with)\s+[A-Z]|"
    r"男朋友|女朋友|男友|女友|老公|老婆|丈夫|妻子|对象|结婚|单身|恋爱|"
    # "who am I seeing" is a partner only as a state of the present, nothing after it but a
    # word of now: "who am I seeing on Friday?" or "for my knee" is an appointment
    r"\bwho\s+am\s+I\s+(?:seeing|going\s+out\s+with)"
    r"(?:\s+(?:these\s+days|right\s+now|at\s+the\s+moment|currently|now|lately|nowadays|at\s+present))?\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def answers_asked(question: str, text: str) -> bool:
    """Whether ``text`` (a memory) states, of its speaker, the attribute ``question`` asks
    about, in whatever words: "Which city do I live in?" and "We got the keys to our new flat
    in Bath"; "What do I do for work?" and "I was hired by Lidl"; "How much metformin do I
    take?" and a dose of metformin; "Am I in the tennis club?" and a membership of it; "Do I
    drink cola?" and "I stopped drinking cola"; "我住在哪个城市？" and "我搬到了重庆". The
    question's own words need not be in the memory: the attribute is (``statements``)."""
    said = statements(text)
    if not said:
        return False
    lower = question.lower()
    chinese = bool(re.search(r"[\u4e00-\u9fff]", question))
    stems = (
        frozenset(c for c in question if "\u4e00" <= c <= "\u9fff")
        if chinese
        else habit_stems(_english_stems(question))
    )
    for statement in said:
        attribute, _, subject = statement.key.partition(":")
        if attribute == RESIDENCE and _ASKS_RESIDENCE.search(question):
            return True
        if attribute == JOB and _ASKS_JOB.search(question):
            return True
        if attribute == DIET and _ASKS_DIET.search(question) and not asks_of_another(question):
            return True
        # "who is my sister dating?": hers; "what's my husband's name?": the asker's partner
        if attribute == PARTNER and _ASKS_PARTNER.search(question) and not asks_of_another(question, PARTNERS):
            return True
        if attribute == DOSE and subject and subject in lower and _ASKS_DOSE.search(question):
            return True
        if attribute == MEMBERSHIP and subject:
            held = set(subject) if chinese else set(subject.split())
            if held and len(held & stems) * 2 >= len(held):
                return True
        if attribute == HABIT and statement.words and statement.words <= stems:
            return True
    return False
