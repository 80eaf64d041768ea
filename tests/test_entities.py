"""The offline entity extractor and the model path's grounding (memcli.text.entities, issue 26)."""

from __future__ import annotations

import re

import pytest

from memcli.text import entities
from memcli.text.entities import (
    ENTITY_TYPES,
    RELATIONS,
    Extraction,
    GraphOutput,
    KnownNames,
    common_words,
    entity_type,
    extract,
    extraction_prompt,
    ground,
    normalise,
    turn_names,
)


def names(text: str, **kw: object) -> dict[str, str]:
    kw.setdefault("speaker", "Caroline")
    return {m.name: m.type for m in extract(text, **kw).mentions}  # type: ignore[arg-type]


def triples(text: str, **kw: object) -> set[tuple[str, str, str]]:
    kw.setdefault("speaker", "Caroline")
    return {(r.subject, r.relation, r.object) for r in extract(text, **kw).relations}  # type: ignore[arg-type]


def test_relation_table_is_declared_with_single_valued_kinds() -> None:
    for label in ("lives_in", "works_at", "partner", "wife", "husband", "age", "job_title", "birthday"):
        assert RELATIONS[label].single_valued, label
    for label in ("sister", "friend", "pet", "from", "attends"):
        assert not RELATIONS[label].single_valued, label
    for kind in RELATIONS.values():
        assert kind.subject in ENTITY_TYPES and kind.en and kind.zh


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Caroline's", "caroline"),
        ("ＭＥＬ", "mel"),
        ("Dr. Smith", "smith"),
        ("Mrs  Lee", "lee"),
        ("曼婷", "曼婷"),
        ("张伟先生", "张伟"),
        ("张老师", "张老师"),
    ],
)
def test_normalise_folds_case_width_possessives_and_honorifics(name: str, key: str) -> None:
    assert normalise(name) == key


def test_spans_point_at_the_names() -> None:
    text = "Then Melanie's sister Anna came by."
    for m in extract(text, speaker="Caroline").mentions:
        assert text[m.start : m.end] == m.name
    assert names(text) == {"Melanie": "person", "Anna": "person"}


@pytest.mark.parametrize(
    "text",
    [
        "Yesterday was fun.",
        "Thanks for the tips!",
        "I think so. Wow, great!",
        "Good to see you! Hope you're well.",
        "Monday I paint.",
    ],
)
def test_sentence_initial_capitals_and_pronouns_are_no_names(text: str) -> None:
    assert names(text) == {}


def test_a_sentence_initial_name_counts_when_known_elsewhere() -> None:
    assert names("Jon said hi.") == {}
    assert names("Jon said hi.", known=["Jon"]) == {"Jon": "person"}
    assert names("Anna called. I told Anna about it.") == {"Anna": "person"}


def test_greeting_words_are_stripped_from_a_name() -> None:
    assert names("Hey Melanie! How are you?") == {"Melanie": "person"}


def test_types_from_cues() -> None:
    found = names("I moved to Lisbon and now I work at Acme Inc with Jon. We went to Stanford University.")
    assert found == {
        "Lisbon": "place",
        "Acme Inc": "organisation",
        "Jon": "person",
        "Stanford University": "organisation",
    }


