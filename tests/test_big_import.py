"""Big inputs: long texts are chunked before they are embedded, imports are stored in
batches (an interrupted one keeps every committed batch and a re-run stores the rest),
``--progress`` prints lines when stderr is not a terminal, and Ctrl-C says what it kept.
Memory that does not grow with the file is measured (docs/import.md), not tested."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_checks import ok
from conftest import FakeEmbedder
from typer.testing import CliRunner

from memcli.cli import app, root
from memcli.errors import BadInputError, ExitCode
from memcli.formats import importers
from memcli.formats.importers import parse_file
from memcli.library import engine_models as engine
from memcli.paths import resolve_paths
from memcli.text.chunking import MAX_CHARS, chunks, size
from memcli.transport import local
from memcli.transport.client import Handlers, ServiceClient, client_env

NOW = 1_700_000_000.0


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


# chunking -----------------------------------------------------------------------------


def test_a_text_that_fits_is_one_chunk() -> None:
    assert list(chunks("  I moved to Lyon in 2021.\n")) == ["I moved to Lyon in 2021."]


@pytest.mark.parametrize(
    "text",
    [
        "\n\n".join(
            f"Paragraph {p}. " + " ".join(f"Sentence {s} of paragraph {p} is here." for s in range(30))
            for p in range(20)
        ),
        "One endless sentence without a full stop " * 2000,
        "我们今天去了公园，天气很好。" * 500,
        "没有标点也没有空格的很长的中文文本" * 400,
        "x" * 5000 + " and then some words.\n\nA second paragraph.",
    ],
    ids=["paragraphs", "no-sentence-end", "chinese", "chinese-no-punctuation", "one-long-word"],
)
def test_chunks_respect_the_limit_and_lose_nothing(text: str) -> None:
    parts = list(chunks(text))
    assert len(parts) > 1
    assert all(0 < size(part) <= MAX_CHARS for part in parts)
    assert squeezed("".join(parts)) == squeezed(text)


def test_chinese_chunks_count_each_character_as_a_word_piece() -> None:
    parts = list(chunks("我们今天去了公园，天气很好。" * 500))
    assert max(len(part) for part in parts) <= MAX_CHARS // 4


def test_a_run_without_sentence_ends_is_cut_between_words() -> None:
    words = [f"word{i}" for i in range(3000)]
    parts = list(chunks(" ".join(words)))
    assert [w for part in parts for w in part.split()] == words


def test_paragraphs_are_cut_before_sentences() -> None:
    first = "Alpha is first. " * 40  # 640 characters
    second = "Beta comes next. " * 40  # 680 characters: both do not fit in one chunk
    parts = list(chunks(first + "\n\n" + second))
    assert parts == [first.strip(), second.strip()]


# importing long texts ---------------------------------------------------------------------


def long_paragraph(words: int = 1200) -> str:
    return " ".join(f"On day {i} I walked to the river." if i % 7 == 0 else f"word{i}" for i in range(words))


def test_a_long_paragraph_is_imported_as_ordered_chunks_with_one_source(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    body = long_paragraph()
    path.write_text(f"# Walks\n\nA short note.\n\n{body}\n", encoding="utf-8")
    _, memories = parse_file(path, None, "u", NOW)
    short, *parts = memories
    assert short.text == "Walks: A short note."
    assert len(parts) > 1 and all(size(m.text) <= MAX_CHARS for m in parts)
    assert all(m.text.startswith("Walks: ") for m in parts)
    assert squeezed("".join(m.text.removeprefix("Walks: ") for m in parts)) == squeezed(body)
    assert {m.source for m in parts} == {"notes.md:5"}
    assert [m.created_at for m in parts] == sorted(m.created_at for m in parts) and len(
        {m.created_at for m in parts}
    ) == len(parts)
    _, again = parse_file(path, None, "u", NOW + 60)
    assert [m.id for m in again] == [m.id for m in memories]


def test_a_long_paragraph_repeating_a_chunk_keeps_both(tmp_path: Path) -> None:
    sentence = "The same sentence again and again for a while. "
    path = tmp_path / "notes.txt"
    path.write_text(sentence * 60 + "\n", encoding="utf-8")
    _, parts = parse_file(path, None, "u", NOW)
    assert len(parts) > 2 and len({m.id for m in parts}) == len(parts)
    assert squeezed("".join(m.text for m in parts)) == squeezed(sentence * 60)


def test_a_long_jsonl_message_is_chunked_into_turns(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    content = long_paragraph(800)
    path.write_text(
        json.dumps({"role": "user", "content": content, "timestamp": "2024-01-02T10:00:00"}) + "\n", encoding="utf-8"
    )
    _, parts = parse_file(path, None, "u", NOW)
    assert len(parts) > 1 and all(m.speaker == "u" and m.source == "log.jsonl:1" for m in parts)
    assert squeezed("".join(m.text for m in parts)) == squeezed(content)


def test_a_huge_paragraph_is_read_in_pieces_and_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importers, "LINE_PIECE", 100)  # bytes: lines come in parts, CJK characters cut between them
    monkeypatch.setattr(importers, "PARAGRAPH_HELD", 3000)
    english = long_paragraph(3000)
    chinese = "我们今天去了公园，天气很好。" * 300
    path = tmp_path / "notes.txt"
    path.write_text(f"{english}\n{english[:500]}\n\n{chinese}\n", encoding="utf-8")
    _, memories = parse_file(path, None, "u", NOW)
    assert all(size(m.text) <= MAX_CHARS for m in memories)
    assert squeezed("".join(m.text for m in memories)) == squeezed(english + english[:500] + chinese)
    assert {m.source for m in memories} == {"notes.txt:1", "notes.txt:4"}
    _, again = parse_file(path, None, "u", NOW)
    assert [m.id for m in again] == [m.id for m in memories]


def test_a_bad_byte_in_a_line_read_in_pieces_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importers, "LINE_PIECE", 64)
    path = tmp_path / "notes.txt"
    path.write_bytes("é".encode() * 150 + b"\xff rest\n")
    with pytest.raises(BadInputError, match="byte 300"):
        parse_file(path, None, "u", NOW)


def test_remember_of_a_long_note_stores_and_prints_each_chunk(runner: CliRunner, fake_embedder: FakeEmbedder) -> None:
    text = long_paragraph()
    result = ok(runner.invoke(app, ["remember", text]))
    ids = result.stdout.split()
    assert len(ids) > 1 and "remembered as" in result.stderr
    by_time = json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout)[::-1]  # newest first, reversed
    assert [m["id"] for m in by_time] == ids
    assert squeezed("".join(m["text"] for m in by_time)) == squeezed(text)
    again = json.loads(ok(runner.invoke(app, ["remember", text, "--json"])).stdout)
    assert again["ids"] == ids and again["added"] is False


# streaming in batches, Ctrl-C -----------------------------------------------------------------


class InterruptingEmbedder(FakeEmbedder):
    """The fake embedder; its call number ``at`` (from 1) raises KeyboardInterrupt, as
    Ctrl-C in the middle of embedding a batch does. Its vectors are the fake's."""

    identity = FakeEmbedder.__name__

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def embed(self, texts: Any, batch_size: int = 64, progress: Any = None) -> list[list[float]]:
        if self.calls + 1 == self.at:
            self.calls += 1
            raise KeyboardInterrupt
        return super().embed(texts, batch_size, progress)


