"""A chat's first turn does not wait for what its opening can do ahead: Chroma, which a
service's store opens at its first write (the turn's message), is opened when the chat
opens, alongside the chat model's load."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest
from cli_checks import ok
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import resolve_paths
from memcli.library.chat import open_store_ahead
from memcli.store.store import MemoryStore

pytestmark = pytest.mark.usefixtures("fake_embedder")

CLOSE_ONCE = """
from memcli.config import resolve_paths
from memcli.store.store import MemoryStore

store = MemoryStore(resolve_paths())
store.open_resident()
store.close()
"""


def test_a_chat_opening_opens_a_deferred_store_before_the_first_turn(runner: CliRunner) -> None:
    ok(runner.invoke(app, ["remember", "I live in York"]))
    # a service that closed its store records it: the next one opens it without Chroma
    subprocess.run([sys.executable, "-P", "-c", CLOSE_ONCE], check=True, timeout=120)
    store = MemoryStore(resolve_paths())
    store.open_resident()
    try:
        assert store.chroma_deferred
        thread = open_store_ahead(SimpleNamespace(store=store))  # type: ignore[arg-type]
        assert thread is not None
        thread.join(120)
        assert not store.chroma_deferred  # opened with no write
        assert store._col.count() == 1
        assert sorted(m.text for m in store.memories(user="tester")) == ["I live in York"]
        assert open_store_ahead(SimpleNamespace(store=store)) is None  # open already: nothing to do
    finally:
        store.close()


def test_a_store_opened_whole_in_process_is_left_alone(runner: CliRunner) -> None:
    ok(runner.invoke(app, ["remember", "I live in York"]))
    assert open_store_ahead(SimpleNamespace(store=SimpleNamespace(resident=False, chroma_deferred=True))) is None  # type: ignore[arg-type]