def test_quoted_titles_are_works_and_speech_is_not() -> None:
    found = names('I just read "The Great Gatsby" and she said "you are not alone" to me.')
    assert found == {"The Great Gatsby": "work"}
    assert names("I loved “Charlotte's Web” as a kid.") == {"Charlotte's Web": "work"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My sister Anna is visiting.", ("Caroline", "sister", "Anna")),
        ("This is Anna, my sister.", ("Caroline", "sister", "Anna")),
        ("Melanie's husband Tom cooked.", ("Melanie", "husband", "Tom")),
        ("Your friend Jon called.", ("Melanie", "friend", "Jon")),
        ("I live in Lisbon.", ("Caroline", "lives_in", "Lisbon")),
        ("Last year I moved to Porto.", ("Caroline", "lives_in", "Porto")),
        ("I'm from Sweden.", ("Caroline", "from", "Sweden")),
        ("I work at Google now.", ("Caroline", "works_at", "Google")),
        ("I work as a nurse.", ("Caroline", "job_title", "nurse")),
        ("My dog named Rex sleeps a lot.", ("Caroline", "pet", "Rex")),
        ("I adopted a cat named Luna.", ("Caroline", "pet", "Luna")),
        ("My birthday is May 5.", ("Caroline", "birthday", "May 5")),
        ("I am 32 years old.", ("Caroline", "age", "32")),
        ("I attend Stanford University.", ("Caroline", "attends", "Stanford University")),
    ],
)
def test_english_relation_patterns(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in triples(text, addressee="Melanie")


def test_relation_dates_come_from_the_text_or_its_day() -> None:
    (rel,) = extract("Yesterday I moved to Porto.", speaker="Jon", day="2023-05-08").relations
    assert rel.valid_from == "2023-05-07" and rel.evidence == "Yesterday I moved to Porto."
    (rel,) = extract("I moved to Porto in May 2021.", speaker="Jon").relations
    assert rel.valid_from == "2021-05"
    (rel,) = extract("I moved to Porto.", speaker="Jon").relations
    assert rel.valid_from is None


def test_third_persons_are_not_resolved() -> None:
    assert triples("She lives in Lisbon. His sister Anna came.") == set()


def test_vocative_short_name_is_an_alias_of_the_addressee() -> None:
    found = extract("Hey Mel! Good to see you!", speaker="Caroline", addressee="Melanie")
    assert found.aliases == (("Mel", "Melanie"),)


def test_call_me_and_full_english_names_give_aliases() -> None:
    found = extract("Please call me Jo. John Zhang and John came too.", speaker="Joanna", known=["John Zhang"])
    assert ("Jo", "Joanna") in found.aliases and ("John", "John Zhang") in found.aliases


def test_chinese_names_places_organisations_works_and_pets() -> None:
    text = "我叫张曼婷。我在阿里巴巴公司上班，周末和李华去了清华大学，还去了杭州。我的狗叫旺财。我在读《三体》。"
    found = {m.name: m.type for m in extract(text, speaker="张曼婷", addressee="AI伴侣").mentions}
    assert found == {
        "张曼婷": "person",
        "阿里巴巴公司": "organisation",
        "李华": "person",
        "清华大学": "organisation",
        "杭州": "place",
        "旺财": "pet",
        "三体": "work",
    }


def test_chinese_given_name_is_an_alias_of_the_full_name() -> None:
    assert ("曼婷", "张曼婷") in extract("曼婷今天很开心。", speaker="张曼婷", known=["张曼婷"]).aliases
    assert ("曼婷", "张曼婷") in extract("我叫张曼婷，朋友们叫我曼婷。", speaker="张曼婷").aliases


@pytest.mark.parametrize(
    ("text", "speaker", "addressee"),
    [
        ("Please call me Jo. John Zhang and John came too.", "Joanna", None),
        ("Max and I saw Oscar at the Grand Canyon yesterday.", "Melanie", "Caroline"),
        ("Hey Mel! Caroline said hi.", "Caroline", "Melanie"),
        ("曼婷今天很开心，李华也来了。", "张曼婷", "AI伴侣"),
    ],
)
def test_known_names_made_once_extract_what_the_names_themselves_do(
    text: str, speaker: str, addressee: str | None
) -> None:
    """A ``KnownNames`` made once for many texts gives each text the same extraction as
    the list of names it was made from, also among many other names."""
    known = [
        "John Zhang",
        "Caroline",
        "Melanie",
        "Max",
        "Oscar",
        "张曼婷",
        "李华",
        *[f"Name{i} Other{i}" for i in range(300)],
    ]
    assert extract(text, speaker=speaker, addressee=addressee, known=KnownNames.of(known)) == extract(
        text, speaker=speaker, addressee=addressee, known=known
    )
    assert KnownNames.of(known).fulls["曼婷"] == ["张曼婷"] and KnownNames.of(known).fulls["John"] == ["John Zhang"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我妹妹叫张曼丽。", ("张曼婷", "sister", "张曼丽")),
        ("我妈妈王芳很喜欢做饭。", ("张曼婷", "mother", "王芳")),
        ("我住在北京。", ("张曼婷", "lives_in", "北京")),
        ("我上个月搬到上海了。", ("张曼婷", "lives_in", "上海")),
        ("我来自成都。", ("张曼婷", "from", "成都")),
        ("我在阿里巴巴公司上班。", ("张曼婷", "works_at", "阿里巴巴公司")),
        ("我的狗叫旺财。", ("张曼婷", "pet", "旺财")),
        ("我的生日是5月3日。", ("张曼婷", "birthday", "5月3日")),
        ("我今年二十五岁。", ("张曼婷", "age", "25")),
        ("我是一名护士。", ("张曼婷", "job_title", "护士")),
    ],
)
def test_chinese_relation_patterns(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in triples(text, speaker="张曼婷")


def test_every_name_occurs_in_the_text() -> None:
    text = "Hey Mel! My sister Anna moved to Lisbon. I work at Acme Inc. 我的狗叫旺财。"
    found = extract(text, speaker="Caroline", addressee="Melanie")
    for m in found.mentions:
        assert m.name in text
    for r in found.relations:
        assert r.subject in text or r.subject in ("Caroline", "Melanie")
        assert r.object in text


def test_ground_drops_names_the_text_does_not_hold() -> None:
    reply = GraphOutput.model_validate(
        {
            "entities": [{"name": "Lisbon", "type": "place"}, {"name": "Paris", "type": "place"}],
            "relations": [
                {"subject": "Caroline", "relation": "lives_in", "object": "Lisbon", "valid_from": "2023-05-07"},
                {"subject": "Caroline", "relation": "lives_in", "object": "Paris"},
                {"subject": "Bob", "relation": "friend", "object": "Caroline"},
            ],
            "aliases": [{"alias": "Caro", "name": "Caroline"}],
        }
    )
    grounded = ground(reply, "Caroline: I moved to lisbon last week.", speakers=["Caroline"])
    assert isinstance(grounded, Extraction)
    assert [(m.name, m.type) for m in grounded.mentions] == [("lisbon", "place")]
    assert [(r.subject, r.object, r.valid_from) for r in grounded.relations] == [("Caroline", "Lisbon", "2023-05-07")]
    assert grounded.aliases == ()


def test_the_prompt_names_every_relation_label() -> None:
    prompt = extraction_prompt("Caroline: I live in Lisbon.", ["Caroline", "Melanie"])
    assert all(label in prompt for label in RELATIONS) and "Caroline: I live in Lisbon." in prompt
    assert "relations" in GraphOutput.model_json_schema()["properties"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Last weekend I went to Yuntai Mountain.", ("Caroline", "visited", "Yuntai Mountain")),
        ("We traveled to Xiamen recently.", ("Caroline", "visited", "Xiamen")),
        ('I just read "The Great Gatsby" again.', ("Caroline", "read", "The Great Gatsby")),
        ('I watched "Kung Fu Hustle" last night.', ("Caroline", "watched", "Kung Fu Hustle")),
        ("We got another cat named Bailey too.", ("Caroline", "pet", "Bailey")),
        ("上周末我去了一次云台山。", ("Caroline", "visited", "云台山")),
        ("最近我读了《局外人》、《飘》和《时间的礼物》等书籍。", ("Caroline", "read", "飘")),
        ("我们看了一部文艺片，叫做《出租车司机》。", ("Caroline", "watched", "出租车司机")),
        ("我在腾讯上班。", ("Caroline", "works_at", "腾讯")),
    ],
)
def test_visits_readings_and_viewings(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in triples(text)


@pytest.mark.parametrize(
    "text",
    [
        "If you live in Beijing, go to Tianjin.",
        "Do you live in Paris?",
        "I don't live in Paris.",
        "I want to move to Paris.",
        "我没去过厦门。",
        "如果你住在北京，可以去天津。",
        "你住在北京吗？",
    ],
)
def test_questions_wishes_conditions_and_denials_state_no_relation(text: str) -> None:
    assert triples(text, addressee="Melanie") == set()


def test_the_assistants_own_statements_give_no_relation() -> None:
    assert triples("我最近在读一本叫做《1984》的小说。", speaker="assistant", addressee="李雪") == set()


def test_common_words_that_start_with_a_surname_are_no_names() -> None:
    found = {m.name for m in extract("谢谢你，孙悦！你的技艺很高超。", speaker="assistant", addressee="孙悦").mentions}
    assert found == {"孙悦"}


def test_chinese_names_cut_in_pieces_before_a_head_noun() -> None:
    found = {
        m.name: m.type
        for m in extract("我去的是绿禾公园，我妹妹在星光中学读书。周末去了城市公园。", speaker="x").mentions
    }
    assert found == {"绿禾公园": "place", "星光中学": "organisation"}


def test_places_from_pinyin_lists_and_the_gazetteer() -> None:
    found = names(
        "You could go to Tianjin or Qingdao, or nearby places like Huangshan, Yangshuo, and Zhangjiajie. I love Sweden."
    )
    assert found == {p: "place" for p in ("Tianjin", "Qingdao", "Huangshan", "Yangshuo", "Zhangjiajie", "Sweden")}


def test_known_names_are_written_capitalised_more_than_in_lower_case() -> None:
    turns = ["Sounds great, Caroline!", "That sounds fun. Caroline, Sounds good.", "It sounds nice, Sounds."]
    assert set(turn_names(turns)) == {"Caroline"}
    assert names("Sounds great!", known=turn_names(turns)) == {}


def test_entity_type_prefers_a_cued_type_over_the_default() -> None:
    mentions = [*extract("Luna and Oliver are sweet.", speaker="x", known=["Luna", "Oliver"]).mentions]
    mentions += extract("Oliver, my cat, sleeps.", speaker="x", known=["Oliver"]).mentions
    assert entity_type(m for m in mentions if m.key == "oliver") == "pet"
    assert entity_type([]) == "person"


def test_common_words_are_no_names_alone_unless_known() -> None:
    turns = ["See you soon!", "I'd love to see it.", "We see each other at the City Hall.", "Jill, see you!"]
    common = common_words(turns)
    assert "see" in common
    assert names("Sounds great, See you soon!", common=common) == {}
    assert names("Sounds great, Jill!", common=common, known=turn_names(turns)) == {"Jill": "person"}


@pytest.mark.parametrize(
    "text",
    [
        "My German Shepherds and two Chihuahua mixes love it.",
        "I learned a new dish called Mapo Tofu.",
        "I play RPGs and buy CDs.",
        "Bon Voyage!",
    ],
)
def test_breeds_dishes_plural_acronyms_and_set_phrases_are_no_names(text: str) -> None:
    assert names(text) == {}


def test_a_possessive_cuts_a_run_unless_a_place_word_follows() -> None:
    assert names("It is like Tokyo's Times Square and McGee's Pub.") == {
        "Tokyo": "place",
        "Times Square": "place",
        "McGee's Pub": "organisation",
    }


def test_runs_go_on_over_initials_titles_and_small_words() -> None:
    found = names("I read George R. R. Martin, heard Dr. Dre and love The Lord of the Rings a lot.")
    assert set(found) == {"George R. R. Martin", "Dr. Dre", "The Lord of the Rings"}


def test_games_are_works_by_their_cues() -> None:
    assert names("I've been playing my favourite game called Apex Legends with friends.") == {"Apex Legends": "work"}


def test_an_apposition_is_not_a_list_nor_the_addressee() -> None:
    assert triples("My girlfriend, Toby and I are going camping.", speaker="Andrew", known=["Toby"]) == set()
    assert (
        triples("Sorry about your friend, Deb. That is hard.", speaker="Jolene", addressee="Deborah", known=["Deb"])
        == set()
    )
    assert ("Andrew", "sister", "Anna") in triples("This is my sister, Anna.", speaker="Andrew", known=["Anna"])


def test_kinship_takes_no_date_from_the_sentence() -> None:
    (rel,) = extract(
        "Last year we went out for my daughter Sara's birthday.", speaker="John", day="2023-05-08"
    ).relations
    assert (rel.relation, rel.object, rel.valid_from) == ("daughter", "Sara", None)


def test_chinese_foreign_names_joined_by_a_middle_dot() -> None:
    found = {m.name for m in extract("我喜欢泰勒·斯威夫特和艾德·希兰等等歌手。", speaker="x").mentions}
    assert found == {"泰勒·斯威夫特", "艾德·希兰"}


@pytest.mark.parametrize(
    "text",
    [
        "将切好的胡萝卜放入锅中。",
        "你可以把握机会，向前走去。",
        "重视技术和道德的平衡。",
        "是一家新兴的互联网公司。",
        "过了一段时间。",
    ],
)
def test_chinese_common_words_are_no_names(text: str) -> None:
    assert extract(text, speaker="x").mentions == ()


def test_ground_keeps_an_offline_extraction_that_the_text_holds() -> None:
    text = "Hey Mel! My sister Anna moved to Lisbon."
    found = extract(text, speaker="Caroline", addressee="Melanie")
    assert ground(found, text, speakers=["Caroline", "Melanie"]).relations == found.relations


def test_extraction_reads_a_long_text_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear in the text: no search of the whole text per word (which made a 200 KB note
    take minutes) and no relation that reads a sentence without end again and again."""
    text = " ".join(f"Alice met Bob{i} in Paris and my sister Carol{i} called" for i in range(400))
    scans = 0
    real_search, real_finditer = re.search, re.finditer

    def counting(real):  # noqa: ANN001, ANN202
        def call(pattern, string, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            nonlocal scans
            scans += isinstance(string, str) and len(string) > 5_000
            return real(pattern, string, *args, **kwargs)

        return call

    monkeypatch.setattr(entities.re, "search", counting(real_search))
    monkeypatch.setattr(entities.re, "finditer", counting(real_finditer))
    extract(text, speaker="Dana")
    assert scans < 50, scans


def test_a_sentence_without_end_is_read_in_bounded_pieces() -> None:
    text = "and then " * 2000 + "my sister Carol moved to Paris"
    found = extract(text, speaker="Dana")
    assert all(len(r.evidence) <= entities.LONGEST_SENTENCE for r in found.relations)


# Typing by context (issue 33 item 6): cases of tests/data/entity_types/dev.jsonl ---------------


@pytest.mark.parametrize(
    "text, name, kind",
    [
        ("I moved to Lisbon with my husband Rui in March.", "Rui", "person"),  # not pinyin of a place
        ("Watched a film with Aisha tonight.", "Aisha", "person"),
        ("Signed up at PureGym in Manchester today.", "PureGym", "organisation"),  # a brand's inner capital
        ("Signed up at PureGym in Manchester today.", "Manchester", "place"),
        ("Lunch with Tomasz at Dishoom today.", "Dishoom", "organisation"),
        ("Joined the Riverside Running Club last week.", "Riverside Running Club", "organisation"),
        ("Took the kids to Hampstead Heath on Sunday afternoon.", "Hampstead Heath", "place"),
        ("Appointment with Dr Okafor on Friday about my knee.", "Dr Okafor", "person"),
        ("Flight to Dublin on Thursday morning.", "Dublin", "place"),
        ("Call Marcus back about the flat in Leeds.", "Marcus", "person"),
        ("下个月和朋友李娜一起去成都旅游。", "李娜", "person"),
        ("下个月和朋友李娜一起去成都旅游。", "成都", "place"),
        ("我的狗豆豆今天生病了。", "豆豆", "pet"),
    ],
)
def test_a_name_is_typed_by_its_context(text: str, name: str, kind: str) -> None:
    assert names(text, speaker="Sam").get(name) == kind


@pytest.mark.parametrize("text", ["Appointment with Dr Okafor on Friday.", "Flight to Dublin on Thursday morning."])
def test_a_day_after_a_name_is_not_part_of_it(text: str) -> None:
    assert not any(re.search(r"Friday|Thursday", n) for n in names(text, speaker="Sam"))


def test_a_possessive_after_at_is_someones_home_not_an_organisation() -> None:
    assert names("Dinner at Anna's tonight.", speaker="Sam").get("Anna") == "person"
