"""Importers: LoCoMo, MemoryBank, JSONL chat logs, text/Markdown notes, format detection
and the errors a bad file gives. Pure parsing: no store, no models."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memcli.errors import BadInputError, UsageError
from memcli.formats.export import MAX_LINE_BYTES
from memcli.formats.importers import FORMATS, detect_format, parse_file, read_text
from memcli.memory import Kind

NOW = datetime(2024, 3, 1, 9, 30).timestamp()


def locomo_sample(sample_id: str = "conv-1", **sessions: Any) -> dict[str, Any]:
    """A LoCoMo sample; ``sessions`` maps ``session_N`` to (date_time, turns)."""
    conversation: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Bob"}
    for key, (date_time, turns) in sessions.items():
        if date_time is not None:
            conversation[f"{key}_date_time"] = date_time
        conversation[key] = turns
    return {"sample_id": sample_id, "conversation": conversation, "qa": []}


def turn(speaker: str, dia_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


def write_json(path: Path, data: Any, indent: int | None = 2) -> Path:
    path.write_text(json.dumps(data, indent=indent), encoding="utf-8")
    return path


def small_locomo(tmp_path: Path) -> Path:
    return write_json(
        tmp_path / "locomo.json",
        [
            locomo_sample(
                "conv-1",
                session_1=(
                    "1:56 pm on 8 May, 2023",
                    [
                        turn("Ann", "D1:1", "I adopted a puppy named Rex."),
                        turn("Bob", "D1:2", "Show me!", blip_caption="a photo of a small brown dog", img_url=["x"]),
                    ],
                ),
                session_2=("10:00 am on 25 May, 2023", [turn("Ann", "D2:1", "Rex learned to sit.")]),
            )
        ],
    )


# LoCoMo -------------------------------------------------------------------------


def test_locomo_turns_keep_session_date_time(tmp_path: Path) -> None:
    fmt, memories = parse_file(small_locomo(tmp_path), None, "ignored", NOW)
    assert fmt == "locomo"
    by_source = {m.source: m for m in memories}
    assert set(by_source) == {"D1:1", "D1:2", "D2:1"}
    session_1_start = datetime(2023, 5, 8, 13, 56).timestamp()
    assert by_source["D1:1"].day == "2023-05-08"
    assert by_source["D1:1"].created_at == pytest.approx(session_1_start)
    assert by_source["D1:2"].day == "2023-05-08"
    assert by_source["D2:1"].day == "2023-05-25"
    assert by_source["D2:1"].created_at == pytest.approx(datetime(2023, 5, 25, 10, 0).timestamp())


def test_locomo_turns_keep_order_within_a_session(tmp_path: Path) -> None:
    _, memories = parse_file(small_locomo(tmp_path), None, "ignored", NOW)
    by_source = {m.source: m for m in memories}
    assert by_source["D1:1"].created_at < by_source["D1:2"].created_at < by_source["D2:1"].created_at


def test_locomo_turn_keeps_speaker_dia_id_and_image_caption(tmp_path: Path) -> None:
    _, memories = parse_file(small_locomo(tmp_path), None, "ignored", NOW)
    shared = next(m for m in memories if m.source == "D1:2")
    assert shared.speaker == "Bob"
    assert shared.text == "Show me!"
    assert shared.caption == "a photo of a small brown dog"
    assert shared.kind == Kind.TURN.value
    assert shared.session == "session_1"
    assert "a photo of a small brown dog" in shared.index_text()
    assert next(m for m in memories if m.source == "D1:1").caption == ""


def test_locomo_user_is_the_sample_id_without_spaces(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "l.json",
        [locomo_sample("conv 7", session_1=("1:00 pm on 1 June, 2023", [turn("Ann", "D1:1", "hello")]))],
    )
    _, memories = parse_file(path, None, "someone-else", NOW)
    assert {m.user for m in memories} == {"conv7"}


def test_locomo_skips_sessions_without_turns(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "l.json",
        [
            locomo_sample(
                "conv-1",
                session_1=("1:00 pm on 1 June, 2023", [turn("Ann", "D1:1", "hello")]),
                session_2=(None, []),  # no turns and not even a date: skipped, not an error
                session_3=("2:00 pm on 3 June, 2023", []),
            )
        ],
    )
    _, memories = parse_file(path, None, "u", NOW)
    assert [m.source for m in memories] == ["D1:1"]
    assert {m.session for m in memories} == {"session_1"}


def test_locomo_conversation_option_keeps_one_sample(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "l.json",
        [
            locomo_sample("conv-1", session_1=("1:00 pm on 1 June, 2023", [turn("Ann", "D1:1", "first")])),
            locomo_sample("conv-2", session_1=("1:00 pm on 2 June, 2023", [turn("Cy", "D1:1", "second")])),
        ],
    )
    _, both = parse_file(path, None, "u", NOW)
    assert {m.user for m in both} == {"conv-1", "conv-2"}
    assert len({m.id for m in both}) == 2  # same dia_id in two conversations: two memories
    _, only = parse_file(path, None, "u", NOW, conversation="conv-2")
    assert [(m.user, m.text) for m in only] == [("conv-2", "second")]


def test_locomo_unknown_conversation_names_the_known_ones(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "l.json",
        [locomo_sample("conv-1", session_1=("1:00 pm on 1 June, 2023", [turn("Ann", "D1:1", "x")]))],
    )
    with pytest.raises(BadInputError, match="conv-1") as info:
        parse_file(path, None, "u", NOW, conversation="conv-99")
    assert "conv-99" in info.value.message


def test_locomo_real_file_conversation_26(locomo_file: Path) -> None:
    fmt, memories = parse_file(locomo_file, None, "u", NOW, conversation="conv-26")
    assert fmt == "locomo"
    assert len(memories) == 419
    assert {m.user for m in memories} == {"conv-26"}
    assert len({m.source for m in memories}) == 419
    first = next(m for m in memories if m.source == "D1:1")
    assert first.day == "2023-05-08"
    assert first.created_at == pytest.approx(datetime(2023, 5, 8, 13, 56).timestamp())
    assert first.session == "session_1"
    raw = json.loads(locomo_file.read_text(encoding="utf-8"))
    conv = next(c for c in raw if c["sample_id"] == "conv-26")["conversation"]
    captioned = [t for key, turns in conv.items() if isinstance(turns, list) for t in turns if t.get("blip_caption")]
    assert captioned
    by_source = {m.source: m for m in memories}
    for t in captioned:
        assert by_source[t["dia_id"]].caption == t["blip_caption"]
        assert by_source[t["dia_id"]].text == t["text"]


def test_locomo_turn_without_text_names_the_turn(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "l.json",
        [
            locomo_sample(
                "conv-1",
                session_1=(
                    "1:00 pm on 1 June, 2023",
                    [turn("Ann", "D1:1", "ok"), {"speaker": "Bob", "dia_id": "D1:2"}],
                ),
            )
        ],
    )
    with pytest.raises(BadInputError) as info:
        parse_file(path, None, "u", NOW)
    message = info.value.message
    assert str(path) in message
    assert "session_1" in message and "turn 2" in message and "text" in message


def test_locomo_session_without_date_names_the_session(tmp_path: Path) -> None:
    path = write_json(tmp_path / "l.json", [locomo_sample("conv-1", session_4=(None, [turn("Ann", "D4:1", "hi")]))])
    with pytest.raises(BadInputError, match="session_4"):
        parse_file(path, None, "u", NOW)


# MemoryBank ----------------------------------------------------------------------


def memorybank(tmp_path: Path) -> Path:
    return write_json(
        tmp_path / "mb.json",
        {
            "Ann Lee": {
                "name": "Ann Lee",
                "history": {
                    "2023-04-27": [
                        {"query": "I started learning the violin.", "response": "That is wonderful!"},
                        {"query": "My teacher is called Marta.", "response": "Nice to meet Marta."},
                    ],
                    "2023-05-02": [{"query": "I played my first song.", "response": "Congratulations!"}],
                },
                "summary": {},
            },
            "Bo": {"history": {"2023-05-01": [{"query": "I like tea.", "response": "Noted."}]}},
        },
    )


def test_memorybank_each_query_and_response_keeps_its_date(tmp_path: Path) -> None:
    fmt, memories = parse_file(memorybank(tmp_path), None, "ignored", NOW)
    assert fmt == "memorybank"
    by_text = {m.text: m for m in memories}
    assert len(memories) == 8
    assert by_text["I started learning the violin."].day == "2023-04-27"
    assert by_text["That is wonderful!"].day == "2023-04-27"
    assert by_text["I played my first song."].day == "2023-05-02"
    assert by_text["Congratulations!"].day == "2023-05-02"
    start = datetime(2023, 4, 27).timestamp()
    assert start <= by_text["I started learning the violin."].created_at < datetime(2023, 4, 28).timestamp()
    assert all(m.kind == Kind.TURN.value for m in memories)


def test_memorybank_user_is_the_name_without_spaces(tmp_path: Path) -> None:
    _, memories = parse_file(memorybank(tmp_path), None, "ignored", NOW)
    assert {m.user for m in memories} == {"AnnLee", "Bo"}
    by_text = {m.text: m for m in memories}
    assert by_text["I started learning the violin."].speaker == "Ann Lee"
    assert by_text["That is wonderful!"].speaker == "assistant"


def test_memorybank_keeps_query_before_response_and_pairs_in_order(tmp_path: Path) -> None:
    _, memories = parse_file(memorybank(tmp_path), None, "ignored", NOW)
    ann = sorted((m for m in memories if m.user == "AnnLee"), key=lambda m: m.created_at)
    assert [m.text for m in ann] == [
        "I started learning the violin.",
        "That is wonderful!",
        "My teacher is called Marta.",
        "Nice to meet Marta.",
        "I played my first song.",
        "Congratulations!",
    ]


def test_memorybank_bad_record_names_the_record(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "mb.json",
        {"Ann": {"history": {"2023-04-27": [{"query": "a", "response": "b"}, {"query": "c", "response": 7}]}}},
    )
    with pytest.raises(BadInputError) as info:
        parse_file(path, None, "u", NOW)
    message = info.value.message
    assert str(path) in message and "2023-04-27" in message and "record 2" in message and "response" in message


def test_memorybank_unreadable_date_names_it(tmp_path: Path) -> None:
    path = write_json(tmp_path / "mb.json", {"Ann": {"history": {"someday": [{"query": "a", "response": "b"}]}}})
    with pytest.raises(BadInputError, match="someday"):
        parse_file(path, None, "u", NOW)


# JSONL --------------------------------------------------------------------------


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_jsonl_reads_iso_and_unix_second_timestamps(tmp_path: Path) -> None:
    unix = datetime(2023, 5, 9, 8, 15, tzinfo=UTC).timestamp()
    path = write_jsonl(
        tmp_path / "log.jsonl",
        [
            {"role": "user", "content": "I moved to Lyon.", "timestamp": "2023-05-08T14:30:00"},
            {"role": "assistant", "content": "How exciting!", "timestamp": unix},
            {"role": "user", "content": "It rains a lot.", "timestamp": int(unix) + 60},
        ],
    )
    fmt, memories = parse_file(path, None, "alice", NOW)
    assert fmt == "jsonl"
    by_text = {m.text: m for m in memories}
    iso = by_text["I moved to Lyon."]
    assert iso.created_at == pytest.approx(datetime(2023, 5, 8, 14, 30).timestamp())
    assert iso.day == "2023-05-08"
    assert iso.speaker == "alice" and iso.user == "alice" and iso.kind == Kind.TURN.value
    assert by_text["How exciting!"].created_at == pytest.approx(unix)
    assert by_text["How exciting!"].day == datetime.fromtimestamp(unix).strftime("%Y-%m-%d")
    assert by_text["How exciting!"].speaker == "assistant"
    assert by_text["It rains a lot."].created_at == pytest.approx(int(unix) + 60)


def test_jsonl_keeps_line_number_and_session_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(
        json.dumps({"role": "user", "content": "one", "timestamp": "2023-01-01T10:00:00", "session": "s1"})
        + "\n\n"
        + json.dumps({"role": "user", "content": "two", "timestamp": "2023-01-01T10:01:00"})
        + "\n",
        encoding="utf-8",
    )
    _, memories = parse_file(path, None, "u", NOW)
    by_text = {m.text: m for m in memories}
    assert by_text["one"].source == "log.jsonl:1" and by_text["one"].session == "s1"
    assert by_text["two"].source == "log.jsonl:3" and by_text["two"].session == ""


def test_jsonl_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "log.jsonl",
        [
            {"role": "user", "content": "fine", "timestamp": "2023-01-01"},
            {"role": "user", "content": "fine too", "timestamp": "2023-01-02"},
            '{"role": "user", "content": "broken',
        ],
    )
    with pytest.raises(BadInputError) as info:
        parse_file(path, None, "u", NOW)
    assert f"{path}:3" in info.value.message


@pytest.mark.parametrize(
    ("record", "words"),
    [
        ({"role": "user", "timestamp": "2023-01-01"}, ["content"]),
        ({"content": "hi", "timestamp": "2023-01-01"}, ["role"]),
        ({"role": "user", "content": "hi"}, ["timestamp"]),
        ({"role": "user", "content": "hi", "timestamp": "not a date at all"}, ["not a date at all"]),
        ({"role": "user", "content": "   ", "timestamp": "2023-01-01"}, ["empty"]),
        (["user", "hi"], ["object"]),
    ],
)
def test_jsonl_bad_record_names_the_line(tmp_path: Path, record: Any, words: list[str]) -> None:
    path = write_jsonl(tmp_path / "log.jsonl", [{"role": "user", "content": "ok", "timestamp": "2023-01-01"}, record])
    with pytest.raises(BadInputError) as info:
        parse_file(path, None, "u", NOW)
    assert f"{path}:2" in info.value.message
    for word in words:
        assert word in info.value.message


def test_jsonl_timestamp_without_a_date_is_rejected(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "log.jsonl",
        [
            {"role": "user", "content": "ok", "timestamp": "2023-01-01T09:00:00"},
            {"role": "user", "content": "hi", "timestamp": "10:30"},
        ],
    )
    with pytest.raises(BadInputError, match=f"{path}:2"):
        parse_file(path, None, "u", NOW)


def test_jsonl_same_line_twice_is_one_memory(tmp_path: Path) -> None:
    record = {"role": "user", "content": "I like tea.", "timestamp": "2023-01-01T10:00:00"}
    path = write_jsonl(tmp_path / "log.jsonl", [record, record])
    _, memories = parse_file(path, None, "u", NOW)
    assert [m.text for m in memories] == ["I like tea."]


# text / Markdown ---------------------------------------------------------------------


def test_text_splits_into_one_note_per_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("My sister lives in Porto.\nShe is a nurse.\n\n\nI like green tea.\n", encoding="utf-8")
    fmt, memories = parse_file(path, None, "bob", NOW)
    assert fmt == "text"
    assert [m.text for m in memories] == ["My sister lives in Porto.\nShe is a nurse.", "I like green tea."]
    assert [m.source for m in memories] == ["notes.txt:1", "notes.txt:5"]
    assert all(m.kind == Kind.NOTE.value and m.user == "bob" for m in memories)


def test_text_notes_are_dated_when_imported(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("A note.\n", encoding="utf-8")
    _, [note] = parse_file(path, None, "u", NOW)
    assert note.created_at == NOW
    assert note.day == datetime.fromtimestamp(NOW).strftime("%Y-%m-%d")


def test_markdown_heading_is_joined_to_the_next_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Trip to Lyon\n\nWe ate at a bouchon.\n", encoding="utf-8")
    _, memories = parse_file(path, None, "u", NOW)
    assert len(memories) == 1
    assert "Trip to Lyon" in memories[0].text and "We ate at a bouchon." in memories[0].text
    assert "#" not in memories[0].text


def test_markdown_heading_directly_above_text_starts_a_new_section(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Trip\n\nWe went to Lyon.\n\n## Food\nCheese every day.\n", encoding="utf-8")
    _, memories = parse_file(path, None, "u", NOW)
    cheese = next(m for m in memories if "Cheese" in m.text)
    assert "Food" in cheese.text
    assert "Trip" not in cheese.text
    assert "#" not in cheese.text


def test_text_with_only_blank_lines_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Just a heading\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="notes.md"):
        parse_file(path, None, "u", NOW)


# detection ----------------------------------------------------------------------------


def test_format_is_detected_from_extension_and_content(tmp_path: Path) -> None:
    record = json.dumps({"role": "user", "content": "hi", "timestamp": "2023-01-01"})
    cases = {
        "a.jsonl": record + "\n" + record + "\n",
        "a.ndjson": record + "\n",
        "a.md": "# T\n\ntext\n",
        "a.txt": "{not json, but a .txt file is text}\n",
        "chatlog": record + "\n" + record.replace("hi", "ho") + "\n",  # no extension, JSON lines
        "plain": "just some words\n",
    }
    expected = {
        "a.jsonl": "jsonl",
        "a.ndjson": "jsonl",
        "a.md": "text",
        "a.txt": "text",
        "chatlog": "jsonl",
        "plain": "text",
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        assert detect_format(path, read_text(path)) == expected[name], name


def test_json_files_are_told_apart_by_shape(tmp_path: Path) -> None:
    locomo = small_locomo(tmp_path)
    mb = memorybank(tmp_path)
    assert detect_format(locomo, read_text(locomo)) == "locomo"
    assert detect_format(mb, read_text(mb)) == "memorybank"
    # the same content without a .json extension is still recognised
    bare = tmp_path / "export"
    bare.write_text(mb.read_text(encoding="utf-8"), encoding="utf-8")
    assert detect_format(bare, read_text(bare)) == "memorybank"


def test_json_of_unknown_shape_is_rejected(tmp_path: Path) -> None:
    path = write_json(tmp_path / "other.json", {"hello": [1, 2, 3]})
    with pytest.raises(BadInputError) as info:
        parse_file(path, None, "u", NOW)
    assert str(path) in info.value.message and "--format" in info.value.message


def test_one_line_json_chat_log_without_extension_is_detected_as_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "chat.log"
    path.write_text(json.dumps({"role": "user", "content": "hi", "timestamp": "2023-01-01"}) + "\n", encoding="utf-8")
    assert detect_format(path, read_text(path)) == "jsonl"


def test_explicit_format_overrides_detection(tmp_path: Path) -> None:
    path = tmp_path / "log.json"  # JSON lines in a .json file
    record = {"role": "user", "content": "hi", "timestamp": "2023-01-01"}
    write_jsonl(path, [record, {**record, "content": "again"}])
    fmt, memories = parse_file(path, "jsonl", "u", NOW)
    assert fmt == "jsonl" and [m.text for m in memories] == ["hi", "again"]
    fmt, memories = parse_file(path, "text", "u", NOW)
    assert fmt == "text" and len(memories) == 1


# errors ----------------------------------------------------------------------------------


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {\n    "sample_id": "conv-1",\n    "conversation": {,\n  }\n]\n', encoding="utf-8")
    with pytest.raises(BadInputError) as info:
        parse_file(path, None, "u", NOW)
    assert str(path) in info.value.message
    assert "line 4" in info.value.message


def test_malformed_json_with_explicit_format_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "Ann": {"history": {}}\n  "Bo": 1\n}\n', encoding="utf-8")
    with pytest.raises(BadInputError) as info:
        parse_file(path, "memorybank", "u", NOW)
    assert str(path) in info.value.message and "line 3" in info.value.message


@pytest.mark.parametrize(
    ("content", "word"),
    [
        (b"", "empty"),
        (b"  \n\n\t\n", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "binary"),
        (b"caf\xe9 au lait\n", "UTF-8"),
    ],
    ids=["empty", "whitespace", "binary", "latin-1"],
)
def test_unreadable_file_is_rejected_naming_it(tmp_path: Path, content: bytes, word: str) -> None:
    path = tmp_path / "input.json"
    path.write_bytes(content)
    with pytest.raises(BadInputError) as info:
        parse_file(path, None, "u", NOW)
    assert str(path) in info.value.message and word in info.value.message


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no such file"):
        parse_file(tmp_path / "nope.jsonl", None, "u", NOW)


def test_unknown_format_is_a_usage_error(tmp_path: Path) -> None:
    path = small_locomo(tmp_path)
    with pytest.raises(UsageError) as info:
        parse_file(path, "csv", "u", NOW)
    for name in FORMATS:
        assert name in info.value.message


def test_a_file_parses_to_the_same_ids_every_time(tmp_path: Path) -> None:
    for path in (small_locomo(tmp_path), memorybank(tmp_path)):
        _, first = parse_file(path, None, "u", NOW)
        _, second = parse_file(path, None, "u", NOW + 3600)
        assert [m.id for m in first] == [m.id for m in second]
    notes = tmp_path / "n.txt"
    notes.write_text("one\n\ntwo\n", encoding="utf-8")
    assert [m.id for m in parse_file(notes, None, "u", NOW)[1]] == [
        m.id for m in parse_file(notes, None, "u", NOW + 86400)[1]
    ]


def test_a_jsonl_line_over_the_bound_is_refused_naming_it_before_it_is_held(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    good = json.dumps({"role": "user", "content": "hi", "timestamp": "2024-01-01T10:00:00"})
    huge = json.dumps({"role": "user", "content": "x" * (MAX_LINE_BYTES + 1), "timestamp": "2024-01-01T10:00:00"})
    path.write_text(f"{good}\n{huge}\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=rf"log.jsonl:2: a line longer than {MAX_LINE_BYTES:,} bytes"):
        parse_file(path, None, "ana", 0.0)


def test_a_text_file_of_one_huge_line_is_read_in_pieces(tmp_path: Path) -> None:
    path = tmp_path / "one-line"
    path.write_text("word " * (MAX_LINE_BYTES // 4), encoding="utf-8")
    _, notes = parse_file(path, None, "ana", 0.0)
    assert notes and all(len(n.text) <= 1000 for n in notes)


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(BadInputError, match="not a regular file"):
        parse_file(fifo, None, "ana", 0.0)
