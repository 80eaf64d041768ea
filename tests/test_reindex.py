"""The embedder a store's vectors come from, and ``memcli reindex``: a store records the
embedder of its first write (or adopts the configured one when it has no record); recall,
remember, import and consolidate refuse a store that another embedder made (exit 8,
naming both and ``memcli reindex``) while stats and list still answer; ``reindex``
re-embeds every memory of every user (Chroma's vectors and the recall index's, windows
included) and finishes an interrupted reindex; ``Embedder.identity`` fingerprints a model
directory without loading it. Two fake embedders stand for two models: conftest's
``FakeEmbedder`` and ``OtherEmbedder`` below, whose vectors differ."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_checks import assert_error, ok
from conftest import FakeChatModel, FakeEmbedder, Given, list_json
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import load_settings, resolve_paths
from memcli.errors import EmbedderChangedError, ExitCode, ModelError
from memcli.library.engine import Engine
from memcli.memory import Kind, Memory, stable_id
from memcli.models.embedding import Embedder, embedder_identity, same_embedder
from memcli.schema import ReindexResult, Stats
from memcli.store.recall_index import batch_windows, window_text
from memcli.store.store import COLLECTION, REINDEXING, STAGING

NOW = datetime(2023, 6, 1, 9, 0).timestamp()
CELLO = "My sister plays the cello in an orchestra"
PUPPY = "I adopted a puppy named Rex last spring"
BOB_TURNS = [
    ("Bob", "I started pottery classes on Tuesdays"),
    ("assistant", "Pottery sounds relaxing, what are you making?"),
    ("Bob", "A wobbly blue vase for my grandmother"),
]


class OtherEmbedder(FakeEmbedder):
    """Another model: the same bag of words, each word hashed with a salt, so no vector
    is FakeEmbedder's (texts sharing words are still close). Its identity is its class name."""

    name = "other-embedder"

    def embed(self, texts: Sequence[str], batch_size: int = 64, progress=None) -> list[list[float]]:
        salted = [" ".join(f"other{word}" for word in re.findall(r"\w+", text.lower())) for text in texts]
        return super().embed(salted, batch_size, progress)


class ModelDirEmbedder(OtherEmbedder):
    """OtherEmbedder under an identity like a real model's (``name@fingerprint``)."""

    identity = "paraphrase-mini@0123456789ab"


class MovedModelEmbedder(OtherEmbedder):
    """The same model as ModelDirEmbedder in a directory of another name."""

    identity = "mini-copy@0123456789ab"


# helpers ------------------------------------------------------------------------------------


def make_memcli(embedder: Any, chat_model: Any = None) -> Engine:
    paths = resolve_paths()
    return Engine(load_settings(paths), paths, clock=lambda: NOW, embedder=embedder, chat_model=chat_model)


def use(embedder: Any, chat_model: Any = None) -> None:
    """From the next CLI command on, run in-process with ``embedder`` (a change of model)."""
    Given.set(embedder, chat_model)


def at(minute: int) -> float:
    return datetime(2023, 5, 8, 10, 0).timestamp() + 60 * minute


def note(text: str, user: str = "ana", minute: int = 0) -> Memory:
    return Memory(
        id=stable_id(user, "note", text),
        user=user,
        kind=Kind.NOTE.value,
        text=text,
        created_at=at(minute),
        day="2023-05-08",
        source="test",
    )


def session(user: str, lines: Sequence[tuple[str, str]]) -> list[Memory]:
    return [
        Memory(
            id=stable_id(user, "s1", str(i), text),
            user=user,
            kind=Kind.TURN.value,
            text=text,
            created_at=at(10 + i),
            day="2023-05-08",
            session="s1",
            speaker=speaker,
            source=f"s1:{i}",
        )
        for i, (speaker, text) in enumerate(lines)
    ]


def populate(embedder: Any) -> list[Memory]:
    """Two users' memories (notes for ana, a session of turns for bob), embedded by ``embedder``."""
    memories = [note(CELLO, minute=1), note(PUPPY, minute=2), *session("bob", BOB_TURNS)]
    assert len(make_memcli(embedder).add_memories(memories)) == len(memories)
    return memories


def record(engine: Engine) -> str | None:
    with engine.store.transaction():
        return engine.store.embedder_record()


def chroma_vectors(engine: Engine, user: str) -> dict[str, np.ndarray]:
    """The embedding Chroma holds for each of ``user``'s memories, by id."""
    with engine.store.transaction():
        memories, vectors = engine.store._with_embeddings(user)
    return {m.id: np.asarray(v, dtype=np.float64) for m, v in zip(memories, vectors)}


def expected_vectors(embedder: Any, memories: Sequence[Memory]) -> dict[str, np.ndarray]:
    return {m.id: np.asarray(v) for m, v in zip(memories, embedder.embed([m.index_text() for m in memories]))}


