"""The verb table: each verb a client may send, the ``memcli.library.library.Memcli`` method it
runs, and the shape of its result.

A result is one model of ``memcli.schema`` (``one``), one or none (``optional``), or a list
of them (``many``), named here by the model's name. The library returns the pydantic
models; the thin client reads the JSON back into the generated views of the same name
(``memcli.library.views``, no pydantic: it would double every command's start-up time). This module
imports neither, so the client stays light; a test holds the table to the methods' own
return annotations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from memcli.errors import BadInputError
from memcli.memory import unstorable

Shape = Literal["one", "optional", "many"]


class Verb(NamedTuple):
    """One verb: the ``Memcli`` method that runs it, the name of the schema model it
    returns, and how many (``Shape``)."""

    method: str
    result: str
    shape: Shape = "one"


VERBS: dict[str, Verb] = {
    "recall": Verb("recall", "RecalledMemory", "many"),
    "remember": Verb("remember", "Remembered"),
    "ask": Verb("ask", "Answer"),
    "import": Verb("import_file", "ImportResult"),
    "export": Verb("export", "ExportResult"),
    "list": Verb("list_memories", "Memory", "many"),
    "show": Verb("show", "Memory"),
    "delete": Verb("delete", "Memory"),
    "restore": Verb("restore", "Memory"),
    "archive": Verb("archive", "Memory"),
    "pin": Verb("pin", "Memory"),
    "feedback": Verb("feedback", "Memory"),
    "edit": Verb("edit", "Memory"),
    "history": Verb("history", "HistoryEntry", "many"),
    "forget": Verb("forget", "ForgetResult"),
    "purge-user": Verb("purge_user", "PurgeUserResult"),
    "consolidate": Verb("consolidate", "ConsolidateResult"),
    "portrait": Verb("portrait", "Memory", "optional"),
    "portrait.daily": Verb("daily_portraits", "Memory", "many"),
    "summary": Verb("summary", "Memory", "optional"),
    "stats": Verb("stats", "Stats"),
    "reindex": Verb("reindex", "ReindexResult"),
    "migrate": Verb("migrate", "MigrateResult"),
    "complete": Verb("complete", "Completion", "many"),
    "chat.open": Verb("chat_open", "ChatState"),
    "chat.respond": Verb("chat_respond", "ChatReply"),
    "graph.show": Verb("graph_show", "GraphShow"),
    "graph.list": Verb("graph_list", "GraphEntity", "many"),
    "graph.export": Verb("graph_export", "GraphExport"),
    "graph.merge": Verb("graph_merge", "GraphEntity"),
    "graph.rename": Verb("graph_rename", "GraphEntity"),
    "eval.locomo": Verb("eval_locomo", "EvalResult"),
    "eval.memorybank": Verb("eval_memorybank", "ProbeEvalResult"),
    "eval.consolidation": Verb("eval_consolidation", "ConsolidationEvalResult"),
    "eval.qa": Verb("eval_qa", "QaEvalResult"),
    "eval.changes": Verb("eval_changes", "ChangesEvalResult"),
}
"""Every verb, by the name a request carries."""

INTERACTIVE_VERBS = frozenset({"ask", "chat.open", "chat.respond"})
"""Verbs a person waits on at a prompt: their model calls go before a consolidation's next one."""


def check_text(args: Mapping[str, Any]) -> None:
    """Refuse a request whose arguments hold a string that is not text
    (``memcli.memory.unstorable``: a NUL, a byte that is not UTF-8, a lone surrogate),
    whatever the argument (a note, a query, a user name, a file name): BadInputError naming
    the argument and the first offender, before anything runs or is sent. The entry
    (``memcli.transport.entry.call``) checks before it chooses the service or this process, and
    ``memcli.library.api.run`` again for every request it runs (another client of the socket)."""

    def first(value: Any) -> str | None:
        if isinstance(value, str):
            return unstorable(value)
        if isinstance(value, Mapping):
            value = [*value.keys(), *value.values()]
        if isinstance(value, (list, tuple)):
            return next((reason for reason in map(first, value) if reason), None)
        return None

    for name, value in args.items():
        reason = first(value)
        if reason:
            raise BadInputError(f"argument {name!r} {reason}")


def read(verb: str, data: Any) -> Any:
    """The JSON result of ``verb`` (as the service sends it) as its view
    (``memcli.library.views``): one, None, or a list. Raises KeyError for an unknown verb."""
    # thin client: the views (1,400 lines) load only when a result is read
    from memcli.library import views

    entry = VERBS[verb]
    view = getattr(views, entry.result)
    if entry.shape == "many":
        return [view.of(x) for x in data]
    if entry.shape == "optional" and data is None:
        return None
    return view.of(data)


def dump(result: Any) -> Any:
    """A verb's result (a schema model or view, a list of them, or None) as JSON-ready
    data: exactly what ``--json`` prints."""
    if isinstance(result, list):
        return [dump(x) for x in result]
    if hasattr(result, "model_dump"):
        return result.model_dump(mode="json")
    if hasattr(result, "to_json"):
        return result.to_json()
    return result
