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

RESIDENCE, JOB, DOSE, DIET, MEMBERSHIP, HABIT = "residence", "job", "dose", "diet", "membership", "habit"
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
        "住在",
        "搬",
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
        "当",
        "做",
        "是一名",
    ),
    DOSE: ("mg", "mcg", "µg", "unit", "毫克", "微克", "单位"),
    DIET: ("vegan", "vegetarian", "pescatarian", "pescetarian", "flexitarian", "keto", "diet", "素", "吃肉"),
    MEMBERSHIP: ("member", "会员", "退出", "取消"),
    HABIT: (),
}
"""Lower-case substrings that every text stating an attribute holds (at least one): what
the store is searched for before the rules read the candidates (``statements``). Kept as
narrow as the rules: each candidate costs a parse, and a needle such as "live" finds every
"olive" and "deliver" of a 10,000-memory user."""

_PLACE = r"(?P<v>[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,2})"
_RESIDENCE_EN = [
    re.compile(
        r"\b(?:I|[Ww]e)(?:'m|'re|\s+am|\s+are)?\s+(?:now\s+|still\s+|currently\s+)?(?:living|live|reside)\s+in\s+"
        + _PLACE
    ),
    re.compile(
        r"\b(?:I|[Ww]e)(?:'ve|\s+have|\s+had)?\s+(?:just\s+|recently\s+|finally\s+|now\s+)?(?:moved|relocated)(?:\s+house)?"
        r"(?:\s+from\s+[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?)?\s+to\s+" + _PLACE
    ),
    re.compile(r"\b[Mm]y\s+(?:home|house|flat|apartment)\s+is\s+in\s+" + _PLACE),
    re.compile(r"\b(?:house|flat|home|apartment)\s+in\s+" + _PLACE + r"\s+and\s+moved\b"),
    re.compile(r"\bI\s+(?:rent|own)\s+(?:a|an)\s+(?:flat|house|room|apartment)\s+in\s+" + _PLACE),
]
_ZH_VALUE = r"(?P<v>[\u4e00-\u9fff]{2,6}?)"
_ZH_END = r"(?:了|啦|住|生活|工作|定居)?(?:[。，,.！!；;]|$)"
_RESIDENCE_ZH = [
    re.compile(r"我(?:们)?(?:现在|目前|一直)?住在" + _ZH_VALUE + _ZH_END),
    re.compile(
        r"我(?:们)?(?:上个月|上周|去年|今年|最近|刚刚|刚|已经|终于|现在)?(?:搬家|搬)(?:到|去)了?" + _ZH_VALUE + _ZH_END
    ),
]
_ROLE = r"(?P<t>[a-z][a-z-]+(?:\s+(?!at\b|for\b|in\b|with\b|on\b)[a-z][a-z-]+)?)"
_ORG = r"(?P<o>(?:the\s+)?[A-Z][\w'’&-]+(?:\s+[A-Z][\w'’&-]+){0,3})"
_JOB_EN = [
    re.compile(r"\bI\s+(?:now\s+)?work\s+(?:as\s+(?:a|an)\s+" + _ROLE + r"(?:\s+(?:at|for|in)\s+" + _ORG + r")?)"),
    re.compile(r"\bI\s+(?:now\s+|still\s+)?work\s+(?:at|for)\s+" + _ORG + r"(?:\s+as\s+(?:a|an)\s+" + _ROLE + r")?"),
    re.compile(r"\bI(?:'m|\s+am)\s+(?:now\s+)?(?:a|an)\s+" + _ROLE + r"\s+(?:at|for|with)\s+" + _ORG),
    re.compile(
        r"\b(?:I\s+(?:started|got|have|took|accepted)|I've\s+(?:started|got)|my)\s+(?:a\s+)?new\s+job\s+as\s+(?:a|an)\s+"
        + _ROLE
        + r"(?:\s+(?:at|for|with)\s+(?:the\s+)?"
        + _ORG.replace("(?:the\\s+)?", "")
        + r")?"
    ),
    re.compile(r"\b(?:and|but|I)\s+now\s+work\s+(?:at|for)\s+" + _ORG),
    re.compile(r"\bI\s+joined\s+" + _ORG + r"\s+as\s+(?:a|an)\s+" + _ROLE),
]
_NOT_ROLES = frozenset(
    "big huge little bit fan member part lot couple few bit good great new real total bad mess pretty very".split()
)
_JOB_ZH = [
    re.compile(
        r"(?:我|，|,)(?:现在|目前)?在(?P<o>[\u4e00-\u9fff]{2,10}?)(?:做|当|担任)(?P<t>[\u4e00-\u9fff]{2,4}?)" + _ZH_END
    ),
    re.compile(r"我(?:现在|目前)?(?:是一名|当上了|当了|当)(?P<t>[\u4e00-\u9fff]{2,4}?)" + _ZH_END),
]
_UNIT = r"(?P<u>mg|mcg|µg|micrograms?|milligrams?|units?|iu|IU)"
_DOSE_EN = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s?" + _UNIT + r"\b", re.IGNORECASE)
_DOSE_ZH = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s?(?P<u>毫克|微克|mg|单位)")
_DRUG = re.compile(
    r"^[a-z]{4,}(?:pril|statin|olol|sartan|formin|azole|cillin|mycin|cycline|pine|xine|prazole|tidine|zepam|zolam|"
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
    "nurse cardiologist endocrinologist pharmacist every each per with from now tablet tablets pill pills".split()
)
_ZH_DOSE_VERBS = re.compile(
    r"(?:加到了?|增加到了?|减到了?|减少到了?|降到了?|调到了?|调整到了?|改成了?|改为|换成了?|到了?)$"
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
]
_DIET_ZH = [
    (re.compile(r"我(?:现在|目前|一直)?(?:是素食者|吃素|是素食主义者)"), "vegetarian"),
    (re.compile(r"我(?:现在|目前)?(?:是纯素食者|吃纯素)"), "vegan"),
    (re.compile(r"我(?:现在)?(?:又)?开始吃肉"), "omnivore"),
]
_MEMBER_EN = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:now\s+|still\s+)?(?:a\s+)?member\s+of\s+(?:the\s+)?(?P<o>[^,.;!?]{3,60})"
)
_MEMBER_END_EN = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+)?(?:cancelled|canceled|ended|quit|left|stopped)\s+(?:my\s+|the\s+|our\s+)?"
    r"(?P<o>[^,.;!?]{3,60}?)(?:\s+membership)?(?:\s+(?:last|this|in|on|after|because)\b[^,.;!?]*)?(?:[,.;!?]|$)"
)
_MEMBER_ZH = re.compile(r"我(?:现在)?是(?P<o>[\u4e00-\u9fff]{2,12}?)的?会员")
_MEMBER_END_ZH = re.compile(
    r"我(?:已经)?(?:退出了?|取消了?|退了)(?P<o>[\u4e00-\u9fff]{2,12}?)(?:的?会员(?:资格)?)?(?:[。，,.！!]|$)"
)
_ORG_WORDS = frozenset("club gym society group team choir league association union library class circle".split())
_HABIT_EN = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:(?:stopped|quit|given\s+up|gave\s+up|cut\s+out)\s+|no\s+longer\s+|don't\s+(?=\w+\b.*\banymore))"
    r"(?!by\b|at\b|in\b|for\b|to\b|with\b|my\s+job\b)(?P<o>[^,.;!?]{2,60})"
)
_HABIT_STOP = re.compile(
    r"\b(?:in|on|at|last|this|since|after|before|because|and|but|so|when|for|anymore|any\s+more|a\s+while|ago|now|"
    r"completely|altogether|entirely|for\s+good|yesterday|today)\b"
)
_HABIT_ZH = re.compile(
    r"我(?:已经|现在)?(?:不再|戒掉了?|戒了|戒)(?P<o>[\u4e00-\u9fff]{1,6}?)(?:了|啦)?(?:[。，,.！!]|$)"
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


def _medicine(sentence: str, match: re.Match[str]) -> str:
    """The medicine a dose of ``sentence`` is of: a word of a drug's ending or a known one,
    else the word just before the number ("lisinopril 10 mg") or after it ("50 mcg of X")."""
    words = re.findall(r"[A-Za-z][A-Za-z-]+", sentence)
    for word in words:
        lower = word.lower()
        if lower in _KNOWN_DRUGS or _DRUG.match(lower):
            return lower
    before = re.findall(r"[A-Za-z][A-Za-z-]+", sentence[: match.start()])
    if before and before[-1].lower() not in _NOT_DRUGS:
        return before[-1].lower()
    after = re.match(r"\s+of\s+([A-Za-z][A-Za-z-]+)", sentence[match.end() :])
    if after and after.group(1).lower() not in _NOT_DRUGS:
        return after.group(1).lower()
    return ""


def _zh_medicine(sentence: str, match: re.Match[str]) -> str:
    run = re.search(r"[\u4e00-\u9fff]+$", sentence[: match.start()])
    if not run:
        return ""
    name = _ZH_DOSE_VERBS.sub("", run.group(0))
    name = re.split(r"吃|服用|服|用|打|把|的", name)[-1]
    return name if 2 <= len(name) <= 8 else ""


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?。！？；;])\s*", text) if s.strip()]


