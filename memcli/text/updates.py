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

Only first-person statements count ("I", "my", "we"; "我"): what the person says of
themselves. English and Chinese; pure regular expressions and the Porter stemmer
(``memcli.text.lexical.stem_of``), no model and no jieba, so it costs microseconds a text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcli.text.extractive import is_request_or_question
from memcli.text.lexical import stem_of

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
        "住",
        "搬",
        "定居",
        "安家",
        "落户",
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
    ),
    DOSE: ("mg", "mcg", "µg", "unit", "毫克", "微克", "单位"),
    DIET: ("vegan", "vegetarian", "pescatarian", "pescetarian", "flexitarian", "keto", "diet", "素", "吃肉"),
    MEMBERSHIP: ("member", "joined", "signed up", "会员", "退出", "取消", "加入"),
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
        r"(?:living|live|reside|based|settled|settling)\s+(?:down\s+)?in\s+" + _PLACE
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
]
_ZH_VALUE = r"(?P<v>[\u4e00-\u9fff]{2,6}?)"
_ZH_END = r"(?:了|啦|住|生活|工作|定居)?(?:[。，,.！!；;]|$)"
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
    re.compile(r"我(?:现在|目前)?在(?P<o>[\u4e00-\u9fff]{2,10}?)(?:上班|工作)" + _ZH_END),
    re.compile(
        r"(?:换了?工作|换工作了|新工作)[^。！!]*?(?:现在|目前)?(?:是|做|当)(?P<t>[\u4e00-\u9fff]{2,4}?)" + _ZH_END
    ),
]
_JOB_END_ZH = [
    (re.compile(r"我(?:已经|刚刚|刚|终于|去年|今年|前年|上个月|这个月|上周)?退休了?"), "退休", True),
    (re.compile(r"我(?:已经|刚刚|刚|去年|今年|上个月|这个月|上周)?(?:辞职|离职|失业|被裁员?)了?"), "", True),
]
_UNIT = r"(?P<u>mg|mcg|µg|micrograms?|milligrams?|units?|iu|IU)"
_DOSE_EN = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s?" + _UNIT + r"\b", re.IGNORECASE)
_DOSE_ZH = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s?(?P<u>毫克|微克|mg|单位)")
_DRUG = re.compile(
    r"^[a-z]{2,}(?:pril|statin|olol|sartan|formin|azole|cillin|mycin|cycline|pine|xine|prazole|tidine|zepam|zolam|"
    r"oxetine|aline|profen|amol|sone|lone|nide|mide|zide|parin|farin|gliptin|flozin|tide|lukast|tropium|terol|"
    r"triptan|dronate|barb|vir)$"
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
    "has have had got get be mine her his our their am pm mg mcg".split()
)
_ZH_DOSE_VERBS = re.compile(
    r"(?:加量|减量|加|增加|增|减|减少|降|降低|调|调整|改|换|提高|上调|下调|升|涨)?(?:到|为|至|成)了?$|(?:现在|目前|每天|每日|每晚|每早)$"
)
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
    r"(?:the\s+|a\s+|our\s+|my\s+|local\s+)*(?P<o>[^,.;!?]{3,60}?)(?:\s+(?:last|this|in|on|after|because|as|with|yesterday|today|recently|and|that|who|which|where|to|for)\b"
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
_ORG_WORDS = frozenset(
    "club gym society group team choir league association union library class circle orchestra band guild "
    "ramblers scouts federation chapter lodge".split()
)
_HABIT_EN = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:(?:stopped|quit|given\s+up|gave\s+up|cut\s+out|kicked|ditched)\s+|no\s+longer\s+|"
    r"(?:don't|do\s+not)\s+(?=\w+\b.*\b(?:anymore|any\s+more)))"
    r"(?!by\b|at\b|in\b|for\b|to\b|with\b|my\s+job\b)(?P<o>[^,.;!?]{2,60})"
)
_HABIT_STOP = re.compile(
    r"\b(?:in|on|at|last|this|since|after|before|because|and|but|so|when|for|anymore|any\s+more|a\s+while|ago|now|"
    r"completely|altogether|entirely|for\s+good|yesterday|today)\b"
)
_HABIT_ZH = re.compile(
    r"我(?:已经|现在)?(?:不再|戒掉了?|戒了|戒)(?P<o>[\u4e00-\u9fff]{1,6}?)(?:了|啦)?(?:[。，,.！!]|$)|"
    r"我(?:已经|现在)?不(?P<p>[喝抽吃玩打跑][\u4e00-\u9fff]{1,5}?)了(?:[。，,.！!]|$)"
)

