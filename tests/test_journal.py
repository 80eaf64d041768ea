"""The write-ahead journal (``memcli.store.journal``): whose files are still their writer's
business and whose are left for the next memcli to store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from memcli.memory import Kind, Memory
from memcli.store.journal import Journal


def memory(memory_id: str, text: str) -> Memory:
    return Memory(
        id=memory_id, user="default", kind=Kind.NOTE.value, text=text, created_at=1_700_000_000.0, day="2023-11-14"
    )


DIE_WRITING = """
import os, sys
from pathlib import Path
from memcli.store.journal import Journal
from memcli.memory import Memory
memory = Memory(id="ab12cd34ef56ab78", user="default", kind="note", text="Water the fig tree", created_at=1.7e9, day="2023-11-14")
with Journal(Path(sys.argv[1])).writing([memory]):
    print("journaled", flush=True)
    sys.stdin.read()  # killed here, before it stores the note
"""


def test_a_note_journaled_by_a_killed_writer_nobody_reaped_is_stored(tmp_path: Path) -> None:
    """A writer killed mid-write and not yet reaped (a zombie: its parent, or a container
    whose first process never reaps, has not waited for it) is gone: the next memcli stores
    its journaled note instead of waiting for it forever."""
    pending = tmp_path / "pending"
    writer = subprocess.Popen(
        [sys.executable, "-c", DIE_WRITING, str(pending)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "journaled"
        assert Journal(pending).pending() == []  # alive: its write is its own business
        os.kill(writer.pid, 9)
        for _ in range(200):  # not reaped: /proc shows it as a zombie once the kill has landed
            with open(f"/proc/{writer.pid}/stat", encoding="ascii") as f:
                if f.read().rpartition(")")[2].split()[0] == "Z":
                    break
            time.sleep(0.01)
        assert [memory.text for _, memory in Journal(pending).pending()] == ["Water the fig tree"]
    finally:
        writer.kill()
        writer.communicate()


def test_a_journal_file_of_an_earlier_process_with_a_live_pid_is_stored(tmp_path: Path) -> None:
    """A journal file whose writer's pid now belongs to a later process (pids are reused;
    the file name tells when its writer started) is stored, not left to that process."""
    pending = tmp_path / "pending"
    pending.mkdir()
    reused = memory("ab12cd34ef56ab78", "Renew the passport")
    (pending / f"{reused.id}-{os.getppid()}-1.json").write_text(json.dumps(reused.to_dict()), encoding="utf-8")
    assert [m.text for _, m in Journal(pending).pending()] == ["Renew the passport"]
    (pending / f"{reused.id}-{os.getppid()}-1.json").unlink()
    live = pending / f"{reused.id}-{os.getppid()}.json"  # the name without a start (older memcli): a live pid keeps it
    live.write_text(json.dumps(reused.to_dict()), encoding="utf-8")
    assert Journal(pending).pending() == []