def notes_file(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("\n\n".join(f"Note number {i} about the garden." for i in range(count)) + "\n", encoding="utf-8")
    return path


def stored_ids(runner: CliRunner) -> set[str]:
    return {m["id"] for m in json.loads(ok(runner.invoke(app, ["list", "-n", "0", "--json"])).stdout)}


def test_ctrl_c_keeps_the_committed_batches_and_a_rerun_stores_the_rest(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(engine, "IMPORT_BATCH", 5)
    path = notes_file(tmp_path, 23)
    local.use_models(InterruptingEmbedder(at=3))  # batches 1 and 2 are stored, the third is cut
    result = runner.invoke(app, ["import", str(path)])
    assert result.exit_code == ExitCode.INTERRUPTED
    assert result.stderr == "memcli: interrupted: 10 of 23 stored; run the same import again to finish\n"
    assert result.stdout == ""
    local.use_models(FakeEmbedder())
    assert len(stored_ids(runner)) == 10
    again = json.loads(ok(runner.invoke(app, ["import", str(path), "--json"])).stdout)
    assert (again["found"], again["added"], again["skipped"], again["interrupted"]) == (23, 13, 10, False)
    assert len(stored_ids(runner)) == 23


def test_ctrl_c_during_a_batchs_write_counts_that_batch_as_stored(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import os
    import signal

    from memcli.store.store import MemoryStore

    monkeypatch.setattr(engine, "IMPORT_BATCH", 5)
    path = notes_file(tmp_path, 23)
    local.use_models(FakeEmbedder())
    writes = {"n": 0}
    add = MemoryStore.add

    def add_then_ctrl_c(self: MemoryStore, *args: Any, **kwargs: Any) -> None:
        writes["n"] += 1
        if writes["n"] == 2:
            os.kill(os.getpid(), signal.SIGINT)  # held back until the second batch is written
        add(self, *args, **kwargs)

    monkeypatch.setattr(MemoryStore, "add", add_then_ctrl_c)
    # Python's own Ctrl-C handler, as a command has it (a pytest-xdist worker ignores SIGINT).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        result = runner.invoke(app, ["import", str(path)])
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.exit_code == ExitCode.INTERRUPTED
    assert result.stderr == "memcli: interrupted: 10 of 23 stored; run the same import again to finish\n"
    assert len(stored_ids(runner)) == 10


def test_an_interrupted_import_prints_its_json_and_exits_130(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(engine, "IMPORT_BATCH", 5)
    local.use_models(InterruptingEmbedder(at=2))
    result = runner.invoke(app, ["import", str(notes_file(tmp_path, 12)), "--json", "--quiet"])
    assert result.exit_code == ExitCode.INTERRUPTED
    report = json.loads(result.stdout)
    assert (report["found"], report["added"], report["skipped"], report["interrupted"]) == (12, 5, 0, True)
    assert "interrupted: 5 of 12 stored" in result.stderr


def test_ctrl_c_in_any_command_says_interrupted(runner: CliRunner) -> None:
    local.use_models(InterruptingEmbedder(at=1))
    result = runner.invoke(app, ["remember", "A note"])
    assert result.exit_code == ExitCode.INTERRUPTED
    assert result.stderr == "memcli: interrupted\n"


def test_progress_prints_lines_when_stderr_is_not_a_terminal(
    runner: CliRunner, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(engine, "IMPORT_BATCH", 5)
    monkeypatch.setattr(root, "PROGRESS_LINE_EVERY", 10)
    path = notes_file(tmp_path, 23)  # CliRunner's stderr is not a terminal
    assert ok(runner.invoke(app, ["import", str(path)])).stderr == ""  # no lines without --progress
    assert ok(runner.invoke(app, ["import", str(path), "--progress", "--quiet"])).stderr == ""
    lines = ok(runner.invoke(app, ["import", str(path), "--progress"])).stderr.splitlines()
    assert lines == [
        "memcli: imported 10 of 23 records",
        "memcli: imported 20 of 23 records",
        "memcli: imported 23 of 23 records",
    ]


# through the service ---------------------------------------------------------------------------


def test_ctrl_c_through_the_service_cancels_at_the_next_batch_and_says_what_is_stored(
    memcli_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from test_service import FakeService, _turns_file

    monkeypatch.delenv("MEMCLI_SERVICE")
    paths = resolve_paths()
    big = _turns_file(tmp_path, 30, 40)  # 1,200 turns: three batches
    service = FakeService(paths, "--slow-embed", "0.1")
    try:
        pressed: list[int] = []

        def progress(done: int, total: int) -> None:
            if done > engine.IMPORT_BATCH and not pressed:
                pressed.append(done)
                raise KeyboardInterrupt  # Ctrl-C while the second batch embeds

        notices: list[str] = []
        client = ServiceClient(paths)
        request = {"verb": "import", "args": {"path": str(big)}, "env": client_env()}
        report = client.request(request, Handlers(progress=progress, notice=notices.append), start=False)
        assert report["interrupted"] is True and pressed
        stored = report["added"] + report["skipped"]
        assert 0 < stored < report["found"] == 1200
        assert any("stopping" in n for n in notices)
        again = client.request(request, Handlers(), start=False)
        assert (again["added"], again["skipped"], again["interrupted"]) == (1200 - stored, stored, False)
        assert client.request(
            {"verb": "stats", "args": {}, "env": client_env()}, Handlers(), start=False
        )  # still healthy
    finally:
        service.close()


def test_a_json_file_larger_than_the_whole_read_bound_is_refused_before_it_is_read(
    runner: CliRunner, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    """A valid LoCoMo file padded past ``MAX_WHOLE_BYTES`` (64 MiB): exit 5, one line
    naming the file and the bound, nothing stored, and the file never held whole (what
    Python allocated stays far below its size)."""
    import tracemalloc

    from cli_checks import assert_error
    from test_importers import locomo_sample, turn, write_json

    path = write_json(
        tmp_path / "locomo.json",
        [locomo_sample("conv-1", session_1=("1:00 pm on 1 June, 2023", [turn("Ann", "D1:1", "hello there")]))],
    )
    with path.open("a", encoding="utf-8") as f:
        f.write(" " * (importers.MAX_WHOLE_BYTES + 1 - path.stat().st_size))  # JSON allows trailing spaces
    for fmt in ([], ["--format", "locomo"]):
        tracemalloc.start()
        try:
            line = assert_error(runner.invoke(app, ["import", str(path), *fmt]), ExitCode.BAD_INPUT)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert str(path) in line and "67,108,865 bytes" in line and "67,108,864 (64 MiB)" in line, line
        assert peak < 32 << 20, peak  # reading it whole takes 64 MiB of bytes, and as much again decoded
    assert stored_ids(runner) == set()