_PARTNER_WORDS = r"(?:boyfriend|girlfriend|partner|husband|wife|fianc[ée]e?)"
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
        r"started\s+seeing|moved\s+in\s+with)\s+(?P<v>[A-Z][a-z]+)\b"
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
_OTHERS_EN = re.compile(
    r"\b(?:he|she|they|his|her|their|him)\b|\b[Mm]y\s+(?:mum|mom|mother|dad|father|sister|brother|son|daughter|wife|husband|"
    r"partner|friend|boyfriend|girlfriend|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|colleague|neighbou?r|"
    r"dog|cat)(?:'s)?\b|\bthe\s+(?:dog|cat|puppy|kitten|horse|baby|kids?)\b",
    re.IGNORECASE,
)
_OTHERS_ZH = re.compile(
    # 他 alone is no pronoun in a drug's name (阿托伐他汀)
    r"^(?:他|她|它)|(?:他|她|它)(?:们|的|说|在|是|把|也|要|有|去|吃|住|搬|每)|妈|爸|母亲|父亲|哥|姐|弟|妹|老公|老婆|丈夫|妻子|"
    r"儿子|女儿|朋友|同事|邻居|奶奶|爷爷|外婆|外公"
)

_VERBS = frozenset("drink eat smoke take use play go do have drinking eating taking using playing going doing".split())
_FIRST_PERSON_EN = re.compile(r"\b(?:I|I'm|I've|my|we|We|My)\b")


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


def asks(text: str) -> bool:
    """Whether ``text`` asks rather than tells: a question ("Where do I live?", "我住在哪里？",
    "你喜欢什么吗") or a request ("tell me a story about…", "请帮我…"): consolidation's test
    (``memcli.text.extractive.is_request_or_question``). A text that asks states nothing
    about its speaker."""
    return is_request_or_question(text)


def _norm(value: str) -> str:
    return " ".join(re.sub(r"^(?:the|a|an)\s+", "", value.strip(), flags=re.IGNORECASE).lower().split())


def _english_stems(text: str) -> frozenset[str]:
    return frozenset(stem_of(w) for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2 and w not in _NOT_DRUGS)


def _medicine(sentence: str, match: re.Match[str], first: bool) -> str:
    """The medicine a dose of ``sentence`` is of: a word of a drug's ending or a known one,
    else (in a sentence in the first person) the word after the dose ("50 mcg of X") or the
    nearest word before the number that is not a verb, a time or a function word ("upped my
    Ozempic to 1 mg")."""
    words = re.findall(r"[A-Za-z][A-Za-z-]+", sentence)
    for word in words:
        lower = word.lower()
        if lower in _KNOWN_DRUGS or _DRUG.match(lower):
            return lower
    if not first:
        return ""
    after = re.match(r"\s+of\s+([A-Za-z][A-Za-z-]+)", sentence[match.end() :])
    if after and after.group(1).lower() not in _NOT_DRUGS:
        return after.group(1).lower()
    before = re.findall(r"[A-Za-z][A-Za-z-]+", sentence[: match.start()])
    for word in reversed(before[-5:]):
        lower = word.lower()
        if lower not in _NOT_DRUGS and not lower.endswith("ed") and len(lower) > 2:
            return lower
    return ""


def _zh_medicine(sentence: str, match: re.Match[str]) -> str:
    run = re.search(r"[\u4e00-\u9fff]+$", sentence[: match.start()])
    if not run:
        return ""
    name = _ZH_DOSE_VERBS.sub("", run.group(0))
    name = re.sub(r"(?:的)?(?:剂量|用量|药量|量)$", "", _ZH_DOSE_VERBS.sub("", name))
    name = re.split(r"吃|服用|服|用|打|把|的", name)[-1]
    return name if 2 <= len(name) <= 8 else ""


