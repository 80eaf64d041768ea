"""The Chroma server backend (``store_url``): every verb works the same on a real ``chroma
run`` as in the folder (the same ranking and figures), a server that cannot be used is
StoreServerError (exit 11) with the next command working once it is back, and ``memcli
migrate`` moves every memory there and back."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_checks import assert_error, ok
from conftest import ChromaServer, list_json, open_store
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import resolve_paths
from memcli.errors import ExitCode, MemcliError, StoreServerError
from memcli.memory import Memory
from memcli.store.store import MemoryStore

NOW = "2024-03-01T12:00:00"
UNIT = [1.0] + [0.0] * 127  # the fake embedder's dimension
LINES = [
    "I bought a blue bike at the market",
    "My sister Ana lives in Lisbon and plays the cello",
    "The dentist appointment is on Tuesday morning",
    "I want to learn to bake sourdough bread",
    "Our dog Biscuit loves long walks by the river",
    "I started reading a novel about a lighthouse keeper",
]


def run(runner: CliRunner, *args: str) -> Any:
    """A command's --json output."""
    return json.loads(ok(runner.invoke(app, [*args, "--json"])).stdout)


def _plain(data: Any) -> Any:
    """``data`` without what differs between two homes whatever the store: paths, ids, timings."""
    if isinstance(data, dict):
        return {
            k: _plain(v) for k, v in data.items() if k not in ("path", "id", "ids", "source_ids") and "second" not in k
        }
    if isinstance(data, list):
        return [_plain(x) for x in data]
    return data


def scenario(runner: CliRunner, tmp_path: Path) -> dict[str, Any]:
    """import, recall, edit, delete, forget, consolidate, reindex and list, each's JSON with
    the ids (which differ between homes only where they are random) left out."""
    notes = tmp_path / "notes.txt"
    notes.write_text("\n\n".join(LINES) + "\n", encoding="utf-8")
    out: dict[str, Any] = {}
    out["import"] = _plain(run(runner, "import", str(notes), "--format", "text", "--now", NOW))
    recalled = run(runner, "recall", "bike river dog", "-k", "4", "--now", NOW)
    out["recall"] = [(m["text"], m["score"]) for m in recalled]
    by_text = {m["text"]: m["id"] for m in list_json(runner)}
    out["edit"] = run(runner, "edit", by_text[LINES[3]], "--text", "I want to learn to bake rye bread")["text"]
    out["delete"] = run(runner, "delete", by_text[LINES[2]])["text"]
    out["forget"] = _plain(run(runner, "forget", "--now", "2026-01-01T00:00:00"))
    consolidated = run(runner, "consolidate", "--now", "2024-03-03T12:00:00")
    out["consolidate"] = _plain(consolidated)
    out["reindex"] = run(runner, "reindex", "--force")["memories"]
    out["recall after"] = [
        (m["text"], m["score"]) for m in run(runner, "recall", "bread cello", "-k", "4", "--now", NOW)
    ]
    out["list"] = sorted((m["text"], m["kind"], m["archived"], m["strength"]) for m in list_json(runner, "--archived"))
    return out