def assert_vectors(found: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert found.keys() == expected.keys()
    for memory_id, vector in expected.items():
        assert np.allclose(found[memory_id], vector, atol=1e-5), memory_id


def recalled(engine: Engine, query: str, user: str) -> list[str]:
    return [hit.memory.text for hit in engine.recall(query, user, reinforce=False)]


def stats_json(runner: CliRunner) -> dict[str, Any]:
    return json.loads(ok(runner.invoke(app, ["stats", "--json"])).stdout)


def model_dir(path: Path, config: str = '{"hidden_size": 384}') -> Path:
    """A directory shaped like a sentence-transformers model (its configuration files and
    weights that are not a model: loading it would fail)."""
    (path / "1_Pooling").mkdir(parents=True)
    (path / "modules.json").write_text(
        '[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]'
    )
    (path / "config.json").write_text(config)
    (path / "config_sentence_transformers.json").write_text('{"prompts": {}}')
    (path / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    (path / "model.safetensors").write_bytes(b"not a model")
    return path


# identities --------------------------------------------------------------------------------


def test_embedder_identity_is_the_identity_or_else_the_class_name() -> None:
    assert embedder_identity(FakeEmbedder()) == "FakeEmbedder"
    assert embedder_identity(OtherEmbedder()) == "OtherEmbedder"
    assert embedder_identity(ModelDirEmbedder()) == ModelDirEmbedder.identity


def test_same_embedder_compares_fingerprints_whatever_the_directory_is_called() -> None:
    assert same_embedder("a@x", "b@x")
    assert same_embedder("all-MiniLM-L6-v2@0123456789ab", "all-MiniLM-L6-v2@0123456789ab")
    assert not same_embedder("a@x", "a@y")
    assert same_embedder("FakeEmbedder", "FakeEmbedder")
    assert not same_embedder("FakeEmbedder", "OtherEmbedder")


def test_identity_of_a_model_directory_fingerprints_its_configuration_without_loading_it(tmp_path: Path) -> None:
    one = Embedder(model_dir(tmp_path / "mini"))
    copy = Embedder(model_dir(tmp_path / "mini-copy"))
    changed = Embedder(model_dir(tmp_path / "mini-changed", config='{"hidden_size": 768}'))

    name, _, fingerprint = one.identity.partition("@")
    assert name == "mini" and re.fullmatch(r"[0-9a-f]{12}", fingerprint), one.identity
    assert one.identity == Embedder(tmp_path / "mini").identity  # the same every time
    assert copy.identity == f"mini-copy@{fingerprint}" and same_embedder(one.identity, copy.identity)
    assert not same_embedder(one.identity, changed.identity)
    assert one._model is None and copy._model is None and changed._model is None  # nothing was loaded


@pytest.mark.parametrize("name", ["config_sentence_transformers.json", "modules.json", "1_Pooling/config.json"])
def test_identity_changes_with_each_configuration_file(tmp_path: Path, name: str) -> None:
    before = Embedder(model_dir(tmp_path / "mini")).identity
    (tmp_path / "mini" / name).write_text('{"changed": true}')
    assert not same_embedder(before, Embedder(tmp_path / "mini").identity)


def test_identity_of_a_path_that_is_not_a_directory_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not a directory"):
        Embedder(tmp_path / "missing").identity  # noqa: B018


# the record -----------------------------------------------------------------------------


def test_a_new_store_records_the_embedder_on_first_write(runner: CliRunner, fake_embedder: FakeEmbedder) -> None:
    assert stats_json(runner)["embedder"] is None  # nothing written yet
    ok(runner.invoke(app, ["remember", CELLO]))
    stats = stats_json(runner)
    assert stats["embedder"] == stats["embedder_configured"] == embedder_identity(fake_embedder)
    assert record(make_memcli(fake_embedder)) == embedder_identity(fake_embedder)


def test_a_store_without_a_record_adopts_the_configured_embedder(other_is_configured: None) -> None:
    engine = make_memcli(OtherEmbedder())
    assert record(engine) is None
    assert recalled(engine, "cello orchestra", "ana")[0] == CELLO
    assert record(engine) == "OtherEmbedder"
    assert make_memcli(OtherEmbedder()).remember("I learned to juggle")[1] is True


@pytest.fixture
def other_is_configured() -> None:
    """A store an older memcli wrote (memories, no embedder recorded) with vectors of
    OtherEmbedder, the embedder now configured."""
    memories = [note(CELLO, minute=1), note(PUPPY, minute=2)]
    engine = make_memcli(OtherEmbedder())
    with engine.store.transaction():
        engine.store.add(memories, OtherEmbedder().embed([m.index_text() for m in memories]))


# another embedder is refused ----------------------------------------------------------------


def refusal(action: Any) -> str:
    with pytest.raises(EmbedderChangedError) as info:
        action()
    return info.value.message


def assert_names_both(message: str, count: int) -> None:
    assert "FakeEmbedder" in message and "OtherEmbedder" in message, message
    assert "memcli reindex" in message, message
    assert f"{count} memories" in message, message


def test_another_embedder_is_refused_by_recall_remember_add_and_consolidate() -> None:
    memories = populate(FakeEmbedder())
    other = make_memcli(OtherEmbedder(), FakeChatModel())
    for action in (
        lambda: other.recall("cello", "ana"),
        lambda: other.remember("I learned to juggle", "ana"),
        lambda: other.add_memories([note("a new note")]),
        lambda: other.consolidate("bob"),
    ):
        assert_names_both(refusal(action), len(memories))
    assert other.chat_model.structured_calls == []  # consolidation stopped before any model call
    assert record(other) == "FakeEmbedder"
    assert make_memcli(FakeEmbedder()).store.count() == len(memories)  # nothing was added


def test_stats_list_and_show_still_work_with_another_embedder(runner: CliRunner) -> None:
    use(FakeEmbedder())
    ids = [ok(runner.invoke(app, ["remember", text])).stdout.strip() for text in (CELLO, PUPPY)]
    use(OtherEmbedder())
    stats = stats_json(runner)
    Stats.model_validate(stats)
    assert (stats["embedder"], stats["embedder_configured"]) == ("FakeEmbedder", "OtherEmbedder")
    assert stats["memories"] == 2
    assert sorted(m["id"] for m in list_json(runner)) == sorted(ids)
    assert json.loads(ok(runner.invoke(app, ["show", ids[0], "--json"])).stdout)["text"] == CELLO


def test_a_refused_remember_does_not_stop_list_and_is_stored_after_the_reindex(runner: CliRunner) -> None:
    use(FakeEmbedder())
    ok(runner.invoke(app, ["remember", CELLO]))
    use(OtherEmbedder())
    assert_error(runner.invoke(app, ["remember", PUPPY]), ExitCode.EMBEDDER_CHANGED)
    assert [m["text"] for m in list_json(runner)] == [CELLO]
    ok(runner.invoke(app, ["reindex"]))
    assert sorted(m["text"] for m in list_json(runner)) == sorted([CELLO, PUPPY])  # the journal kept it


def test_the_cli_exits_8_with_one_line_naming_both_embedders(runner: CliRunner, tmp_path: Path) -> None:
    use(FakeEmbedder(), FakeChatModel())
    ok(runner.invoke(app, ["remember", CELLO]))
    notes = tmp_path / "notes.txt"
    notes.write_text("I keep bees on the roof.\n")
    use(OtherEmbedder(), FakeChatModel())
    for args in (
        ["recall", "cello"],
        ["remember", PUPPY],
        ["import", str(notes)],
        ["consolidate"],
        ["ask", "Who plays the cello?"],
    ):
        line = assert_error(runner.invoke(app, args), ExitCode.EMBEDDER_CHANGED)
        assert_names_both(line, 1)
    assert Given.chat_model.prompts == [] and Given.chat_model.structured_calls == []


def test_a_configured_model_directory_is_refused_without_loading_it(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(FakeEmbedder())
    ok(runner.invoke(app, ["remember", CELLO]))
    use(None)  # the embedder setting decides again: a directory that is not a loadable model
    monkeypatch.setenv("MEMCLI_EMBEDDER", str(model_dir(tmp_path / "mini")))
    identity = Embedder(tmp_path / "mini").identity
    line = assert_error(runner.invoke(app, ["recall", "cello"]), ExitCode.EMBEDDER_CHANGED)
    assert "FakeEmbedder" in line and identity in line and "memcli reindex" in line
    assert stats_json(runner)["embedder_configured"] == identity


# reindex ----------------------------------------------------------------------------------


def test_reindex_re_embeds_every_memory_of_every_user() -> None:
    memories = populate(FakeEmbedder())
    other = OtherEmbedder()
    engine = make_memcli(other)
    by_user = {user: [m for m in memories if m.user == user] for user in ("ana", "bob")}
    old = chroma_vectors(engine, "bob")
    assert not any(np.allclose(old[i], v, atol=1e-3) for i, v in expected_vectors(other, by_user["bob"]).items())

    result = engine.reindex()
    ReindexResult.model_validate(result)
    assert (result["embedder"], result["previous"]) == ("OtherEmbedder", "FakeEmbedder")
    assert (result["memories"], result["users"]) == (len(memories), 2)
    assert record(engine) == "OtherEmbedder"
    for user, mine in by_user.items():
        assert_vectors(chroma_vectors(engine, user), expected_vectors(other, mine))


def test_reindex_rebuilds_the_recall_index_with_the_new_vectors_windows_included() -> None:
    memories = populate(FakeEmbedder())
    other = OtherEmbedder()
    engine = make_memcli(other)
    engine.reindex()
    turns = sorted((m for m in memories if m.user == "bob"), key=lambda m: m.created_at)
    owns = [m.index_text() for m in turns]
    with engine.store.transaction():
        index = engine.store.sidecar.index.load("bob")
    slot = {memory_id: i for i, memory_id in enumerate(index.ids)}
    for i, turn in enumerate(turns):
        assert np.allclose(index.turn[slot[turn.id]], other.embed_one(owns[i]), atol=1e-5), turn.text
        assert np.allclose(index.window[slot[turn.id]], other.embed_one(window_text(owns, i)), atol=1e-5), turn.text


def test_recall_works_again_after_reindex_and_finds_the_right_memory() -> None:
    populate(FakeEmbedder())
    engine = make_memcli(OtherEmbedder())
    engine.reindex()
    assert recalled(engine, "cello orchestra", "ana")[0] == CELLO
    assert recalled(engine, "puppy named Rex", "ana")[0] == PUPPY
    assert recalled(engine, "blue vase grandmother", "bob")[0] == BOB_TURNS[2][1]
    assert engine.remember("I learned to juggle", "ana")[1] is True
    # and the first embedder is the one refused now
    assert "OtherEmbedder" in refusal(lambda: make_memcli(FakeEmbedder()).recall("cello", "ana"))


def test_reindex_is_a_no_op_when_the_store_is_current_unless_forced() -> None:
    memories = populate(FakeEmbedder())
    embedder = FakeEmbedder()
    engine = make_memcli(embedder)
    result = engine.reindex()
    assert (result["embedder"], result["previous"], result["memories"], result["users"]) == (
        "FakeEmbedder",
        "FakeEmbedder",
        0,
        0,
    )
    assert embedder.calls == 0

    forced = engine.reindex(force=True)
    assert (forced["memories"], forced["users"]) == (len(memories), 2)
    assert embedder.calls > 0
    assert record(engine) == "FakeEmbedder"
    assert_vectors(chroma_vectors(engine, "ana"), expected_vectors(embedder, [m for m in memories if m.user == "ana"]))


def test_reindex_reports_progress_up_to_every_text() -> None:
    populate(FakeEmbedder())
    seen: list[tuple[int, int]] = []
    make_memcli(OtherEmbedder()).reindex(progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1]
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert len({total for _, total in seen}) == 1


@pytest.mark.parametrize("target", [OtherEmbedder, ModelDirEmbedder], ids=["stand-in", "name@fingerprint"])
def test_an_interrupted_reindex_is_refused_until_a_reindex_finishes_it(target: type[FakeEmbedder]) -> None:
    memories = populate(FakeEmbedder())
    embedder = target()
    engine = make_memcli(embedder)
    identity = embedder_identity(embedder)
    with engine.store.transaction():
        engine.store.record_embedder(REINDEXING + identity)  # a reindex to it died half way

    message = refusal(engine.check_embedder)
    assert "interrupted" in message and "memcli reindex" in message and identity in message, message
    refusal(lambda: engine.recall("cello", "ana"))

    result = engine.reindex()
    assert (result["memories"], result["users"]) == (len(memories), 2)
    assert record(engine) == identity
    engine.check_embedder()
    assert recalled(engine, "cello orchestra", "ana")[0] == CELLO
    assert_vectors(chroma_vectors(engine, "ana"), expected_vectors(embedder, [m for m in memories if m.user == "ana"]))


def test_the_same_model_in_another_directory_needs_no_reindex() -> None:
    populate(ModelDirEmbedder())
    engine = make_memcli(MovedModelEmbedder())
    engine.check_embedder()
    assert recalled(engine, "cello orchestra", "ana")[0] == CELLO
    assert engine.reindex()["memories"] == 0


# reindex on the command line --------------------------------------------------------------


def test_reindex_cli_re_embeds_and_recall_works_again(runner: CliRunner) -> None:
    use(FakeEmbedder())
    ok(runner.invoke(app, ["remember", CELLO]))
    ok(runner.invoke(app, ["remember", PUPPY, "--user", "bob"]))
    use(OtherEmbedder())
    assert_error(runner.invoke(app, ["recall", "cello"]), ExitCode.EMBEDDER_CHANGED)

    result = ok(runner.invoke(app, ["reindex"]))
    assert re.fullmatch(
        r"re-embedded 2 memories of 2 users with OtherEmbedder \(was FakeEmbedder\) in [\d.]+ s\n", result.stdout
    )
    hits = json.loads(ok(runner.invoke(app, ["recall", "cello orchestra", "--json", "--no-reinforce"])).stdout)
    assert hits[0]["text"] == CELLO
    stats = stats_json(runner)
    assert stats["embedder"] == stats["embedder_configured"] == "OtherEmbedder"


def test_reindex_cli_when_current_says_so_and_force_re_embeds(runner: CliRunner) -> None:
    use(FakeEmbedder())
    ok(runner.invoke(app, ["remember", CELLO]))
    result = ok(runner.invoke(app, ["reindex"]))
    assert result.stdout == ""
    assert "FakeEmbedder" in result.stderr and "nothing to do" in result.stderr
    assert ok(runner.invoke(app, ["reindex", "--quiet"])).stderr == ""

    data = json.loads(ok(runner.invoke(app, ["reindex", "--force", "--json"])).stdout)
    assert ReindexResult.model_validate(data).model_dump(mode="json") == data
    assert (data["embedder"], data["previous"], data["memories"], data["users"]) == (
        "FakeEmbedder",
        "FakeEmbedder",
        1,
        1,
    )


def test_reindex_cli_finishes_an_interrupted_reindex(runner: CliRunner) -> None:
    use(FakeEmbedder())
    ok(runner.invoke(app, ["remember", CELLO]))
    use(OtherEmbedder())
    engine = make_memcli(OtherEmbedder())
    with engine.store.transaction():
        engine.store.record_embedder(REINDEXING + "OtherEmbedder")
    line = assert_error(runner.invoke(app, ["recall", "cello"]), ExitCode.EMBEDDER_CHANGED)
    assert "interrupted" in line and "memcli reindex" in line
    assert stats_json(runner)["embedder"] == REINDEXING + "OtherEmbedder"
    data = json.loads(ok(runner.invoke(app, ["reindex", "--json"])).stdout)
    assert (data["previous"], data["embedder"], data["memories"]) == (REINDEXING + "OtherEmbedder", "OtherEmbedder", 1)
    ok(runner.invoke(app, ["recall", "cello"]))


# reindex to a model of another dimension, staged and swapped --------------------------------


class SmallEmbedder(FakeEmbedder):
    """A model of another dimension: FakeEmbedder's bag of words in 64 dimensions, not 128."""

    name = "small-embedder"
    dimension = 64


class Interrupted(Exception):
    """What the model or the progress callback raises half way through a reindex."""


class DyingSmallEmbedder(SmallEmbedder):
    """SmallEmbedder (the same identity) that raises at its ``fail_at``-th call to ``embed``."""

    identity = "SmallEmbedder"

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.fail_at = fail_at

    def embed(self, texts: Sequence[str], batch_size: int = 64, progress=None) -> list[list[float]]:
        if self.calls + 1 == self.fail_at:
            self.calls += 1
            raise Interrupted("the model died")
        return super().embed(texts, batch_size, progress)


def collections(engine: Engine) -> set[str]:
    with engine.store.transaction():
        return {c.name for c in engine.store._client.list_collections()}


def chroma_rows(engine: Engine, name: str = COLLECTION) -> dict[str, tuple[str, dict[str, Any], np.ndarray]]:
    """Every row of the Chroma collection ``name``, read from Chroma itself: id -> (document,
    metadata, embedding)."""
    with engine.store.transaction():
        got = engine.store._client.get_collection(name, embedding_function=None).get(
            include=["documents", "metadatas", "embeddings"]
        )
    return {
        i: (d, dict(m), np.asarray(e, dtype=np.float64))
        for i, d, m, e in zip(got["ids"], got["documents"], got["metadatas"], got["embeddings"])
    }


def assert_same_rows(
    found: dict[str, tuple[str, dict[str, Any], np.ndarray]],
    expected: dict[str, tuple[str, dict[str, Any], np.ndarray]],
) -> None:
    assert found.keys() == expected.keys()
    for memory_id, (document, metadata, vector) in expected.items():
        assert found[memory_id][:2] == (document, metadata), memory_id
        assert found[memory_id][2].shape == vector.shape and np.allclose(found[memory_id][2], vector, atol=1e-6), (
            memory_id
        )


def all_memories(engine: Engine) -> list[Memory]:
    with engine.store.transaction():
        return engine.store.memories()


def assert_every_vector_is(engine: Engine, embedder: Any) -> None:
    """Chroma holds ``embedder``'s vector for every memory of every user (and the recall
    index has its dimension)."""
    memories = all_memories(engine)
    assert memories
    for user in {m.user for m in memories}:
        mine = [m for m in memories if m.user == user]
        found = chroma_vectors(engine, user)
        assert {v.shape for v in found.values()} == {(embedder.dimension,)}, user
        assert_vectors(found, expected_vectors(embedder, mine))
        with engine.store.transaction():
            assert engine.store.recall_index(user, embedder.embed).turn.shape == (len(mine), embedder.dimension), user


def test_reindex_to_a_model_of_another_dimension() -> None:
    memories = populate(FakeEmbedder())
    small = SmallEmbedder()
    engine = make_memcli(small)
    assert {v.shape for v in chroma_vectors(engine, "ana").values()} == {(128,)}

    result = engine.reindex()
    assert (result["embedder"], result["previous"], result["memories"], result["users"]) == (
        "SmallEmbedder",
        "FakeEmbedder",
        len(memories),
        2,
    )
    assert record(engine) == "SmallEmbedder"
    assert collections(engine) == {COLLECTION}  # no staging collection left
    assert_every_vector_is(engine, small)
    assert {m.id for m in all_memories(engine)} == {m.id for m in memories}

    assert recalled(engine, "cello orchestra", "ana")[0] == CELLO
    assert recalled(engine, "puppy named Rex", "ana")[0] == PUPPY
    assert recalled(engine, "blue vase grandmother", "bob")[0] == BOB_TURNS[2][1]
    assert engine.remember("I learned to juggle", "ana")[1] is True  # a 64-dimension write
    assert recalled(engine, "learned to juggle", "ana")[0] == "I learned to juggle"
    assert "SmallEmbedder" in refusal(
        lambda: make_memcli(FakeEmbedder()).recall("cello", "ana")
    )  # refused, not a dimension error

    runner = CliRunner()
    use(SmallEmbedder())
    stats = stats_json(runner)
    assert stats["embedder"] == stats["embedder_configured"] == "SmallEmbedder"
    assert stats["all_users"] == {"ana": 3, "bob": 3}

    # and back to 128 dimensions, on the command line
    use(FakeEmbedder())
    ok(runner.invoke(app, ["reindex", "--quiet"]))
    assert stats_json(runner)["embedder"] == "FakeEmbedder"
    assert collections(engine) == {COLLECTION}
    assert_every_vector_is(make_memcli(FakeEmbedder()), FakeEmbedder())


@pytest.mark.parametrize("how", ["the model dies at the second user", "progress raises in the middle of a user"])
def test_an_interrupted_reindex_leaves_the_store_intact_and_a_second_one_finishes(
    how: str, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = populate(FakeEmbedder())
    before = chroma_rows(make_memcli(FakeEmbedder()))
    assert len(before) == len(memories)
    if how.startswith("the model"):
        dying, progress = (
            make_memcli(DyingSmallEmbedder(fail_at=2)),
            None,
        )  # ana's texts are embedded and staged, bob's are not
    else:
        monkeypatch.setattr(
            "memcli.library.engine_models.REINDEX_BATCH", 2
        )  # ana: 2 texts; bob: 3 turns and 3 windows, 3 chunks
        calls: list[int] = []

        def progress(done: int, total: int) -> None:
            calls.append(done)
            if len(calls) == 3:  # bob's second chunk
                raise Interrupted("stopped")

        dying = make_memcli(SmallEmbedder())
    with pytest.raises(Interrupted):
        dying.reindex(progress=progress)

    # stopped half way: ana staged, bob not
    engine = make_memcli(SmallEmbedder())
    assert collections(engine) == {COLLECTION, STAGING}
    assert {row[0] for row in chroma_rows(engine, STAGING).values()} == {CELLO, PUPPY}
    # the store's collection is as it was: ids, documents, metadata, the old vectors
    assert_same_rows(chroma_rows(engine), before)
    assert record(engine) == REINDEXING + "SmallEmbedder"

    # recall and writes refuse it, whichever embedder asks
    for embedder in (SmallEmbedder(), FakeEmbedder()):
        other = make_memcli(embedder)
        for action in (
            lambda: other.recall("cello", "ana"),
            lambda: other.remember("I learned to juggle", "ana"),
            lambda: other.add_memories([note("a new note")]),
        ):
            message = refusal(action)
            assert "interrupted" in message and "SmallEmbedder" in message and "memcli reindex" in message, message
    use(SmallEmbedder())
    for args in (["recall", "cello", "--user", "ana"], ["remember", "I keep bees", "--user", "ana"]):
        line = assert_error(runner.invoke(app, args), ExitCode.EMBEDDER_CHANGED)
        assert "interrupted" in line and "memcli reindex" in line, line
    # what does not embed still answers
    stats = stats_json(runner)
    assert (stats["all_users"], stats["embedder"]) == ({"ana": 2, "bob": 3}, REINDEXING + "SmallEmbedder")
    assert sorted(m["text"] for m in list_json(runner, "--user", "ana")) == sorted([CELLO, PUPPY])
    assert sorted(m["text"] for m in list_json(runner, "--user", "bob")) == sorted(text for _, text in BOB_TURNS)
    assert_same_rows(chroma_rows(engine), before)  # still

    # a second reindex finishes it
    result = ok(runner.invoke(app, ["reindex", "--json"]))
    data = json.loads(result.stdout)
    assert (data["previous"], data["embedder"], data["users"]) == (REINDEXING + "SmallEmbedder", "SmallEmbedder", 2)
    assert record(engine) == "SmallEmbedder"
    assert collections(engine) == {COLLECTION}
    after = chroma_rows(engine)
    assert {m.id for m in memories} <= after.keys()
    for memory_id, (document, metadata, _) in before.items():
        assert after[memory_id][:2] == (document, metadata), memory_id
    assert_every_vector_is(engine, SmallEmbedder())
    assert recalled(engine, "cello orchestra", "ana")[0] == CELLO
    assert recalled(engine, "blue vase grandmother", "bob")[0] == BOB_TURNS[2][1]
    ok(runner.invoke(app, ["recall", "cello", "--user", "ana"]))


def crash_before_the_rename(engine: Engine) -> list[Memory]:
    """What a reindex does up to deleting the store's collection, then a crash: every user
    staged with ``memcli.embedder``'s vectors, staging marked complete, "memories" deleted,
    staging not renamed. Returns the memories."""
    embedder, identity = engine.embedder, embedder_identity(engine.embedder)
    store = engine.store
    with store.transaction():
        memories = store.memories()
        store.begin_reindex(identity)
        for user in sorted({m.user for m in memories}):
            own = [m for m in memories if m.user == user]
            windows = batch_windows(own)
            vectors = np.asarray(embedder.embed([m.index_text() for m in own] + windows), dtype=np.float32)
            store.reembed(user, own, vectors[: len(own)], dict(zip(windows, vectors[len(own) :])))
        staging = store._client.get_collection(STAGING, embedding_function=None)
        staging.modify(metadata={**(staging.metadata or {}), "complete": True})
        store._client.delete_collection(COLLECTION)
        assert {c.name for c in store._client.list_collections()} == {STAGING}
    return memories


@pytest.mark.parametrize("next_step", ["a transaction", "a command"])
def test_a_swap_cut_short_between_delete_and_rename_is_finished_by_the_next_open(
    next_step: str, runner: CliRunner
) -> None:
    populate(FakeEmbedder())
    before = chroma_rows(make_memcli(FakeEmbedder()))
    small = SmallEmbedder()
    memories = crash_before_the_rename(make_memcli(small))
    assert len(memories) == len(before)

    engine = make_memcli(SmallEmbedder())
    if next_step == "a transaction":
        with engine.store.transaction():
            assert engine.store.embedder_record() == "SmallEmbedder"
    else:
        use(SmallEmbedder())
        hits = json.loads(
            ok(runner.invoke(app, ["recall", "cello orchestra", "--user", "ana", "--json", "--no-reinforce"])).stdout
        )
        assert hits[0]["text"] == CELLO
    assert collections(engine) == {COLLECTION}
    assert record(engine) == "SmallEmbedder"
    after = chroma_rows(engine)
    assert after.keys() == before.keys()
    for memory_id, (document, metadata, _) in before.items():
        assert after[memory_id][:2] == (document, metadata), memory_id
    assert_every_vector_is(engine, small)
    assert recalled(engine, "blue vase grandmother", "bob")[0] == BOB_TURNS[2][1]


def test_reindex_keeps_archived_memories_and_ended_facts_out_of_recall(runner: CliRunner) -> None:
    use(FakeEmbedder())
    populate(FakeEmbedder())
    ended = Memory(
        id=stable_id("bob", "fact", "paris"),
        user="bob",
        kind=Kind.FACT.value,
        text="Bob lives in Paris",
        created_at=at(20),
        day="2023-05-08",
        source="test",
        valid_from=at(20),
        valid_to=at(30),
    )
    current = Memory(
        id=stable_id("bob", "fact", "lisbon"),
        user="bob",
        kind=Kind.FACT.value,
        text="Bob lives in Lisbon",
        created_at=at(30),
        day="2023-05-08",
        source="test",
        valid_from=at(30),
    )
    make_memcli(FakeEmbedder()).add_memories([ended, current])
    cello = stable_id("ana", "note", CELLO)
    ok(runner.invoke(app, ["pin", cello]))
    report = json.loads(
        ok(runner.invoke(app, ["forget", "--user", "ana", "--now", "2031-01-01T00:00:00", "--json"])).stdout
    )
    assert report["archived"] == 1  # the puppy; the cello is pinned
    assert [m["text"] for m in list_json(runner, "--user", "ana", "--archived")] == [PUPPY]

    def check(engine: Engine) -> None:
        assert PUPPY not in recalled(engine, "puppy named Rex", "ana")
        assert CELLO in recalled(engine, "puppy named Rex cello", "ana")
        found = recalled(engine, "Bob lives in Paris", "bob")
        assert "Bob lives in Paris" not in found and "Bob lives in Lisbon" in found
        with engine.store.transaction():
            for user, gone, flag in (("ana", stable_id("ana", "note", PUPPY), "archived"), ("bob", ended.id, "ended")):
                index = engine.store.recall_index(user, engine.embedder.embed)
                slot = index.ids.index(gone)
                assert bool(getattr(index, flag)[slot]), (user, flag)

    check(make_memcli(FakeEmbedder()))
    before_rows = chroma_rows(make_memcli(FakeEmbedder()))
    before = {m.id: m.to_dict() for m in all_memories(make_memcli(FakeEmbedder()))}
    archived = before[stable_id("ana", "note", PUPPY)]
    assert archived["archived"] and archived["archived_at"] > 0
    assert before[ended.id]["valid_to"] == at(30)

    use(SmallEmbedder())
    ok(runner.invoke(app, ["reindex", "--quiet"]))
    engine = make_memcli(SmallEmbedder())
    assert {m.id: m.to_dict() for m in all_memories(engine)} == before  # every field, archived and valid_to included
    after_rows = chroma_rows(engine)
    assert {i: row[:2] for i, row in after_rows.items()} == {i: row[:2] for i, row in before_rows.items()}
    assert_every_vector_is(engine, SmallEmbedder())  # archived and ended ones re-embedded too
    check(engine)
    assert [m["text"] for m in list_json(runner, "--user", "ana", "--archived")] == [PUPPY]
    ok(runner.invoke(app, ["restore", stable_id("ana", "note", PUPPY)]))
    assert recalled(make_memcli(SmallEmbedder()), "puppy named Rex", "ana")[0] == PUPPY  # its new vector works


def test_a_write_racing_a_reindex_is_refused_and_writes_nothing() -> None:
    populate(FakeEmbedder())
    engine = make_memcli(FakeEmbedder())
    before = chroma_rows(engine)
    late = note("I keep bees on the roof", minute=5)
    vector = FakeEmbedder().embed([late.index_text()])
    with engine.store.transaction():
        indexed = engine.store.sidecar.index.count()
        engine.store.begin_reindex("SmallEmbedder")
        for identity in ("FakeEmbedder", "SmallEmbedder"):
            with pytest.raises(EmbedderChangedError, match="interrupted"):
                engine.store.add([late], vector, embedder=identity)
            with pytest.raises(EmbedderChangedError, match="interrupted"):
                engine.store.upsert([late], vector, embedder=identity)
        assert not engine.store.existing_ids([late.id])
        assert engine.store.sidecar.index.count() == indexed
        assert late.id not in engine.store.sidecar.index.ids("ana")
        assert engine.store._client.get_collection(STAGING, embedding_function=None).count() == 0
    # and from another memcli, later (the mark stays until a reindex finishes)
    other = make_memcli(FakeEmbedder())
    with other.store.transaction(), pytest.raises(EmbedderChangedError, match="interrupted"):
        other.store.add([late], vector, embedder="FakeEmbedder")
    refusal(lambda: other.add_memories([late]))
    assert_same_rows(chroma_rows(other), before)
    with other.store.transaction():
        assert other.store.sidecar.index.count() == indexed
    assert record(other) == REINDEXING + "SmallEmbedder"


# the identity of a model directory: its weights ---------------------------------------------


def fingerprint(path: Path) -> str:
    return Embedder(path).identity.rpartition("@")[2]


def test_two_directories_with_the_same_files_have_the_same_fingerprint(tmp_path: Path) -> None:
    weights = bytes(range(256)) * 12288  # 3 MiB: more than the first and last MiB
    for name in ("one", "two"):
        model_dir(tmp_path / name)
        (tmp_path / name / "model.safetensors").write_bytes(weights)
    assert fingerprint(tmp_path / "one") == fingerprint(tmp_path / "two")
    assert Embedder(tmp_path / "one").identity != Embedder(tmp_path / "two").identity  # the names differ
    assert same_embedder(Embedder(tmp_path / "one").identity, Embedder(tmp_path / "two").identity)


@pytest.mark.parametrize("change", ["same size", "another size", "the first MiB", "the last MiB"])
def test_the_fingerprint_changes_with_the_weights_and_the_same_configuration(tmp_path: Path, change: str) -> None:
    weights = bytearray(bytes(range(256)) * 12288)  # 3 MiB
    model_dir(tmp_path / "base")
    (tmp_path / "base" / "model.safetensors").write_bytes(weights)
    model_dir(tmp_path / "tuned")
    if change == "same size":
        changed = bytes(b ^ 0xFF for b in weights)
    elif change == "another size":
        changed = bytes(weights) + b"\0"
    elif change == "the first MiB":
        weights[10] ^= 0xFF
        changed = bytes(weights)
    else:
        weights[-10] ^= 0xFF
        changed = bytes(weights)
    (tmp_path / "tuned" / "model.safetensors").write_bytes(changed)
    assert fingerprint(tmp_path / "base") != fingerprint(tmp_path / "tuned")
    assert not same_embedder(Embedder(tmp_path / "base").identity, Embedder(tmp_path / "tuned").identity)


@pytest.mark.parametrize("weights", ["pytorch_model.bin", "model.onnx", "onnx/model.onnx"])
def test_the_fingerprint_reads_other_weights_files(tmp_path: Path, weights: str) -> None:
    for name, content in (("one", b"weights one"), ("two", b"weights two"), ("copy", b"weights one")):
        model_dir(tmp_path / name)
        (tmp_path / name / "model.safetensors").unlink()
        (tmp_path / name / weights).parent.mkdir(exist_ok=True)
        (tmp_path / name / weights).write_bytes(content)
    assert fingerprint(tmp_path / "one") == fingerprint(tmp_path / "copy")
    assert fingerprint(tmp_path / "one") != fingerprint(tmp_path / "two")