def _sentences(text: str) -> list[str]:
    # a full stop ends an English sentence only before a space: "0.25 mg" is one number
    return [s for s in re.split(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*", text) if s.strip()]


def statements(text: str) -> list[Statement]:
    """The attributes ``text`` states of its speaker (``Statement``), at most one per key,
    in text order; none for a text that asks (``asks``) or a sentence not in the first
    person."""
    found: dict[str, Statement] = {}
    for sentence in _sentences(text):
        if asks(sentence):
            continue
        chinese = bool(re.search(r"[\u4e00-\u9fff]", sentence))
        first = "我" in sentence if chinese else bool(_FIRST_PERSON_EN.search(sentence))
        others = bool((_OTHERS_ZH if chinese else _OTHERS_EN).search(sentence))
        # A note about one's own medicine often names no one ("Ramipril upped to 10 mg",
        # "阿司匹林减到50毫克了"); one that names someone else may be about their dose.
        if not first and others:
            continue
        for statement in _sentence_statements(sentence, chinese, first, others):
            found.setdefault(statement.key, statement)
    return list(found.values())


def _sentence_statements(sentence: str, chinese: bool, first: bool, others: bool) -> list[Statement]:
    out: list[Statement] = []
    dose = (_DOSE_ZH if chinese else _DOSE_EN).search(sentence)
    if dose and not others:
        medicine = _zh_medicine(sentence, dose) if chinese else _medicine(sentence, dose, first)
        if medicine:
            unit = dose.group("u").lower().rstrip("s")
            out.append(Statement(f"{DOSE}:{medicine}", f"{float(dose.group('n')):g} {unit}"))
    if not first:
        return out
    for pattern in _RESIDENCE_ZH if chinese else _RESIDENCE_EN:
        m = pattern.search(sentence)
        if m:
            out.append(Statement(RESIDENCE, m.group("v") if chinese else _norm(m.group("v"))))
            break
    for pattern in _JOB_ZH if chinese else _JOB_EN:
        m = pattern.search(sentence)
        if m:
            groups = m.groupdict()
            title = _norm(groups.get("t") or "")
            org = _norm(groups.get("o") or "")
            if title.split(" ")[0] in _NOT_ROLES:
                continue
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
                out.append(Statement(DIET, m.group("v").lower()))
                break
    out.extend(_membership(sentence, chinese))
    partner = _partner(sentence, chinese)
    if partner:
        out.append(partner)
    habit = (_HABIT_ZH if chinese else _HABIT_EN).search(sentence)
    if habit and not any(s.key.startswith(MEMBERSHIP) for s in out):
        words = _habit_words(habit.group("o") or habit.groupdict().get("p") or "", chinese)
        if words:
            out.append(Statement(f"{HABIT}:{' '.join(sorted(words))}", "", True, words))
    return out


def _membership(sentence: str, chinese: bool) -> list[Statement]:
    """A membership ``sentence`` states as held ("I'm a member of…", "I joined the … club",
    "我加入了…俱乐部") or as ended ("I left the … club", "I let my … membership lapse",
    "我退出了…")."""
    member = (_MEMBER_ZH if chinese else _MEMBER_EN).search(sentence)
    if member:
        return [Statement(f"{MEMBERSHIP}:{_org_key(member.group('o'), chinese)}", "member")]
    joined = (_MEMBER_JOIN_ZH if chinese else _MEMBER_JOIN_EN).search(sentence)
    if joined and (chinese or _ORG_WORDS & set(joined.group("o").lower().split()) or "member" in sentence.lower()):
        return [Statement(f"{MEMBERSHIP}:{_org_key(joined.group('o'), chinese)}", "member")]
    ended = (_MEMBER_END_ZH if chinese else _MEMBER_END_EN).search(sentence)
    if ended and (chinese or "member" in sentence.lower() or _ORG_WORDS & set(ended.group("o").lower().split())):
        return [Statement(f"{MEMBERSHIP}:{_org_key(ended.group('o'), chinese)}", "", True)]
    lapsed = None if chinese else _MEMBER_LAPSE_EN.search(sentence)
    if lapsed:
        return [Statement(f"{MEMBERSHIP}:{_org_key(lapsed.group('o') or lapsed.group('p'), False)}", "", True)]
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
            return Statement(PARTNER, (groups.get("v") or groups.get("w") or "").lower())
    return None


def _org_key(org: str, chinese: bool) -> str:
    if chinese:
        return re.sub(r"(?:的)?会员.*$", "", org)
    org = re.sub(r"\bmembership\b", "", org)
    # a name, where the club has one, is the club ("the Ramblers" and "the Ramblers walking club")
    named = [w for w in re.findall(r"[A-Za-z][\w'’-]*", org) if w[0].isupper()]
    return " ".join(sorted(_english_stems(" ".join(named) if named else org)))


def _habit_words(obj: str, chinese: bool) -> frozenset[str]:
    if chinese:
        return frozenset(c for c in obj if c not in "了的我啦也就都还再")
    clause = _HABIT_STOP.split(obj, maxsplit=1)[0]
    return frozenset(list(_english_stems(clause))[:4]) if clause.strip() else frozenset()


def states_habit(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` states the habit of ``words`` (``Statement.words`` of an ended
    habit) as going on: it holds every one of them, in the first person, and neither asks
    nor says it stopped."""
    for sentence in _sentences(text):
        if asks(sentence):
            continue
        chinese = bool(re.search(r"[\u4e00-\u9fff]", sentence))
        if chinese:
            if "我" in sentence and words <= set(sentence) and not _HABIT_ZH.search(sentence):
                return True
        elif _FIRST_PERSON_EN.search(sentence) and not _HABIT_EN.search(sentence):
            stems = frozenset(stem_of(w) for w in re.findall(r"[a-z]+", sentence.lower()))
            if words <= stems:
                return True
    return False


def updates(new: Statement, old: Statement) -> bool:
    """Whether ``new`` (stated later) updates ``old`` (stated earlier, of the same speaker):
    the same attribute with another value; for a job, another title or another employer
    where both say one; a membership ended after it was stated, or stated again after it
    ended. The same value again is a restatement, not an update (Mem0's NOOP)."""
    if new.key != old.key:
        return False
    if new.key == PARTNER:
        if new.ended and old.ended:
            return False
        if new.ended != old.ended:
            return not (new.value and old.value and new.value != old.value)
        return bool(new.value and old.value and new.value != old.value)
    if new.key == JOB and new.ended != old.ended:
        return True
    if new.key == JOB:
        new_title, new_org = new.value.split("|")
        old_title, old_org = old.value.split("|")
        return bool(
            (new_title and old_title and new_title != old_title) or (new_org and old_org and new_org != old_org)
        )
    return new.ended != old.ended or new.value != old.value


_ASKS_RESIDENCE = re.compile(
    r"\b(?:do|did)\s+(?:I|we)\s+(?:live|reside)\b|\b(?:I|we)\s+(?:live|reside)\b|\b[Mm]y\s+(?:home|house|flat|apartment|address)\b|"
    r"\b(?:am\s+I|are\s+we)\s+(?:based|living|settled)\b|\b(?:I|we)\s+(?:move|moved|relocate|relocated)\b|"
    r"\b(?:which|what)\s+(?:city|town|country|place|neighbou?rhood|area|village)\s+(?:do|am|are|did)\s+(?:I|we)\b|"
    r"我(?:们)?现在在哪(?:个城市|里|儿)|"
    r"我(?:们)?(?:现在|目前)?(?:住|定居|搬)|我(?:们)?(?:的)?家(?:在|是)",
    re.IGNORECASE,
)
_ASKS_JOB = re.compile(
    r"\b[Mm]y\s+(?:job|work|occupation|profession|employer|company|role|position|career)\b|"
    r"\b(?:do|did)\s+I\s+(?:do\s+for\s+(?:a\s+)?(?:work|living)|work)\b|\bI\s+work\b|\bam\s+I\s+(?:still\s+)?(?:working|employed|retired|in\s+work)\b|"
    r"\bwhat\s+do\s+I\s+do\b|我(?:的)?(?:工作|职业|公司|单位|岗位)|我(?:现在)?(?:是)?(?:做|干)什么|我(?:在)?哪(?:里|儿|家公司|个公司)?(?:上班|工作)|我(?:还|现在)?在?(?:上班|工作)吗|我退休",
    re.IGNORECASE,
)
_ASKS_DOSE = re.compile(
    r"\b(?:dose|dosage|much|many|mg|mcg|strength|take|taking|on)\b|剂量|多少|毫克|几毫克|吃|用量", re.I
)
_ASKS_DIET = re.compile(
    r"\bdiet\b|\b(?:vegan|vegetarian|pescatarian|keto)\b|\beat\s+meat\b|吃素|饮食|素食|吃肉", re.IGNORECASE
)
_ASKS_PARTNER = re.compile(
    r"\b(?:boyfriend|girlfriend|partner|husband|wife|fianc[ée]e?|dating|married|single|engaged)\b|"
    r"男朋友|女朋友|男友|女友|老公|老婆|丈夫|妻子|对象|结婚|单身|恋爱",
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
    stems = frozenset(c for c in question if "\u4e00" <= c <= "\u9fff") if chinese else _english_stems(question)
    for statement in said:
        attribute, _, subject = statement.key.partition(":")
        if attribute == RESIDENCE and _ASKS_RESIDENCE.search(question):
            return True
        if attribute == JOB and _ASKS_JOB.search(question):
            return True
        if attribute == DIET and _ASKS_DIET.search(question):
            return True
        if attribute == PARTNER and _ASKS_PARTNER.search(question):
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