@pytest.fixture
def extractive(fake_model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake models, consolidation by extraction (no scripted replies needed)."""
    monkeypatch.setenv("MEMCLI_CONSOLIDATION", "extractive")


@pytest.mark.usefixtures("extractive")
def test_every_verb_works_in_both_modes(runner: CliRunner, tmp_path: Path, store_mode: str) -> None:
    out = scenario(runner, tmp_path)
    assert out["import"]["added"] == len(LINES)
    assert out["recall"][0][0] in (LINES[0], LINES[4])
    assert out["edit"] == "I want to learn to bake rye bread"
    assert LINES[2] not in [row[0] for row in out["list"]]
    assert out["reindex"] > 0
    # the sidecar's copy and the store agree after all of it
    store = open_store(resolve_paths())
    with store.transaction():
        assert store.sidecar.index.count() == store.count()
        assert (store.server is not None) == (store_mode == "server")


@pytest.mark.usefixtures("extractive")
def test_the_server_gives_the_same_ranking_and_figures_as_the_folder(
    runner: CliRunner, tmp_path: Path, chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    folder = scenario(runner, tmp_path / "a")
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "server-home"))
    monkeypatch.setenv("MEMCLI_STORE_URL", chroma_server.url)
    (tmp_path / "b").mkdir()
    assert scenario(runner, tmp_path / "b") == folder


def test_homes_sharing_a_server_do_not_see_each_other(
    runner: CliRunner, fake_embedder: Any, tmp_path: Path, chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_STORE_URL", chroma_server.url)
    ok(runner.invoke(app, ["remember", "only in the first home"]))
    monkeypatch.setenv("MEMCLI_HOME", str(tmp_path / "second"))
    assert list_json(runner) == []
    ok(runner.invoke(app, ["remember", "only in the second home"]))
    assert [m["text"] for m in list_json(runner)] == ["only in the second home"]


# failures -------------------------------------------------------------------------------


@pytest.fixture
def own_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChromaServer]:
    """A Chroma server of this test alone (it is stopped and started again), always stopped."""
    server = ChromaServer(tmp_path / "own-chroma")
    server.start()
    monkeypatch.setenv("MEMCLI_STORE_URL", server.url)
    try:
        yield server
    finally:
        server.stop()


def test_a_stopped_server_is_exit_11_and_the_next_command_works_once_it_is_back(
    runner: CliRunner, fake_embedder: Any, own_server: ChromaServer
) -> None:
    ok(runner.invoke(app, ["remember", "stored before the outage"]))
    own_server.stop()
    for args in (["list"], ["recall", "outage"], ["remember", "said during the outage"]):
        line = assert_error(runner.invoke(app, args), ExitCode.STORE_SERVER)
        assert own_server.url in line and "cannot be reached" in line, line
    own_server.start()
    # the note said during the outage was journaled, and is stored now
    assert sorted(m["text"] for m in list_json(runner)) == ["said during the outage", "stored before the outage"]


def test_a_write_cut_by_the_server_leaves_the_sidecar_to_be_repaired(
    runner: CliRunner, fake_embedder: Any, own_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server goes away in the middle of a write: StoreServerError, and the next
    command's recall index is rebuilt from what the server holds."""
    import httpx

    ok(runner.invoke(app, ["remember", "first note"]))
    paths = resolve_paths()
    store = open_store(paths)

    def cut(*args: Any, **kwargs: Any) -> Any:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(StoreServerError), store.transaction(), monkeypatch.context() as patch:
        patch.setattr(store._col, "add", cut)
        store.add(
            [Memory(id="e" * 16, user="tester", kind="note", text="cut", created_at=1.7e9, day="2023-11-14")], [UNIT]
        )
    assert [m["text"] for m in list_json(runner)] == ["first note"]
    store = open_store(paths)
    with store.transaction():
        assert not store.sidecar.index.unclean()
        assert store.sidecar.index.count() == store.count() == 1


def test_remember_while_the_server_is_down_says_the_note_was_saved(
    runner: CliRunner, fake_embedder: Any, own_server: ChromaServer
) -> None:
    """The note is journaled before the server is asked: the line says it was saved and
    will be stored once the server is back (not "run the command again"), and it is."""
    own_server.stop()
    line = assert_error(runner.invoke(app, ["remember", "said while the server was down"]), ExitCode.STORE_SERVER)
    assert own_server.url in line and "cannot be reached" in line, line
    assert "your note was saved" in line and "stored once the server is back" in line, line
    assert "run the command again" not in line and "nothing was half written" not in line, line
    own_server.start()
    assert [m["text"] for m in list_json(runner)] == ["said while the server was down"]


def test_an_import_cut_by_the_server_says_how_many_memories_are_stored(
    runner: CliRunner, fake_embedder: Any, own_server: ChromaServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The server goes away after the import's second batch (5 memories each) was stored:
    exit 11 naming the server and counting what is stored, as a full device does, and that
    count is what the server holds once it is back."""
    from memcli.library import engine_models

    monkeypatch.setattr(engine_models, "IMPORT_BATCH", 5)
    notes = tmp_path / "notes.txt"
    notes.write_text("\n\n".join(f"Note number {i} about the garden." for i in range(23)) + "\n", encoding="utf-8")
    add = MemoryStore.add
    writes = {"n": 0}

    def add_then_stop(self: MemoryStore, *args: Any, **kwargs: Any) -> None:
        add(self, *args, **kwargs)
        writes["n"] += 1
        if writes["n"] == 2:
            own_server.stop()  # the second batch is stored, then the server goes away

    monkeypatch.setattr(MemoryStore, "add", add_then_stop)
    line = assert_error(runner.invoke(app, ["import", str(notes)]), ExitCode.STORE_SERVER)
    assert own_server.url in line and "cannot be reached" in line, line
    assert "10 of 23 memories are stored" in line, line
    assert "nothing was half written" not in line, line
    monkeypatch.setattr(MemoryStore, "add", add)
    own_server.start()
    assert len(list_json(runner)) == 10
    again = run(runner, "import", str(notes))
    assert (again["found"], again["added"], again["skipped"]) == (23, 13, 10)


class _Fake(http.server.BaseHTTPRequestHandler):
    status = 401
    body = b'{"error": "Unauthorized", "message": "no token"}'

    def do_GET(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    do_POST = do_GET

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An HTTP server on 127.0.0.1 answering every request with a set status and body."""

    def serve(status: int, body: bytes) -> str:
        handler = type("Handler", (_Fake,), {"status": status, "body": body})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setenv("MEMCLI_STORE_URL", url)
        return url

    servers: list[Any] = []
    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "status, body, says",
    [
        (401, b'{"error": "Unauthorized", "message": "no token"}', "refused the token (401)"),
        (404, b'{"error": "NotFound"}', "does not serve Chroma's API v2"),
        (200, b'"0.4.24"', "is version 0.4.24"),
    ],
    ids=["401", "not-api-v2", "other-major-version"],
)
def test_a_server_that_refuses_is_exit_11(
    runner: CliRunner, fake_embedder: Any, fake_server: Any, status: int, body: bytes, says: str
) -> None:
    fake_server(status, body)
    line = assert_error(runner.invoke(app, ["list"]), ExitCode.STORE_SERVER)
    assert says in line, line


def test_a_server_that_does_not_answer_times_out_with_exit_11(
    runner: CliRunner, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts connections, never answers
        monkeypatch.setenv("MEMCLI_STORE_URL", f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setenv("MEMCLI_STORE_TIMEOUT", "1")
        line = assert_error(runner.invoke(app, ["list"]), ExitCode.STORE_SERVER)
    assert "did not answer within 1 s" in line, line


def test_a_token_variable_that_is_not_set_is_exit_11_and_never_printed(
    runner: CliRunner, fake_embedder: Any, chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_STORE_URL", chroma_server.url)
    monkeypatch.setenv("MEMCLI_STORE_TOKEN_ENV", "MEMCLI_TEST_CHROMA_TOKEN")
    monkeypatch.delenv("MEMCLI_TEST_CHROMA_TOKEN", raising=False)
    line = assert_error(runner.invoke(app, ["list"]), ExitCode.STORE_SERVER)
    assert "MEMCLI_TEST_CHROMA_TOKEN" in line
    monkeypatch.setenv("MEMCLI_TEST_CHROMA_TOKEN", "s3cret-token")
    result = runner.invoke(app, ["list"])  # chroma run takes any token when it checks none
    assert result.exit_code == 0 and "s3cret-token" not in result.stdout + result.stderr


# migrate --------------------------------------------------------------------------------


def everything(store: MemoryStore) -> dict[str, Any]:
    """Every memory as the store's Chroma holds it: id -> (text, metadata, vector)."""
    with store.transaction():
        page = store._col.get(include=["documents", "metadatas", "embeddings"])
    return {
        i: (d, dict(m), np.asarray(e, dtype=np.float32).tolist())
        for i, d, m, e in zip(page["ids"], page["documents"], page["metadatas"], page["embeddings"])
    }


def test_migrate_to_the_server_and_back_keeps_every_field(
    runner: CliRunner, fake_embedder: Any, chroma_server: ChromaServer, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("\n\n".join(LINES) + "\n", encoding="utf-8")
    ok(runner.invoke(app, ["import", str(notes), "--format", "text", "--now", NOW]))
    first = list_json(runner)
    ok(runner.invoke(app, ["pin", first[0]["id"]]))
    paths = resolve_paths()
    before = everything(MemoryStore(paths))

    moved = run(runner, "migrate", "--to", chroma_server.url)
    assert moved["memories"] == len(LINES) and moved["max_vector_difference"] == 0.0
    assert f'store_url = "{chroma_server.url}"' in paths.config_file.read_text(encoding="utf-8")
    assert everything(open_store(paths)) == before
    assert run(runner, "recall", "bike", "-k", "1", "--now", NOW)[0]["text"] == LINES[0]

    # deleted on the server: after the move back it is not in the folder either
    ok(runner.invoke(app, ["delete", first[1]["id"]]))
    back = run(runner, "migrate", "--to-folder")
    assert back["memories"] == len(LINES) - 1
    assert "store_url" not in paths.config_file.read_text(encoding="utf-8")
    after = everything(MemoryStore(paths))
    assert first[1]["id"] not in after
    assert after == {k: v for k, v in everything_on(paths, chroma_server).items()}


def everything_on(paths: Any, server: ChromaServer) -> dict[str, Any]:
    from memcli.store.store import Server

    return everything(MemoryStore(paths, server=Server(server.url)))


def test_an_interrupted_migration_switches_nothing_and_runs_again(
    runner: CliRunner, fake_embedder: Any, chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in LINES[:3]:
        ok(runner.invoke(app, ["remember", text]))
    paths = resolve_paths()

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(MemoryStore, "_compare", interrupted)
        result = runner.invoke(app, ["migrate", "--to", chroma_server.url])
        assert result.exit_code != 0
    assert not paths.config_file.exists() or "store_url" not in paths.config_file.read_text(encoding="utf-8")
    assert len(list_json(runner)) == 3  # still read from the folder
    moved = run(runner, "migrate", "--to", chroma_server.url)
    assert moved["memories"] == 3
    assert sorted(m["text"] for m in list_json(runner)) == sorted(LINES[:3])
    line = assert_error(runner.invoke(app, ["migrate", "--to", chroma_server.url]), ExitCode.ERROR)
    assert "already at" in line


def test_a_move_back_whose_compaction_fails_stands_and_says_so(
    runner: CliRunner, fake_embedder: Any, chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in LINES[:3]:
        ok(runner.invoke(app, ["remember", text]))
    paths = resolve_paths()
    run(runner, "migrate", "--to", chroma_server.url)

    def busy(self: MemoryStore) -> None:
        raise MemcliError("another process is reading it, so its write-ahead log could not be emptied")

    with monkeypatch.context() as patch:
        patch.setattr(MemoryStore, "compact", busy)
        result = runner.invoke(app, ["migrate", "--to-folder"])
    ok(result)
    assert "moved, but the store could not be compacted" in result.stderr
    assert "store_url" not in paths.config_file.read_text(encoding="utf-8")
    assert len(list_json(runner)) == 3
