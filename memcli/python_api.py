"""memcli's Python API: one user's memory, through the memcli service when it runs and in
this process otherwise, with the same verbs as the ``memcli`` command.

    import memcli

    m = memcli.open(user="sam")
    m.remember("I moved from Leeds to York last month.", tags=["home"])
    for found in m.recall("Where do I live?", k=3):
        print(found.score.score, found.text)
    print(m.ask("Where do I live?").answer)

Each method sends its verb through the one route every front end uses
(``memcli.transport.entry.call``: the service, or this process when the service is off or
cannot start), so a method does exactly what the command of the same name does, and
returns the ``memcli.schema`` model that the command's ``--json`` prints. Errors are the
``memcli.errors.MemcliError`` subclasses the commands turn into exit codes
(``NotFoundError``, ``BadInputError``, ...).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from memcli import schema
from memcli.library import verbs
from memcli.paths import Paths, check_home, resolve_paths
from memcli.transport.client import Handlers
from memcli.transport.entry import call


class Client:
    """One user's memory (``user``: None for the ``user`` setting, as the command's
    ``--user`` default) in the memcli home ``paths``. ``service``: False runs every verb in
    this process (as ``--no-service``); ``on_notice`` receives the status lines the command
    prints on stderr (default: dropped). Made by ``memcli.open``."""

    def __init__(
        self,
        paths: Paths,
        user: str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        service: bool = True,
        on_notice: Callable[[str], None] | None = None,
    ) -> None:
        self.paths = paths
        self.user = user
        self._env = dict(os.environ if env is None else env)
        self._service = service
        self._notice = on_notice or (lambda message: None)

    def _call(self, verb: str, args: dict[str, Any], *, user_arg: bool = True) -> Any:
        """Send ``verb`` with ``args`` (``user`` added when the verb takes one) and return
        its result as the ``memcli.schema`` model the verb table names (a list of them for
        a verb that returns many, None for an empty optional result)."""
        if user_arg and self.user is not None and args.get("user") is None:
            args = {**args, "user": self.user}
        args = {k: v for k, v in args.items() if v is not None}
        handlers = Handlers(notice=self._notice, warning=self._notice)
        view = call(self.paths, verb, args, handlers, no_service=not self._service, env=self._env)
        model = getattr(schema, verbs.VERBS[verb].result)
        data = verbs.dump(view)
        if data is None:
            return None
        if isinstance(data, list):
            return [model.model_validate(item) for item in data]
        return model.model_validate(data)

    # --- memories ----------------------------------------------------------------------

    def remember(self, text: str, importance: float = 0.5, tags: Sequence[str] = ()) -> schema.Remembered:
        """Store a note (``memcli remember``): its ids, one per chunk of 1,000 characters."""
        return self._call("remember", {"text": text, "importance": importance, "tags": list(tags)})

    def recall(
        self,
        query: str,
        k: int = 10,
        kind: Optional[str] = None,
        tags: Sequence[str] = (),
        since: Optional[str] = None,
        at: Optional[str] = None,
        reinforce: bool = True,
    ) -> list[schema.RecalledMemory]:
        """The ``k`` memories that answer ``query``, best first, each with its score
        (``memcli recall``); ``kind``: only that kind; ``tags``: only memories with every
        one; ``since``/``at``: dates (YYYY-MM-DD, or as the command reads them), ``at`` the
        store as of that date; ``reinforce``: False leaves their strength as it was."""
        args = {"query": query, "k": k, "kind": kind, "tags": list(tags), "since": since, "at": at}
        return self._call("recall", {**args, "reinforce": reinforce})

    def ask(self, question: str) -> schema.Answer:
        """One answer grounded in recalled memories, citing them (``memcli ask``)."""
        return self._call("ask", {"question": question})

    def list(
        self, kind: Optional[str] = None, tags: Sequence[str] = (), limit: int = 20, archived: bool = False
    ) -> list[schema.Memory]:
        """The newest memories first (``memcli list``; ``limit`` 0: all)."""
        return self._call("list", {"kind": kind, "tags": list(tags), "limit": limit, "archived": archived})

    def show(self, id: str) -> schema.Memory:
        """Every field of one memory (an id or a unique prefix of at least 4 characters)."""
        return self._call("show", {"id": id}, user_arg=False)

    def edit(
        self,
        id: str,
        text: Optional[str] = None,
        importance: Optional[float] = None,
        tags: Sequence[str] = (),
        untags: Sequence[str] = (),
    ) -> schema.Memory:
        """Change a memory's text, importance or tags (``memcli edit``)."""
        args = {"id": id, "text": text, "importance": importance, "tags": list(tags), "untags": list(untags)}
        return self._call("edit", args, user_arg=False)

    def delete(self, id: str) -> schema.Memory:
        """Delete a memory for good, with what consolidation made from it (``memcli delete``)."""
        return self._call("delete", {"id": id}, user_arg=False)

    def pin(self, id: str, pinned: bool = True) -> schema.Memory:
        """Pin a memory (it never fades), or unpin it."""
        return self._call("pin", {"id": id, "pinned": pinned}, user_arg=False)

    def restore(self, id: str) -> schema.Memory:
        """Bring a forgotten (archived) memory back."""
        return self._call("restore", {"id": id}, user_arg=False)

    def feedback(self, id: str, vote: int) -> schema.Memory:
        """Rate a memory's value: 1 (up) or -1 (down); it weighs in its recall score."""
        return self._call("feedback", {"id": id, "vote": vote}, user_arg=False)

    def history(self, id: Optional[str] = None, limit: int = 20) -> list[schema.HistoryEntry]:
        """How consolidation and edits changed a memory, or the newest events (``memcli history``)."""
        return self._call("history", {"id": id, "limit": limit})

    # --- forgetting and consolidation ----------------------------------------------------

    def forget(self, dry_run: bool = False, purge: bool = False, stochastic: bool = False) -> schema.ForgetResult:
        """Archive what has faded below ``forget_threshold`` (``memcli forget``)."""
        return self._call("forget", {"dry_run": dry_run, "purge": purge, "stochastic": stochastic})

    def consolidate(
        self, since: Optional[str] = None, until: Optional[str] = None, dry_run: bool = False
    ) -> schema.ConsolidateResult:
        """Event summaries, portraits, the running memory and facts of what is new (``memcli consolidate``)."""
        return self._call("consolidate", {"since": since, "until": until, "dry_run": dry_run})

    def portrait(self) -> Optional[schema.Memory]:
        """The global portrait consolidation wrote, or None before the first one."""
        return self._call("portrait", {})

    def summary(self, day: Optional[str] = None, running: bool = False) -> Optional[schema.Memory]:
        """The global event summary, a day's (``day``), or the running memory (``running``)."""
        return self._call("summary", {"day": day, "running": running})

    def stats(self) -> schema.Stats:
        """Counts by kind, days covered, retention histogram (``memcli stats``)."""
        return self._call("stats", {})

    # --- files ---------------------------------------------------------------------------

    def import_file(self, path: str | os.PathLike[str], format: Optional[str] = None) -> schema.ImportResult:
        """Import a file (LoCoMo, MemoryBank, JSONL, text or Markdown notes, a memcli export)."""
        return self._call("import", {"path": str(Path(path).resolve()), "format": format})

    def export(self, path: str | os.PathLike[str], history: bool = False) -> schema.ExportResult:
        """Write every memory of the user to ``path`` as JSON lines (``memcli export -o``)."""
        return self._call("export", {"path": str(Path(path).resolve()), "history": history})

    def graph_show(self, name: Optional[str] = None, at: Optional[str] = None, depth: int = 1) -> schema.GraphShow:
        """An entity of the graph memory (without ``name``: the user) with its relations."""
        return self._call("graph.show", {"name": name, "at": at, "depth": depth})


def open(user: str | None = None, home: str | os.PathLike[str] | None = None, *, service: bool = True) -> Client:
    """A ``Client`` on ``user``'s memory (None: the ``user`` setting) in the memcli home
    ``home`` (None: ``MEMCLI_HOME``, else the user's platform folders, as the command).
    Raises BadInputError for an empty ``MEMCLI_HOME`` and UnsafeHomeError when someone else
    controls one of its folders."""
    env = dict(os.environ)
    if home is not None:
        env["MEMCLI_HOME"] = str(Path(home).expanduser().resolve())
    paths = resolve_paths(env)
    check_home(paths)
    return Client(paths, user, env=env, service=service)
