"""The floor plan holds: memcli's import layers (pyproject.toml, checked by import-linter),
and one verb table whose every entry is a typed ``Memcli`` method returning its schema."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pytest

from memcli import schema
from memcli.errors import UsageError
from memcli.library import api, verbs
from memcli.library.library import Memcli

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_layers_contract_is_kept() -> None:
    """No module imports from a layer above its own (the contract in pyproject.toml);
    a broken contract fails here with import-linter's report."""
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), str(ROOT / "pyproject.toml"), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " kept, 0 broken" in done.stdout


@pytest.mark.parametrize("verb", sorted(verbs.VERBS))
def test_each_verb_names_a_typed_method_that_returns_its_schema(verb: str) -> None:
    """The client reads a result back as the table says (model name and shape): that must
    be the very type the library method declares, and every argument must be typed."""
    entry = verbs.VERBS[verb]
    method = getattr(Memcli, entry.method)
    hints = typing.get_type_hints(method)
    model = getattr(schema, entry.result)
    assert hints["return"] == {"one": model, "optional": typing.Optional[model], "many": list[model]}[entry.shape]
    assert method.__doc__, f"Memcli.{method.__name__} has no docstring"
    assert set(api.arguments(verb).model_fields) == set(hints) - {"return"}


@pytest.mark.parametrize("verb", sorted(verbs.VERBS))
def test_each_verb_result_has_a_view_with_the_same_fields(verb: str) -> None:
    """The client's view of a result has the schema model's fields, in its order."""
    from memcli.library import views

    entry = verbs.VERBS[verb]
    model, view = getattr(schema, entry.result), getattr(views, entry.result)
    assert list(view.__slots__) == list(model.model_fields)


@pytest.mark.parametrize(
    ("verb", "args", "message"),
    [
        ("remember", {"text": "hello", "tags": "abc"}, "argument 'tags'"),
        ("recall", {"query": "x", "k": "many"}, "argument 'k'"),
        ("recall", {"query": "x", "bogus": 1}, "unknown argument 'bogus'"),
        ("show", {}, "missing argument 'id'"),
        ("forget", {"dry_run": {"nested": [1]}}, "argument 'dry_run'"),
        ("nonsense", {}, "unknown request 'nonsense'"),
    ],
)
def test_a_request_with_wrong_arguments_is_a_usage_error_before_anything_runs(
    verb: str, args: dict, message: str
) -> None:
    """Arguments are validated from the method's signature before the method is called:
    the engine is never touched (here it does not even exist)."""
    with pytest.raises(UsageError, match=message):
        api.run(Memcli(None), verb, args)  # type: ignore[arg-type]


def test_the_verb_results_are_the_documented_schemas() -> None:
    """Every verb's result model is one the man page's JSON OUTPUT documents."""
    documented = {model.__name__ for model in schema.RESULTS.values()}
    for verb, entry in verbs.VERBS.items():
        assert entry.result in documented, f"{verb}: {entry.result} is not in schema.RESULTS"


def test_a_result_read_back_by_the_client_prints_the_same_json() -> None:
    """JSON of a schema model → the client's view → ``--json``: the same data, key order too."""
    import json

    memory = {name: None for name in schema.Memory.model_fields} | {
        "id": "ab12",
        "user": "sam",
        "kind": "note",
        "text": "tea",
        "speaker": "",
        "caption": "",
        "session": "",
        "day": "2026-01-02",
        "source": "remember",
        "source_ids": [],
        "tags": ["x"],
        "importance": 0.5,
        "strength": 1.0,
        "recall_count": 0,
        "feedback": 0.0,
        "pinned": False,
        "archived": False,
    }
    score = {
        "score": 0.5,
        "relevance": 1.0,
        "similarity": 0.3,
        "signals": {"lexical": 0.1},
        "components": {"relevance": 0.6},
    }
    data = [schema.RecalledMemory.model_validate({**memory, "score": score}).model_dump(mode="json")]
    back = verbs.dump(verbs.read("recall", data))
    assert json.dumps(back) == json.dumps(data)
    assert verbs.read("recall", data)[0].score.signals == {"lexical": 0.1}
    assert verbs.read("portrait", None) is None


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_the_tree_passes_ruff(command: list[str]) -> None:
    """The whole tree keeps the ruff rules and format of pyproject.toml (``[tool.ruff]``);
    ``ruff check --fix . && ruff format .`` mends most of what fails here."""
    ruff = Path(sys.executable).with_name("ruff")
    done = subprocess.run(
        [str(ruff), *command, "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def _function_level_imports() -> list[tuple[str, int, str]]:
    """(file, line, source line) of every import inside a function of the package, with
    whether a comment gives its reason: on the line itself or above its block of imports."""
    import ast

    found = []
    for path in sorted((ROOT / "memcli").rglob("*.py")):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    found.append((str(path.relative_to(ROOT)), inner.lineno, lines))
    return sorted({(f, n): (f, n, lines) for f, n, lines in found}.values(), key=lambda x: x[:2])


def test_every_function_level_import_says_why() -> None:
    """An import inside a function is there for a reason (the thin client, a heavy
    library, a rare path) written next to it; any other import belongs at the top."""
    unexplained = []
    for file, line, lines in _function_level_imports():
        i = line - 1
        if "#" in lines[i]:
            continue
        while i > 0 and lines[i - 1].strip().startswith(("import ", "from ")):
            i -= 1
        if not lines[i - 1].strip().startswith("#"):
            unexplained.append(f"{file}:{line}: {lines[line - 1].strip()}")
    assert not unexplained, "\n".join(unexplained)


def test_the_without_help_names_every_recall_lever() -> None:
    """``--without``'s help (written out, since the thin client does not import recall)
    names each lever ``Signals.without`` takes."""
    from memcli.cli.root import WithoutOpt
    from memcli.recall.retrieval import Signals

    help_text = typing.get_args(WithoutOpt)[1].help
    assert all(lever in help_text for lever in Signals.LEVERS), help_text