def statements(text: str) -> list[Statement]:
    """The attributes ``text`` states of its speaker (``Statement``), at most one per key,
    in text order; none for a text that asks (``asks``) or a sentence not in the first
    person."""
    found: dict[str, Statement] = {}
    for sentence in _sentences(text):
        if asks(sentence):
            continue
        chinese = bool(re.search(r"[\u4e00-\u9fff]", sentence))
        if not chinese and not _FIRST_PERSON_EN.search(sentence):
            continue
        if chinese and "我" not in sentence:
            continue
        for statement in _sentence_statements(sentence, chinese):
            found.setdefault(statement.key, statement)
    return list(found.values())


def _sentence_statements(sentence: str, chinese: bool) -> list[Statement]:
    out: list[Statement] = []
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
    dose = (_DOSE_ZH if chinese else _DOSE_EN).search(sentence)
    if dose:
        medicine = (_zh_medicine if chinese else _medicine)(sentence, dose)
        if medicine:
            unit = dose.group("u").lower().rstrip("s")
            out.append(Statement(f"{DOSE}:{medicine}", f"{float(dose.group('n')):g} {unit}"))
    if chinese:
        for pattern, value in _DIET_ZH:
            if pattern.search(sentence):
                out.append(Statement(DIET, value))
                break
    else:
        for pattern in _DIET_EN:
            m = pattern.search(sentence)
            if m:
                out.append(Statement(DIET, m.group("v").lower()))
                break
    member = (_MEMBER_ZH if chinese else _MEMBER_EN).search(sentence)
    ended = (_MEMBER_END_ZH if chinese else _MEMBER_END_EN).search(sentence)
    if member:
        out.append(Statement(f"{MEMBERSHIP}:{_org_key(member.group('o'), chinese)}", "member"))
    elif ended and (chinese or "member" in sentence.lower() or _ORG_WORDS & set(ended.group("o").lower().split())):
        out.append(Statement(f"{MEMBERSHIP}:{_org_key(ended.group('o'), chinese)}", "", True))
    habit = (_HABIT_ZH if chinese else _HABIT_EN).search(sentence)
    if habit and not any(s.key.startswith(MEMBERSHIP) for s in out):
        words = _habit_words(habit.group("o"), chinese)
        if words:
            out.append(Statement(f"{HABIT}:{' '.join(sorted(words))}", "", True, words))
    return out


def _org_key(org: str, chinese: bool) -> str:
    if chinese:
        return re.sub(r"(?:的)?会员.*$", "", org)
    return " ".join(sorted(_english_stems(re.sub(r"\bmembership\b", "", org))))


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
    if new.key == JOB:
        new_title, new_org = new.value.split("|")
        old_title, old_org = old.value.split("|")
        return bool(
            (new_title and old_title and new_title != old_title) or (new_org and old_org and new_org != old_org)
        )
    return new.ended != old.ended or new.value != old.value
