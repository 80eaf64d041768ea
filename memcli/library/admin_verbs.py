"""The verbs on files and on the store as a whole: import, export, reindex, migrate, and the
benchmarks run in temporary stores (``memcli.library.library.Memcli``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Optional

from memcli import schema
from memcli.errors import DISK_FULL_ERRNOS, BadInputError, DiskFullError
from memcli.formats import export
from memcli.library.engine import Engine
from memcli.library.outputs import Emit
from memcli.paths import device_of, export_target, writing_private


class AdminVerbs:
    """The import/export, maintenance and evaluation verbs of ``Memcli``."""

    engine: Engine
    emit: Emit

    def import_file(
        self,
        path: str,
        format: Optional[str] = None,
        user: Optional[str] = None,
        conversation: Optional[str] = None,
        retention_from: str = "import",
    ) -> schema.ImportResult:
        """Import a LoCoMo, MemoryBank, JSONL, text or memcli export file (``Engine.import_file``); progress
        events count the memories stored."""
        report = self.engine.import_file(Path(path), format, user, conversation, self._progress, retention_from)
        return schema.ImportResult(
            path=report.path,
            format=report.format,
            found=report.found,
            added=report.added,
            skipped=report.skipped,
            users=report.users,
            duration_seconds=round(report.seconds, 3),
            interrupted=report.interrupted,
            failed=report.failed,
            error=report.stopped or None,
        )

    def export(
        self,
        user: Optional[str] = None,
        all_users: bool = False,
        path: Optional[str] = None,
        history: bool = False,
        with_vectors: bool = False,
    ) -> schema.ExportResult:
        """Export ``user``'s memories (every user's with ``all_users``) in the memcli format
        (``memcli.formats.export``), with the history and each memory's stored vector when asked:
        to the file ``path`` (absolute: the service's working directory is not the
        caller's), written atomically (a temporary file renamed at the end, 0600; through a
        symlink, to the file it names: ``memcli.paths.export_target``), or without one as
        ``piece`` events, a page of lines each. The store is read a page at a time and held
        until the end. Raises BadInputError when the file cannot be written (a folder, a
        device, a FIFO, a missing folder, no permission), DiskFullError when the device is
        full."""
        started = time.perf_counter()
        head, pages = self.engine.export(user, all_users, history, with_vectors)
        with contextlib.closing(pages):
            if path is None:
                written = export.write_pages(pages, lambda text: self.emit("piece", text=text))
            else:
                target = export_target(Path(path))
                try:
                    with writing_private(target) as f:
                        written = export.write_pages(pages, lambda text: f.write(text.encode("utf-8")))
                except OSError as exc:
                    if exc.errno in DISK_FULL_ERRNOS:
                        raise DiskFullError(
                            f"no space left on {device_of(target.parent)}; {path} was not written"
                        ) from None
                    raise BadInputError(f"cannot write {path}: {exc.strerror or exc}") from None
        return schema.ExportResult(
            path=path,
            format_version=head["format_version"],
            embedder=head["embedder"],
            lines=written.lines,
            memories=written.memories,
            history_events=written.history,
            progress_marks=written.progress,
            vectors=with_vectors,
            size_bytes=written.size_bytes,
            duration_seconds=round(time.perf_counter() - started, 3),
        )

    def reindex(self, force: bool = False) -> schema.ReindexResult:
        """Re-embed every memory with the configured embedder; progress is emitted."""
        return schema.ReindexResult(**self.engine.reindex(force, self._progress))

    def migrate(self, to: Optional[str] = None) -> schema.MigrateResult:
        """``memcli migrate``: move the memories to the Chroma server at ``to`` (None: back to the folder)."""
        return schema.MigrateResult(**self.engine.migrate(to, self._progress))

    def eval_locomo(
        self,
        path: str,
        conversations: Sequence[str] = (),
        ranking: bool = True,
        without: Sequence[str] = (),
        imported: bool = False,
    ) -> schema.EvalResult:
        """Evidence recall@5/10/20 per LoCoMo category and recall latency, each conversation
        in a temporary store with this engine's settings and embedder
        (``evaluation.eval_locomo``): imported there, or with ``imported`` a copy of this
        engine's store, which holds it already; the user's own store is not changed."""
        # heavy: the evaluation code loads the answers and consolidation (their patterns compile at import)
        from memcli.library import evaluation

        report = evaluation.eval_locomo(
            Path(path),
            self.engine.settings,
            self.engine.embedder,
            conversations,
            self._stage_progress,
            ranking,
            without,
            self.engine.paths if imported else None,
            self.engine.store.transaction,
        )
        return schema.EvalResult(**report.to_dict())

    def eval_memorybank(
        self,
        path: str,
        probes: str,
        users: Sequence[str] = (),
        ranking: bool = True,
        without: Sequence[str] = (),
        details: bool = False,
    ) -> schema.ProbeEvalResult:
        """Hit@1/5/10 per probe type of probe questions over a MemoryBank history, in a
        temporary store (``evaluation.eval_memorybank``)."""
        # heavy: the evaluation code loads the answers and consolidation (their patterns compile at import)
        from memcli.library import evaluation

        report = evaluation.eval_memorybank(
            Path(path),
            Path(probes),
            self.engine.settings,
            self.engine.embedder,
            users,
            self._stage_progress,
            ranking,
            without,
            details,
        )
        return schema.ProbeEvalResult(**report.to_dict())

    def eval_consolidation(
        self,
        path: str,
        conversations: Sequence[str] = (),
        consolidation: Optional[Literal["auto", "llm", "extractive"]] = None,
        details: bool = False,
    ) -> schema.ConsolidationEvalResult:
        """Consolidate each LoCoMo conversation in a temporary store and score it against the
        dataset (``evaluation.eval_consolidation``); ``consolidation``: the path to measure
        (default: the setting). The chat model is this engine's, loaded once."""
        settings = self.engine.settings
        if consolidation is not None:
            settings = settings.model_copy(update={"consolidation": consolidation})
        chat_model = self.engine.chat_model if settings.consolidation != "extractive" else None
        # heavy: the evaluation code loads the answers and consolidation (their patterns compile at import)
        from memcli.library import evaluation

        report = evaluation.eval_consolidation(
            Path(path),
            settings,
            self.engine.embedder,
            conversations,
            self._stage_progress,
            details,
            chat_model=chat_model,
        )
        return schema.ConsolidationEvalResult(**report.to_dict())

    def eval_qa(
        self,
        path: str,
        conversations: Sequence[str] = (),
        limit: Optional[int] = None,
        context: Literal["memory", "full", "none"] = "memory",
        answers: Optional[Literal["auto", "llm", "extractive"]] = None,
        details: bool = False,
    ) -> schema.QaEvalResult:
        """Answer LoCoMo's questions (``limit`` a conversation) as ask does, or from the whole
        conversation or nothing (``context``), each conversation in a temporary store, and
        score them with LoCoMo's metric (``evaluation.eval_qa``); ``answers``: the answering
        path (default: the setting). The chat model is this engine's, loaded once."""
        settings = self.engine.settings
        chat_model = self.engine.chat_model if (answers or settings.answers) != "extractive" else None
        # heavy: the evaluation code loads the answers and consolidation (their patterns compile at import)
        from memcli.library import evaluation

        report = evaluation.eval_qa(
            Path(path),
            settings,
            self.engine.embedder,
            conversations,
            limit,
            context,
            answers,
            self._stage_progress,
            details,
            chat_model=chat_model,
        )
        return schema.QaEvalResult(**report.to_dict())
