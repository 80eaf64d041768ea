"""The write-ahead journal: what the user said (notes, chat turns), on disk before it is
stored and acknowledged, so that a crash, ``kill -9``, a locked store or a service
restart loses nothing (the next memcli that gets the store stores it).

One JSON file per memory in ``pending/``, named after the memory, the writer's pid and
when the writer started (``ID-PID-START.json``, so a later process given the same pid is not
taken for the writer), written to a temporary name, fsynced and renamed, so a file is whole or absent. A writer
stores its own memories and then drops their files; what other writers left (they failed,
or their process is gone) is stored by whoever flushes next. A write still in flight, in
this process or in another live one, is left to its writer: only the writer can tell
whether its memory was new to the store.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path

from memcli.errors import DISK_FULL_ERRNOS, READ_ONLY_ERRNOS, DiskFullError, ReadOnlyStoreError, StoreServerError
from memcli.memory import Kind, Memory
from memcli.paths import device_of, open_private, private_dir
from memcli.processes import process_start, same_process

_IN_FLIGHT: Counter[str] = Counter()
"""Ids of the memories this process is writing now, all threads."""
_IN_FLIGHT_LOCK = threading.Lock()


def _saved_for_later(memories: Sequence[Memory]) -> str:
    """What a command whose ``memories`` stay journaled (the store's server is down) says
    became of them."""
    what = "your note was" if all(m.kind == Kind.NOTE.value for m in memories) else "what was said was"
    return f"{what} saved and will be stored once the server is back (by the next memcli command that reaches it)"


class Journal:
    """The journal in ``directory`` (``Paths.pending_dir``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @contextlib.contextmanager
    def writing(self, memories: Sequence[Memory]) -> Iterator[Callable[[], None]]:
        """Journal ``memories`` for the block, in which the caller stores them; calling the
        value it yields drops their files (they are stored). Leaving the block without
        calling it leaves them journaled for the next flush. A Chroma server that cannot be
        used in the block (StoreServerError) leaves them journaled too, and its message says
        so: they are saved, and the next command that reaches the server stores them."""
        ids = [m.id for m in memories]
        with _IN_FLIGHT_LOCK:
            _IN_FLIGHT.update(ids)
        try:
            files = self._write(memories)
            try:
                yield lambda: self.discard(files)
            except (DiskFullError, ReadOnlyStoreError):
                self.discard(files)  # the error says nothing was kept: nothing stays journaled either
                raise
            except StoreServerError as exc:
                raise StoreServerError(f"{exc.reason}; {_saved_for_later(memories)}", exc.reason) from exc
        finally:
            with _IN_FLIGHT_LOCK:
                _IN_FLIGHT.subtract(ids)
                for memory_id in ids:
                    if _IN_FLIGHT[memory_id] <= 0:
                        del _IN_FLIGHT[memory_id]

    def _write(self, memories: Sequence[Memory]) -> list[Path]:
        """Write one file (0600, in a 0700 folder) per memory; returns them. Raises
        DiskFullError when the device is full and ReadOnlyStoreError when the folder
        cannot be written; what was written of the batch is removed first, so nothing is
        journaled (or acknowledged)."""
        written: list[Path] = []
        temporary: Path | None = None
        try:
            private_dir(self.directory)
            writer = f"{os.getpid()}-{process_start(os.getpid()) or 0}"
            for memory in memories:
                target = self.directory / f"{memory.id}-{writer}.json"
                temporary = target.with_suffix(".tmp")
                with os.fdopen(open_private(temporary), "w", encoding="utf-8") as f:
                    json.dump(memory.to_dict(), f, ensure_ascii=False)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(temporary, target)
                written.append(target)
        except OSError as exc:
            for path in [*written, *([temporary] if temporary is not None else [])]:
                with contextlib.suppress(OSError):
                    path.unlink()
            if exc.errno in DISK_FULL_ERRNOS:
                raise DiskFullError(f"no space left on {device_of(self.directory)}; nothing was stored") from exc
            if exc.errno in READ_ONLY_ERRNOS:
                raise ReadOnlyStoreError(
                    f"the memory store at {self.directory.parent} is read-only ({exc.filename or self.directory}: {exc.strerror}); "
                    "nothing was written"
                ) from exc
            raise
        # The renames are durable once the directory is: a power cut must not undo them.
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        return written

    def pending(self) -> list[tuple[Path, Memory]]:
        """(file, memory) of every journaled memory whose writer is done with it, oldest first."""
        if not self.directory.is_dir():
            return []
        out = []
        for path in sorted(self.directory.glob("*.json")):
            memory_id, _, writer = path.stem.partition("-")
            pid, _, started = writer.partition("-")
            if pid.isdigit() and (_in_flight(memory_id, int(pid)) or _alive_elsewhere(int(pid), started)):
                continue
            try:
                out.append((path, Memory(**json.loads(path.read_text(encoding="utf-8")))))
            except FileNotFoundError:
                continue  # its writer (another thread) stored it and dropped the file since the listing
            except (ValueError, TypeError):
                continue  # a torn write of a .json file cannot happen (rename), but never crash on one
        return sorted(out, key=lambda found: found[1].created_at)

    @staticmethod
    def discard(files: Sequence[Path]) -> None:
        """Drop journal files whose memories are stored."""
        for path in files:
            path.unlink(missing_ok=True)

    def drop(self, ids: Collection[str] = (), user: str | None = None) -> int:
        """Drop the journal files (left by a writer that stored them and died before
        discarding them, or not stored yet) of the memories ``ids``, or of every memory of
        ``user``: what is deleted for good must not come back at the next flush, nor stay
        on disk. Returns how many files were dropped."""
        if not self.directory.is_dir():
            return 0
        dropped = 0
        for path in self.directory.iterdir():
            if path.suffix not in (".json", ".tmp"):
                continue
            gone = path.stem.partition("-")[0] in ids
            if not gone and user is not None:
                try:
                    gone = json.loads(path.read_text(encoding="utf-8")).get("user") == user
                except (OSError, ValueError, AttributeError):
                    gone = False
            if gone:
                path.unlink(missing_ok=True)
                dropped += 1
        return dropped


def _in_flight(memory_id: str, pid: int) -> bool:
    with _IN_FLIGHT_LOCK:
        return pid == os.getpid() and memory_id in _IN_FLIGHT


def _alive_elsewhere(pid: int, started: str = "") -> bool:
    """Whether the writer ``pid`` (which started at ``started`` clock ticks since boot, when
    its file name tells) is another live process, whose journal files are its own business.
    A killed writer that nobody has reaped yet (a zombie: its parent, or a container's
    first process, does not reap) is gone, and so is a later process given its pid."""
    return pid != os.getpid() and same_process(pid, int(started) if started.isdigit() and int(started) else None)
