"""The fault harness: drive the real ``memcli`` command in subprocesses, in temporary
MEMCLI_HOMEs, through kill -9 trials, concurrent writers, a corpus of bad inputs and a
purge grep, and check memcli's invariants after each.

    python scripts/faults.py [--quick] [--trials N] [--json] [--only CASE]... [--fake-models] [--jobs J]

Invariants checked:

- every acknowledged write is present exactly once after the fault and a recovery run:
  a ``remember`` that exited 0 with an id, an import that exited 0 reporting what it
  found, a chat line whose reply was printed (a ``/remember`` after each line marks
  that the reply before it was complete);
- no duplicates (the same text the harness wrote, stored twice; two daily summaries of
  one day; two global summaries, portraits or running memories of one user);
- no hang (every command has a timeout), no Python traceback on stderr, the store opens
  afterwards;
- "already remembered" only for a note stored before (concurrency case: every text is new);
- bad input exits with its documented code (``memcli.errors.EXIT_CODE_MEANINGS``, the
  table behind ``memcli --help`` and docs/errors.md; never 1 "unexpected"), prints one line on
  stderr and leaves the store unchanged (ids, kinds and texts of ``list -n 0 --json``,
  active and archived, and ``stats --json`` without its byte count);
- after ``delete``, ``forget --purge`` and purging a user, no file under MEMCLI_HOME
  contains the purged text (byte-wise), while before the purge one did;
- the second fault probe's cases (issue 34, ``probe:``): ``export -o`` never replaces a
  FIFO or a folder and writes through a symlink; a long note is chunked and consolidates
  without hanging; a model server that floods, trickles, sends garbage or echoes the key
  is cut, given up or named (exit 3) with the key nowhere; ``memcli mcp`` answers every
  malformed stdio message with its JSON-RPC error.

It prints one table (``--json``: the same rows as JSON) and exits 1 when an invariant
failed, 0 otherwise. Kill trials run with the service off (each process is short-lived)
except the service case, which kill -9s the service under two writing clients. By
default the real configured models are used (consolidation on its extractive path, chat
replies capped at 48 tokens); ``--fake-models`` runs ``python tests/fakes cli``, the
same CLI with the test fakes, for the test suite's quick mode.

The harness makes itself the subreaper of what it starts and reaps none of the orphans
(``never_reap``): a service or writer killed after its parent exited stays a zombie for the
rest of the run, as it does where a container's first process does not reap (CI did that:
memcli took such a zombie for a live writer and left a note in its journal). ``--reap``
leaves orphans to the system.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memcli.errors import EXIT_CODE_MEANINGS, ExitCode  # noqa: E402  (light: no heavy import)
from memcli.processes import running  # noqa: E402

TRACEBACK = "Traceback (most recent call last)"
KILL_SHARES = {
    "kill: import": 0.25,
    "kill: chat": 0.15,
    "kill: consolidate": 0.15,
    "kill: forget": 0.1,
    "kill: forget --purge": 0.1,
    "kill: service": 0.25,
}
"""How the kill trials are spread over the cases (default 100 in all)."""
CASES = (
    "concurrency (service)",
    "concurrency (no service)",
    "bad: ",
    "full disk: read, delete, restart",
    "service: held by clients",
    "service: a folder named memcli here",
    "chat: transcript and citations",
    "graph: backup, purge, restore",
    "kill: service mid-command",
    "kill: service while recall reinforces",
    "purge grep: ",
    "probe: export -o FIFO, folder, symlink, stale temp",
    "probe: long note (chunked, consolidates, edit refused)",
    "probe: server ",
    "probe: MCP stdio malformed requests",
    "probe: Chroma server killed mid-import, remember while down",
    "probe: no network ",
)
"""The cases run after the kill trials of KILL_SHARES, in their order; a name ending in a
space is a group of cases whose rows are named after it (``bad: empty file``). The
``probe:`` cases are those of issue 34 (a second fault probe): items 1, 2, 4-6, 8 and 11,
the Chroma server killed mid-import not in ``--quick``: it starts a real server twice.
"probe: no network " runs the everyday commands traced (strace) and in a network namespace
with only loopback (``unshare -rn``), each where the tool works here."""
FUTURE = "2031-01-01T00:00:00"
"""A clock at which every unpinned test memory has faded (forget trials)."""
SNAPSHOT_NOW = "2030-01-01T00:00:00"
"""The fixed clock of ``stats`` in store snapshots, so that retention does not move."""
VOLATILE_STATS = ("store_bytes",)
DERIVED = ("fact", "event_daily", "event_global", "portrait_daily", "portrait_global", "running_summary")
"""Kinds consolidation writes: they may quote the harness's texts, so they are checked per day/user instead."""


