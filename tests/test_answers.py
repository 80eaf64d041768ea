"""Answers grounded in memory (issue 22): on a base model without a chat template, ``ask``
quotes the recalled sentence that answers (who said it, when, its relative dates
resolved against the memory's date) or says that none does; ``answers = llm`` asks the
model; a user without memories in a store of others is an error naming the closest."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cli_checks import assert_error, ok
from conftest import Given
from fakes.models import TemplatelessModel
from typer.testing import CliRunner

from memcli.cli import app
from memcli.errors import ExitCode
from memcli.memory import Memory
from memcli.recall.answers import (
    NOT_FOUND,
    NOT_FOUND_ZH,
    answer,
    asks_nothing_in_particular,
    question_type,
    resolve_relative_dates,
)

SAID_AT = "2023-05-08T13:56:00"
CONVERSATION = [
    ("Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("Melanie", "Hey Caroline! I'm swamped with the kids and work. What's up with you?"),
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's cool! I painted a lake sunrise last year, it was so calming."),
    ("Caroline", "I'm keen on counseling and working in mental health."),
    ("Melanie", "My kids and I went camping in the mountains last week."),
]


@pytest.fixture
def base_model(fake_model: Any) -> Any:
    """The scripted fake, as a base model: ``answers = auto`` answers extractively."""
    Given.set(Given.embedder, TemplatelessModel(fake_model))
    return fake_model


def import_conversation(
    runner: CliRunner, tmp_path: Path, turns: list[tuple[str, str]], user: str, at: str = SAID_AT
) -> None:
    path = tmp_path / f"{len(turns)}-{abs(hash(user))}.jsonl"
    path.write_text(
        "\n".join(json.dumps({"role": who, "content": text, "timestamp": at}) for who, text in turns), encoding="utf-8"
    )
    ok(runner.invoke(app, ["import", str(path), "--format", "jsonl", "--user", user]))


def ask(runner: CliRunner, question: str, *options: str) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["ask", question, "--json", *options])).stdout)


def test_ask_on_a_base_model_quotes_the_sentence_with_its_speaker_and_yesterday_resolved(
    runner: CliRunner, base_model: Any, tmp_path: Path
) -> None:
    import_conversation(runner, tmp_path, CONVERSATION, "conv-26")
    data = ask(runner, "When did Caroline go to the LGBTQ support group?", "--user", "conv-26")
    assert data["answered_by"] == "extractive"
    assert data["answer"].startswith(
        'Caroline said on Monday 8 May 2023: "I went to a LGBTQ support group yesterday [Sunday 7 May 2023]'
    )
    support = next(m["id"] for m in data["memories"] if "support group" in m["text"])
    assert data["cited"] == [support] and f"[{support[:8]}]" in data["answer"]
    assert base_model.prompts == []  # the model was not asked


def test_last_week_and_last_year_are_resolved_against_the_memorys_date() -> None:
    said = datetime(2023, 5, 8, 13, 56).timestamp()
    assert (
        resolve_relative_dates("We went camping last week.", said)
        == "We went camping last week [the week of 1 May 2023]."
    )
    assert resolve_relative_dates("I painted it last year.", said) == "I painted it last year [2022]."
    assert resolve_relative_dates("Two days ago I ran.", said) == "Two days ago [Saturday 6 May 2023] I ran."
    assert resolve_relative_dates("Nothing dated here.", said) == "Nothing dated here."


def test_a_question_nothing_recalled_answers_says_so_and_cites_nothing(
    runner: CliRunner, base_model: Any, tmp_path: Path
) -> None:
    import_conversation(runner, tmp_path, CONVERSATION, "conv-26")
    data = ask(runner, "What is the name of my sister's violin teacher?", "--user", "conv-26")
    assert data["answer"] == NOT_FOUND and data["cited"] == []
    assert data["memories"]  # recalled, but none answers


def test_chinese_question_gets_a_chinese_answer_with_shang_zhou_er_resolved(
    runner: CliRunner, base_model: Any, tmp_path: Path
) -> None:
    turns = [
        ("张伟", "我上周二去了西湖公园散步，风景很美。"),
        ("assistant", "听起来很惬意！"),
        ("张伟", "我最近在学做红烧肉，练了好多遍。"),
    ]
    import_conversation(runner, tmp_path, turns, "张伟")
    data = ask(runner, "我什么时候去的西湖公园？", "--user", "张伟")
    assert data["answer"].startswith("你在2023年5月8日说：“我上周二［2023年5月2日］去了西湖公园散步")
    assert len(data["cited"]) == 1
    assert "红烧肉" in ask(runner, "我在学做什么菜？", "--user", "张伟")["answer"]
    assert ask(runner, "我妹妹喜欢什么颜色？", "--user", "张伟")["answer"] == NOT_FOUND_ZH


def test_a_note_is_quoted_as_the_users_own() -> None:
    said = datetime(2024, 2, 1, 9, 0).timestamp()
    note = Memory("n" * 16, "sam", "note", "Sister's birthday: 4 March. She likes tulips.", said, "2024-02-01")
    found = answer("When is my sister's birthday?", [note], "sam")
    assert found.text == 'You noted on Thursday 1 February 2024: "Sister\'s birthday: 4 March." [nnnnnnnn]'
    assert found.cited == [note.id]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When did we meet?", "when"),
        ("Where do I live?", "where"),
        ("Who gave me the book?", "who"),
        ("What is my job?", "what"),
        ("我什么时候去的？", "when"),
        ("我住在哪里？", "where"),
        ("谁送我的书？", "who"),
        ("我做什么工作？", "what"),
    ],
)
def test_question_type(question: str, kind: str) -> None:
    assert question_type(question) == kind


def test_answers_llm_asks_the_model_even_when_it_has_no_chat_template(
    runner: CliRunner, base_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_conversation(runner, tmp_path, CONVERSATION, "conv-26")
    monkeypatch.setenv("MEMCLI_ANSWERS", "llm")
    base_model.replies = ["Last week."]
    data = ask(runner, "When did Caroline go to the LGBTQ support group?", "--user", "conv-26")
    assert data["answer"].strip() == "Last week." and data["answered_by"] == "llm"
    assert (
        base_model.prompts and base_model.prompts[-1][-1].content == "When did Caroline go to the LGBTQ support group?"
    )


def test_answers_auto_uses_a_chat_capable_model(runner: CliRunner, fake_model: Any, tmp_path: Path) -> None:
    import_conversation(runner, tmp_path, CONVERSATION, "conv-26")
    fake_model.replies = ["On 7 May 2023."]
    assert ask(runner, "When did Caroline go to the LGBTQ support group?", "--user", "conv-26")["answered_by"] == "llm"


def test_an_unknown_user_is_not_found_naming_the_closest(runner: CliRunner, base_model: Any, tmp_path: Path) -> None:
    """``ask`` for a user without memories is an error, never an answer; so is ``recall``
    (exit 6, naming the closest users, as ``ask`` does)."""
    import_conversation(runner, tmp_path, CONVERSATION, "conv-26")
    import_conversation(runner, tmp_path, CONVERSATION[:2], "conv-30")
    line = assert_error(runner.invoke(app, ["ask", "--user", "conv26", "support group?"]), ExitCode.NOT_FOUND)
    assert "no user 'conv26'" in line and "did you mean conv-26" in line
    line = assert_error(runner.invoke(app, ["ask", "--user", "nobody", "What is my name?"]), ExitCode.NOT_FOUND)
    assert "conv-26, conv-30" in line
    assert base_model.prompts == []
    line = assert_error(
        runner.invoke(app, ["recall", "--user", "conv26", "support group?", "--json"]), ExitCode.NOT_FOUND
    )
    assert "no user 'conv26'" in line and "did you mean conv-26" in line


def test_a_new_user_can_still_be_written_and_an_empty_store_recalls_nothing(
    runner: CliRunner, base_model: Any, tmp_path: Path
) -> None:
    assert json.loads(ok(runner.invoke(app, ["recall", "anything", "--json"])).stdout) == []
    assert ask(runner, "Where do I live?")["answer"] == NOT_FOUND
    import_conversation(runner, tmp_path, CONVERSATION, "conv-26")
    ok(runner.invoke(app, ["remember", "I live in Lisbon", "--user", "sam"]))
    assert "Lisbon" in ask(runner, "Where do I live?", "--user", "sam")["answer"]


def test_chinese_words_meet_by_their_characters() -> None:
    said = datetime(2023, 4, 28, 21, 0).timestamp()
    turn = Memory(
        "m" * 16,
        "姚国栋",
        "turn",
        "恩，谢谢你的鼓励。除此之外，今天我还学了一道新的菜，毛血旺，味道还不错。",
        said,
        "2023-04-28",
        speaker="姚国栋",
    )
    found = answer("我什么时候学会做毛血旺的？", [turn], "姚国栋")  # 学会 in the question, 学 in the turn
    assert (
        found.text
        == "你在2023年4月28日说：“除此之外，今天［2023年4月28日］我还学了一道新的菜，毛血旺，味道还不错。” [mmmmmmmm]"
    )


def test_a_whole_day_question_is_answered_from_that_days_event_summary() -> None:
    said = datetime(2025, 5, 2, 20, 0).timestamp()
    summary = Memory(
        "d" * 16,
        "sam",
        "event_daily",
        "Sam: I adopted a dog called Rex.\nSam: We planned a trip to Porto.",
        said,
        "2025-05-02",
    )
    other = Memory("e" * 16, "sam", "event_daily", "Sam: I painted the fence.", said + 86400, "2025-05-03")
    turn = Memory("t" * 16, "sam", "turn", "I adopted a dog called Rex.", said, "2025-05-02", speaker="sam")
    now = datetime(2025, 5, 10, 9, 0).timestamp()
    for question in ("What did we talk about on May 2nd?", "What happened on 2 May?", "5月2日我们聊了什么？"):
        found = answer(question, [turn, other, summary], "sam", now)
        assert found.cited == [summary.id], question
        assert "Porto" in found.text and "Rex" in found.text
    # one thing on that day is still answered from the memory that holds it
    assert answer("What dog did I adopt on May 2nd?", [turn, other, summary], "sam", now).cited != [other.id]


def test_ask_brings_the_days_summary_for_a_whole_day_question(
    runner: CliRunner, base_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_conversation(runner, tmp_path, CONVERSATION, "Caroline")
    monkeypatch.setenv("MEMCLI_NOW", "2023-05-20T09:00:00")
    ok(runner.invoke(app, ["consolidate", "-q", "--user", "Caroline"]))
    summaries = [
        m
        for m in json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--user", "Caroline", "--json"])).stdout)
        if m["kind"] == "event_daily"
    ]
    assert len(summaries) == 1
    data = ask(runner, "What did we talk about on May 8th?", "--user", "Caroline")
    assert data["answered"] is True
    assert data["cited"] == [summaries[0]["id"]]


def test_a_day_of_the_month_alone_and_list_kinds_are_matched() -> None:
    def note(letter: str, text: str, day: datetime, speaker: str = "", kind: str = "note") -> Memory:
        return Memory(letter * 16, "sam", kind, text, day.timestamp(), f"{day:%Y-%m-%d}", speaker=speaker)

    now = datetime(2025, 5, 14, 9, 0).timestamp()
    bought = [
        note("a", "Bought a new kettle at the market.", datetime(2025, 3, 12, 10)),
        note("b", "Bought a lamp online.", datetime(2025, 5, 9, 10)),
        note("c", "在超市买了牛奶。", datetime(2025, 5, 9, 11)),
    ]
    assert answer("What did I buy on the 9th?", bought, "sam", now).cited == ["b" * 16]
    assert answer("我9号买了什么？", bought, "sam", now).cited == ["c" * 16]
    advice = [
        note("r", "You should read Dune by Frank Herbert.", datetime(2025, 1, 3, 10), "assistant", "turn"),
        note("s", "I'd also recommend The Left Hand of Darkness.", datetime(2025, 1, 4, 10), "assistant", "turn"),
        note("t", "I went to the cinema.", datetime(2025, 1, 5, 10)),
    ]
    assert answer("Which books did you recommend?", advice, "sam", now).cited == ["r" * 16, "s" * 16]
    spoken = [
        note("f", "I speak French.", datetime(2024, 1, 1)),
        note("g", "I've started speaking Spanish at work too.", datetime(2025, 1, 1)),
    ]
    assert answer("Which languages do I speak?", spoken, "sam", now).cited == ["f" * 16, "g" * 16]


def test_a_question_about_one_person_is_not_answered_from_what_another_said() -> None:
    said = datetime(2023, 5, 8, 13, 0).timestamp()
    melanie = Memory(
        "m" * 16, "conv-26", "turn", "I play clarinet every evening.", said, "2023-05-08", speaker="Melanie"
    )
    caroline = Memory(
        "c" * 16, "conv-26", "turn", "I started running last month.", said, "2023-05-08", speaker="Caroline"
    )
    assert not answer("What does Caroline play in the evening?", [melanie, caroline], "conv-26", said).answered
    assert answer("What does Melanie play in the evening?", [melanie, caroline], "conv-26", said).cited == [melanie.id]


def _note(letter: str, text: str, day: datetime) -> Memory:
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")


def test_a_memory_holding_only_the_common_words_of_the_question_is_not_quoted() -> None:
    now = datetime(2025, 4, 10, 9).timestamp()
    neighbour = _note("n", "Our neighbour at number 14 had a parcel delivered for us again.", datetime(2025, 3, 3))
    licence = _note("l", "Renewed my driving licence online, took ten minutes.", datetime(2025, 4, 2))
    found = answer("What is my passport number?", [neighbour, licence], "sam", now)
    assert not found.answered and found.cited == []


def test_what_follows_a_question_in_the_same_memory_is_not_the_answer() -> None:
    now = datetime(2025, 5, 1, 9).timestamp()
    asked = _note("q", "What's my blood type again? I never remember.", datetime(2025, 4, 1))
    card = _note("c", "Blood donor card came in the post — my type is O negative.", datetime(2025, 4, 20))
    found = answer("What's my blood type?", [asked, card], "sam", now)
    assert found.cited == [card.id] and "O negative" in found.text


def test_a_dated_question_is_answered_only_from_a_memory_of_that_day() -> None:
    now = datetime(2026, 3, 20, 9).timestamp()
    before = _note("a", "Bought milk, bread and loo roll at Tesco.", datetime(2026, 3, 2, 18))
    after = _note("b", "Bought eggs at the farmers' market again.", datetime(2026, 3, 16, 10))
    for question in ("What did I buy on March 9th?", "What did I buy on the 9th?"):
        found = answer(question, [before, after], "sam", now)
        assert not found.answered and found.cited == [], question
    milk = _note("c", "在超市买了牛奶。", datetime(2026, 3, 2, 18))
    for question in ("我3月9日买了什么？", "我9号买了什么？"):
        found = answer(question, [milk], "sam", now)
        assert not found.answered and found.cited == [], question
    market = _note("m", "Bought sourdough and two jars of honey at the farmers' market.", datetime(2026, 3, 9, 11))
    assert answer("What did I buy on March 9th?", [after, before, market], "sam", now).cited == [market.id]


def test_a_note_that_says_yesterday_tells_of_the_day_before_it() -> None:
    now = datetime(2025, 6, 25, 9).timestamp()
    lunch = _note("l", "Had lunch with Jade yesterday at that Vietnamese place.", datetime(2025, 6, 13, 20))
    later = _note("t", "Lunch with Tom from work, just sandwiches in the park.", datetime(2025, 6, 19, 13))
    found = answer("Who did I have lunch with on 12 June?", [later, lunch], "sam", now)
    assert found.cited == [lunch.id] and "Jade" in found.text


def test_a_list_question_gathers_every_memory_that_holds_an_item_quoting_each_whole() -> None:
    now = datetime(2025, 5, 1, 9).timestamp()
    planted = [
        _note("p", "Allotment: put in two rows of early potatoes.", datetime(2025, 3, 22)),
        _note("b", "Sowed broad beans along the back fence at the allotment.", datetime(2025, 4, 6)),
        _note("r", "Neighbour on plot 12 gave me rhubarb crowns, planted them by the shed.", datetime(2025, 4, 19)),
        _note("w", "Bought a new pair of wellies.", datetime(2025, 4, 20)),
    ]
    found = answer("What have I planted at the allotment so far?", planted, "sam", now)
    assert found.cited == ["p" * 16, "b" * 16, "r" * 16]
    allergies = [
        _note("a", "Allergy clinic confirmed I'm allergic to penicillin.", datetime(2024, 2, 2)),
        _note("s", "Ate a satay by mistake — definitely allergic to peanuts.", datetime(2024, 9, 9)),
    ]
    assert answer("What am I allergic to?", allergies, "sam", now).cited == ["a" * 16, "s" * 16]
    dogs = [
        _note("d", "Biscuit chewed through the sofa cushion again. Naughty dog.", datetime(2024, 3, 15)),
        _note("e", "We adopted a second dog today, a greyhound called Pepper.", datetime(2025, 4, 1)),
    ]
    found = answer("What are my dogs called?", dogs, "sam", now)
    assert "Biscuit" in found.text and "Pepper" in found.text


def test_the_memory_that_holds_the_words_outranks_a_higher_recalled_one_that_does_not() -> None:
    now = datetime(2025, 6, 1, 9).timestamp()
    words = _note("w", "I applied to two adoption agencies this week.", datetime(2023, 8, 23))
    close = _note("c", "I passed the adoption agency interviews last Friday.", datetime(2023, 10, 22))
    found = answer("When did I apply to adoption agencies?", [close, words], "sam", now)
    assert found.cited == [words.id]


def test_a_question_about_what_happened_on_a_day_quotes_every_statement_of_that_day() -> None:
    now = datetime(2024, 3, 20, 19).timestamp()
    before = _note("a", "Dentist, a filling on the lower left.", datetime(2024, 3, 8, 17))
    gran = _note("g", "Took Gran to the garden centre, she bought three geraniums.", datetime(2024, 3, 9, 15))
    asked = _note("q", "Should I repaint the shed this spring?", datetime(2024, 3, 9, 18))
    film = _note("f", "Watched a film with Sam in the evening.", datetime(2024, 3, 9, 22))
    after = _note("c", "Car wash and hoovered the car.", datetime(2024, 3, 10, 11))
    memories = [after, film, gran, asked, before]
    for question in ("What did I do on March 9th?", "What was I doing on Saturday the 9th of March?"):
        found = answer(question, memories, "sam", now)
        assert found.cited == [gran.id, film.id], question
        assert "Saturday 9 March 2024" in found.text and "garden centre" in found.text and "film" in found.text
    # a note of the next day that says "yesterday" tells of that day
    wallet = _note("w", "Lost my wallet on the bus yesterday, reported it.", datetime(2024, 3, 11, 9))
    assert answer("What happened on the 10th of March?", [wallet, after], "sam", now).cited == [after.id, wallet.id]
    zh = [
        _note("b", "去银行办了房贷提前还款", datetime(2025, 6, 2, 12)),
        _note("t", "带女儿去儿童医院看牙", datetime(2025, 6, 3, 12)),
        _note("h", "部门聚餐 火锅", datetime(2025, 6, 4, 12)),
    ]
    found = answer("我上周二干嘛了？", zh, "sam", datetime(2025, 6, 9, 9).timestamp())
    assert found.cited == ["t" * 16] and "看牙" in found.text
    # a day with real content words keeps the content test, on that day only
    assert not answer("What did I buy on March 9th?", [film, after], "sam", now).answered


def test_a_memory_naming_the_kind_of_thing_asked_for_answers_without_the_questions_words() -> None:
    now = datetime(2025, 3, 1, 9).timestamp()
    job = _note("j", "Started at Monzo today, the onboarding is good.", datetime(2024, 11, 4, 18))
    notice = _note("n", "handed in my notice today", datetime(2024, 10, 1, 18))
    found = answer("Which company do I work for?", [job, notice], "sam", now)
    assert found.cited == [job.id] and "Monzo" in found.text
    assert answer("Who do I work for now?", [job, notice], "sam", now).cited == [job.id]
    moved = _note("m", "Finally settled in Denver, unpacked the last box.", datetime(2024, 6, 4, 20))
    assert answer("What city am I living in?", [moved, notice], "sam", now).cited == [moved.id]
    club = _note("c", "Left the running club. Signed up to The Depot climbing wall instead.", datetime(2025, 1, 15))
    found = answer("Which club do I belong to now?", [club], "sam", now)
    assert found.cited == [club.id] and "The Depot" in found.text
    # asked whether it still holds, the sentence that says it ended answers by itself
    assert answer("Am I still in the running club?", [club], "sam", now).text.count('"') == 2
    assert "The Depot" not in answer("Am I still in the running club?", [club], "sam", now).text
    zh = _note("z", "终于搬进苏州的新家了，房东人挺好。", datetime(2025, 2, 15))
    assert answer("我现在住在哪个城市？", [zh], "sam", now).cited == [zh.id]


def test_a_memory_naming_the_kind_asked_for_does_not_answer_when_it_is_someone_elses_or_far_down() -> None:
    now = datetime(2024, 6, 20, 11).timestamp()
    kids = _note("k", "kids' dentist is Dr Okafor at Smile Studio", datetime(2024, 5, 9))
    brush = _note("b", "electric toothbrush heads x4", datetime(2024, 5, 12))
    assert not answer("Which dentist am I registered with?", [kids, brush], "sam", now).answered
    plate = _note("p", "帮老爸记一下他的车牌：浙A3K72M", datetime(2025, 4, 12))
    assert not answer("我的车牌是哪个？", [plate], "sam", now).answered
    neighbour = _note("n", "我的邻居住在14号。", datetime(2025, 1, 5))
    assert not answer("我的护照号码是多少？", [neighbour], "sam", now).answered
    # far down the recalled memories, a place named in passing does not answer (a memory that
    # states the home, "Finally settled in Denver", answers wherever it ranks: updates.answers_asked)
    flew = _note("m", "Flew back from Denver, unpacked the last box.", datetime(2024, 6, 4, 20))
    others = [_note(str(i), f"Ordered {i} boxes of tea.", datetime(2024, 6, 1 + i)) for i in range(1, 4)]
    assert not answer("What city am I living in?", [*others, flew], "sam", now).answered
    park = _note("w", "我上周二去了西湖公园散步，风景很美。", datetime(2024, 6, 1))
    assert not answer("我妹妹喜欢什么颜色？", [park], "sam", now).answered
    # a question of another kind is not answered by the kind of thing a memory names
    assert not answer("What's my blood type?", [flew], "sam", now).answered


def test_a_memory_of_someone_elses_thing_does_not_answer_a_question_about_the_users_own() -> None:
    now = datetime(2025, 2, 1, 9).timestamp()
    ellie = _note("e", "Ellie's passport expires in March - renew!", datetime(2025, 1, 6))
    assert not answer("When does my passport expire?", [ellie], "sam", now).answered
    assert answer("When does Ellie's passport expire?", [ellie], "sam", now).cited == [ellie.id]
    mine = _note("m", "My passport expires in 2031, renewed it last year.", datetime(2025, 1, 7))
    assert answer("When does my passport expire?", [ellie, mine], "sam", now).cited == [mine.id]
    dad = _note("d", "Dad's old manager from the plant came to the funeral, Bill, lovely man", datetime(2025, 1, 15))
    assert not answer("What's my manager's name?", [dad], "sam", now).answered


def test_a_participant_of_the_conversation_is_not_the_thing_a_which_question_asks_for() -> None:
    said = datetime(2023, 7, 15, 13).timestamp()
    text = "Wow, Mel, that sounds awesome! Exploring nature and family time is so special."
    caroline = Memory("c" * 16, "conv-26", "turn", text, said, "2023-07-15", speaker="Caroline")
    melanie = Memory("m" * 16, "conv-26", "turn", "We went hiking as a family.", said, "2023-07-15", speaker="Melanie")
    question = "Which classical musicians does Caroline enjoy listening to?"
    assert not answer(question, [caroline, melanie], "conv-26").answered


def test_what_a_contraction_or_a_possessive_leaves_is_not_a_word_the_memory_must_hold() -> None:
    """A question such as "Where's my passport?" asks for "passport", not for the "s" the
    tokenizer leaves of "Where's": the statement answers, and the person's own question
    beside it does not."""
    now = datetime(2024, 3, 25, 9).timestamp()
    asked = _note("q", "where the hell did I put my passport?? flight in 2 wks", datetime(2024, 3, 20, 9))
    put = _note("p", "put passport in the blue folder, bottom desk drawer", datetime(2024, 3, 1, 9))
    found = answer("Where's my passport?", [asked, put], "sam", now)
    assert found.cited == [put.id] and "blue folder" in found.text
    birthday = _note("b", "Sarah: birthday 17 Oct, she wants nothing fancy", datetime(2024, 5, 1, 9))
    assert answer("When's Sarah's birthday?", [birthday], "sam", now).cited == [birthday.id]


def test_a_list_question_gathers_the_items_recall_finds_as_close_as_the_one_holding_its_words() -> None:
    """Of "Which restaurants did I want to try?", "must try Dishoom" holds the question's words; "Padella - fresh pasta" and "Bao in
    Soho" do not, but recall finds them as close to it (cosine similarity); a chore far
    from it is not an item."""
    now = datetime(2024, 5, 5, 12).timestamp()
    notes = [
        _note("d", "must try Dishoom", datetime(2024, 3, 3)),
        _note("p", "Padella - fresh pasta, queue early", datetime(2024, 3, 9)),
        _note("b", "someone at work said Bao in Soho is amazing", datetime(2024, 4, 1)),
        _note("t", "tax return", datetime(2024, 4, 2)),
    ]
    similarity = {"d" * 16: 0.28, "p" * 16: 0.30, "b" * 16: 0.29, "t" * 16: -0.01}
    found = answer("Which restaurants did I want to try?", notes, "sam", now, similarity)
    assert found.cited == ["d" * 16, "p" * 16, "b" * 16]
    assert answer("Which restaurants did I want to try?", notes, "sam", now).cited == ["d" * 16]


def test_a_place_is_not_what_something_is_called() -> None:
    """A question such as "What are my dogs called?" asks for names: "I moved from Leeds to York" names places,
    and is no item of the answer."""
    now = datetime(2025, 5, 1, 9).timestamp()
    notes = [
        _note("d", "My dog Biscuit loves the beach.", datetime(2024, 4, 1)),
        _note("m", "I moved from Leeds to York.", datetime(2024, 9, 1)),
        _note("e", "We adopted a second dog called Pepper.", datetime(2025, 1, 1)),
    ]
    found = answer("What are my dogs called?", notes, "sam", now)
    assert found.cited == ["d" * 16, "e" * 16]


def test_whether_a_habit_still_holds_is_answered_by_its_stopping_in_other_words() -> None:
    """Of "Do I still go jogging?", "still" is no word the memory must hold, and running is
    jogging; caffeine is coffee."""
    now = datetime(2024, 7, 1, 7).timestamp()
    ran = _note("r", "morning run 5k, 28 min, legs heavy", datetime(2024, 3, 2))
    stopped = _note("s", "knees are done. no more running for me, gonna try swimming", datetime(2024, 5, 19))
    ran = Memory(**{**ran.__dict__, "superseded_by": stopped.id})
    found = answer("Do I still go jogging?", [ran, stopped], "sam", now)
    assert found.cited == [stopped.id] and "no more running" in found.text
    flat_whites = _note("f", "3 flat whites a day is too many lol", datetime(2024, 8, 1))
    caffeine = _note("c", "gave up caffeine completely - headaches on day 3 are brutal", datetime(2024, 9, 10))
    found = answer("Am I still drinking coffee?", [flat_whites, caffeine], "sam", now)
    assert found.cited == [caffeine.id]


def test_a_chinese_word_joined_to_a_pronoun_is_held_as_its_other_characters() -> None:
    """The question "我车停哪儿了？" asks about 车 and 停 (jieba cuts "我车" and "儿"), and a note kept by
    asking to remember it ("帮我记一下…") answers."""
    now = datetime(2024, 4, 6, 22, 30).timestamp()
    parked = _note("p", "车停在B2层C区45号", datetime(2024, 4, 6, 10))
    ticket = _note("t", "电影票取票码 8841", datetime(2024, 4, 6, 11))
    asked = _note("q", "我的车停在哪了？？", datetime(2024, 4, 6, 22))
    assert answer("我车停哪儿了？", [asked, ticket, parked], "sam", now).cited == [parked.id]
    kept = _note("k", "帮我记一下车停在B2层C区", datetime(2024, 4, 6, 10))
    assert answer("我车停哪儿了？", [asked, ticket, kept], "sam", now).cited == [kept.id]


def test_a_question_about_nothing_in_particular_is_told_apart_without_a_prior_call() -> None:
    assert asks_nothing_in_particular("What did I do on ?")
    assert asks_nothing_in_particular("我干嘛了？")
    assert not asks_nothing_in_particular("What did I buy on ?")


def test_the_chinese_kind_words_are_read_whole_as_the_segmenter_reads_them() -> None:
    """``_kind_words`` keeps a Chinese kind word whole without segmenting it: sound only while
    jieba reads each as one word, which this checks."""
    from memcli.recall.answers import _CODE_KIND_WORDS, _COUNTED_KIND_WORDS, _NAME_KIND_WORDS, _VALUE_KIND_WORDS
    from memcli.text.lexical import has_cjk, tokens

    for listed in (_VALUE_KIND_WORDS, _COUNTED_KIND_WORDS, _NAME_KIND_WORDS, _CODE_KIND_WORDS):
        for word in listed.split():
            if has_cjk(word):
                assert tokens(word) == [word]
