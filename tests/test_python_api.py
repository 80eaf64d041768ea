"""The Python API as a program uses it: only the public names of ``import memcli``
(``memcli.open``, ``memcli.Client``, ``memcli.schema``, ``memcli.MemcliError``), the
verbs returning the documented schema models, in this process and through the service."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import memcli


def test_the_package_names_its_public_api() -> None:
    """``memcli.__all__`` lists what a program may use, and each name is there."""
    assert {"open", "Client", "schema", "MemcliError", "__version__"} <= set(memcli.__all__)
    for name in memcli.__all__:
        assert getattr(memcli, name) is not None
    with pytest.raises(AttributeError):
        memcli.no_such_name  # noqa: B018


def test_a_note_remembered_is_recalled_and_answered(tmp_path: Path, fake_embedder: Any) -> None:
    """remember → recall → ask → show → list → delete, each returning its schema model
    (in this process: the test's MEMCLI_SERVICE=off, and the fake embedder)."""
    m = memcli.open(user="sam", home=tmp_path / "home")
    assert isinstance(m, memcli.Client)
    noted = m.remember("I moved from Leeds to York last month.", tags=["home"])
    assert isinstance(noted, memcli.schema.Remembered) and len(noted.ids) == 1
    m.remember("My sister's birthday is on 4 March.")

    found = m.recall("moved to York", k=2)
    assert [type(x) for x in found] == [memcli.schema.RecalledMemory] * 2
    assert found[0].id == noted.ids[0] and found[0].user == "sam" and found[0].tags == ["home"]

    answer = m.ask("Where did I move to?")
    assert isinstance(answer, memcli.schema.Answer) and noted.ids[0] in {c.id for c in answer.memories}

    shown = m.show(noted.ids[0][:6])
    assert isinstance(shown, memcli.schema.Memory) and shown.text.startswith("I moved")
    assert {x.id for x in m.list()} >= set(noted.ids)
    assert m.stats().memories == 2

    m.delete(noted.ids[0])
    with pytest.raises(memcli.MemcliError) as raised:
        m.show(noted.ids[0])
    assert raised.value.exit_code != 0


def test_users_are_kept_apart(tmp_path: Path, fake_embedder: Any) -> None:
    """Two clients on one home see only their own user's memories."""
    home = tmp_path / "home"
    sam, ana = memcli.open(user="sam", home=home), memcli.open(user="ana", home=home)
    sam.remember("Sam plays the cello")
    ana.remember("Ana plays the drums")
    assert [x.text for x in sam.list()] == ["Sam plays the cello"]
    assert [x.text for x in ana.recall("plays", k=5)] == ["Ana plays the drums"]


def test_bad_input_raises_the_error_the_command_exits_with(tmp_path: Path, fake_embedder: Any) -> None:
    """An empty note is the same BadInputError (exit 5) as ``memcli remember ''``, and
    nothing is stored."""
    m = memcli.open(user="sam", home=tmp_path / "home")
    with pytest.raises(memcli.errors.BadInputError) as raised:
        m.remember("   ")
    assert raised.value.exit_code == 5
    assert m.list() == []


@pytest.mark.integration
def test_through_the_service_with_the_default_embedder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the service on (as a program gets it by default), the verbs run in the
    service, which loads the real default embedder; the service is stopped after."""
    monkeypatch.delenv("MEMCLI_SERVICE")
    home = tmp_path / "home"
    m = memcli.open(user="sam", home=home)
    try:
        noted = m.remember("The cardiologist raised my atorvastatin to 40 mg.")
        found = m.recall("what medication do I take", k=1)
        assert found[0].id == noted.ids[0]
        assert (home / "state").exists() and any(p.name.endswith(".sock") for p in (home / "state").rglob("*"))
    finally:
        from typer.testing import CliRunner

        from memcli.cli import app

        CliRunner().invoke(app, ["service", "stop"], env={**os.environ, "MEMCLI_HOME": str(home)})