@dataclass
class Row:
    """One line of the table: a case and what its trials found."""

    case: str
    trials: int = 0
    killed: int = 0
    acknowledged: int = 0
    lost: int = 0
    duplicates: int = 0
    hangs: int = 0
    tracebacks: int = 0
    unchanged_passed: int = 0
    unchanged_total: int = 0
    lies: int = 0
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (
            self.lost
            or self.duplicates
            or self.hangs
            or self.tracebacks
            or self.lies
            or self.failures
            or self.unchanged_passed != self.unchanged_total
        )

    def add(self, other: Row) -> None:
        for name in (
            "trials",
            "killed",
            "acknowledged",
            "lost",
            "duplicates",
            "hangs",
            "tracebacks",
            "unchanged_passed",
            "unchanged_total",
            "lies",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failures += other.failures
        self.notes += other.notes


@dataclass
class Result:
    """One finished (or killed, or timed-out) memcli process."""

    argv: list[str]
    code: int | None
    out: str
    err: str
    hung: bool = False
    killed: bool = False
    seconds: float = 0.0

    @property
    def traceback(self) -> bool:
        return TRACEBACK in self.err or TRACEBACK in self.out

    def describe(self) -> str:
        last = self.err.strip().splitlines()[-1:] or [""]
        return f"`memcli {' '.join(self.argv)}` exit {self.code}: {last[0][:200]}"


class Harness:
    """Runs memcli commands for one harness run: which executable (real or fakes), the
    base environment and the timeouts."""

    def __init__(self, fake: bool, quick: bool, workdir: Path) -> None:
        self.fake, self.quick, self.workdir = fake, quick, workdir
        self.command = (
            [sys.executable, str(ROOT / "tests" / "fakes"), "cli", "--"] if fake else [sys.executable, "-m", "memcli"]
        )
        self.timeout = 300.0 if fake else 900.0
        self.jobs = 2
        self.help_cache: dict[tuple[str, ...], str] = {}

    def env(self, home: Path, service: bool = False, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
        env.update(
            MEMCLI_HOME=str(home),
            MEMCLI_CONSOLIDATION="extractive",
            MEMCLI_MAX_TOKENS="48",
            # Each home would make its own ONNX export of the embedder in the background (8 s
            # of CPU once a home); the export has its own tests (tests/test_embedding_export.py).
            MEMCLI_EMBEDDER_ONNX="false",
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            PYTHONUNBUFFERED="1",
        )
        if not service:
            env["MEMCLI_SERVICE"] = "off"
        env.update(extra)
        return env

    def run(
        self,
        home: Path,
        *argv: str,
        input: str | bytes | None = None,
        service: bool = False,
        timeout: float | None = None,
        prefix: Iterable[str] = (),
        closed_stdin: bool = False,
        cwd: Path | None = None,
        command: list[str] | None = None,
        **extra: str,
    ) -> Result:
        """Run ``memcli argv`` to the end (killed after ``timeout`` s: a hang); ``input``
        (text, or bytes as they are) on its stdin, else none (``closed_stdin``: fd 0 closed, as ``<&-``);
        in ``cwd`` (default: the harness's workdir); ``command``: another program than memcli."""
        process = subprocess.Popen(
            [*prefix, *(command or self.command), *argv],
            stdin=subprocess.PIPE if input is not None else None if closed_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env(home, service, **extra),
            start_new_session=True,
            cwd=cwd or self.workdir,
            preexec_fn=(lambda: os.close(0)) if closed_stdin else None,
        )
        start = time.monotonic()
        try:
            data = input.encode() if isinstance(input, str) else input
            out, err = process.communicate(data, timeout=timeout or self.timeout)
            return Result(
                list(argv),
                process.returncode,
                out.decode(errors="replace"),
                err.decode(errors="replace"),
                seconds=time.monotonic() - start,
            )
        except subprocess.TimeoutExpired:
            _kill_group(process)
            out, err = process.communicate()
            return Result(
                list(argv),
                None,
                out.decode(errors="replace"),
                err.decode(errors="replace"),
                hung=True,
                seconds=time.monotonic() - start,
            )

    def run_killed(
        self, home: Path, argv: list[str], delay: float, input: str | None = None, after_lines: int = 0, **extra: str
    ) -> Result:
        """Start ``memcli argv`` and kill -9 it ``delay`` seconds later (or once its stderr
        has ``after_lines`` lines); a process that ends first is not killed."""
        out_file = tempfile.TemporaryFile(dir=self.workdir)
        err_path = Path(tempfile.mkstemp(dir=self.workdir)[1])
        with open(err_path, "wb") as err_file:
            process = subprocess.Popen(
                [*self.command, *argv],
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=out_file,
                stderr=err_file,
                env=self.env(home, **extra),
                cwd=self.workdir,
            )
        if input is not None:
            try:
                process.stdin.write(input.encode())
                process.stdin.close()
            except BrokenPipeError:
                pass
        deadline = time.monotonic() + (delay if not after_lines else self.timeout)
        killed = False
        while process.poll() is None:
            if time.monotonic() >= deadline or (after_lines and err_path.read_bytes().count(b"\n") >= after_lines):
                process.send_signal(signal.SIGKILL)
                killed = True
                break
            time.sleep(0.01)
        process.wait()
        out_file.seek(0)
        out = out_file.read().decode(errors="replace")
        err = err_path.read_bytes().decode(errors="replace")
        out_file.close()
        err_path.unlink()
        return Result(list(argv), process.returncode, out, err, killed=killed)

    def help(self, *argv: str) -> str:
        """The --help text of a memcli command (to see which options this tree has)."""
        if argv not in self.help_cache:
            done = self.run(self.workdir / "help-home", *argv, "--help", COLUMNS="200")
            self.help_cache[argv] = done.out
        return self.help_cache[argv]


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


class Check:
    """Accumulates what one trial finds into a Row."""

    def __init__(self, row: Row) -> None:
        self.row = row

    def saw(self, result: Result, expect_ok: bool = False) -> Result:
        self.row.killed += result.killed
        if result.hung:
            self.row.hangs += 1
            self.row.failures.append(f"hang: {result.describe()}")
        if result.traceback:
            self.row.tracebacks += 1
            self.row.failures.append(f"traceback: {result.describe()}")
        elif expect_ok and result.code != 0 and not result.hung:
            self.row.failures.append(f"failed: {result.describe()}")
        return result

    def memories(
        self, harness: Harness, home: Path, archived: bool = False, user: str | None = None, **extra: str
    ) -> list[dict] | None:
        argv = ["list", "-n", "0", "--json", *(["--archived"] if archived else []), *(["--user", user] if user else [])]
        return self.listed(harness.run(home, *argv, **extra))

    def listed(self, done: Result) -> list[dict] | None:
        """The memories ``done`` (a ``memcli list --json``) printed; None, with the failure, when it failed."""
        self.saw(done, expect_ok=True)
        if done.code != 0:
            self.row.failures.append("the store does not open after the fault")
            return None
        try:
            return json.loads(done.out)
        except ValueError:
            self.row.failures.append(f"`memcli {' '.join(done.argv)}` printed no JSON list")
            return None

    def present_once(
        self, memories: list[dict], acked: dict[str, str | None], archived: list[dict] | None = None
    ) -> None:
        """Every acknowledged text (with its printed id when known) is stored exactly once;
        no text of ``acked`` or of the harness's own writes is stored twice."""
        by_text = Counter(m["text"] for m in memories)
        ids = {m["text"]: m["id"] for m in memories}
        self.row.acknowledged += len(acked)
        for text, memory_id in acked.items():
            count = by_text[text]
            if count == 0:
                self.row.lost += 1
                self.row.failures.append(f"lost: {text[:60]!r}")
            elif memory_id and ids[text] != memory_id and not any(m["id"] == memory_id for m in memories):
                self.row.lost += 1
                self.row.failures.append(f"acknowledged id {memory_id} of {text[:40]!r} is gone (now {ids[text]})")
        self.duplicates(memories + (archived or []))

    def duplicates(self, memories: list[dict]) -> None:
        mine = Counter(m["text"] for m in memories if m["kind"] not in DERIVED and "fx" in m["text"])
        for text, count in mine.items():
            if count > 1:
                self.row.duplicates += count - 1
                self.row.failures.append(f"duplicate ({count}x): {text[:60]!r}")
        per_day = Counter(
            (m["user"], m["kind"], m["day"])
            for m in memories
            if m["kind"] in ("event_daily", "portrait_daily") and not m["archived"]
        )
        single = Counter(
            (m["user"], m["kind"])
            for m in memories
            if m["kind"] in ("event_global", "portrait_global", "running_summary") and not m["archived"]
        )
        for key, count in [*per_day.items(), *single.items()]:
            if count > 1:
                self.row.duplicates += count - 1
                self.row.failures.append(f"duplicate derived memory ({count}x): {' '.join(key)}")


SNAPSHOT_ARGV = (
    ["stats", "--json", "--now", SNAPSHOT_NOW],
    ["list", "-n", "0", "--json"],
    ["list", "-n", "0", "--json", "--archived"],
)
"""The commands whose output is a store's snapshot: its stats, its active and its archived memories."""


def snapshot(harness: Harness, home: Path, check: Check, **extra: str) -> dict | None:
    """What must not change: the memories (id, kind, text; active and archived) and the stats.
    The three commands of ``SNAPSHOT_ARGV`` run in one process (``snapshot_inside``), each
    in-process as memcli runs it with the service off: a store is compared a dozen times a
    run, and a process of its own for each command started Python and imported memcli again."""
    inside = [sys.executable, str(Path(__file__).resolve()), "--snapshot-inside", *(["--fake-models"] * harness.fake)]
    done = harness.run(home, command=inside, **extra)
    check.saw(done, expect_ok=True)  # the process as a whole: a crash at exit, a traceback after the commands
    try:
        results = [Result(**result) for result in json.loads(done.out)]
    except (ValueError, TypeError):  # killed, hung, or a crash before any command ran
        results = []
    if done.code != 0 or len(results) != len(SNAPSHOT_ARGV):
        check.row.failures.append("the store does not open after the fault")
        return None
    stats, active, archived = results
    check.saw(stats, expect_ok=True)
    active_memories = check.listed(active)
    if active_memories is None or stats.code != 0:
        return None
    numbers = {k: v for k, v in json.loads(stats.out).items() if k not in VOLATILE_STATS}
    archived_memories = check.listed(archived) if numbers.get("archived", 1) else []
    if archived_memories is None:
        return None
    return {
        "active": sorted([m["id"], m["kind"], m["text"]] for m in active_memories),
        "archived": sorted([m["id"], m["kind"], m["text"]] for m in archived_memories),
        "stats": numbers,
    }


def snapshot_inside(fake: bool) -> list[dict]:
    """Run each command of ``SNAPSHOT_ARGV`` in this process, one after the other, as
    ``python -m memcli`` runs it (MEMCLI_HOME and MEMCLI_SERVICE=off from the environment),
    or with ``fake`` as ``python tests/fakes cli`` does (its models); each one's ``Result``
    fields (its exit code, stdout and stderr)."""
    from memcli.cli import app

    if fake:
        sys.path.insert(0, str(ROOT / "tests"))
        from fakes.models import SlowEmbedder, SlowModel

        from memcli.transport import local

        local.use_models(embedder=SlowEmbedder(0.0), chat_model=SlowModel(0.0))

    results = []
    for argv in SNAPSHOT_ARGV:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = app(argv, prog_name="memcli", standalone_mode=False)
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:  # as Python ends a process with it: the message on stderr, exit 1
                    print(exc.code, file=sys.stderr)
                    code = 1
            except BaseException:  # what would end a process of its own with a traceback
                traceback.print_exc()
                code = 1
        results.append({"argv": argv, "code": code, "out": out.getvalue(), "err": err.getvalue()})
    return results


def tag() -> str:
    """A unique word for the texts of one trial ("fx" marks the harness's own texts)."""
    return "fx" + uuid.uuid4().hex[:10]


def write_turns(path: Path, records: int, mark: str, days: int = 6) -> list[str]:
    """A JSONL conversation of ``records`` turns over ``days`` days; returns the texts."""
    topics = (
        "my sister Ana visits in spring",
        "the garden needs new tomato plants",
        "I started running on Sundays",
        "work on the bridge project is late",
        "we adopted a grey cat named Pixel",
        "my knee hurts after long walks",
    )
    texts = []
    with open(path, "w", encoding="utf-8") as f:
        for i in range(records):
            role = "user" if i % 2 == 0 else "assistant"
            text = (
                f"{topics[i % len(topics)].capitalize()}, note {i} {mark}."
                if role == "user"
                else f"That sounds important, tell me more about item {i} {mark}."
            )
            day = 1 + (i * days) // records
            f.write(
                json.dumps(
                    {"role": role, "content": text, "timestamp": f"2026-03-{day:02d}T{9 + i % 10:02d}:{i % 60:02d}:00"}
                )
                + "\n"
            )
            texts.append(text)
    return texts


def write_notes(path: Path, records: int, mark: str) -> list[str]:
    """A text file of ``records`` one-line paragraphs; returns the texts."""
    texts = [
        f"Paragraph {i} of the notes: buy seeds, call the plumber, idea number {i} {mark}." for i in range(records)
    ]
    path.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    return texts


def chosen(name: str, only: list[str]) -> bool:
    """Whether ``--only``'s values ``only`` select the case (or group) ``name``: none selects
    every case; a value that is a case's whole name selects that case alone ("kill: service",
    not "kill: service mid-command"), any other value every case whose name contains it."""
    names = (*KILL_SHARES, *CASES)
    return not only or any(value == name if value in names else value in name for value in only)


def distribute(total: int, shares: dict[str, float]) -> dict[str, int]:
    """``total`` trials over the cases by ``shares`` (largest remainder; at least 1 each)."""
    raw = {k: total * v / sum(shares.values()) for k, v in shares.items()}
    counts = {k: max(1, int(v)) for k, v in raw.items()}
    for k in sorted(raw, key=lambda k: raw[k] - int(raw[k]), reverse=True):
        if sum(counts.values()) >= total:
            break
        counts[k] += 1
    return counts


# --- kill -9 trials ---------------------------------------------------------------------


class Kills:
    """The kill -9 trials of one case: a template store, a calibration run (how long the
    uninterrupted command takes), then trials killed at a random point of that span."""

    def __init__(self, harness: Harness, rng: random.Random, base: Path) -> None:
        self.h, self.rng, self.base = harness, rng, base
        self.records = 60 if harness.quick else 200
        self.spans: dict[str, float] = {}
        self.lines: dict[str, int] = {}
        self.lock = threading.Lock()

    def point(self, span: float, lines: int) -> tuple[float, int]:
        """A kill point: a random delay in (0, span], or (when the command prints
        progress lines) after a random k-th line, half of the time."""
        if lines >= 2 and self.rng.random() < 0.5:
            return span, self.rng.randint(1, lines - 1)
        return self.rng.uniform(0.05, 1.0) * span, 0

    def fresh(self, name: str) -> Path:
        home = self.base / f"{name}-{uuid.uuid4().hex[:6]}"
        home.mkdir(parents=True)
        return home

    def import_trial(self, row: Row, index: int) -> None:
        check = Check(row)
        home = self.fresh("import")
        mark = tag()
        source = home.parent / f"{home.name}.{'jsonl' if index % 2 == 0 else 'txt'}"
        texts = write_turns(source, self.records, mark) if index % 2 == 0 else write_notes(source, self.records, mark)
        progress = ["--progress"] if "--progress" in self.h.help("import") else []
        argv = ["import", str(source), *progress]
        span, lines = self.span("import", lambda: self.h.run(self.fresh("calibrate"), *argv))
        delay, after = self.point(span, lines)
        check.saw(self.h.run_killed(home, argv, delay, after_lines=after))
        done = check.saw(self.h.run(home, "import", str(source), "--json"), expect_ok=True)
        row.trials += 1
        if done.code != 0:
            return
        found = json.loads(done.out).get("found")
        if found != len(texts):
            row.failures.append(f"the re-run import reported found={found} for {len(texts)} records")
        memories = check.memories(self.h, home)
        if memories is not None:
            check.present_once(memories, dict.fromkeys(texts))

    def chat_trial(self, row: Row) -> None:
        check = Check(row)
        home = self.fresh("chat")
        mark = tag()
        lines = [f"Today I talked to my neighbour about topic {i} {mark}" for i in range(4)]
        separators = [f"chat separator {i} {mark}" for i in range(4)]
        stdin = "".join(f"{line}\n/remember {sep}\n" for line, sep in zip(lines, separators))
        span, _ = self.span("chat", lambda: self.h.run(self.fresh("calibrate"), "chat", input=stdin))
        killed = check.saw(self.h.run_killed(home, ["chat"], self.rng.uniform(0.05, 1.0) * span, input=stdin))
        acked = _chat_acknowledged(killed.out, lines, separators)
        more, sep = f"After the crash I came back {mark}", f"chat separator after {mark}"
        again = check.saw(self.h.run(home, "chat", input=f"{more}\n/remember {sep}\n"), expect_ok=True)
        acked.update(_chat_acknowledged(again.out, [more], [sep]))
        row.trials += 1
        memories = check.memories(self.h, home)
        if memories is not None:
            check.present_once(memories, acked)

    def consolidate_trial(self, row: Row, template: Path, texts: list[str], expected: Counter) -> None:
        check = Check(row)
        home = self.fresh("consolidate")
        shutil.copytree(template, home, dirs_exist_ok=True)
        span = self.spans["consolidate"]
        check.saw(self.h.run_killed(home, ["consolidate"], self.rng.uniform(0.05, 1.0) * span))
        check.saw(self.h.run(home, "consolidate"), expect_ok=True)
        row.trials += 1
        memories = check.memories(self.h, home)
        if memories is None:
            return
        check.present_once(memories, dict.fromkeys(texts))
        kinds = Counter(m["kind"] for m in memories)
        if kinds != expected:
            row.failures.append(
                f"after kill + re-run the kinds are {dict(kinds)}, an uninterrupted run gives {dict(expected)}"
            )

    def forget_trial(self, row: Row, template: Path, pinned: dict[str, str], faded: list[str], purge: bool) -> None:
        check = Check(row)
        home = self.fresh("forget")
        shutil.copytree(template, home, dirs_exist_ok=True)
        argv = ["forget", "--now", FUTURE, *(["--purge"] if purge else [])]
        check.saw(self.h.run_killed(home, argv, self.rng.uniform(0.05, 1.0) * self.spans["forget"]))
        check.saw(self.h.run(home, *argv), expect_ok=True)
        row.trials += 1
        active = check.memories(self.h, home)
        archived = check.memories(self.h, home, archived=True)
        if active is None or archived is None:
            return
        check.present_once(active, dict(pinned), archived)
        left = {m["text"] for m in active} - set(pinned)
        if left:
            row.failures.append(f"{len(left)} faded memories still active after the forget re-run")
        if purge and archived:
            row.failures.append(f"--purge left {len(archived)} archived memories")
        if not purge:
            missing = set(faded) - {m["text"] for m in archived}
            if missing:
                row.lost += len(missing)
                row.failures.append(
                    f"{len(missing)} faded memories neither active nor archived (forget without --purge)"
                )

    def span(self, name: str, calibrate: Callable[[], Result]) -> tuple[float, int]:
        """Seconds and stderr lines of one uninterrupted run of this case (measured once)."""
        with self.lock:
            if name not in self.spans:
                done = calibrate()
                if done.code != 0 or done.hung:
                    raise Failure(f"the uninterrupted calibration run failed: {done.describe()}")
                self.spans[name] = done.seconds
                self.lines[name] = done.err.count("\n")
        return self.spans[name], self.lines.get(name, 0)


class Failure(Exception):
    """A case could not run at all (its setup failed)."""


def _chat_acknowledged(out: str, lines: list[str], separators: list[str]) -> dict[str, str | None]:
    """The chat lines whose reply was printed: each is followed by its ``/remember``,
    whose "remembered ID" line proves the reply before it was complete."""
    printed = re.findall(r"^(?:already )?remembered (?:as )?([0-9a-f]{8,})\s*$", out, flags=re.M)
    acked: dict[str, str | None] = {}
    for line, sep, memory_id in zip(lines, separators, printed):
        acked[line] = None
        acked[sep] = memory_id
    return acked


def consolidate_template(kills: Kills, row: Row) -> tuple[Path, list[str], Counter]:
    """A store of imported turns, not consolidated yet; the kinds that an uninterrupted
    consolidation of it leaves (and how long it takes)."""
    template = kills.fresh("consolidate-template")
    source = template.parent / f"{template.name}.jsonl"
    texts = write_turns(source, kills.records, tag())
    _setup(kills.h.run(template, "import", str(source)), row)
    calibration = kills.fresh("calibrate")
    shutil.copytree(template, calibration, dirs_exist_ok=True)
    done = _setup(kills.h.run(calibration, "consolidate"), row)
    kills.spans["consolidate"] = done.seconds
    listed = kills.h.run(calibration, "list", "-n", "0", "--json")
    expected = Counter(m["kind"] for m in json.loads(_setup(listed, row).out))
    return template, texts, expected


def forget_template(kills: Kills, row: Row) -> tuple[Path, dict[str, str], list[str]]:
    """A store of old imported turns and notes (all faded by FUTURE), a few of the notes
    pinned (``--quick``: one; they must survive every forget)."""
    template = kills.fresh("forget-template")
    mark = tag()
    source = template.parent / f"{template.name}.jsonl"
    faded = write_turns(source, kills.records, mark)
    _setup(kills.h.run(template, "import", str(source)), row)
    pinned: dict[str, str] = {}
    for i in range(1 if kills.h.quick else 5):
        text = f"Pinned note {i}: the alarm code is {1000 + i} {mark}"
        done = _setup(kills.h.run(template, "remember", text, "--now", "2026-03-02T10:00:00"), row)
        memory_id = done.out.strip()
        _setup(kills.h.run(template, "pin", memory_id), row)
        pinned[text] = memory_id
    calibration = kills.fresh("calibrate")
    shutil.copytree(template, calibration, dirs_exist_ok=True)
    kills.spans["forget"] = _setup(kills.h.run(calibration, "forget", "--now", FUTURE, "--purge"), row).seconds
    return template, pinned, faded


def _setup(result: Result, row: Row) -> Result:
    if result.code != 0 or result.hung or result.traceback:
        raise Failure(f"setup failed: {result.describe()}")
    return result


def service_case(h: Harness, rng: random.Random, base: Path, trials: int) -> Row:
    """kill -9 the service while two clients write; the clients start a new one. One home
    for all trials, so each trial also checks every earlier acknowledged note."""
    row = Row("kill: service")
    check = Check(row)
    home = base / "service"
    home.mkdir()
    acked: dict[str, str] = {}
    lock = threading.Lock()
    mark = tag()
    try:
        for trial in range(trials):
            status = h.run(home, "service", "status", "--json", service=True, timeout=60)
            if status.code != 0:
                first = check.saw(
                    h.run(home, "remember", f"service warm-up {trial} {mark}", service=True), expect_ok=True
                )
                if first.code == 0:
                    acked[f"service warm-up {trial} {mark}"] = first.out.strip()
                status = check.saw(h.run(home, "service", "status", "--json", service=True, timeout=60), expect_ok=True)
                if status.code != 0:
                    row.failures.append("the service did not start")
                    break
            pid = json.loads(status.out)["pid"]
            stop = threading.Event()

            def writer(w: int) -> None:
                for n in range(1000):
                    if stop.is_set():
                        return
                    text = f"Service trial {trial} writer {w} note {n} {mark}"
                    done = check.saw(h.run(home, "remember", text, service=True))
                    if done.code == 0 and done.out.strip():
                        with lock:
                            acked[text] = done.out.strip().splitlines()[-1]
                    elif done.code not in (int(ExitCode.SERVICE), int(ExitCode.STORE_LOCKED)) and not done.hung:
                        row.failures.append(f"a client during the service kill: {done.describe()}")

            threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
            for thread in threads:
                thread.start()
            time.sleep(rng.uniform(0.2, 1.5) if h.fake else rng.uniform(0.3, 3.0))
            try:
                os.kill(pid, signal.SIGKILL)
                row.killed += 1
            except ProcessLookupError:
                row.failures.append(f"the service (pid {pid}) was gone before the kill")
            time.sleep(2.0 if h.fake else 8.0)  # the clients start a new service and write on
            stop.set()
            for thread in threads:
                thread.join()
            row.trials += 1
        memories = check.memories(h, home, service=True)
        if memories is not None:
            check.present_once(memories, acked)
    finally:
        h.run(home, "service", "stop", service=True, timeout=60)
    return row


def _chroma_behind(paths: dict[str, str]) -> list[str]:
    """The memories whose strength or recall count in Chroma's own metadata differs from
    the recall index's copy in the sidecar (read from the files, no memcli in between)."""
    # heavy: chromadb takes about a second to import, and only this case reads Chroma itself
    import chromadb

    data = Path(paths["database"]).parent
    db = sqlite3.connect(f"file:{paths['database']}?mode=ro", uri=True)
    try:
        copy = {i: json.loads(r) for i, r in db.execute("SELECT memory_id, record FROM recall_index")}
    finally:
        db.close()
    client = chromadb.PersistentClient(path=str(data / "chroma"))
    try:
        differ = []
        for collection in client.list_collections():
            if collection.name.endswith("-reindex"):
                continue
            got = collection.get(ids=list(copy), include=["metadatas"])
            for memory_id, meta in zip(got["ids"], got["metadatas"]):
                mine = copy[memory_id]
                if (meta.get("strength"), meta.get("recall_count")) != (
                    mine.get("strength", 1.0),
                    mine.get("recall_count", 0),
                ):
                    differ.append(memory_id)
        return differ
    finally:
        # heavy: as above; the client is dropped so that the next memcli sees the files alone
        from chromadb.api.shared_system_client import SharedSystemClient

        SharedSystemClient.clear_system_cache()


def _waiting(paths: dict[str, str]) -> set[str]:
    """The memories whose reinforcement waits in the sidecar to be written to Chroma
    (``RecallIndex.set_behind``), read from the file."""
    db = sqlite3.connect(f"file:{paths['database']}?mode=ro", uri=True)
    try:
        return {r[0] for r in db.execute("SELECT memory_id FROM metadata_behind")}
    finally:
        db.close()


def reinforce_case(h: Harness, rng: random.Random, base: Path, trials: int) -> Row:
    """kill -9 the service while a client recalls: each recall reinforces what it returns,
    written behind (the recall index's copy at once, Chroma in batches). After every kill,
    each memory has been reinforced at least as often as acknowledged recalls returned it.
    Once the service has stopped cleanly, a memory whose metadata in Chroma differs from
    the copy's is still waiting in the sidecar (a service that never opened Chroma leaves
    it there at its stop), and the next command that opens Chroma (a write) writes it:
    Chroma's metadata then equals the copy's, and nothing waits."""
    row = Row("kill: service while recall reinforces")
    check = Check(row)
    home = base / "reinforce"
    home.mkdir()
    mark = tag()
    topics = ["harbour", "puppy", "pottery", "zeppelin", "birthday", "garden"]
    acked: Counter = Counter()
    try:
        # the 24 notes in one import through the service (a paragraph each), not 24 processes
        notes = base / "reinforce-notes.txt"
        notes.write_text(
            "\n\n".join(f"Reinforce note {i} about the {topics[i % len(topics)]} {mark}" for i in range(24)) + "\n",
            encoding="utf-8",
        )
        _setup(check.saw(h.run(home, "import", str(notes), service=True)), row)
        for trial in range(trials):
            status = check.saw(h.run(home, "service", "status", "--json", service=True, timeout=60))
            if status.code != 0:
                _setup(check.saw(h.run(home, "stats", "--json", service=True, timeout=120)), row)
                status = check.saw(h.run(home, "service", "status", "--json", service=True, timeout=60))
                if status.code != 0:
                    row.failures.append("the service did not start")
                    break
            pid = json.loads(status.out)["pid"]
            stop = threading.Event()

            def recaller(stop: threading.Event = stop) -> None:
                while not stop.is_set():
                    query = f"{rng.choice(topics)} note"
                    done = check.saw(h.run(home, "recall", query, "-k", "4", "--json", service=True))
                    if done.code == 0:
                        with contextlib.suppress(ValueError, KeyError, TypeError):
                            acked.update(hit["id"] for hit in json.loads(done.out))

            thread = threading.Thread(target=recaller)
            thread.start()
            time.sleep(rng.uniform(0.5, 2.0) if h.fake else rng.uniform(1.0, 4.0))
            try:
                os.kill(pid, signal.SIGKILL)
                row.killed += 1
            except ProcessLookupError:
                row.failures.append(f"the service (pid {pid}) was gone before the kill")
            stop.set()
            thread.join()
            row.trials += 1
            memories = check.memories(h, home, service=True)
            if memories is None:
                break
            counts = {m["id"]: m["recall_count"] for m in memories}
            short = [i for i, n in acked.items() if counts.get(i, 0) < n]
            row.acknowledged = sum(acked.values())
            if short:
                row.lost += len(short)
                row.failures.append(f"trial {trial}: {len(short)} memories reinforced less than acknowledged")
        h.run(home, "service", "stop", service=True, timeout=60)
        paths = _paths_of(h, home)
        lost = set(_chroma_behind(paths)) - _waiting(paths)
        if lost:
            row.failures.append(
                f"after a clean stop, Chroma's metadata of {len(lost)} memories differs from the copy "
                "and is not waiting to be written"
            )
        _setup(check.saw(h.run(home, "remember", f"Reinforce catch-up note {mark}", service=True)), row)
        h.run(home, "service", "stop", service=True, timeout=60)
        differ, waiting = _chroma_behind(paths), _waiting(paths)
        if differ or waiting:
            row.failures.append(
                f"after a write that opened Chroma and a clean stop, Chroma's metadata of {len(differ)} memories "
                f"differs from the copy and {len(waiting)} still wait"
            )
    finally:
        h.run(home, "service", "stop", service=True, timeout=60)
    return row


def shadowed_service_case(h: Harness, base: Path) -> Row:
    """A folder named ``memcli`` (a package: ``__init__.py``) in the directory a command runs
    in, as a clone or a notes folder in ``$HOME`` is for cron: the command (run with ``-P``,
    as the console script is, which never puts the current directory on ``sys.path``) must
    start the service and be served by it, not fall back to running in its own process."""
    row = Row("service: a folder named memcli here")
    check = Check(row)
    home, here = base / "shadowed", base / "shadowed-cwd"
    (here / "memcli").mkdir(parents=True)
    (here / "memcli" / "__init__.py").write_text("raise ImportError('the folder memcli here, not memcli')\n")
    h_p = Harness(h.fake, h.quick, h.workdir)
    h_p.command = [h.command[0], "-P", *h.command[1:]]
    text = f"Shadow fx note {tag()}"
    try:
        done = check.saw(h_p.run(home, "remember", text, service=True, cwd=here), expect_ok=True)
        row.trials += 1
        if "could not start" in done.err or "running in this process" in done.err:
            row.failures.append(f"the service did not start from a folder holding memcli/: {done.describe()}")
        status = check.saw(h_p.run(home, "service", "status", "--json", service=True, timeout=60, cwd=here))
        if status.code != 0:
            row.failures.append(f"no service runs after a command from that folder: {status.describe()}")
        memories = check.memories(h, home, service=True)
        if memories is not None and done.code == 0:
            check.present_once(memories, {text: done.out.strip()})
    finally:
        h.run(home, "service", "stop", service=True, timeout=60)
    return row


TRANSCRIPT_LINE = re.compile(r"^\s*(?:\[[0-9a-fA-F]{4,16}\]\s*)?\d{4}-\d{1,2}-\d{1,2}\s+[^:\n]{1,40}:", re.M)
"""A reply line in the shape of the prompt's memory lines (``2018-3-9 demo: ...``): a leak."""
UNKNOWN_CITE = "52a64b1"
"""An id no memory has (the issue's own), cited by the scripted reply."""


def chat_leak_case(h: Harness, base: Path) -> Row:
    """Chat replies never show a copied transcript line (a date and a speaker) or cite an
    id that is not among the memories; an empty reply says why. With the fakes the model is
    scripted (``--echo-system``: it answers with the last paragraph of ``--system``) to write
    exactly those; with the real models whatever the embedded model writes is checked."""
    row = Row("chat: transcript and citations")
    check = Check(row)
    home = base / "chat-leak"
    for text in ("I was working in a small studio in 2018.", "My sister Ana lives in Porto."):
        check.saw(h.run(home, "remember", text), expect_ok=True)
    memories = check.memories(h, home) or []
    ids = [m["id"] for m in memories]
    scripted = {
        "leak": "2018-3-9 demo: I was working in a small studio.",
        "cite": f"You worked in a studio [{ids[0][:8] if ids else '0000'}] near Ana [{UNKNOWN_CITE}].",
    }
    fake = Harness(h.fake, h.quick, h.workdir)
    if h.fake:
        fake.command = [*h.command[:-1], "--echo-system", "--"]
    for name, reply in scripted.items():
        argv = ["chat", "--system", f"scripted\n\n{reply}"] if h.fake else ["chat"]
        done = check.saw(fake.run(home, *argv, input="Where did I work?\n/exit\n"), expect_ok=True)
        row.trials += 1
        if TRANSCRIPT_LINE.search(done.out):
            row.failures.append(f"{name}: a transcript line shown as the reply: {done.out.strip()[:120]!r}")
        for token in re.findall(r"\[([0-9a-f]{4,16})\]", done.out):
            if not any(i.startswith(token) for i in ids) and not any(token in m["text"] for m in memories):
                row.failures.append(f"{name}: cited [{token}], which is no memory's id")
        if not done.out.strip() and "no reply:" not in done.err:
            row.failures.append(f"{name}: an empty reply that does not say why: {done.describe()}")
        if not h.fake:
            break
    return row


def _graph_by_name(out: str) -> tuple[list[str], list[str]] | None:
    """``graph export --format json``'s nodes and edges, the store's numbering replaced by names."""
    try:
        found = json.loads(out)
    except ValueError:
        return None
    names = {node["id"]: node["name"] for node in found["nodes"]}
    nodes = sorted(json.dumps({k: v for k, v in n.items() if k != "id"}, sort_keys=True) for n in found["nodes"])
    edges = sorted(
        json.dumps(
            {k: names.get(v, v) if k in ("source", "target") else v for k, v in e.items() if k != "key"},
            sort_keys=True,
        )
        for e in found["edges"]
    )
    return nodes, edges


def graph_backup_case(h: Harness, base: Path) -> Row:
    """A backup keeps the graph: ``export`` -> ``purge-user`` -> ``import`` -> ``consolidate``
    gives back the graph it had (``graph export --format json``, by name) and its relation
    memories once each; the consolidation after the import has the graph to rebuild."""
    row = Row("graph: backup, purge, restore")
    check = Check(row)
    home = base / "graph-backup"
    notes = [
        f"My sister Ana lives in Porto. {tag()}",
        "Ana works at the Santo Antonio hospital.",
        "In 2024 Ana moved to Lisbon with her husband Rui.",
    ]
    for text in notes:
        check.saw(h.run(home, "remember", "--user", "gx", text), expect_ok=True)
    check.saw(h.run(home, "consolidate", "--user", "gx", "--quiet"), expect_ok=True)
    row.trials += 1
    before = _graph_by_name(check.saw(h.run(home, "graph", "export", "--user", "gx", "--format", "json")).out)
    relations = sorted(m["text"] for m in check.memories(h, home, user="gx") or [] if m["kind"] == "relation")
    if not before or not before[1]:
        row.failures.append("consolidation made no graph to back up")
        return row
    backup = home.parent / "graph-backup.jsonl"
    check.saw(h.run(home, "export", "--user", "gx", "-o", str(backup), "--quiet"), expect_ok=True)
    check.saw(h.run(home, "purge-user", "gx", "--yes", "--quiet"), expect_ok=True)
    check.saw(h.run(home, "import", str(backup), "--quiet"), expect_ok=True)
    again = check.saw(h.run(home, "consolidate", "--user", "gx"), expect_ok=True)
    if again.out.startswith("nothing new to consolidate"):
        row.failures.append("after the import, consolidate had nothing to rebuild the graph from")
    after = _graph_by_name(check.saw(h.run(home, "graph", "export", "--user", "gx", "--format", "json")).out)
    if after != before:
        row.lost += 1
        row.failures.append(f"the graph after the round trip differs: {before} -> {after}"[:400])
    now = sorted(m["text"] for m in check.memories(h, home, user="gx") or [] if m["kind"] == "relation")
    if now != relations:
        row.duplicates += max(0, len(now) - len(relations))
        row.failures.append(f"relation memories {len(relations)} before, {len(now)} after the round trip")
    return row


def concurrency_case(h: Harness, base: Path, service: bool) -> Row:
    """8 parallel ``remember`` loops of new texts (``--quick``: 4), a chat and a consolidation at once."""
    row = Row("concurrency" + (" (service)" if service else " (no service)"))
    check = Check(row)
    home = base / ("concurrency-service" if service else "concurrency-local")
    home.mkdir()
    mark = tag()
    source = base / f"{home.name}.jsonl"
    turns = write_turns(source, 40, mark)
    acked: dict[str, str | None] = dict.fromkeys(turns)
    lock = threading.Lock()
    notes = (2 if service else 1) if h.quick else (3 if service else 2)
    writers = 4 if h.quick else 8
    try:
        check.saw(h.run(home, "import", str(source), service=service), expect_ok=True)

        def writer(w: int) -> None:
            for n in range(notes):
                text = f"Writer {w} note {n}: a new thought about errands {mark}"
                done = check.saw(h.run(home, "remember", text, "--json", service=service))
                if done.code == 0:
                    result = json.loads(done.out)
                    with lock:
                        acked[text] = result["memory"]["id"]
                        if not result["added"]:
                            row.lies += 1
                            row.failures.append(f"'already remembered' for a new note: {text[:50]!r}")
                elif done.code == int(ExitCode.STORE_LOCKED):
                    row.notes.append(f"refused, store locked (exit 4): {text[:40]!r}")
                elif not done.hung:
                    row.failures.append(f"a writer failed: {done.describe()}")

        chat_lines = [f"At the same time I chat about lunch {i} {mark}" for i in range(2)]
        separators = [f"concurrent chat separator {i} {mark}" for i in range(2)]

        def chat() -> None:
            done = check.saw(
                h.run(
                    home,
                    "chat",
                    input="".join(f"{a}\n/remember {b}\n" for a, b in zip(chat_lines, separators)),
                    service=service,
                )
            )
            if done.code == int(ExitCode.STORE_LOCKED):
                row.notes.append("chat refused, store locked (exit 4)")
            elif done.code != 0 and not done.hung:
                row.failures.append(f"failed: {done.describe()}")
            with lock:
                acked.update(_chat_acknowledged(done.out, chat_lines, separators))

        def consolidate() -> None:
            done = check.saw(h.run(home, "consolidate", service=service))
            if done.code == int(ExitCode.STORE_LOCKED):
                row.notes.append("consolidate refused, store locked (exit 4)")
            elif done.code != 0 and not done.hung:
                row.failures.append(f"failed: {done.describe()}")

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
        threads += [threading.Thread(target=chat), threading.Thread(target=consolidate)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        row.trials = 1
        memories = check.memories(h, home, service=service)
        if memories is not None:
            check.present_once(memories, acked)
    finally:
        if service:
            h.run(home, "service", "stop", service=True, timeout=60)
    return row


# --- bad inputs -------------------------------------------------------------------------


def expected_code(*words: str) -> int:
    """The documented exit code whose meaning names one of ``words`` (BAD_INPUT when the
    table has none: a config or input error memcli reports as bad input)."""
    for code, meaning in EXIT_CODE_MEANINGS.items():
        if any(word in meaning.lower() for word in words):
            return int(code)
    return int(ExitCode.BAD_INPUT)


def bad_inputs(h: Harness, base: Path) -> list[Row]:
    """Each bad input against a copy of one small store: documented exit code, one line on
    stderr, no traceback, the store unchanged."""
    template = base / "bad-template"
    template.mkdir()
    mark = tag()
    rows: list[Row] = []
    setup_row = Row("bad: setup")
    try:
        for i in range(3):
            _setup(h.run(template, "remember", f"Known note {i} before bad input {mark}"), setup_row)
        before = snapshot(h, template, Check(setup_row))
    except Failure as exc:
        setup_row.failures.append(str(exc))
        return [setup_row]
    if before is None:
        return [setup_row]
    files = base / "bad-files"
    files.mkdir()
    bad = expected_code("bad input")
    read_only, disk_full = expected_code("read-only", "read only"), expected_code("no space", "disk full")
    config_code = expected_code("config file", "configuration")

    def file_case(name: str, content: bytes, suffix: str) -> tuple[str, list[str], int, Callable[[Path], None] | None]:
        path = files / f"{name}{suffix}"
        path.write_bytes(content)
        return name, ["import", str(path)], bad, None

    def corrupt_config(home: Path) -> None:
        (home / "config").mkdir(exist_ok=True)
        (home / "config" / "config.toml").write_text("user = = 'nobody'\n[[[broken\n", encoding="utf-8")

    def config_directory(home: Path) -> None:
        (home / "config" / "config.toml").mkdir(parents=True, exist_ok=True)

    broken_lines = [
        json.dumps({"role": "user", "content": f"line {i} {mark}", "timestamp": "2026-03-01T10:00:00"})
        for i in range(20)
    ]
    broken_lines.insert(10, '{"role": "user", "content": "cut in the mid')
    cases = [
        file_case("malformed JSON", b'{"conversation": [{"speaker": "a", "text": "hi"', ".json"),
        file_case("malformed JSONL line", ("\n".join(broken_lines) + "\n").encode(), ".jsonl"),
        file_case("binary file", bytes(range(256)) * 64, ".txt"),
        file_case("empty file", b"", ".txt"),
        file_case("invalid UTF-8", b"A note about caf\xe9 and cr\xe8me, latin-1 bytes\n\nand \xff\xfe more\n", ".txt"),
        file_case("wrong schema", json.dumps({"people": [{"name": "Ana", "age": 41}]}).encode(), ".json"),
        ("corrupt config.toml", ["list"], config_code, corrupt_config),
        ("config.toml is a directory", ["list"], config_code, config_directory),
    ]
    if not h.quick:
        record = json.dumps({"role": "user", "content": "x" * 200, "timestamp": "2026-03-01T10:00:00"})
        huge = ("[" + ",".join([record] * (20_000_000 // len(record))) + ",{]").encode()
        cases.append(file_case("huge file (20 MB, malformed at its end)", huge, ".json"))
        conversation = {
            "sample_id": "conv-1",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bo",
                "session_1_date_time": "1:00 pm on 1 June, 2023",
                "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": f"hello {mark}"}],
            },
        }
        valid = json.dumps([conversation]).encode()
        # issue 34 item 9: parsed whole, so refused past 64 MiB before it is read (valid JSON, spaces after it)
        cases.append(file_case("LoCoMo JSON past 64 MiB", valid + b" " * ((64 << 20) + 1 - len(valid)), ".json"))

    def one(index: int, name: str, argv: list[str], code: int, prepare: Callable[[Path], None] | None) -> Row:
        home = base / f"bad-{index}"
        shutil.copytree(template, home)
        if prepare:
            prepare(home)
        row = Row(f"bad: {name}")
        done = Check(row).saw(h.run(home, *argv))
        _judge(row, done, code)
        if prepare:  # the store is compared with the config problem removed
            shutil.rmtree(home / "config")
        _compare(h, home, before, row)
        return row

    def timed(name: str, case: Callable[[], Row]) -> Row:
        started = time.monotonic()
        try:
            row = case()
        except Exception as exc:  # the harness reports, it does not crash
            row = Row(name, failures=[f"harness error: {type(exc).__name__}: {exc}"])
        row.seconds = time.monotonic() - started
        return row

    with ThreadPoolExecutor(max_workers=h.jobs) as pool:
        futures = [
            pool.submit(timed, f"bad: {case[0]}", lambda i=i, case=case: one(i, *case)) for i, case in enumerate(cases)
        ]
        futures += [
            pool.submit(
                timed, f"bad: {case.name}", lambda i=i, case=case: bad_text_case(h, base, template, before, i, case)
            )
            for i, case in enumerate(bad_text_cases(files, mark, h.quick))
        ]
        futures.append(
            pool.submit(timed, "bad: read-only store", lambda: read_only_case(h, base, template, before, read_only))
        )
        futures.append(
            pool.submit(timed, "bad: full disk", lambda: disk_full_case(h, base, template, before, disk_full))
        )
        rows += [future.result() for future in futures]
    return rows


@dataclass
class BadText:
    """A bad input of issue 25 §4/§5: text that is not text, a closed stdin, an over-long
    question, an invalid option, a home someone else controls. ``stdin``: bytes given as
    they are, or "closed"; ``prepare``/``restore``: done to the home before the command
    and undone before the store is compared; ``env``: extra variables."""

    name: str
    argv: list[str]
    code: int
    stdin: bytes | str | None = None
    env: dict[str, str] = field(default_factory=dict)
    prepare: Callable[[Path], None] | None = None
    restore: Callable[[Path], None] | None = None
    quick: bool = False
    """Run in ``--quick`` mode too (the test suite's)."""


def bad_text_cases(files: Path, mark: str, quick: bool) -> list[BadText]:
    """The bad text, stdin and home cases: each its documented code, one line, the store
    unchanged (``quick``: only those marked so)."""
    bad, usage = expected_code("bad input"), expected_code("usage")
    unsafe = expected_code("someone else", "another user")

    def file(name: str, content: bytes) -> str:
        path = files / name
        path.write_bytes(content)
        return str(path)

    record = '{{"role": "user", "content": {}, "timestamp": "2026-03-01T10:00:00"}}\n'
    cases = [
        BadText("argument not UTF-8 (remember)", ["remember", f"caf\udce9 {mark}"], bad, quick=True),
        BadText("--user not UTF-8", ["recall", "tea", "--user", "caf\udce9"], bad),
        BadText("stdin not UTF-8 (remember -)", ["remember", "-"], bad, stdin=b"bad \xed\xa0\x80 text\n", quick=True),
        BadText("stdin not UTF-8 (chat)", ["chat", "--quiet"], bad, stdin=b"hi \xe9 there\n"),
        BadText("import path not UTF-8", ["import", file("caf\udce9.txt", b"A note.\n")], bad),
        BadText(
            "JSONL string \\ud800",
            ["import", file("surrogate.jsonl", record.format('"a \\ud800 b"').encode())],
            bad,
            quick=True,
        ),
        BadText("JSONL string \\u0000", ["import", file("nul.jsonl", record.format('"a \\u0000 b"').encode())], bad),
        BadText(
            "NUL byte past 8 KiB of a text file",
            ["import", file("late-nul.txt", b"A note.\n\n" + b"filler\n" * 2000 + b"a \x00 b\n")],
            bad,
        ),
        BadText("closed stdin (remember -)", ["remember", "-"], usage, stdin="closed"),
        BadText("closed stdin (ask -)", ["ask", "-"], usage, stdin="closed"),
        BadText("closed stdin (chat)", ["chat"], usage, stdin="closed", quick=True),
        BadText("1 MB question (ask -)", ["ask", "-"], bad, stdin=b"why " * 262144, quick=True),
        BadText("--importance 7", ["remember", f"A note {mark}", "--importance", "7"], usage),
        BadText("empty MEMCLI_HOME=", ["list"], bad, env={"MEMCLI_HOME": ""}),
        BadText(
            "home writable by others (0777)",
            ["remember", f"A note {mark}"],
            unsafe,
            prepare=lambda home: home.chmod(0o777),
            restore=lambda home: home.chmod(0o700),
            quick=True,
        ),
    ]
    if os.geteuid() == 0:  # only root can give a folder to another user
        cases.append(
            BadText(
                "data folder of another user",
                ["remember", f"A note {mark}"],
                unsafe,
                prepare=lambda home: os.chown(home / "data", 65534, 65534),
                restore=lambda home: os.chown(home / "data", 0, 0),
            )
        )
    return [case for case in cases if case.quick or not quick]


def bad_text_case(h: Harness, base: Path, template: Path, before: dict, index: int, case: BadText) -> Row:
    """One ``BadText`` against a copy of the template store."""
    home = base / f"bad-text-{index}"
    shutil.copytree(template, home)
    if case.prepare:
        case.prepare(home)
    row = Row(f"bad: {case.name}")
    stdin = None if case.stdin == "closed" else case.stdin
    done = Check(row).saw(h.run(home, *case.argv, input=stdin, closed_stdin=case.stdin == "closed", **case.env))
    _judge(row, done, case.code)
    if "unexpected" in done.err:
        row.failures.append(f"'unexpected' error: {done.describe()}")
    if case.restore:
        case.restore(home)
    _compare(h, home, before, row)
    return row


def _judge(row: Row, done: Result, code: int) -> None:
    """Exit ``code``, one line on stderr (hangs and tracebacks are counted by Check)."""
    row.trials += 1
    if done.hung:
        return
    lines = [line for line in done.err.splitlines() if line.strip()]
    if done.code != code:
        meaning = EXIT_CODE_MEANINGS.get(done.code, "undocumented") if done.code is not None else "killed"
        row.failures.append(f"exit {done.code} ({meaning}), expected {code}: {done.describe()}")
    if len(lines) != 1 and not done.traceback:
        row.failures.append(
            f"{len(lines)} lines on stderr, expected 1, from `memcli {' '.join(done.argv)}`: {lines!r}"[:400]
        )


def _compare(h: Harness, home: Path, before: dict, row: Row, **extra: str) -> None:
    after = snapshot(h, home, Check(row), **extra)
    row.unchanged_total += 1
    if after == before:
        row.unchanged_passed += 1
    elif after is not None:
        changed = [k for k in before if before[k] != after[k]]
        row.failures.append(f"the store changed: {', '.join(changed)}")


def read_only_case(h: Harness, base: Path, template: Path, before: dict, code: int) -> Row:
    """A read-only store: writes exit with the read-only code, reads work. Root ignores
    file modes, so as root the store is a read-only bind mount in a private mount
    namespace (unshare); otherwise chmod a-w."""
    row = Row("bad: read-only store")
    home = base / "bad-read-only"
    shutil.copytree(template, home)
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("unshare"):
            row.skipped = "running as root (file modes do not bind root) and no unshare for a read-only mount"
            return row
        prefix = [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            f'mount --bind "{home}" "{home}" && mount -o remount,bind,ro "{home}" && exec "$@"',
            "sh",
        ]
        probe = subprocess.run([*prefix, "touch", str(home / "probe")], capture_output=True, text=True)
        if probe.returncode == 0 or "Read-only" not in probe.stderr:
            row.skipped = f"running as root and a read-only bind mount did not work: {probe.stderr.strip()[:100]}"
            (home / "probe").unlink(missing_ok=True)
            return row
    else:
        for path in [home, *home.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
    check = Check(row)
    try:
        for argv in (["remember", "A note for a read-only store"], ["import", str(_small_file(base))]):
            _judge(row, check.saw(h.run(home, *argv, prefix=prefix)), code)
        for argv in (["list", "-n", "0"], ["stats"], ["recall", "note", "--no-reinforce"], ["recall", "note"]):
            row.trials += 1
            check.saw(h.run(home, *argv, prefix=prefix), expect_ok=True)
        row.unchanged_total += 1
        after = snapshot(h, home, check, prefix=prefix) if prefix else None
    finally:
        if not prefix:
            for path in [home, *home.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)
    if not prefix:
        after = snapshot(h, home, check)
    if after == before:
        row.unchanged_passed += 1
    elif after is not None:
        row.failures.append("the store changed")
    return row


def _small_file(base: Path) -> Path:
    path = base / "small-notes.txt"
    if not path.exists():
        write_notes(path, 30, tag())
    return path


def _inside_private_tmpfs(h: Harness, row: Row, flag: str, home: Path, args: list[str], timeout: float) -> dict | None:
    """Run this script with ``flag`` (``--disk-full-inside``, ``--full-disk-inside``) in a
    private mount namespace (as root, or through a user namespace), on ``home`` with
    ``args``; add what it found inside to ``row`` and return it, or mark ``row`` skipped and
    return None where no small tmpfs can be mounted."""
    home.mkdir()
    userns = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    argv = [
        "unshare",
        *userns,
        "--mount",
        "--propagation",
        "private",
        sys.executable,
        __file__,
        flag,
        str(home),
        *args,
        "--fake-models" if h.fake else "--real-models",
    ]
    if h.quick:
        argv.append("--quick")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0 or not done.stdout.strip():
        row.skipped = f"a small tmpfs could not be mounted here: {(done.stderr.strip().splitlines() or [''])[-1][:120]}"
        return None
    inside = json.loads(done.stdout)
    if inside.get("skipped"):
        row.skipped = inside["skipped"]
        return None
    row.add(
        Row(
            "inside",
            **{
                k: v
                for k, v in inside.items()
                if k in Row.__dataclass_fields__ and k not in ("case", "skipped", "seconds")
            },
        )
    )
    return inside


def _mount_copy(home: Path, template: Path) -> str:
    """Mount a private 0700 tmpfs at ``home`` with 8 MiB beyond ``template``'s size and copy
    ``template`` into it; returns why it could not be mounted, or "" when it was."""
    size = sum(p.stat().st_size for p in template.rglob("*") if p.is_file())
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size + 8 * 2**20},mode=0700", "tmpfs", str(home)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        return f"mount -t tmpfs failed: {mounted.stderr.strip()[:100]}"
    shutil.copytree(template, home, dirs_exist_ok=True)
    return ""


def disk_full_case(h: Harness, base: Path, template: Path, before: dict, code: int) -> Row:
    """An import into a store on a full tmpfs (mounted in a private mount namespace, as
    root or through a user namespace): the disk-full code, one line, nothing stored; the
    store works again once there is room."""
    row = Row("bad: full disk")
    if not shutil.which("unshare"):
        row.skipped = "no unshare for a private tmpfs"
        return row
    home = base / "bad-disk-full"
    inside = _inside_private_tmpfs(
        h, row, "--disk-full-inside", home, [str(template), str(_small_file(base))], h.timeout * 3
    )
    if inside is None:
        return row
    if inside["before"] != before:
        row.failures.append("the copy on tmpfs differs from the template before the import")
    return row


def disk_full_inside(home: Path, template: Path, notes: Path, fake: bool, quick: bool) -> dict:
    """In a private mount namespace: a tmpfs at ``home`` holding a copy of ``template``,
    filled up; then the import. Prints the Row (plus the snapshot before) as JSON."""
    failed = _mount_copy(home, template)
    if failed:
        return {"skipped": failed}
    workdir = Path(tempfile.mkdtemp())
    h = Harness(fake, quick, workdir)
    row = Row("bad: full disk")
    check = Check(row)
    before = snapshot(h, home, check)
    filler = _fill(home / "filler")
    done = check.saw(h.run(home, "import", str(notes)))
    _judge(row, done, code=expected_code("no space", "disk full"))
    filler.unlink()
    _compare(h, home, before, row)
    again = check.saw(h.run(home, "import", str(notes), "--json"), expect_ok=True)
    if again.code == 0 and json.loads(again.out).get("added") == 0:
        row.failures.append(
            "after the disk-full import failed, the re-import added 0 (the failed import left part of it)"
        )
    result = asdict(row)
    result["before"] = before
    return result


def _fill(filler: Path) -> Path:
    """Write ``filler`` until its device is full, to the last byte (blocks of 64 KiB down to
    one byte); returns it, for the caller to remove."""
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for block in (65536, 4096, 512, 1):
            try:
                while True:
                    os.write(descriptor, b"\0" * block)
            except OSError:
                continue
    finally:
        os.close(descriptor)
    return filler


def full_disk_case(h: Harness, base: Path) -> Row:
    """A store on a full tmpfs (mounted in a private mount namespace, as root or through a
    user namespace; skipped where neither can mount one): reads (recall, list, show, stats,
    export) exit 0, writes (pin, remember) exit with the disk-full code and one line, each
    trial's delete of an acknowledged note exits 0 and the note is gone, the service starts
    again read-mostly and says why in its status; once the filler is removed, every
    acknowledged note not deleted is there once and no deleted one came back."""
    row = Row("full disk: read, delete, restart")
    if not shutil.which("unshare"):
        row.skipped = "no unshare for a private tmpfs"
        return row
    template = base / "full-template"
    template.mkdir()
    mark = tag()
    # half the notes are deleted, a trial each, every other one through the service:
    # --quick's 4 give one trial through the service, then one in-process on the device it
    # left behind
    notes = [f"Full disk note {i} {mark}" for i in range(4 if h.quick else 12)]
    setup = Row("setup")
    for note in notes:
        _setup(h.run(template, "remember", note), setup)
    if setup.failures:
        return setup
    _inside_private_tmpfs(h, row, "--full-disk-inside", base / "full-disk", [str(template), mark], h.timeout * 6)
    return row


def full_disk_inside(home: Path, template: Path, mark: str, fake: bool, quick: bool) -> dict:
    """In a private mount namespace: a tmpfs at ``home`` holding a copy of ``template`` (its
    notes carry ``mark``), filled to the last byte; then the trials of ``full_disk_case``.
    Prints the Row as JSON."""
    failed = _mount_copy(home, template)
    if failed:
        return {"skipped": failed}
    h = Harness(fake, quick, Path(tempfile.mkdtemp()))
    row = Row("full disk: read, delete, restart")
    check = Check(row)
    listed = check.memories(h, home) or []
    acked = {m["text"]: m["id"] for m in listed if mark in m["text"]}
    filler = _fill(home / "filler")
    full = expected_code("no space", "disk full")
    deleted: dict[str, str] = {}
    texts = sorted(acked)
    for trial, text in enumerate(texts[: len(texts) // 2]):
        memory_id = acked[text]
        service = trial % 2 == 0  # every other trial through a service started on the full device, from the first
        if service:
            check.saw(h.run(home, "service", "restart", service=True), expect_ok=True)
            status = check.saw(h.run(home, "service", "status", "--json", service=True), expect_ok=True)
            if status.code == 0 and not json.loads(status.out).get("read_mostly"):
                row.failures.append("the service on a full device does not say that it is read-mostly")
        for argv in (
            ["recall", "Full disk note"],
            ["list"],
            ["show", memory_id],
            ["stats"],
            ["export"],  # to stdout: export -o /dev/null replaced the device with a file before issue 34
        ):
            done = check.saw(h.run(home, *argv, service=service))
            row.trials += 1
            if done.code != 0:
                row.failures.append(f"a read failed on a full disk: {done.describe()}")
        for argv in (["pin", memory_id], ["remember", f"refused note {trial} {mark}"]):
            _judge(row, check.saw(h.run(home, *argv, service=service)), full)
        done = check.saw(h.run(home, "delete", memory_id, "--yes", service=service))
        row.trials += 1
        if done.code == 0:
            deleted[text] = memory_id
            if check.saw(h.run(home, "show", memory_id, service=service)).code != expected_code("no memory"):
                row.failures.append(f"deleted on a full disk, yet shown: {memory_id}")
        else:
            row.failures.append(f"a delete failed on a full disk: {done.describe()}")
        if service:
            check.saw(h.run(home, "service", "stop", service=True))
    filler.unlink()
    after = check.memories(h, home) or []
    check.present_once(after, {t: i for t, i in acked.items() if t not in deleted})
    row.acknowledged += len(deleted)
    for text in deleted:
        if any(m["text"] == text for m in after):
            row.lost += 1
            row.failures.append(f"an acknowledged delete came back: {text[:60]!r}")
    if any(m["text"].startswith("refused note") for m in after):
        row.failures.append("a write refused on the full disk was stored")
    return asdict(row)


# --- purge grep -------------------------------------------------------------------------


def grep_home(home: Path, marker: bytes) -> list[str]:
    """The files under ``home`` whose bytes contain ``marker``."""
    found = []
    for path in home.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and marker in path.read_bytes():
                found.append(str(path.relative_to(home)))
        except OSError:
            continue
    return found


def purge_cases(h: Harness, base: Path) -> list[Row]:
    """Write a unique marker, purge it (delete / forget --purge / purge a user), grep."""
    top, forget = h.help(), h.help("forget")
    if "purge-user" in top:
        purge_user = ["purge-user", "{user}", "--yes"]
    elif re.search(r"--all(?![-\w])", forget):
        purge_user = ["forget", "--purge", "--user", "{user}", "--all", *(["--yes"] if "--yes" in forget else [])]
    else:
        purge_user = []
    with ThreadPoolExecutor(max_workers=h.jobs) as pool:
        return list(
            pool.map(
                lambda case: purge_one(h, base, *case, purge_user),
                enumerate(("delete", "forget --purge", "purge a user")),
            )
        )


def purge_one(h: Harness, base: Path, index: int, how: str, purge_user: list[str]) -> Row:
    """One purge grep: the marker is in some file before, in none after; a pinned note stays."""
    row = Row(f"purge grep: {how}")
    started = time.monotonic()
    check = Check(row)
    home = base / f"purge-{index}"
    home.mkdir()
    marker = "zq" + uuid.uuid4().hex
    user = "purgeme"
    if how == "purge a user" and not purge_user:
        row.skipped = "this tree has neither `memcli purge-user` nor `memcli forget --purge --user U --all`"
        return row
    row.trials = 1
    keep = check.saw(h.run(home, "remember", f"A note that stays {tag()}"), expect_ok=True)
    if keep.code == 0:
        check.saw(h.run(home, "pin", keep.out.strip()), expect_ok=True)
    if how == "delete":
        done = check.saw(h.run(home, "remember", f"My secret is {marker}"), expect_ok=True)
        purge = ["delete", done.out.strip(), *(["--yes"] if "--yes" in h.help("delete") else [])]
    elif how == "forget --purge":
        done = check.saw(
            h.run(home, "remember", f"An old secret {marker}", "--now", "2020-01-01T00:00:00"), expect_ok=True
        )
        purge = ["forget", "--purge", "--now", FUTURE]
    else:
        done = check.saw(h.run(home, "remember", f"Their secret {marker}", "--user", user), expect_ok=True)
        check.saw(h.run(home, "chat", "--user", user, input=f"Do not tell anyone {marker}\n"), expect_ok=True)
        purge = [a.replace("{user}", user) for a in purge_user]
    if done.code != 0 or keep.code != 0:
        return row
    if not grep_home(home, marker.encode()):
        row.failures.append("the marker is in no file before the purge: the grep cannot see it")
        return row
    purged = check.saw(h.run(home, *purge), expect_ok=True)
    if purged.code != 0:
        return row
    left = grep_home(home, marker.encode())
    if left:
        row.failures.append(f"the purged text is still in {', '.join(left)}")
    row.acknowledged = 1
    memories = check.memories(h, home)
    if memories is not None and not any(m["text"].startswith("A note that stays") for m in memories):
        row.lost += 1
        row.failures.append("the purge took a memory it should have kept")
    row.seconds = time.monotonic() - started
    return row


# --- the run ----------------------------------------------------------------------------


def kill_cases(h: Harness, rng: random.Random, base: Path, total: int, only: list[str], jobs: int) -> list[Row]:
    counts = distribute(total, {case: share for case, share in KILL_SHARES.items() if chosen(case, only)})
    rows = {case: Row(case) for case in counts}
    kills = Kills(h, rng, base)
    tasks: list[tuple[str, Callable[[Row], None]]] = []
    try:
        if "kill: import" in counts:
            tasks += [
                ("kill: import", lambda row, i=i: kills.import_trial(row, i)) for i in range(counts["kill: import"])
            ]
        if "kill: chat" in counts:
            tasks += [("kill: chat", kills.chat_trial) for _ in range(counts["kill: chat"])]
        if "kill: consolidate" in counts:
            template, texts, expected = consolidate_template(kills, rows["kill: consolidate"])
            tasks += [
                ("kill: consolidate", lambda row: kills.consolidate_trial(row, template, texts, expected))
            ] * counts["kill: consolidate"]
        if "kill: forget" in counts or "kill: forget --purge" in counts:
            ftemplate, pinned, faded = forget_template(kills, rows.get("kill: forget") or rows["kill: forget --purge"])
            for case, purge in (("kill: forget", False), ("kill: forget --purge", True)):
                if case in counts:
                    tasks += [
                        (case, lambda row, purge=purge: kills.forget_trial(row, ftemplate, pinned, faded, purge))
                    ] * counts[case]
    except Failure as exc:
        for row in rows.values():
            if not row.trials:
                row.failures.append(str(exc))
    rng.shuffle(tasks)

    def run(task: tuple[str, Callable[[Row], None]]) -> None:
        case, trial = task
        partial = Row(case)
        started = time.monotonic()
        try:
            trial(partial)
        except Failure as exc:
            partial.failures.append(str(exc))
        except Exception as exc:  # the harness reports, it does not crash
            partial.failures.append(f"harness error: {type(exc).__name__}: {exc}")
        with lock:
            rows[case].add(partial)
            rows[case].seconds += time.monotonic() - started
            done[0] += 1
            status(f"faults: {done[0]}/{len(tasks)} kill trials ({case}: {'ok' if partial.ok else 'FAIL'})")

    lock, done = threading.Lock(), [0]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(run, tasks))
    if "kill: service" in counts:
        started = time.monotonic()
        try:
            rows["kill: service"] = service_case(h, rng, base, counts["kill: service"])
        except Exception as exc:
            rows["kill: service"].failures.append(f"harness error: {type(exc).__name__}: {exc}")
        rows["kill: service"].seconds = time.monotonic() - started
    return list(rows.values())


QUIET = False


# --- the service and its clients (issue 25, sections 3 and 6) --------------------------------


def _paths_of(h: Harness, home: Path) -> dict[str, str]:
    """``memcli paths --json`` of ``home``."""
    return json.loads(h.run(home, "paths", "--json").out)


def _raw_reply(sock: socket.socket, seconds: float) -> str:
    """The first frame the service sends on ``sock`` (decoded), or what happened instead."""
    sock.settimeout(seconds)
    try:
        head = sock.recv(4, socket.MSG_WAITALL)
        if len(head) < 4:
            return "closed"
        (size,) = struct.unpack("!i", head)
        return sock.recv(size, socket.MSG_WAITALL).decode(errors="replace")
    except TimeoutError:
        return "nothing"
    except OSError as exc:
        return f"error {exc.errno}"


HELD_CLIENTS = {
    "silent": b"",
    "half a frame": struct.pack("!i", 100) + b'{"verb"',
    "length 2^40": struct.pack("!i", -1) + struct.pack("!Q", 2**40) + b"{}",
    "length 2^62": struct.pack("!i", -1) + struct.pack("!Q", 2**62) + b"{}",
    "nested JSON": struct.pack("!i", 200_000) + b"[" * 100_000 + b"]" * 100_000,
}
"""What a misbehaving client sends (and then nothing more) to the service's socket."""
HELD_IDLE = 6.0
"""The service_idle of the held-service case, seconds."""


def held_service_case(h: Harness, base: Path) -> Row:
    """Clients that hold the service (section 3): each of ``HELD_CLIENTS``, and 100
    silent connections at once, while a ``remember`` goes on. Each misbehaving client must
    get an error reply (or be closed) within the read deadline (10 s), the ``remember``
    must be acknowledged (or refused as busy, in one line, while the cap is reached), and
    the service must exit ``HELD_IDLE`` seconds after the last request however many silent
    sockets stay open (past that + 10 s: a hang). One trial per kind (``--quick``: one for
    them all at once), and one of the 100 connections."""
    row = Row("service: held by clients")
    check = Check(row)
    home = base / "held"
    home.mkdir()
    acked: dict[str, str | None] = {}
    mark = tag()
    idle = {"MEMCLI_SERVICE_IDLE": str(HELD_IDLE)}
    socket_path = _paths_of(h, home)["socket"]
    groups = (
        [[kind] for kind in HELD_CLIENTS] if not h.quick else [list(HELD_CLIENTS)]
    )  # --quick: all at once, one wait
    for group in [*groups, ["100 silent connections"]]:
        kind = " + ".join(group)
        first = check.saw(h.run(home, "remember", f"held {kind} first {mark}", service=True, **idle), expect_ok=True)
        if first.code == 0:
            acked[f"held {kind} first {mark}"] = None
        status_done = h.run(home, "service", "status", "--json", service=True, timeout=60)
        if status_done.code != 0:
            row.failures.append(f"{kind}: the service is not running after a remember")
            continue
        pid = json.loads(status_done.out)["pid"]
        held: list[socket.socket] = []
        try:
            for sent in [b""] * 100 if kind.startswith("100") else [HELD_CLIENTS[k] for k in group]:
                sock = socket.socket(socket.AF_UNIX)
                sock.connect(socket_path)
                held.append(sock)
                try:
                    sock.sendall(sent)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the service answered and closed it already (busy, or a length it refuses): its reply is read below
            text = f"held {kind} during {mark}"
            during = check.saw(h.run(home, "remember", text, service=True, **idle))
            last_request = time.monotonic()
            if during.code == 0:
                acked[text] = None
            elif during.code == int(ExitCode.SERVICE) and "busy" in during.err and during.err.count("\n") == 1:
                row.notes.append(f"{kind}: {during.err.strip()}")
            else:
                row.failures.append(f"{kind}: a remember beside it: {during.describe()}")
            for name, sock in zip(group, held):
                answer = _raw_reply(sock, 15.0)
                if not (answer.startswith('{"event":"error"') or answer == "closed"):
                    row.failures.append(f"{name}: the client got {answer[:120]!r} within 15 s, not an error reply")
            started = time.monotonic()
            while time.monotonic() - started < HELD_IDLE + 10 + 15:
                if not running(pid):  # gone, or a zombie where nothing reaps it (a container's first process)
                    row.notes.append(
                        f"{kind}: the service exited {time.monotonic() - last_request:.1f} s after its last request "
                        f"(service_idle {HELD_IDLE:g} s)"
                    )
                    break
                time.sleep(0.2)
            else:
                row.hangs += 1
                row.failures.append(
                    f"{kind}: the service (pid {pid}) was still up {HELD_IDLE + 25:g} s after its last request"
                )
        finally:
            for sock in held:
                sock.close()
        row.trials += 1
    memories = check.memories(h, home)
    if memories is not None:
        check.present_once(memories, acked)
    h.run(home, "service", "stop", service=True, timeout=60)
    return row


def _store_bytes(paths: dict[str, str]) -> int:
    """The bytes of the files of the store's Chroma folder (they grow when a batch commits)."""
    total = 0
    for path in Path(paths["store_dir"]).rglob("*"):
        with contextlib.suppress(OSError):
            total += path.stat().st_size if path.is_file() else 0
    return total


def _long_note(mark: str, trial: int, paragraphs: int) -> str:
    """A note of ``paragraphs`` chunks (about 900 characters each): embedding it takes long enough to kill the service under it."""
    words = " ".join(f"w{trial}x{i}" for i in range(120))
    return "\n\n".join(f"Died trial {trial} part {p} {mark}: {words}." for p in range(paragraphs))


def died_service_case(h: Harness, rng: random.Random, base: Path, trials: int) -> Row:
    """kill -9 the service while it answers (section 6): a ``remember`` of a long note
    (40 chunks), killed as its journal files are written or once they all are (and a
    moment after), and an import, killed after some batches. The client must exit 7 and say what was kept: "your note was
    saved" only if the note is stored once after the restart (else a lie), an import's
    "it had stored at least N" no more than what is there; the same command run again
    adds nothing twice. ``acknowledged``: notes the client said were saved or stored."""
    row = Row("kill: service mid-command")
    check = Check(row)
    home = base / "died"
    home.mkdir()
    mark = tag()
    paths = _paths_of(h, home)
    pending = Path(paths["pending_dir"])
    acked: dict[str, str | None] = {}
    # The fakes' embedder is instant: slow it so that the kill lands mid-command (the real one takes ~1 s a long note).
    prefix_slow = (
        [sys.executable, str(ROOT / "tests" / "fakes"), "cli", "--slow-embed", "0.5", "--"] if h.fake else None
    )
    notes_file = base / "died-notes.txt"
    imported = write_notes(notes_file, 600 if h.quick else 1500, mark)  # an import of 10 s and more, to be cut
    command = prefix_slow or h.command
    saved_re = re.compile(r"your note was saved and will be stored when it starts again")
    imported_re = re.compile(r"it had stored at least (\d+) new memories of the (\d+) found")
    for trial in range(trials):
        importing = trial % 3 == 1
        whole = trial % 3 == 2  # a remember killed once its note is all in the journal, else as it is being written
        h.run(home, "service", "stop", service=True, timeout=60)
        warm = subprocess.run(
            [*command, "stats", "--json"],
            env=h.env(home, service=True),
            capture_output=True,
            cwd=h.workdir,
            timeout=h.timeout,
            check=False,
        )  # a service (slowed with the fakes) to kill
        status_done = h.run(home, "service", "status", "--json", service=True, timeout=60)
        if warm.returncode != 0 or status_done.code != 0:
            row.failures.append("the service did not start")
            break
        pid = json.loads(status_done.out)["pid"]
        note = _long_note(mark, trial, 40)
        argv = ["import", str(notes_file)] if importing else ["remember", "-"]
        before = _store_bytes(paths)
        note_file = base / "died-note.txt"
        note_file.write_text(note, encoding="utf-8")
        with open(note_file, "rb") as stdin:
            process = subprocess.Popen(
                [*command, *argv],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=h.env(home, service=True),
                cwd=h.workdir,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            if importing and _store_bytes(paths) != before:  # a first batch committed: kill within the next ones
                time.sleep(rng.uniform(0, 2))
                break
            if not importing and len(list(pending.glob("*.json"))) >= (40 if whole else 1):
                time.sleep(rng.uniform(0, 0.3))
                break
            time.sleep(0.01)
        try:
            os.kill(pid, signal.SIGKILL)
            row.killed += 1
        except ProcessLookupError:
            pass
        try:
            _, err = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
            row.hangs += 1
        said = err.decode(errors="replace")
        if TRACEBACK in said:
            row.tracebacks += 1
        row.trials += 1
        after = check.memories(h, home, service=True)  # starts a new service, which stores the journal
        if after is None:
            break
        texts = Counter(m["text"] for m in after)
        if importing:
            found = imported_re.search(said)
            if process.returncode == 0:
                acked.update(dict.fromkeys(imported))
            elif process.returncode != int(ExitCode.SERVICE) or said.count("\n") != 1:
                row.failures.append(f"import under a dying service: exit {process.returncode}: {said.strip()[:200]}")
            elif found:
                stored = sum(1 for text in imported if texts[text])
                if stored < int(found[1]):
                    row.lies += 1
                    row.failures.append(f"said {found[1]} stored, {stored} are")
            row.notes.append(f"import exit {process.returncode}: {said.strip()[:160]}")
            again = check.saw(h.run(home, *argv, service=True), expect_ok=True)
            if again.code == 0:
                acked.update(dict.fromkeys(imported))
        else:
            parts = [p.strip() for p in note.split("\n\n")]
            if process.returncode == 0 or saved_re.search(said):
                for part in parts:
                    acked[part] = None
                if process.returncode != 0 and not all(texts[p] for p in parts):
                    row.lies += 1
                    row.failures.append(
                        f"said the note was saved; {sum(1 for p in parts if not texts[p])} of its parts are not stored"
                    )
            if process.returncode not in (0, int(ExitCode.SERVICE)) or (process.returncode and said.count("\n") != 1):
                row.failures.append(f"remember under a dying service: exit {process.returncode}: {said.strip()[:200]}")
            again = check.saw(h.run(home, "remember", "-", input=note, service=True), expect_ok=True)
            if again.code == 0:
                acked.update({part: None for part in parts})
            row.notes.append(f"remember exit {process.returncode}: {said.strip()[:160]}")
    memories = check.memories(h, home, service=True)
    if memories is not None:
        check.present_once(memories, acked)
    h.run(home, "service", "stop", service=True, timeout=60)
    return row


def _expect(row: Row, done: Result, code: int, *, contains: str = "", absent: str = "") -> None:
    """``_judge`` (exit ``code``, one line on stderr), and the line holds ``contains`` and not ``absent``."""
    _judge(row, Check(row).saw(done), code)
    if contains and contains not in done.err + done.out:
        row.failures.append(f"no {contains!r} in {done.describe()}")
    if absent and absent in done.err + done.out:
        row.failures.append(f"{absent!r} shown by {done.describe()}")


def export_target_case(h: Harness, base: Path) -> Row:
    """Issue 34 item 1: ``export -o`` to a FIFO and a folder is refused (exit 5, one line)
    and leaves them as they were; through a symlink it writes the file the link names and
    keeps the link; a temporary file a killed export left (a dead writer's id in its name)
    is removed by the next export. No device is ever used: a harness must not risk /dev."""
    row = Row("probe: export -o FIFO, folder, symlink, stale temp")
    home, out = base / "export-target", base / "export-files"
    out.mkdir()
    _setup(h.run(home, "remember", f"The spare key is under the blue pot {tag()}"), row)
    fifo = out / "fifo"
    os.mkfifo(fifo)
    _expect(row, h.run(home, "export", "-o", str(fifo), timeout=120), expected_code("bad input"))
    if not stat.S_ISFIFO(fifo.lstat().st_mode):
        row.failures.append("the FIFO was replaced")
    _expect(row, h.run(home, "export", "-o", str(out), timeout=120), expected_code("bad input"))
    drive = out / "drive"
    drive.mkdir()
    (drive / "backup.jsonl").write_text("old\n")
    link = out / "backup.jsonl"
    link.symlink_to(drive / "backup.jsonl")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = drive / f".backup.jsonl.memcli-{dead.pid}.a1b2.tmp"
    stale.write_text("what a killed export wrote")
    done = Check(row).saw(h.run(home, "export", "-o", str(link), timeout=120), expect_ok=True)
    row.trials += 1
    if done.code == 0 and not (link.is_symlink() and "spare key" in (drive / "backup.jsonl").read_text()):
        row.failures.append("the export through a symlink did not write the file it names, or replaced the link")
    if stale.exists():
        row.failures.append("a stale temporary file of a dead export was left")
    return row


def long_text_case(h: Harness, base: Path) -> Row:
    """Issue 34 item 2: a long note (200 KB; 50 KB with --quick) is stored a chunk a memory
    and consolidates within the harness's timeout; ``edit --text -`` with more than a
    chunk is refused (exit 5) and the memory stays as it was."""
    row = Row("probe: long note (chunked, consolidates, edit refused)")
    home = base / "long-text"
    words = [f"Ana{i} met Bruno{i % 97} in Porto and my sister Carla{i % 13} called" for i in range(5000)]
    text = (". ".join(words))[: 50_000 if h.quick else 200_000]
    done = _setup(h.run(home, "remember", "-", "--json", input=text, timeout=600), row)
    ids = json.loads(done.out)["ids"]
    row.trials += 1
    if len(ids) < 2:
        row.failures.append(f"a {len(text):,}-character note was stored as {len(ids)} memory")
    consolidated = Check(row).saw(h.run(home, "consolidate", "-q", timeout=600), expect_ok=True)
    row.trials += 1
    if consolidated.code != 0:
        row.failures.append(f"consolidate: {consolidated.describe()}")
    before = h.run(home, "show", ids[0], "--json").out
    _expect(row, h.run(home, "edit", ids[0], "--text", "-", input="more words " * 200), expected_code("bad input"))
    if h.run(home, "show", ids[0], "--json").out != before:
        row.failures.append("the refused edit changed the memory")
    return row


def server_cases(h: Harness, base: Path) -> list[Row]:
    """Issue 34 items 4, 5, 6 against the fake OpenAI-compatible server of tests/fakes
    (chat and embeddings, so no model loads), with the real ``memcli`` (the fakes' CLI puts
    its own chat model before any server): a server that ignores max_tokens is cut at the
    reply cap; one that trickles is given up after model_timeout (exit 3, no hang); a reply
    that is not UTF-8 or a stream line that is not JSON is exit 3 naming the server; a 500
    echoing the Authorization header shows the key nowhere (stderr, files under the home)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fakes import model_server  # the fake server lives with the tests

    key = f"sk-faults-{uuid.uuid4().hex}"
    rows = []
    command = [sys.executable, "-m", "memcli"]
    with model_server.serving() as url:
        real = Harness(False, h.quick, h.workdir)
        real.command = command

        def server_env(mode: str, **extra: str) -> dict[str, str]:
            return {
                "MEMCLI_MODEL_URL": f"{url}/{mode}/v1",
                "MEMCLI_MODEL_NAME": "fake",
                "MEMCLI_EMBEDDER_URL": f"{url}/ok/v1",
                "MEMCLI_EMBEDDER_NAME": "fake",
                "MEMCLI_MODEL_API_KEY_ENV": "FAULTS_KEY",
                "FAULTS_KEY": key,
                "MEMCLI_MODEL_REQUEST_TIMEOUT": "5",
                "MEMCLI_ANSWERS": "llm",
                **extra,
            }

        def run(mode: str, *argv: str, input: str | None = None, **extra: str) -> tuple[Path, Result]:
            home = base / f"server-{mode}"
            if argv[0] == "ask":  # a memory to answer from, so that ask asks the model
                real.run(home, "remember", "Ana moved to Lisbon in May", timeout=120, **server_env("ok"))
            return home, real.run(home, *argv, input=input, timeout=120, **server_env(mode, **extra))

        flood = Row("probe: server ignores max_tokens (chat)")
        home, done = run("flood", "chat", "--quiet", input="tell me everything\n", MEMCLI_MAX_TOKENS="8")
        Check(flood).saw(done, expect_ok=True)
        flood.trials += 1
        listed = real.run(home, "list", "-n", "0", "--json", **server_env("flood")).out or "[]"
        replies = [m["text"] for m in json.loads(listed) if m.get("speaker") == "assistant"]
        if sum(len(r) for r in replies) > 8 * 16:
            flood.failures.append(f"a reply of {sum(len(r) for r in replies):,} characters was stored (cap 128)")
        rows.append(flood)

        trickle = Row("probe: server trickles past model_timeout (ask)")
        _, done = run("trickle", "ask", "what is new?", MEMCLI_MODEL_TIMEOUT="2", MEMCLI_MAX_TOKENS="4096")
        _expect(trickle, done, expected_code("model server"), contains="model_timeout")
        rows.append(trickle)

        for mode, name in (("garbage", "reply not UTF-8"), ("badsse", "stream line not JSON")):
            row = Row(f"probe: server {name} (ask)")
            _, done = run(mode, "ask", "what is new?")
            _expect(row, done, expected_code("model server"), contains=f"model server {url}/{mode}/v1")
            if "unexpected" in done.err:
                row.failures.append(f"'unexpected' error: {done.describe()}")
            rows.append(row)

        echo = Row("probe: server echoes the API key (ask, service on)")
        home = base / "server-echo"
        env = server_env("echo500")
        real.run(home, "remember", "Ana moved to Lisbon in May", timeout=120, **server_env("ok"))
        _expect(
            echo,
            real.run(home, "ask", "what is new?", service=True, timeout=180, **env),
            expected_code("model server"),
            contains="[redacted]",
            absent=key,
        )
        real.run(home, "service", "stop", service=True, timeout=60, **env)
        leaked = grep_home(home, key.encode())
        if leaked:
            echo.failures.append(f"the key is in {', '.join(leaked)}")
        rows.append(echo)
    return rows


def mcp_stdio_case(h: Harness, base: Path) -> Row:
    """Issue 34 item 8: ``memcli mcp`` over stdio answers each message the SDK alone
    leaves unanswered (the client would wait for ever) with its JSON-RPC error, within 60 s:
    malformed JSON and bytes that are not UTF-8 (-32700), a lone surrogate (-32700), a
    top-level array and no ``jsonrpc`` (-32600); a note over the tool bound is a tool
    error; nothing of it is stored and the server goes on."""
    row = Row("probe: MCP stdio malformed requests")
    home = base / "mcp-stdio"
    _setup(h.run(home, "remember", f"Known note {tag()}"), row)
    server = subprocess.Popen(
        [*h.command, "mcp", "--user", "default"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=h.env(home),
        start_new_session=True,
    )
    replies: list[bytes] = []
    reader = threading.Thread(target=lambda: replies.extend(iter(server.stdout.readline, b"")), daemon=True)
    reader.start()

    def send(line: bytes, expect: int = 1) -> dict | None:
        server.stdin.write(line + b"\n")
        server.stdin.flush()
        deadline = time.monotonic() + 60
        while len(replies) < expect and time.monotonic() < deadline:
            time.sleep(0.05)
        if len(replies) < expect:
            row.hangs += 1
            return None
        return json.loads(replies[expect - 1])

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "faults", "version": "1"}}
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode())
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        call = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"text":"%s"}}}'
        cases = [
            (b"{not json", -32700),
            (b"[1, 2]", -32600),
            (b'{"id": 4, "method": "tools/list"}', -32600),
            (call % (5, b"a\\ud800b"), -32700),
            (call % (6, b"caf\xe9 bytes"), -32700),
            (call % (7, b"word " * 30_000), 0),
            (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/list"}', None),
        ]
        for index, (line, code) in enumerate(cases, start=2):
            row.trials += 1
            reply = send(line, index)
            if reply is None:
                row.failures.append(f"no reply within 60 s to {line[:60]!r}")
                break
            if code is None:
                if "result" not in reply:
                    row.failures.append(f"the server did not go on: {reply}")
            elif code == 0:
                if not reply.get("result", {}).get("isError"):
                    row.failures.append(f"a 150,000-character note was not a tool error: {str(reply)[:200]}")
            elif reply.get("error", {}).get("code") != code:
                row.failures.append(f"{line[:60]!r}: expected error {code}, got {str(reply)[:200]}")
    finally:
        with contextlib.suppress(OSError):
            server.stdin.close()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            row.hangs += 1
            _kill_group(server)
    listed = json.loads(h.run(home, "list", "-n", "0", "--json").out or "[]")
    if len(listed) != 1:
        row.failures.append(f"{len(listed) - 1} memories stored from requests that were refused")
    return row


class _ChromaRun:
    """A real ``chroma run`` on 127.0.0.1 over ``path`` (the executable chromadb installs
    beside Python), started and killed by ``chroma_server_case``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        chroma = Path(sys.executable).with_name("chroma")
        argv = [str(chroma), "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1):
                    return
            time.sleep(0.2)
        raise Failure("chroma run did not answer within 60 s")

    def count(self) -> int:
        """Records in the server's memcli collections (0 when there is none yet)."""
        base = f"{self.url}/api/v2/tenants/default_tenant/databases/default_database/collections"
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(base, timeout=2) as listed:
                ids = [c["id"] for c in json.load(listed) if c.get("name", "").startswith("memcli-")]
            total = 0
            for collection in ids:
                with urllib.request.urlopen(f"{base}/{collection}/count", timeout=2) as counted:
                    total += int(json.load(counted))
            return total
        return 0

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        self.process = None


def chroma_server_case(h: Harness, base: Path) -> Row:
    """Issue 34 item 11: the store on a real ``chroma run``, killed -9 once an import has
    stored its first memories, then a ``remember`` while it is down; each exits 11 with one
    line. The import's line counts what is stored ("N of M memories are stored"), and once
    the server is back it holds at least N of them (more only by the batch it was given as
    it died); the note's line says it was saved, and the next command stores it. Full runs
    only: two server starts, about 15 s."""
    row = Row("probe: Chroma server killed mid-import, remember while down")
    mark = tag()
    home = base / "chroma-server"
    server = _ChromaRun(base / "chroma-server-data")
    notes = base / "chroma-server-notes.txt"
    texts = write_notes(notes, 8000, mark)
    command = [*h.command[:-1], "--slow-embed", "0.05", "--"] if h.fake else h.command
    env = h.env(home, MEMCLI_STORE_URL=server.url)
    try:
        server.start()
        err_path = base / "chroma-server-import.err"
        with open(err_path, "wb") as err:
            importing = subprocess.Popen(
                [*command, "import", str(notes)], stdout=subprocess.DEVNULL, stderr=err, env=env
            )
        deadline = time.monotonic() + h.timeout
        while importing.poll() is None and server.count() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        server.kill()
        try:
            importing.wait(timeout=h.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(importing)
            importing.wait()
        done = Result(["import", str(notes)], importing.returncode, "", err_path.read_text(errors="replace"))
        _judge(row, Check(row).saw(done), expected_code("chroma server"))
        said = re.search(r"the import stopped: (\d+) of (\d+) memories are stored", done.err)
        if said is None:
            row.failures.append(f"the import's line does not count what is stored: {done.describe()}")
        stored = int(said.group(1)) if said else 0
        note = f"Said while the Chroma server was down {mark}"
        _expect(
            row,
            h.run(home, "remember", note, MEMCLI_STORE_URL=server.url),
            expected_code("chroma server"),
            contains="your note was saved",
        )
        server.start()
        listed = h.run(home, "list", "-n", "0", "--json", MEMCLI_STORE_URL=server.url)
        Check(row).saw(listed, expect_ok=True)
        found = Counter(m["text"] for m in json.loads(listed.out or "[]"))
        imported = sum(found[t] for t in texts)
        row.acknowledged = stored + 1
        row.lost = max(0, stored - imported) + (found[note] == 0)
        row.duplicates = sum(n - 1 for n in found.values() if n > 1)
        if imported > stored + 512:  # IMPORT_BATCH: at most the batch in flight may be stored unsaid
            row.failures.append(f"said {stored} stored, the server holds {imported}")
    except Failure as exc:
        row.failures.append(str(exc))
    finally:
        server.kill()
    return row


def status(message: str) -> None:
    if not QUIET:
        print(message, file=sys.stderr, flush=True)


def table(rows: list[Row]) -> str:
    """The rows as one fixed-width text table."""
    head = [
        "case",
        "trials",
        "killed",
        "acked",
        "lost",
        "dups",
        "hangs",
        "tracebacks",
        "unchanged",
        "lies",
        "failures",
        "seconds",
        "result",
    ]
    body = []
    for r in rows:
        body.append(
            [
                r.case,
                str(r.trials),
                str(r.killed) if r.case.startswith("kill") else "-",
                str(r.acknowledged),
                str(r.lost),
                str(r.duplicates),
                str(r.hangs),
                str(r.tracebacks),
                f"{r.unchanged_passed}/{r.unchanged_total}" if r.unchanged_total else "-",
                str(r.lies),
                str(len(r.failures)),
                f"{r.seconds:.0f}",
                f"skipped: {r.skipped}" if r.skipped else ("ok" if r.ok else "FAIL"),
            ]
        )
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head) - 1)]
    lines = []
    for line in [head, *body]:
        cells = [cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))]
        lines.append("  ".join(cells + [line[-1]]))
    return "\n".join(lines)


def never_reap() -> bool:
    """Make this process the subreaper of its descendants (Linux ``PR_SET_CHILD_SUBREAPER``)
    without ever waiting for the orphans it inherits, so that they stay zombies; False
    where the system does not allow it."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


OFFLINE_STEPS = (
    ("remember", "I take atorvastatin 20 mg every evening."),
    ("remember", "My sister Ana lives in Porto."),
    ("recall", "atorvastatin"),
    ("ask", "What do I take every evening?"),
    ("chat",),
    ("consolidate",),
    ("list", "-n", "0", "--json"),
)
"""What the no-network probe runs, in order, with the service on (the first command starts
it): the commands a person runs every day, a chat turn and the nightly consolidation."""
CHAT_INPUT = "Where does my sister live?\n/exit\n"
OFFLINE_BY_ENVIRONMENT = (
    "ORT_DISABLE_TELEMETRY",
    "ORT_RUNNING_UNIT_TESTS",
    "CI",
    "TF_BUILD",
    "GITHUB_ACTIONS",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "ANONYMIZED_TELEMETRY",
)
"""Variables under which a library stays offline by itself (ONNX Runtime's telemetry
opt-out and those a CI machine sets, the hub's offline switches the harness sets for its
other cases, Chroma's telemetry setting): the probe removes them, so that memcli's own
switches are what it sees."""
OFFLINE_DRIVER = """\
import json, os, subprocess, sys
memcli, steps, chat_input, unset = json.loads(sys.argv[1])
env = {k: v for k, v in os.environ.items() if k not in unset}
results = []
try:
    for argv in steps:
        try:
            done = subprocess.run(memcli + argv, input=chat_input if argv == ["chat"] else None,
                                  stdin=None if argv == ["chat"] else subprocess.DEVNULL,
                                  capture_output=True, text=True, env=env, timeout=240)
            results.append([argv, done.returncode, done.stdout, done.stderr])
        except subprocess.TimeoutExpired as exc:
            results.append([argv, None, str(exc.stdout or ""), str(exc.stderr or "")])
finally:
    subprocess.run(memcli + ["service", "stop"], stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=120)
print(json.dumps(results))
"""
"""Runs ``OFFLINE_STEPS`` one after the other (``argv[1]``: JSON of the memcli command, the
steps, the chat's input and the variables to unset), then stops the service, so that a
tracer or a namespace around it holds every process memcli starts until they end; prints
``[argv, exit code (None: timed out), stdout, stderr]`` for each step."""
OUTSIDE = re.compile(
    r"^(?P<pid>\d+)\s+(?P<call>connect|sendto|sendmsg|sendmmsg)\(.*?sa_family=AF_INET6?,"
    r".*?(?:sin6?_port=htons\((?P<port>\d+)\)).*?"
    r"(?:inet_addr\(\"(?P<v4>[^\"]+)\"\)|inet_pton\(AF_INET6, \"(?P<v6>[^\"]+)\")",
    re.MULTILINE,
)
"""A traced call (strace) that names an IPv4 or IPv6 address: a connection attempt or a datagram."""


def outside_loopback(trace: str) -> list[str]:
    """The calls of an strace log (``-f``, connect and send calls) whose address is not a
    loopback one (127.0.0.0/8, ::1, ::ffff:127.x), or whose port is 53 on any address (a name
    lookup: a local stub resolver, such as systemd-resolved's 127.0.0.53, asks the network in
    turn): "connect 10.0.0.53:53 (pid 12)", once each."""
    found: list[str] = []
    for m in OUTSIDE.finditer(trace):
        address = m["v4"] or m["v6"] or ""
        loopback = address.startswith("127.") or address in ("::1", "::") or address.startswith("::ffff:127.")
        if loopback and m["port"] != "53":
            continue
        if address == "0.0.0.0":  # an unspecified address: a bind-like use, nothing sent
            continue
        line = f"{m['call']} {address}:{m['port']} (pid {m['pid']})"
        if line not in found:
            found.append(line)
    return found


def _unshare_works() -> str:
    """Why ``unshare -rn`` (a user and network namespace: no network but a loopback) cannot
    run here, or "" when it can."""
    if shutil.which("unshare") is None:
        return "no unshare (util-linux)"
    try:
        done = subprocess.run(["unshare", "-rn", "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare -rn: {exc}"
    return "" if done.returncode == 0 else f"unshare -rn: {done.stderr.strip()[:120] or done.returncode}"


def _strace_works() -> str:
    """Why ``strace -f`` cannot trace a child here (not installed, ptrace refused), or "" when it can."""
    if shutil.which("strace") is None:
        return "no strace"
    try:
        done = subprocess.run(["strace", "-f", "-qq", "-e", "trace=none", "true"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"strace: {exc}"
    return "" if done.returncode == 0 else f"strace: {done.stderr.decode(errors='replace').strip()[:120]}"


def _offline_steps(h: Harness, row: Row, home: Path, wrapper: list[str], what: str, **extra: str) -> None:
    """Run ``OFFLINE_DRIVER`` under ``wrapper`` in ``home`` and check each step: exit 0, no
    traceback, the note recalled, the listing JSON holding both notes."""
    payload = json.dumps([h.command, [list(step) for step in OFFLINE_STEPS], CHAT_INPUT, OFFLINE_BY_ENVIRONMENT])
    done = h.run(
        home,
        service=True,
        command=[*wrapper, sys.executable, "-c", OFFLINE_DRIVER, payload],
        # the embedder's ONNX export (ONNX Runtime is what reached the network: its
        # telemetry); the fakes load no model
        MEMCLI_EMBEDDER_ONNX="true",
        **extra,
    )
    if done.hung or done.code != 0:
        row.hangs += done.hung
        row.failures.append(f"{what}: the driver ended with {done.code}: {done.err.strip()[-200:]}")
        return
    for argv, code, out, err in json.loads(done.out):
        row.trials += 1
        name = f"{what}: `memcli {' '.join(argv[:1])}`"
        if code is None:
            row.hangs += 1
            row.failures.append(f"{name} hung")
        elif TRACEBACK in err:
            row.tracebacks += 1
            row.failures.append(f"{name}: traceback: {err.strip().splitlines()[-1][:160]}")
        elif code != 0:
            row.failures.append(f"{name} exit {code}: {(err.strip().splitlines() or [''])[-1][:160]}")
        elif argv[0] == "recall" and "atorvastatin" not in out:
            row.failures.append(f"{name} did not find the note: {out.strip()[:120]!r}")
        elif argv[0] == "list":
            texts = {m.get("text") for m in json.loads(out)} if out.strip().startswith("[") else set()
            if not {step[1] for step in OFFLINE_STEPS if step[0] == "remember"} <= texts:
                row.failures.append(f"{name}: the notes remembered are not listed")


def traced_case(h: Harness, base: Path, **extra: str) -> Row:
    """``OFFLINE_STEPS`` under ``strace -f``: no process memcli starts may connect or send to
    an address outside loopback, nor look a name up (``outside_loopback``); skipped, with why,
    where strace cannot trace (not installed, ptrace refused). ``extra``: more variables."""
    row = Row("probe: no network (strace: no address outside loopback)")
    row.skipped = _strace_works()
    if row.skipped:
        return row
    log = base / "no-network.strace"
    wrapper = [
        "strace",
        "-f",
        "-qq",
        "-e",
        "trace=connect,sendto,sendmsg,sendmmsg",
        "-e",
        "signal=none",
        "-o",
        str(log),
    ]
    _offline_steps(h, row, base / "no-network-traced", wrapper, "traced", **extra)
    trace = log.read_text(errors="replace") if log.exists() else ""
    if not trace:
        row.failures.append("strace wrote no log")
    row.failures += [f"reached outside: {line}" for line in outside_loopback(trace)[:10]]
    return row


def isolated_case(h: Harness, base: Path, **extra: str) -> Row:
    """``OFFLINE_STEPS`` in a network namespace with only loopback (``unshare -rn``, lo
    brought up when ``ip`` is there): every step must still work, with no stall; skipped,
    with why, where user namespaces are not allowed. ``extra``: more variables."""
    row = Row("probe: no network (unshare -rn: works with loopback only)")
    row.skipped = _unshare_works()
    if row.skipped:
        return row
    up = "ip link set lo up 2>/dev/null; " if shutil.which("ip") else ""
    wrapper = ["unshare", "-rn", "sh", "-c", up + 'exec "$@"', "sh"]
    # a cache of its own: no export yet, so the model loads through torch and transformers
    # (the hub's offline switches are memcli's own here) and the exporter starts, as on a first run
    cache = {"MEMCLI_SHARED_CACHE": str(base / "no-network-cache")}
    _offline_steps(h, row, base / "no-network-isolated", wrapper, "no network", **cache, **extra)
    return row


def no_network_cases(h: Harness, base: Path) -> list[Row]:
    """Nothing leaves the machine: ``OFFLINE_STEPS`` (remember, recall, ask, a chat turn,
    consolidate, list; the service on) traced (``traced_case``) and with no network
    (``isolated_case``). The variables that turn telemetry off on CI machines are removed
    (``OFFLINE_BY_ENVIRONMENT``), so that memcli's own switches are what is checked."""
    return [traced_case(h, base), isolated_case(h, base)]


def main(argv: list[str] | None = None) -> int:
    """Run the harness; 0 when every invariant held, 1 otherwise."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="few trials, small inputs, no 20 MB file (the test suite's mode)"
    )
    parser.add_argument("--trials", type=int, default=None, help="kill -9 trials in all (default 100; --quick: 12)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of the table")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="run only these cases (repeatable): a case's whole name runs that case, any other text every case "
        "whose name contains it (e.g. import, bad, purge)",
    )
    parser.add_argument(
        "--fake-models",
        action="store_true",
        help="the test fakes instead of the configured models (python tests/fakes cli)",
    )
    parser.add_argument("--real-models", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=2, help="kill trials run at once (default 2)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random kill points")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    parser.add_argument("--keep", action="store_true", help="keep the temporary homes (their path is printed)")
    parser.add_argument(
        "--reap", action="store_true", help="leave orphaned processes to the system instead of keeping them as zombies"
    )
    parser.add_argument("--disk-full-inside", nargs=3, metavar=("HOME", "TEMPLATE", "NOTES"), help=argparse.SUPPRESS)
    parser.add_argument("--full-disk-inside", nargs=3, metavar=("HOME", "TEMPLATE", "MARK"), help=argparse.SUPPRESS)
    parser.add_argument("--snapshot-inside", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.snapshot_inside:
        print(json.dumps(snapshot_inside(options.fake_models)))
        return 0
    global QUIET
    QUIET = options.quiet or bool(options.disk_full_inside) or bool(options.full_disk_inside)
    if options.full_disk_inside:
        home, template, mark = options.full_disk_inside
        print(json.dumps(full_disk_inside(Path(home), Path(template), mark, options.fake_models, options.quick)))
        return 0
    if options.disk_full_inside:
        home, template, notes = (Path(p) for p in options.disk_full_inside)
        print(json.dumps(disk_full_inside(home, template, notes, options.fake_models, options.quick)))
        return 0
    zombies = not options.reap and never_reap()
    seed = options.seed if options.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    total = options.trials if options.trials is not None else (12 if options.quick else 100)
    base = Path(tempfile.mkdtemp(prefix="memcli-faults-"))
    h = Harness(options.fake_models, options.quick, base)
    h.jobs = max(1, options.jobs)
    only = options.only
    started = time.monotonic()
    status(
        f"faults: {'fake' if h.fake else 'real'} models, {total} kill trials, seed {seed}, homes under {base}"
        + ("; orphans stay zombies" if zombies else "")
    )
    rows: list[Row] = []
    try:
        if any(chosen(case, only) for case in KILL_SHARES):
            rows += kill_cases(h, rng, base, total, only, options.jobs)
        runs: dict[str, Callable[[], list[Row]]] = {
            "concurrency (service)": lambda: [concurrency_case(h, base, True)],
            "concurrency (no service)": lambda: [concurrency_case(h, base, False)],
            "bad: ": lambda: bad_inputs(h, base),
            "full disk: read, delete, restart": lambda: [full_disk_case(h, base)],
            "service: held by clients": lambda: [held_service_case(h, base)],
            "service: a folder named memcli here": lambda: [shadowed_service_case(h, base)],
            "chat: transcript and citations": lambda: [chat_leak_case(h, base)],
            "graph: backup, purge, restore": lambda: [graph_backup_case(h, base)],
            # --quick: each of its three kills (a remember being journaled, one journaled, an import) once
            "kill: service mid-command": lambda: [died_service_case(h, rng, base, 3 if options.quick else 12)],
            "kill: service while recall reinforces": lambda: [reinforce_case(h, rng, base, 3 if options.quick else 6)],
            "purge grep: ": lambda: purge_cases(h, base),
            "probe: export -o FIFO, folder, symlink, stale temp": lambda: [export_target_case(h, base)],
            "probe: long note (chunked, consolidates, edit refused)": lambda: [long_text_case(h, base)],
            "probe: server ": lambda: server_cases(h, base),
            "probe: MCP stdio malformed requests": lambda: [mcp_stdio_case(h, base)],
            "probe: Chroma server killed mid-import, remember while down": lambda: (
                [] if options.quick else [chroma_server_case(h, base)]
            ),
            "probe: no network ": lambda: no_network_cases(h, base),
        }
        if set(runs) != set(CASES):  # a case run but not named (or named, never run) would go unseen
            raise SystemExit(f"faults.py: CASES and the runs differ: {sorted(set(runs) ^ set(CASES))}")
        for name in CASES:
            if not chosen(name, only):
                continue
            case_started = time.monotonic()
            status(f"faults: {name.strip(': ')}...")
            try:
                found = runs[name]()
            except Exception as exc:
                found = [Row(name.strip(": "), failures=[f"harness error: {type(exc).__name__}: {exc}"])]
            for row in found:
                row.seconds = row.seconds or time.monotonic() - case_started
            rows += found
    finally:
        if not options.keep:
            shutil.rmtree(base, ignore_errors=True)
    seconds = time.monotonic() - started
    ok = all(row.ok for row in rows)
    if options.json:
        print(
            json.dumps(
                {
                    "ok": ok,
                    "models": "fake" if h.fake else "real",
                    "kill_trials": total,
                    "seed": seed,
                    "seconds": round(seconds, 1),
                    "zombies": zombies,
                    "rows": [{**asdict(r), "ok": r.ok} for r in rows],
                },
                indent=2,
            )
        )
    else:
        print(table(rows))
        print(f"{'fake' if h.fake else 'real'} models, seed {seed}, {seconds:.0f} s")
    for row in rows:
        for failure in row.failures[:10]:
            status(f"faults: {row.case}: {failure}")
        if len(row.failures) > 10:
            status(f"faults: {row.case}: ... and {len(row.failures) - 10} more")
        if row.notes:
            status(f"faults: {row.case}: note: {len(row.notes)} documented refusals, e.g. {row.notes[0]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
