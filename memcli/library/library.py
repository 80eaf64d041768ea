"""The memcli library: ``Memcli``, one public method per verb, each taking typed arguments
and returning the ``memcli.schema`` model that ``--json`` prints.

Every front end calls these methods through one table (``memcli.library.verbs`` names them,
``memcli.library.api.run`` validates a request's arguments against the method's signature and
calls it): the CLI in-process, the memcli service for each client request, ``memcli
eval``, and the MCP server. Nothing here prints; events a verb emits while it runs
(status lines, progress, streamed reply text) go to the ``emit`` it was built with.

The work itself is the engine's (``memcli.library.engine.Engine``: store, models, recall,
writes); this layer turns its domain objects into the documented shapes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

from memcli import schema
from memcli.library.admin_verbs import AdminVerbs
from memcli.library.consolidation_verbs import ConsolidationVerbs
from memcli.library.engine import Engine
from memcli.library.memory_verbs import MemoryVerbs
from memcli.library.outputs import Emit, _entity_out, _memory_fields, _relation_out, _silent, memory_out, recalled_out
from memcli.library.recall_verbs import RecallVerbs


class Memcli(MemoryVerbs, RecallVerbs, ConsolidationVerbs, AdminVerbs):
    """memcli's verbs over one ``Engine`` (one per command in-process, one per request in the
    service).

    Args:
        engine: the store, models and recall of this request (``memcli.library.engine.Engine``).
        emit: receives the verb's events (see ``Emit``); default: dropped.

    Each method raises the ``MemcliError`` its engine call raises (each names its own in
    ``memcli.library.engine``); ``memcli.library.api.run`` has validated the argument types before.
    """

    def __init__(self, engine: Engine, emit: Emit = _silent) -> None:
        self.engine = engine
        self.emit = emit

    def _progress(self, done: int, total: int) -> None:
        self.emit("progress", done=done, total=total)

    def _stage_progress(self, stage: str, done: int, total: int) -> None:
        self._progress(done, total)

    def eval_changes(
        self, path: str, answers: Optional[Literal["auto", "llm", "extractive"]] = None, details: bool = False
    ) -> schema.ChangesEvalResult:
        """Run life-change scenarios (notes at their dates, a question at its time) in a
        temporary store and score the answers (``evaluation.eval_changes``); ``answers``:
        the answering path (default: the setting). The chat model is this engine's."""
        settings = self.engine.settings
        chat_model = self.engine.chat_model if (answers or settings.answers) != "extractive" else None
        # heavy: the evaluation code loads the answers and consolidation (their patterns compile at import)
        from memcli.library import evaluation

        report = evaluation.eval_changes(
            Path(path), settings, self.engine.embedder, answers, self._stage_progress, details, chat_model=chat_model
        )
        return schema.ChangesEvalResult(**report.to_dict())


# Names that moved to memcli.library.outputs, still importable from here.
__all__ = ["Memcli", "Emit", "_silent", "memory_out", "recalled_out", "_memory_fields", "_entity_out", "_relation_out"]
