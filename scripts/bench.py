#!/usr/bin/env python3
"""memcli benchmark: how fast memcli is on the machine it runs on.

Run it from the environment memcli is installed in::

    python scripts/bench.py                    # the full run: 1k, 10k and 100k memories (about 10-15 min on 2 cores)
    python scripts/bench.py --quick            # a smoke run (the test suite's): each part once, 1k memories
    python scripts/bench.py --million          # the full run and a store of 1,000,000 memories built for recall alone
    python scripts/bench.py --sizes 1000000 --skip shell,import,waits,client,forget-cli   # the 1M figures alone
    python scripts/bench.py --json > bench.json

It reports, as a table on stdout (``--json``: one JSON object; progress goes to stderr):

1. **Recall in the service's code path** at each ``--sizes`` (memories of one user): a
   resident ``MemoryStore`` (``open_resident``), a long-lived ``Recaller`` reused across
   calls (warm), a fresh ``Engine`` per request as the service builds one, the real
   all-MiniLM-L6-v2 query encoding included, reinforcement off, k = 10. p50 / p95 over a
   fixed sample of LoCoMo questions (``--queries``, seed 0) asked ``--repeats`` times, and
   the same calls again with reinforcement on (``p50 reinf.``: ``reinforce=True``, what a
   default ``memcli recall``, chat or ask does, each returned memory's strength and
   last_recalled_at written back to the store; measured after the memory figures, before
   the forget dry-run), plus the first recall (which loads the user's recall index), the
   query encoding alone, the time to build the store, and the resident memory of the
   process that holds the store (VmRSS after the queries without reinforcement and its peak
   VmHWM, from /proc/self/status). Each size is
   measured in a fresh worker process (this script with a hidden ``--worker``), so the
   memory figures are those of a process like the service: embedder loaded, store open,
   one user's index in memory. Queries are encoded by the embedder the service runs
   (``service_embedder``: the ONNX export, made by the first worker in the run's shared cache). ``--vector-dtype float32,float16`` (the default) measures
   each size twice, with the in-memory vectors of the recall index held as float32 (what
   memcli uses) and as float16 (``memcli.store.index.VECTOR_DTYPE``).

   The stores are synthetic but realistic. LoCoMo's turns (``--locomo``, all ten
   conversations by default, about 5,900 turns) are embedded once with the real
   embedder; the store of size N is filled with copies of LoCoMo's sessions, in order,
   until it holds N turns (the last session may be cut short), all for one user
   (``bench``). Copy 0 is LoCoMo as it is; in copy c > 0 every speaker name is swapped for
   another name (also inside the texts), every number is shifted by c, and a turn that
   neither changes gets a variant tag, so texts differ; its vectors are the original
   unit vectors plus Gaussian noise of norm about ``--noise`` (0.35: cosine to the
   original about 0.94), re-normalised. Each copied session is one session of turns with
   timestamps increasing (a session every 12 hours, a turn a minute). The window vectors
   of the recall index (the text of a turn with its neighbours, ``memcli.store.recall_index.window_text``)
   are given to ``MemoryStore.add`` precomputed as the re-normalised sum of the vectors of
   the turns in the window, so nothing is embedded at the first recall. The build time is
   that of ``MemoryStore.add`` (Chroma and the recall-index sidecar), in whole sessions of
   about 5,000 memories per transaction.

   After a restart (the store closed and opened again, a fresh ``Recaller``), the first
   recall (which reads the index's snapshot), the first "when" question (its signal read
   from the snapshot too), and the same recalls again, with the resident
   memory then (the vectors read memory-mapped from the snapshot), with the peak from the
   restart on (VmHWM started again, ``reset_peak_rss``). ``--million`` adds a store of
   1,000,000 memories, and any size from ``RECALL_ONLY_AT`` is built for recall alone
   (``build_recall_only``: the recall index written by ``RecallIndex.put_fresh``, nothing in
   Chroma, whose HNSW inserts took over an hour at that size) and opened with Chroma
   stood in for (``recall_only_store``): recall, the first recall and resident memory are
   measured, in float32 alone; reinforcement, the forget dry-run, the remembers and the
   deletes are not (they read or write Chroma), nor section 4 over it.

   Then ``remember`` at that size (``timed_remembers``, issue 31's bound: supersession adds
   at most 30 ms p50): a note that states no slot, and for each slot the rules read (a
   medicine's dose, a home, a job, a partner, a diet, a membership, a stopped habit) a
   note that supersedes the last of its slot, each with supersession at write time on and
   off, interleaved; wall and CPU p50 of each, and the differences.

2. **The memcli command from a shell**, wall time of subprocesses of the installed
   ``memcli`` entry point with MEMCLI_HOME pointing at a small store (LoCoMo conv-26
   imported): ``memcli recall`` and ``memcli remember`` warm (the service up, ``--calls``
   calls), cold (``memcli service stop`` before each call, so each call starts the
   service; ``--cold-calls``) and in-process (``--no-service``; ``--cold-calls``), and
   ``memcli --help``; p50 over the calls. The service's own status (resident memory,
   requests served) is read after the warm calls. The service is always stopped at the end.

3. **Import throughput** against raw encoding of the same texts: raw is
   ``Embedder().embed`` (model already loaded) of the turns' texts plus their window
   texts (``memcli.store.recall_index.batch_windows``), both counted; import is one ``memcli import``
   of the same LoCoMo conversations into a fresh store, through the service it starts
   (wall time of the command, and the import's own duration as it reports it); texts/s
   of each and their ratio (goal: at least 0.90, issue 32); and the same ratio in CPU time
   (the bench's own CPU for raw, the service's CPU from its start to the import's end),
   which a busy machine slows far less than wall times. That first import loads the model
   through torch (the import's homes share a cache of their own, with no export yet); its
   end starts the embedder's ONNX export in the background. Once the export is made, the
   same again with it, side by side with the first: raw encoding with the export, and an
   import into a second fresh store, which reads it from the shared cache (every import
   after a person's first).

4. **``forget --dry-run``** over each store: ``Engine.forget(dry_run=True)`` in the worker
   on the resident store (goal at the largest size: at most 2 s), and the p50 of
   ``memcli forget --dry-run --json`` through the service over the largest store
   (``--skip-cli-forget`` to skip).

5. **The client's import time**: the total of ``python -X importtime -c "import
   memcli.transport.client"`` (the cumulative time of its top-level memcli imports), and the wall
   time of ``python -c "import memcli.cli, memcli.transport.client"`` next to ``python -c pass``.

6. **Where a person waits** (``--skip waits`` to skip), on the demo store (``memcli import
   --demo`` into a fresh MEMCLI_HOME, one ``memcli ask`` first, as a person trying memcli
   does): a cold ``memcli ask`` (the service stopped before each call, so each starts it), a
   cold ``list``, ``show`` and ``stats``, a warm ``memcli recall`` and ``memcli --help``
   (p50 over the calls, wall time of the command from a shell); then a scripted chat of
   ``--chat-turns`` turns (10) on the embedded model through the service, as ``memcli chat``
   sends it (``chat.open``, then ``chat.respond`` per turn, in a child process): the time
   from each message sent to the first piece of its reply (time to first token), the
   pieces (about one token each) per second after it, and the replies that came out empty
   (not stopped, nothing shown); then, the service stopped, a second chat's first turn,
   whose opening the first chat's kept on disk (time to first token); then Ctrl-C: ``memcli chat`` from a
   pipe, once its session is open, SIGINT 0.2 s after a message is sent (before the first
   token) and right after the first piece of the reply, and the time until the command has ended (``--chat-turns 0``
   skips the chat).

Everything happens in temporary directories, removed at the end (``--keep`` keeps
them). Lines of the service logs that look like errors are reported.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from memcli.paths import EMBEDDER_EXPORTS, SHARED_CACHE_ENV

DEFAULT_LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10.json"
"""LoCoMo in ../shared/data/locomo/ beside the repository (``--locomo`` to give another)."""
USER = "bench"
SESSION_GAP = 12 * 3600.0
TURN_GAP = 60.0
T0 = 1_600_000_000.0  # 2020-09-13
BATCH = 5000
MILLION = 1_000_000
"""The size ``--million`` adds (opt-in: not in the default run)."""
NAMES = [
    "Aisha",
    "Bruno",
    "Chen",
    "Dara",
    "Elif",
    "Farid",
    "Greta",
    "Hiro",
    "Ines",
    "Jonas",
    "Kemi",
    "Lars",
    "Mira",
    "Nikhil",
    "Olga",
    "Pablo",
    "Quinn",
    "Rosa",
    "Sami",
    "Tamsin",
    "Umar",
    "Vera",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zoe",
]
_NUMBER = re.compile(r"\d+")


def log(message: str) -> None:
    """Print a timestamped progress line to stderr."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, linear interpolation."""
    if not values:
        return float("nan")
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def proc_status() -> dict[str, int]:
    """VmRSS and VmHWM of this process in bytes, and VmRSS's parts RssAnon (the process's
    own memory) and RssFile (pages of mapped files: the snapshot's, reclaimable) where the
    kernel tells them (ru_maxrss for VmRSS and VmHWM where /proc is missing)."""
    out: dict[str, int] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                    out[key] = int(line.split()[1]) * 1024
    except OSError:
        import resource

        peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
        out = {"VmRSS": peak, "VmHWM": peak}
    return out


def service_cpu(home: Path) -> float | None:
    """CPU-seconds (user and system, its threads included) the running service of ``home``
    has used since it started; None when none runs. Read right after an import, it is the
    import's CPU in the service, the service's start and its embedder's load included: a
    figure that a busy machine slows far less than a wall time."""
    from memcli.config import home_paths

    try:
        pid = int(json.loads(home_paths(home).service_file.read_text(encoding="utf-8"))["pid"])
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memcli_command() -> list[str]:
    """The installed ``memcli`` entry point beside this Python, else ``python -m memcli``."""
    beside = Path(sys.executable).parent / "memcli"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("memcli")
    return [found] if found else [sys.executable, "-m", "memcli"]


# --- the synthetic stores ------------------------------------------------------------------


def locomo_sessions(path: Path, conversations: list[str] | None) -> list[list[Any]]:
    """LoCoMo's turns as sessions (lists of Memory in time order), conversation by conversation."""
    from memcli.formats.importers import parse_locomo, read_text

    text = read_text(path)
    memories = parse_locomo(path, text)
    if conversations:
        memories = [m for m in memories if m.user in conversations]
    sessions: dict[tuple[str, str], list[Any]] = {}
    for m in memories:
        sessions.setdefault((m.user, m.session), []).append(m)
    return [sorted(turns, key=lambda m: (m.created_at, m.id)) for turns in sessions.values()]


def locomo_questions(path: Path, conversations: list[str] | None, n: int, seed: int = 0) -> list[str]:
    """A fixed sample of n LoCoMo questions (categories 1-4), and the first "when" question
    after them when the sample has none: the worker's first "when" question after a restart
    is a figure of its own (its signal read from the snapshot), which a small sample
    (``--quick``'s) would leave out."""
    data = json.loads(path.read_text(encoding="utf-8"))
    found = [
        str(qa["question"])
        for sample in data
        if not conversations or sample.get("sample_id") in conversations
        for qa in sample.get("qa", [])
        if qa.get("category") in (1, 2, 3, 4) and qa.get("question")
    ]
    rng = random.Random(seed)
    sample = rng.sample(found, min(n, len(found)))
    if not any(q.lower().startswith("when") for q in sample):
        sample += [q for q in found if q.lower().startswith("when")][:1]
    return sample


def _names_pattern(names: dict[str, str]) -> re.Pattern[str] | None:
    """One pattern for every name of ``names`` (whole words), longest first."""
    if not names:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")


def _variant_text(text: str, names: dict[str, str], copy: int, pattern: re.Pattern[str] | None = None) -> str:
    """The text of a turn in copy ``copy``: names swapped, numbers shifted by ``copy``, else a
    ``(vN)`` tag. ``pattern``: ``_names_pattern(names)``, made once a copy."""
    out = text
    if names:
        # one pass for every name: a name another swap brought in is not swapped again
        out = (pattern or _names_pattern(names)).sub(lambda m: names[m.group()], out)  # type: ignore[union-attr]
    out = _NUMBER.sub(lambda m: str(int(m.group()) + copy), out)
    if out == text:
        out = f"{text} (v{copy})"
    return out


def synthetic_batches(sessions: list[list[Any]], vectors: dict[str, Any], size: int, noise: float, seed: int = 0):
    """Yield (memories, vectors, windows) batches of whole sessions until ``size`` turns
    (vectors and window vectors as float32 arrays, each a unit vector)."""
    import numpy as np

    from memcli.dates import day_of
    from memcli.memory import Kind, Memory, stable_id
    from memcli.store.recall_index import WINDOW_AFTER, WINDOW_BEFORE, window_text

    rng = np.random.default_rng(seed)
    speakers = sorted({m.speaker for s in sessions for m in s if m.speaker})
    made = session_no = copy = 0
    batch: tuple[list, list, dict] = ([], [], {})
    while made < size:
        names = {} if copy == 0 else {s: NAMES[(i + 7 * copy) % len(NAMES)] for i, s in enumerate(speakers)}
        pattern = _names_pattern(names)
        for base in sessions:
            if made >= size:
                break
            turns = base[: size - made]
            start = T0 + session_no * SESSION_GAP
            session = f"s{session_no:05d}"
            mems = []
            for i, t in enumerate(turns):
                at = start + i * TURN_GAP
                mems.append(
                    Memory(
                        id=stable_id("bench", USER, str(made + i)),
                        user=USER,
                        kind=Kind.TURN.value,
                        text=t.text if copy == 0 else _variant_text(t.text, names, copy, pattern),
                        created_at=at,
                        day=day_of(at),
                        session=session,
                        speaker=names.get(t.speaker, t.speaker),
                        source=f"{t.source}#{copy}",
                        caption=t.caption,
                    )
                )
            vecs = np.asarray([vectors[t.id] for t in turns], dtype=np.float32)
            if copy:  # a session's noise drawn at once: the same draws as a turn at a time
                vecs = vecs + rng.normal(0.0, noise / np.sqrt(vecs.shape[1]), vecs.shape).astype(np.float32)
                vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            windows: dict[str, Any] = {}
            if len(mems) > 1:
                owns = [m.index_text() for m in mems]
                for i in range(len(mems)):
                    w = np.sum(vecs[max(0, i - WINDOW_BEFORE) : i + WINDOW_AFTER + 1], axis=0)
                    windows[window_text(owns, i)] = w / np.linalg.norm(w)
            batch[0].extend(mems)
            batch[1].extend(vecs)
            batch[2].update(windows)
            made += len(mems)
            session_no += 1
            if len(batch[0]) >= BATCH:
                yield batch
                batch = ([], [], {})
        copy += 1
    if batch[0]:
        yield batch


def build_store(
    home: Path, sessions: list[list[Any]], vectors: dict[str, Any], size: int, noise: float
) -> dict[str, float]:
    """Fill a fresh store at ``home`` with ``size`` synthetic turns; timings in seconds."""
    from memcli.config import home_paths, load_settings
    from memcli.store.store import MemoryStore

    paths = home_paths(home)
    settings = load_settings(paths, env={})
    store = MemoryStore(paths, settings.lock_timeout)
    generate = add = 0.0
    store.open_resident()
    try:
        t = time.perf_counter()
        for memories, vecs, windows in synthetic_batches(sessions, vectors, size, noise):
            t1 = time.perf_counter()
            generate += t1 - t
            with store.transaction():
                store.add(memories, vecs, windows)
            t = time.perf_counter()
            add += t - t1
            log(f"  {size}: {store.count(USER)} memories stored ({add:.1f} s in add)")
    finally:
        store.close()
    return {"build_s": add, "generate_s": generate}


RECALL_ONLY_AT = MILLION
"""The size from which the store is built for recall alone (``build_recall_only``): its
build through Chroma takes over an hour on 2 cores, HNSW's inserts most of it."""


def build_recall_only(
    home: Path, sessions: list[list[Any]], vectors: dict[str, Any], size: int, noise: float
) -> dict[str, Any]:
    """Write ``size`` synthetic turns (``synthetic_batches``) into the recall index of a
    fresh store at ``home`` with the bulk writer (``RecallIndex.put_fresh``), and nothing
    into Chroma: a store for recall alone, which the worker opens as a ``recall_only_store``.
    Recall reads the recall index alone (and its snapshot), so its figures are those of a
    store of that size; what reads Chroma (forget, remember, delete, reinforcement written
    behind) is not measured on it. Timings in seconds."""
    from memcli.config import home_paths
    from memcli.paths import private_dir
    from memcli.store.sidecar import Sidecar

    paths = home_paths(home)
    private_dir(paths.data_dir)
    generate = [0.0]

    def batches() -> Any:
        made = 0
        t = time.perf_counter()
        for batch in synthetic_batches(sessions, vectors, size, noise):
            generate[0] += time.perf_counter() - t
            yield batch
            made += len(batch[0])
            if made % 100_000 < len(batch[0]):
                log(f"  {size}: {made} memories written to the recall index")
            t = time.perf_counter()

    sidecar = Sidecar(paths.database)
    try:
        t = time.perf_counter()
        written = sidecar.index.put_fresh(USER, batches())
        total = time.perf_counter() - t
    finally:
        sidecar.close()
    return {"build_s": total - generate[0], "generate_s": generate[0], "written": written, "recall_only": True}


def recall_only_store(paths: Any, lock_timeout: float, embedder_identity: str) -> Any:
    """A ``MemoryStore`` over a store that ``build_recall_only`` wrote (its recall index
    alone): Chroma is stood in for as a service's store does until something needs it
    (``memcli.store.store_open._DeferredChroma``), its count that of the recall index and
    its embedder ``embedder_identity``; anything that would open Chroma raises
    RuntimeError, so no figure can come from a store its check rebuilt. Everything recall
    does (the check of the index, its load or snapshot, the copy of the memories) is the
    real store's code."""
    from memcli.store.chroma import SCHEMA_VERSION
    from memcli.store.sidecar import Sidecar
    from memcli.store.store import MemoryStore
    from memcli.store.store_open import _DeferredChroma

    class RecallOnlyStore(MemoryStore):
        def _open_files(self) -> bool:
            self.full_reason = ""
            self._sidecar = Sidecar(self.paths.database)
            count = self._sidecar.index.count()
            metadata = {"schema_version": SCHEMA_VERSION, "embedder": embedder_identity}
            self._deferred = True
            self._collection = _DeferredChroma(self, "collection", count, metadata)
            self._client = _DeferredChroma(self, "client", count, metadata)
            return True

        def _open_deferred(self, role: str) -> Any:
            raise RuntimeError(f"a store built for recall alone has no Chroma ({role} asked for)")

    return RecallOnlyStore(paths, lock_timeout)


def reset_peak_rss() -> None:
    """Start the peak resident memory (VmHWM) again from the resident memory now (Linux's
    ``/proc/self/clear_refs``); nothing where it cannot be written."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")


# --- the worker: one store, resident, as the service holds it ------------------------------


DELETES = 3
"""Memories the worker deletes for good, one command each, at the end of its run."""


REMEMBERS = 30
"""Notes of each kind the worker remembers (``timed_remembers``)."""
TOWNS = ["York", "Leeds", "Bath", "Derby", "Chester", "Durham", "Exeter", "Lincoln", "Norwich", "Oxford", "Preston"]
ROLES = "nurse teacher welder baker pilot plumber chemist librarian surveyor florist editor".split()
DIETS = ["vegan", "vegetarian", "pescatarian"]
NAMES_DATED = ["Priya", "Tom", "Anna", "Marek", "Sofia", "Kwame", "Lena", "Omar", "Ruth", "Ivan", "Jade"]
DRINKS = ["oolong", "rooibos", "matcha", "chai", "espresso", "kombucha", "kefir", "cocoa", "lemonade", "cider", "mead"]


def remember_notes(i: int, suffix: str) -> dict[str, tuple[str, str]]:
    """The notes ``timed_remembers`` times at its ``i``-th round, for supersession on
    (``suffix`` "") or off ("_off"), by kind: (an untimed note remembered before it, or "",
    the timed note). Every text names its round, so that none is a note already stored
    (remember keeps the same text once). Each timed note of a slot supersedes (with
    supersession on) the last of its slot: another home, job, partner, diet or dose than
    the note before it, the end of the membership or habit its untimed note states;
    "plain" states no slot. The dose, membership and habit notes off name another
    medicine, club or drink than those on, so that the two runs do not meet; a person has
    one home, job, partner and diet, so each such note on also supersedes the note off
    remembered since the one before it."""
    off = bool(suffix)
    j = 2 * i + off
    week = f"Week {i + 1}{'b' if off else ''}:"
    club = "choir" if off else "gym"
    joined = f"the {TOWNS[i % len(TOWNS)]} {'Festival Chorus' if off else 'climbing gym'}"
    return {
        "plain": ("", f"bench note {suffix} {i}: I parked the car on level {i + 2} of the garage"),
        "dose": ("", f"I take {'metoprolol' if off else 'lisinopril'} {10 + 5 * i} mg once a day"),
        "residence": ("", f"{week} I live in {TOWNS[j % len(TOWNS)]} now."),
        "job": ("", f"{week} I work as a {ROLES[j % len(ROLES)]} at {TOWNS[(j + 3) % len(TOWNS)]} Hospital."),
        "partner": ("", f"{week} My partner is called {NAMES_DATED[j % len(NAMES_DATED)]}."),
        "diet": ("", f"{week} I am {DIETS[j % len(DIETS)]} now."),
        "membership": (f"{week} I joined {joined}.", f"{week} I cancelled my {club} membership."),
        "habit": (
            f"{week} I drink {DRINKS[j % len(DRINKS)]} every morning.",
            f"{week} I stopped drinking {DRINKS[j % len(DRINKS)]}.",
        ),
    }


def timed_remembers(request: Any, n: int) -> dict[str, Any]:
    """``Engine.remember`` on the resident store, as the service runs it (the real embedder,
    journal, Chroma, the recall index), ``n`` notes of each kind of ``remember_notes`` (a
    note that states no slot, and one for each slot the rules read: a medicine's dose, a
    home, a job, a partner, a diet, a membership, a stopped habit), interleaved so that the
    machine's load falls on each alike, each with supersession at write time on and off
    (``Changes.supersede`` replaced by a no-op: what a new note states is still parsed and
    written with its recall-index row). Returns p50 / p95 of the wall time and p50 of the
    process's CPU time (every thread: Chroma's too) in milliseconds per kind (``KIND`` on,
    ``KIND_off`` off), the medians' differences (``added_p50_ms``: what supersession adds),
    the p50 of supersession's own share of a remember on (``supersession_p50``, wall, and
    ``supersession_cpu_p50``, its thread's CPU: ``Changes.supersede``, and the parsing and
    writing of what the new memory states where it is kept with its recall-index row,
    ``memcli.store.statements.Said.write``), which the machine's load blurs less, and how
    many timed notes on superseded something (the check that they did)."""
    from memcli.recall.changes import Changes

    supersede = Changes.supersede
    kinds = list(remember_notes(0, ""))
    times: dict[str, list[float]] = {k + s: [] for k in kinds for s in ("", "_off")}
    cpu: dict[str, list[float]] = {k: [] for k in times}
    inner: dict[str, list[float]] = {k: [] for k in kinds}
    inner_cpu: dict[str, list[float]] = {k: [] for k in kinds}
    superseding: dict[str, int] = dict.fromkeys(kinds, 0)
    spent = [0.0, 0.0]

    def timed(method: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            t, c = time.perf_counter(), time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - t
                spent[1] += time.thread_time() - c

        return run

    # Supersession's own share of a remember, without the noise of the rest (embedding,
    # Chroma): Changes.supersede, and where the statements of a new memory are kept with its
    # row (memcli.store.statements), their parsing and writing.
    try:
        from memcli.store.statements import Said

        write = Said.write
        Said.write = timed(write)  # type: ignore[method-assign]
    except ImportError:
        Said, write = None, None
    on = timed(supersede)
    try:
        for suffix in ("", "_off"):  # the first of each slot: it supersedes nothing
            Changes.supersede = on if not suffix else (lambda self, memories, *a, **k: [])  # type: ignore[method-assign]
            for before, text in remember_notes(n, suffix).values():
                request().remember(text, USER)
        for i in range(n):
            for suffix in ("", "_off"):
                Changes.supersede = on if not suffix else (lambda self, memories, *a, **k: [])  # type: ignore[method-assign]
                for kind, (before, text) in remember_notes(i, suffix).items():
                    if before:
                        request().remember(before, USER)
                    spent[:] = [0.0, 0.0]
                    t, c = time.perf_counter(), time.process_time()
                    memory, _ = request().remember(text, USER)
                    times[kind + suffix].append(time.perf_counter() - t)
                    cpu[kind + suffix].append(time.process_time() - c)
                    if not suffix:
                        inner[kind].append(spent[0])
                        inner_cpu[kind].append(spent[1])
                        superseding[kind] += bool(memory_supersedes(request(), memory.id))
    finally:
        Changes.supersede = supersede  # type: ignore[method-assign]
        if Said is not None:
            Said.write = write  # type: ignore[method-assign]
    out: dict[str, Any] = {
        k: {"p50": pct(v, 0.5) * 1e3, "p95": pct(v, 0.95) * 1e3, "cpu_p50": pct(cpu[k], 0.5) * 1e3}
        for k, v in times.items()
    }
    for k in kinds:
        out[k]["supersession_p50"] = pct(inner[k], 0.5) * 1e3
        out[k]["supersession_cpu_p50"] = pct(inner_cpu[k], 0.5) * 1e3
    out["n"] = n
    out["kinds"] = kinds
    out["superseding"] = superseding
    out["added_cpu_p50_ms"] = {kind: out[kind]["cpu_p50"] - out[kind + "_off"]["cpu_p50"] for kind in kinds}
    out["added_p50_ms"] = {kind: out[kind]["p50"] - out[kind + "_off"]["p50"] for kind in kinds}
    return out


def memory_supersedes(engine: Any, memory_id: str) -> bool:
    """Whether the memory ``memory_id`` superseded another when it was stored (an ADD event
    naming the older one in its history)."""
    with engine.store.transaction():
        return any(e.event == "ADD" and e.related_id for e in engine.store.sidecar.history(memory_id=memory_id))


def service_embedder(settings: Any, paths: Any, timeout: float = 600.0) -> Any:
    """The embedder a service started with ``settings`` over ``paths`` runs, loaded
    (``engine_models.make_embedder``): the packaged model from its ONNX export in
    ``paths.model_dir``, as every start after the first runs it. A home without the
    export yet gets it first: the model is loaded through sentence-transformers, which
    starts the export, and loaded again once it is made (within ``timeout`` seconds; else,
    or when the export is rejected, the torch model is kept: its ``runtime`` says which).
    The export is waited for in ``paths.embedder_exports_dir``.
    A query encoded by torch on 2 threads costs 90-180 ms of CPU on a busy machine
    (its threads wait spinning), by the export 11-16 ms: the recall figures must be the
    service's."""
    from memcli.library.engine_models import make_embedder

    embedder = make_embedder(settings, paths)
    embedder.embed_one("warm up")
    if embedder.runtime == "torch" and wait_for_embedder_export(paths.embedder_exports_dir, timeout):
        embedder = make_embedder(settings, paths)
        embedder.embed_one("warm up")
    return embedder


def worker(
    home: Path,
    queries: list[str],
    repeats: int,
    dtype: str = "float32",
    recall_only: bool = False,
    restart_only: bool = False,
    remembers: int = REMEMBERS,
) -> dict[str, Any]:
    """Measure recall and ``forget --dry-run`` on the store at ``home``, held resident as the
    service holds it, with the recall vectors as ``dtype``; ``recall_only``: a store that
    ``build_recall_only`` wrote, opened as a ``recall_only_store``, and recall alone
    measured, without reinforcement; ``restart_only``: the restart's figures alone, in a
    process that has held no index before (at a million memories, a process that loaded
    the index whole keeps about 0.9 GB of its freed heap, which the restart's figures
    would carry); ``remembers``: the notes of each kind ``timed_remembers`` times. Keys
    ending ``_s`` are seconds, ``_ms`` milliseconds, ``_bytes`` bytes. Runs in its own
    process (``--worker``)."""
    import numpy as np

    from memcli.config import home_paths, load_settings
    from memcli.library.engine import Engine
    from memcli.models.embedding import embedder_identity
    from memcli.recall.retrieval import Recaller
    from memcli.store import index
    from memcli.store.store import MemoryStore

    index.VECTOR_DTYPE = np.dtype(dtype).type
    out: dict[str, Any] = {"dtype": dtype}
    paths = home_paths(home)
    settings = load_settings(paths, env={})
    t = time.perf_counter()
    embedder = service_embedder(settings, paths)
    out["embedder_load_s"] = time.perf_counter() - t
    out["embedder_runtime"] = embedder.runtime
    out["rss_embedder_bytes"] = proc_status()["VmRSS"]
    out["recall_only"] = recall_only

    def opened() -> MemoryStore:
        if recall_only:
            return recall_only_store(paths, settings.lock_timeout, embedder_identity(embedder))
        return MemoryStore(paths, settings.lock_timeout)

    store = opened()
    t = time.perf_counter()
    store.open_resident()
    out["open_s"] = time.perf_counter() - t
    try:
        recaller = Recaller(store, embedder)

        def request() -> Engine:
            """A fresh Engine over the shared store, embedder and Recaller, as the service builds per request."""
            return Engine(settings, paths, store=store, embedder=embedder, recaller=recaller)

        if recall_only:
            with store.transaction():
                out["memories"] = store.sidecar.index.count_of(USER)
        else:
            out["memories"] = store.count(USER)

        def timed_recalls(reinforce: bool) -> dict[str, float]:
            """Every query ``repeats`` times: n, and p50 / p95 / max in milliseconds; cpu_p50:
            the process's CPU time of a call (what a busy machine does not stretch)."""
            times: list[float] = []
            cpu: list[float] = []
            for _ in range(repeats):
                for q in queries:
                    t, c = time.perf_counter(), time.process_time()
                    request().recall(q, USER, k=10, reinforce=reinforce)
                    times.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c)
            return {
                "n": len(times),
                "p50": pct(times, 0.5) * 1e3,
                "p95": pct(times, 0.95) * 1e3,
                "max": max(times) * 1e3,
                "cpu_p50": pct(cpu, 0.5) * 1e3,
            }

        # At a million memories the forget dry-run, the remembers and the deletes are left
        # out (each reads every memory of the user: minutes), so that --million measures recall.
        full = out["memories"] < MILLION and not recall_only
        if not restart_only:  # a worker of its own for the restart: the first phase is the other's
            t = time.perf_counter()
            first = request().recall(queries[0], USER, k=10, reinforce=False)
            out["first_recall_s"] = time.perf_counter() - t
            out["first_recall_hits"] = len(first)
            for q in queries[:5]:
                request().recall(q, USER, k=10, reinforce=False)

            out["recall_ms"] = timed_recalls(reinforce=False)
            enc: list[float] = []
            for q in queries:
                t = time.perf_counter()
                embedder.embed_one(q)
                enc.append(time.perf_counter() - t)
            out["encode_ms"] = {"p50": pct(enc, 0.5) * 1e3, "p95": pct(enc, 0.95) * 1e3}
            status = proc_status()
            out["rss_bytes"], out["peak_rss_bytes"] = status["VmRSS"], status["VmHWM"]
            # The same calls with reinforcement on, as a default recall, chat or ask does: the
            # returned memories' strength and last_recalled_at are written back to the store.
            # After the memory figures, so they are those of read-only recall.
            if not recall_only:  # reinforcement writes Chroma behind: not in a store for recall alone
                out["recall_reinforce_ms"] = timed_recalls(reinforce=True)
            # The forget dry-run below thus runs over a store where the memories recalled above
            # were reinforced (at most 10 per query): nothing material changes for that figure.
            if full:
                forget: list[float] = []
                for _ in range(2):
                    t = time.perf_counter()
                    report = request().forget(user=USER, dry_run=True)
                    forget.append(time.perf_counter() - t)
                out["forget_dry_run_s"] = forget
                out["forget_examined"] = report.examined
                out["forget_would_forget"] = report.forgotten_count
            out["peak_rss_after_forget_bytes"] = proc_status()["VmHWM"]
            if full:
                out["remember_ms"] = timed_remembers(request, remembers)
            if recall_only:  # the restart in a worker of its own (``restart_only``)
                return out
        # A restart: the store closed and opened again and a fresh Recaller, as a service
        # started again finds the store (the files in the page cache, as after an idle exit).
        store.close()
        store = opened()
        recaller = Recaller(store, embedder)  # the index loaded before is let go: what a new process holds
        gc.collect()
        out["rss_before_restart_bytes"] = proc_status()["VmRSS"]
        reset_peak_rss()
        store.open_resident()
        t = time.perf_counter()
        request().recall(queries[1 % len(queries)], USER, k=10, reinforce=False)
        out["first_recall_restart_s"] = time.perf_counter() - t
        out["peak_rss_first_recall_restart_bytes"] = proc_status()["VmHWM"]
        # The first "when" question after the restart: its signal read from the snapshot,
        # not worked out again from every memory's text.
        when = next((q for q in queries if q.lower().startswith("when")), None)
        if when is not None:
            t = time.perf_counter()
            request().recall(when, USER, k=10, reinforce=False)
            out["first_when_restart_s"] = time.perf_counter() - t
        # Recall again after the restart, the index read from its snapshot (the vectors
        # memory-mapped), and the resident memory then: a service started again.
        out["restart_recall_ms"] = timed_recalls(reinforce=False)
        status = proc_status()
        out["rss_after_restart_bytes"], out["peak_rss_restart_bytes"] = status["VmRSS"], status["VmHWM"]
        if not full:
            return out
        # Delete for good (``Engine.delete``: the memory, what was made from it, compaction),
        # of turns spread over the store; last, as it changes the store.
        ids = [m.id for m in store.memories(user=USER, kind="turn")]
        deletes: list[float] = []
        for i in range(DELETES):
            t = time.perf_counter()
            request().delete(ids[(i * 7919) % len(ids)])
            deletes.append(time.perf_counter() - t)
        out["delete_s"] = deletes
    finally:
        store.close()
    return out


# --- shell commands ------------------------------------------------------------------------


class Shell:
    """Runs memcli commands with a given MEMCLI_HOME; remembers every home it ran in.
    ``shared_cache``: the cache every home shares (``MEMCLI_SHARED_CACHE``: the run's own,
    never the user's), unless ``shared_caches`` names another for a home."""

    def __init__(self, shared_cache: Path) -> None:
        """Find the memcli command; no homes, failures or fallbacks yet."""
        self.command = memcli_command()
        self.homes: set[Path] = set()
        self.failures: list[str] = []
        self.fallbacks = 0
        self.shared_cache = shared_cache
        self.shared_caches: dict[Path, Path] = {}

    def env(self, home: Path, user: str | None = None) -> dict[str, str]:
        """This environment without MEMCLI_* variables, plus MEMCLI_HOME, MEMCLI_SHARED_CACHE
        (and MEMCLI_USER if given). Without PYTHONDONTWRITEBYTECODE too: a person's memcli
        keeps its compiled modules (``__pycache__``), and with the variable set every command
        and service start compiles memcli's sources again (0.07 CPU-s a command, 0.5 a
        service start on the 2-core machine of docs/benchmark.md), which a person never waits for."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_") and k != "PYTHONDONTWRITEBYTECODE"}
        env["MEMCLI_HOME"] = str(home)
        env[SHARED_CACHE_ENV] = str(self.shared_caches.get(home, self.shared_cache))
        if user:
            env["MEMCLI_USER"] = user
        return env

    def run(
        self, home: Path, args: list[str], user: str | None = None, timeout: float = 900
    ) -> tuple[float, subprocess.CompletedProcess]:
        """Run ``memcli args``; its wall time in seconds and the finished process. A non-zero
        exit or a fallback to in-process is recorded in ``failures``."""
        self.homes.add(home)
        t = time.perf_counter()
        done = subprocess.run(
            self.command + args, env=self.env(home, user), capture_output=True, text=True, timeout=timeout, check=False
        )
        elapsed = time.perf_counter() - t
        if done.returncode != 0:
            self.failures.append(
                f"memcli {' '.join(args)[:80]} -> exit {done.returncode}: {done.stderr.strip()[-300:]}"
            )
        if "running in this process instead" in done.stderr:
            self.fallbacks += 1
            self.failures.append(f"memcli {' '.join(args)[:80]}: fell back to in-process: {done.stderr.strip()[-200:]}")
        return elapsed, done

    def timed(self, home: Path, args: list[str], n: int, user: str | None = None, before: Any = None) -> list[float]:
        """Run ``memcli args`` ``n`` times (calling ``before()`` before each); wall times in seconds."""
        times = []
        for i in range(n):
            if before is not None:
                before()
            elapsed, _ = self.run(home, args, user)
            times.append(elapsed)
        return times

    def status(self, home: Path) -> dict[str, Any] | None:
        """``memcli service status --json`` of ``home`` as a dict (None if it is not JSON)."""
        _, done = self.run(home, ["service", "status", "--json"])
        try:
            return json.loads(done.stdout)
        except ValueError:
            return None

    def stop(self, home: Path) -> None:
        """Stop the service of ``home`` (by the CLI; by its pid if it is still there)."""
        env = self.env(home)
        subprocess.run(
            self.command + ["service", "stop"], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        from memcli.config import home_paths

        service_file = home_paths(home).service_file
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            pid = int(json.loads(service_file.read_text(encoding="utf-8"))["pid"])
            os.kill(pid, 0)
            log(f"service {pid} of {home} still up after 'service stop'; sending SIGTERM")
            os.kill(pid, signal.SIGTERM)


def p50(values: list[float]) -> float:
    """The median of values, in their unit (NaN if empty)."""
    return statistics.median(values) if values else float("nan")


def shell_bench(
    shell: Shell, home: Path, user: str, queries: list[str], calls: int, cold_calls: int, help_calls: int = 10
) -> dict[str, Any]:
    """Section 2: wall times (seconds) of ``memcli recall``, ``remember`` (``calls`` warm,
    ``cold_calls`` cold and in-process) and ``--help`` (``help_calls``) from a shell on the
    store at ``home``; the service's own times of the warm calls (milliseconds) and its status."""
    out: dict[str, Any] = {}

    def stop() -> None:
        """Stop the service of ``home``."""
        shell.stop(home)

    qs = list(queries)

    def runs(n: int, prefix: list[str], verb: str, label: str, before: Any = None) -> list[float]:
        """``n`` calls of ``memcli [prefix] verb`` (recall: the queries in turn; remember: a new note each); wall times in seconds."""
        times = []
        for i in range(n):
            if before is not None:
                before()
            if verb == "recall":
                args = [*prefix, "recall", qs[i % len(qs)]]
            else:
                args = [*prefix, "remember", f"bench note {label} {i}: I parked the car on level {i + 2} of the garage"]
            elapsed, _ = shell.run(home, args, user)
            times.append(elapsed)
        log(f"  {label} {verb}: p50 {p50(times):.2f} s over {n}")
        return times

    help_times = shell.timed(home, ["--help"], help_calls)
    out["help_s"] = p50(help_times)
    log(f"  --help: p50 {out['help_s'] * 1e3:.0f} ms")
    stop()
    cold_recall = runs(cold_calls, [], "recall", "cold", stop)
    cold_remember = runs(cold_calls, [], "remember", "cold", stop)
    stop()
    inproc_recall = runs(cold_calls, ["--no-service"], "recall", "in-process")
    inproc_remember = runs(cold_calls, ["--no-service"], "remember", "in-process")
    t_start, _ = shell.run(home, ["recall", qs[0]], user)  # starts the service
    seen = log_lines(home)
    warm_recall = runs(calls, [], "recall", "warm")
    warm_remember = runs(calls, [], "remember", "warm")
    inside = service_times(home, seen)
    out["service_side_warm_ms"] = {verb: p50(inside.get(verb, [])) for verb in ("recall", "remember")}
    out["service_status"] = shell.status(home)
    stop()
    out["p50_s"] = {
        "recall": {"warm": p50(warm_recall), "cold": p50(cold_recall), "in_process": p50(inproc_recall)},
        "remember": {"warm": p50(warm_remember), "cold": p50(cold_remember), "in_process": p50(inproc_remember)},
    }
    out["calls"] = {"warm": calls, "cold": cold_calls, "in_process": cold_calls, "help": help_calls}
    out["first_call_starting_service_s"] = t_start
    return out


# --- where a person waits -----------------------------------------------------------------

CHAT_SCRIPT = [
    "Hi, I am back from the pottery class.",
    "What did I make last week?",
    "My teacher says my bowls are getting thinner.",
    "When did I start the class?",
    "I think I will try a teapot next.",
    "Do you remember my sister's name?",
    "She wants to come to the class too.",
    "What should I glaze the teapot with?",
    "I have a kiln slot on Friday.",
    "Thanks, talk tomorrow.",
]
"""The messages of the scripted chat (section 6), in turn."""


def chat_worker(turns: int) -> dict[str, Any]:
    """In a child process whose MEMCLI_HOME is the demo store: a chat of ``turns`` messages
    through the service, as ``memcli chat`` sends them; per turn the seconds to the first
    piece of the reply, the whole reply's seconds and its pieces."""
    from memcli.paths import resolve_paths
    from memcli.transport.client import Handlers
    from memcli.transport.entry import call

    paths = resolve_paths()
    t = time.perf_counter()
    state = call(paths, "chat.open", {"user": "demo", "system": "", "resume": False}, Handlers())
    opened = time.perf_counter() - t
    rows = []
    for i in range(turns):
        pieces: list[float] = []
        sent = time.perf_counter()
        reply = call(
            paths,
            "chat.respond",
            {"state": state.to_json(), "text": CHAT_SCRIPT[i % len(CHAT_SCRIPT)]},
            Handlers(piece=lambda _: pieces.append(time.perf_counter())),
        )
        done = time.perf_counter()
        state = reply.state
        first = pieces[0] - sent if pieces else float("nan")
        rate = (
            (len(pieces) - 1) / (pieces[-1] - pieces[0]) if len(pieces) > 2 and pieces[-1] > pieces[0] else float("nan")
        )
        rows.append(
            {
                "turn": i + 1,
                "first_piece_s": first,
                "reply_s": done - sent,
                "pieces": len(pieces),
                "pieces_per_s": rate,
                "empty": not reply.reply and not reply.interrupted,
            }
        )
    return {"open_s": opened, "turns": rows}


def run_chat_worker(shell: Shell, home: Path, turns: int, what: str, timeout: float) -> dict[str, Any] | None:
    """``chat_worker(turns)`` in a subprocess of this script with ``home``'s environment
    (``timeout`` seconds): its result, or None after recording the failure as ``what``."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--chat-worker", str(turns)],
        env=shell.env(home),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        shell.failures.append(f"{what}: exit {done.returncode}: {done.stderr.strip()[-600:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def chat_after_restart(shell: Shell, home: Path) -> dict[str, Any]:
    """A second chat in ``home`` after the service was stopped (as after its idle exit),
    its first message sent as soon as the chat is open: its opening (system text, portrait,
    running memory) is the first chat's, whose evaluated state the model keeps on disk
    (``memcli.models.llm.OPENING_STATES``), so its first turn evaluates only what follows
    it (the message and the memories recalled for it).
    Returns the kept states found before it, the chat's opening seconds and its first
    turn's time to first token (NaN when the worker failed)."""
    shell.stop(home)
    from memcli.config import home_paths

    states = len(list(home_paths(home).prompt_states_dir.glob("*.state")))
    chat = run_chat_worker(shell, home, 1, "chat worker after a restart", timeout=600)
    if chat is None:
        return {"states_on_disk": states, "open_s": float("nan"), "first_piece_s": float("nan")}
    return {"states_on_disk": states, "open_s": chat["open_s"], "first_piece_s": chat["turns"][0]["first_piece_s"]}


def ctrl_c(shell: Shell, home: Path, after_first_piece: bool) -> float:
    """``memcli chat`` reading a pipe: once the session is open (its status line on stderr:
    the model loaded), one message, then SIGINT (0.2 s after it was sent, or as soon as the
    reply's first piece is on stdout); seconds from the SIGINT until the command has ended
    (NaN when the reply ended before the SIGINT, or the session did not open)."""
    import select

    process = subprocess.Popen(
        [*shell.command, "chat", "--user", "demo"],
        env=shell.env(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    try:
        # A SIGINT while the command starts would measure its start, not the reply's stop.
        status = b""
        while b"memcli chat as" not in status:
            ready, _, _ = select.select([process.stderr], [], [], 120)
            chunk = os.read(process.stderr.fileno(), 4096) if ready else b""
            if not chunk:
                return float("nan")
            status += chunk
        process.stdin.write(f"{CHAT_SCRIPT[1]}\n".encode())
        process.stdin.flush()
        if after_first_piece:
            ready, _, _ = select.select([process.stdout], [], [], 120)
            if not ready:
                return float("nan")
            os.read(process.stdout.fileno(), 1)
        else:
            time.sleep(0.2)
        if process.poll() is not None:
            return float("nan")
        t = time.perf_counter()
        process.send_signal(signal.SIGINT)
        # End of input too, as a script's pipe ends: the time is until the reply has stopped
        # and the command has ended, whichever of the two ends the session.
        process.stdin.close()
        process.wait(timeout=120)
        return time.perf_counter() - t
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def wait_for_embedder_export(models: Path, timeout: float = 300.0) -> bool:
    """Wait until the embedder's ONNX export in ``models`` (``paths.embedder_exports_dir``)
    is made (True) or rejected, or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if list(models.glob("*.onnx")):
            return True
        if list(models.glob("*.onnx.rejected")):
            return False
        time.sleep(0.5)
    return False


def import_with_export(
    shell: Shell, first: Path, home: Path, args: Any, conversation: str, r: dict[str, Any]
) -> dict[str, Any]:
    """Section 3, the second import: once the first import (into ``first``) has made the
    embedder's ONNX export (in the background, after the import) in the cache its home
    shares, raw encoding of the same texts with the export (``Embedder`` given that
    folder, model loaded), then ``memcli import`` of the same conversation into another
    fresh store (``home``) sharing that cache, as every import after a person's first one
    is; seconds, texts/s and the ratios, in wall and in CPU time, as for the first."""
    from memcli.models.embedding import Embedder
    from memcli.store.recall_index import batch_windows

    models = shell.shared_caches.get(first, shell.shared_cache) / EMBEDDER_EXPORTS
    shell.shared_caches[home] = models.parent
    log("  waiting for the embedder's ONNX export the first import started")
    if not wait_for_embedder_export(models):
        return {"skipped": "no ONNX export was made"}
    onnx = Embedder(exports=models)
    onnx.embed_one("warm up")
    turns = [m for s in locomo_sessions(args.locomo, [conversation]) for m in s]
    windows = batch_windows(turns)
    t = time.perf_counter()
    cpu = time.process_time()
    onnx.embed([m.index_text() for m in turns])
    onnx.embed(windows)
    raw_s = time.perf_counter() - t
    raw_cpu_s = time.process_time() - cpu
    texts = len(turns) + len(windows)
    log(
        f"  raw with the export ({onnx.runtime}): {texts} texts in {raw_s:.1f} s; now memcli import into a fresh store with it"
    )
    try:
        wall, done = shell.run(home, ["import", str(args.locomo), "--conversation", conversation, "--json", "--quiet"])
        service_cpu_s = service_cpu(home)
    finally:
        shell.stop(home)
    imported: dict[str, Any] = {}
    with contextlib.suppress(ValueError):
        imported = json.loads(done.stdout)
    own = float(imported.get("duration_seconds", imported.get("seconds", float("nan"))))
    out = {
        "runtime": onnx.runtime,
        "raw_s": raw_s,
        "raw_tps": texts / raw_s,
        "raw_cpu_s": raw_cpu_s,
        "import_wall_s": wall,
        "import_tps": texts / wall,
        "ratio": raw_s / wall,
        "import_reported_s": own,
        "ratio_reported": raw_s / own,
        "added": imported.get("added"),
        "import_service_cpu_s": service_cpu_s,
        "ratio_cpu": raw_cpu_s / service_cpu_s if service_cpu_s else float("nan"),
        "ratio_to_raw_torch": r["import"]["raw_s"] / wall,
    }
    log(f"  import with the export {wall:.1f} s wall ({own:.1f} s reported), ratio {out['ratio']:.2f}")
    return out


def waits_bench(shell: Shell, home: Path, calls: int, cold_calls: int, chat_turns: int) -> dict[str, Any]:
    """Section 6: cold ask, list, show and stats, warm recall and --help on the demo store,
    then the scripted chat and Ctrl-C; seconds."""
    out: dict[str, Any] = {}
    shell.run(home, ["import", "--demo", "--quiet"])
    question = ["ask", "--user", "demo", "When did I start the pottery class?"]
    shell.run(home, question)  # what a person does first: the embedded model is made ready once
    # ... and the embedder's ONNX export is made once in the background: the cold figures are
    # those of every later start (memcli.models.embedding_export)
    exported = wait_for_embedder_export(shell.shared_cache / EMBEDDER_EXPORTS)
    out["embedder_runtime"] = "onnx" if exported else "torch"
    log(f"  embedder at a cold start: {out['embedder_runtime']}")
    _, listed = shell.run(home, ["list", "--user", "demo", "-n", "1", "--json"])
    first_id = json.loads(listed.stdout)[0]["id"] if listed.returncode == 0 else "none"

    def stop() -> None:
        shell.stop(home)

    cold: dict[str, float] = {}
    for name, args in (
        ("ask", question),
        ("list", ["list", "--user", "demo"]),
        ("show", ["show", first_id]),
        ("stats", ["stats"]),
    ):
        cold[name] = p50(shell.timed(home, args, cold_calls, before=stop))
        log(f"  cold {name}: p50 {cold[name]:.2f} s over {cold_calls}")
    out["cold_p50_s"] = cold
    shell.run(home, ["recall", "--user", "demo", "pottery"])  # the service is up
    out["warm_recall_p50_s"] = p50(shell.timed(home, ["recall", "--user", "demo", "pottery class"], calls))
    out["help_p50_s"] = p50(shell.timed(home, ["--help"], calls))
    log(f"  warm recall p50 {out['warm_recall_p50_s']:.2f} s, --help p50 {out['help_p50_s']:.2f} s")
    if chat_turns > 0:
        chat = run_chat_worker(shell, home, chat_turns, "chat worker", timeout=1800)
        if chat is not None:
            later = [row["first_piece_s"] for row in chat["turns"][1:]]
            chat["first_piece_p50_s"] = p50(later)
            chat["pieces_per_s_p50"] = p50(
                [row["pieces_per_s"] for row in chat["turns"] if row["pieces_per_s"] == row["pieces_per_s"]]
            )
            out["chat"] = chat
            chat["empty_replies"] = sum(1 for row in chat["turns"] if row["empty"])
            log(f"  chat: first piece {', '.join(f'{x:.2f}' for x in [r['first_piece_s'] for r in chat['turns']])} s")
            log(f"  chat: {chat['empty_replies']} empty replies of {len(chat['turns'])}")
            chat["opening_on_disk"] = chat_after_restart(shell, home)
            log(f"  chat after a service restart: {chat['opening_on_disk']}")
        out["ctrl_c_s"] = {
            "before_first_piece": ctrl_c(shell, home, after_first_piece=False),
            "after_first_piece": ctrl_c(shell, home, after_first_piece=True),
        }
        log(f"  Ctrl-C: {out['ctrl_c_s']}")
    stop()
    return out


# --- import time of the client -------------------------------------------------------------


def client_import_time(runs: int = 5, walls: int = 10) -> dict[str, Any]:
    """Section 5: ``-X importtime`` total of memcli's top-level imports for ``import memcli.transport.client``
    (median over ``runs``), the wall time of importing memcli.cli and memcli.transport.client against
    ``python -c pass`` (median of ``walls``), and the heaviest other imports; all in milliseconds."""
    totals = []
    top: dict[str, int] = {}
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import memcli.transport.client"],
            capture_output=True,
            text=True,
            check=False,
        )
        total = 0
        lines = {}
        for line in done.stderr.splitlines():
            m = re.match(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)", line)
            if not m:
                continue
            cumulative, indent, name = int(m.group(2)), len(m.group(3)), m.group(4)
            if indent <= 1 and name.split(".")[0] == "memcli":
                total += cumulative
            if indent <= 3:
                lines[name] = cumulative
        totals.append(total)
        top = lines
    wall = []
    base = []
    for _ in range(walls):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import memcli.cli, memcli.transport.client"], check=True)
        wall.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append(time.perf_counter() - t)
    heaviest = sorted(((v, k) for k, v in top.items() if not k.startswith("memcli")), reverse=True)[:5]
    return {
        "importtime_client_ms": p50(totals) / 1e3,
        "import_cli_client_wall_ms": p50(wall) * 1e3,
        "python_pass_wall_ms": p50(base) * 1e3,
        "heaviest_imports_ms": {k: v / 1e3 for v, k in heaviest},
    }


# --- other processes on the machine --------------------------------------------------------


class ForeignCpu:
    """CPU time used by processes that are not this benchmark's (not its descendants, and
    not a memcli service of one of its homes), sampled from /proc every few seconds by a
    thread: others running on the machine slow every figure."""

    def __init__(self, root: Path, every: float = 2.0) -> None:
        """Processes with ``root`` in their environment count as this benchmark's; sample every ``every`` seconds."""
        import threading

        self.root = str(root)
        self.every = every
        self.seconds = 0.0
        self.top: dict[str, float] = {}
        self._mine: dict[int, bool] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.started = time.time()

    def start(self) -> ForeignCpu:
        """Take a first sample and start the sampling thread (nothing without /proc); returns self."""
        if Path("/proc/self/stat").exists():
            self._sample()
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the sampling thread (after its current wait)."""
        self._stop.set()

    def _is_mine(self, pid: int, parents: dict[int, int]) -> bool:
        """Whether ``pid`` descends from this process or has ``root`` in its environment (cached per pid)."""
        if pid in self._mine:
            return self._mine[pid]
        me, p, mine = os.getpid(), pid, False
        for _ in range(64):
            if p == me:
                mine = True
                break
            p = parents.get(p, 0)
            if p <= 1:
                break
        if not mine:
            with contextlib.suppress(OSError):
                mine = self.root.encode() in Path(f"/proc/{pid}/environ").read_bytes()
        self._mine[pid] = mine
        return mine

    def _sample(self) -> None:
        """Read every process's CPU time (user + system, seconds) from /proc and add what others used since the last sample."""
        stats: dict[int, tuple[int, float, str]] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                raw = Path(f"/proc/{entry.name}/stat").read_text()
                name = raw[raw.index("(") + 1 : raw.rindex(")")]
                fields = raw[raw.rindex(")") + 2 :].split()
                stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / self._tick, name)
        parents = {pid: ppid for pid, (ppid, _, _) in stats.items()}
        for pid, (_, cpu, name) in stats.items():
            before = self._last.get(pid)
            self._last[pid] = cpu
            if before is None or self._is_mine(pid, parents):
                continue
            if cpu > before:
                self.seconds += cpu - before
                self.top[name] = self.top.get(name, 0.0) + cpu - before

    def _run(self) -> None:
        """The thread: sample every ``every`` seconds until stopped."""
        while not self._stop.wait(self.every):
            self._sample()

    def mark(self) -> tuple[float, float]:
        """Now: (others' CPU seconds so far, wall-clock time in seconds), for ``since``."""
        return self.seconds, time.time()

    def since(self, mark: tuple[float, float]) -> float:
        """The share of the machine other processes used since ``mark``."""
        wall = max(1e-9, time.time() - mark[1])
        return round((self.seconds - mark[0]) / (wall * (os.cpu_count() or 1)), 3)

    def report(self) -> dict[str, Any]:
        """Others' CPU seconds since the start, their share of the machine (0..1), and the top five names by CPU seconds (at least 1 s)."""
        wall = time.time() - self.started
        return {
            "cpu_seconds": round(self.seconds, 1),
            "share_of_machine": round(self.seconds / (wall * (os.cpu_count() or 1)), 3),
            "by_name": {k: round(v, 1) for k, v in sorted(self.top.items(), key=lambda kv: -kv[1])[:5] if v >= 1.0},
        }


# --- service logs --------------------------------------------------------------------------


def scan_logs(homes: list[Path]) -> list[str]:
    """Lines of the service logs under ``homes`` that look like errors or warnings (240 characters at most each)."""
    found = []
    for home in homes:
        for path in sorted(home.rglob("service.log*")):
            with contextlib.suppress(OSError):
                for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                    if re.search(r"error|exception|traceback|warning|critical|fail", line, re.IGNORECASE):
                        found.append(f"{home.name}: {line.strip()[:240]}")
    return found


# --- report --------------------------------------------------------------------------------


def mib(n: Any) -> str:
    """A number of bytes as whole MiB ("-" if not a number)."""
    return f"{n / 2**20:.0f} MiB" if isinstance(n, (int, float)) else "-"


def table(r: dict[str, Any]) -> str:
    """The results ``r`` (as ``main`` collects them) as the text report printed without ``--json``."""
    lines = [
        (
            f"memcli benchmark — {r['machine']['platform']}, {r['machine']['cpus']} CPUs, Python {r['machine']['python']}, "
            f"memcli {r['machine']['memcli']}, {r['started']}"
        )
    ]
    if "recall" in r:
        lines += [
            "",
            "1. Recall in the service's code path (resident store, warm Recaller, MiniLM query encoding included, k=10; "
            "p50 / p95 without reinforcement, p50 reinf. with it)",
            f"{'memories':>9} {'vectors':>8} {'build':>8} {'first recall':>13} {'p50':>9} {'p95':>9} {'p50 reinf.':>11} {'encode p50':>11} {'RSS':>9} {'peak RSS':>9} {'forget --dry-run':>17} {'peak w/ forget':>15} {'others':>7}",
        ]
        for row in r["recall"]:
            w = row["worker"]
            f = w.get("forget_dry_run_s", [float("nan")])
            reinf = w.get("recall_reinforce_ms", {}).get("p50", float("nan"))
            lines.append(
                f"{w.get('memories', row['size']):>9} {w.get('dtype', 'float32'):>8} {row['build']['build_s']:>7.1f}s {w['first_recall_s']:>12.2f}s "
                f"{w['recall_ms']['p50']:>7.1f}ms {w['recall_ms']['p95']:>7.1f}ms {reinf:>9.1f}ms {w['encode_ms']['p50']:>9.1f}ms "
                f"{mib(w['rss_bytes']):>9} {mib(w['peak_rss_bytes']):>9} {min(f):>16.2f}s {mib(w['peak_rss_after_forget_bytes']):>15} {100 * row.get('other_processes_share', 0):>6.0f}%"
                + ("  recall only (no Chroma; build = RecallIndex.put_fresh)" if w.get("recall_only") else "")
            )
        w0 = r["recall"][0]["worker"]
        lines.append(
            f"   ({r['recall'][0]['worker']['recall_ms']['n']} recalls per size, as many again with reinforcement "
            f"for p50 reinf. (strength and last_recalled_at written back); embedder alone: {mib(w0['rss_embedder_bytes'])} RSS, "
            f"loaded in {w0['embedder_load_s']:.1f} s, run as the service runs it ({w0.get('embedder_runtime', 'torch')}); build = MemoryStore.add of precomputed vectors; "
            f"first recall loads the index; RSS / peak RSS (VmRSS / VmHWM) after the recalls; "
            f"forget = Engine.forget(dry_run=True) on the resident store, best of 2; "
            f"others = CPU share other processes on the machine used meanwhile)"
        )
        for row in r["recall"]:
            w = row["worker"]
            again = w.get("restart_recall_ms")
            if again:
                lines.append(
                    f"   after a restart at {w.get('memories', row['size'])} ({w.get('dtype', 'float32')}): first recall "
                    f"{w['first_recall_restart_s']:.2f} s (the snapshot), a first 'when' question "
                    f"{w.get('first_when_restart_s', float('nan')):.2f} s, then p50 {again['p50']:.1f} ms, p95 {again['p95']:.1f} ms, "
                    f"RSS {mib(w['rss_after_restart_bytes'])} (before the restart {mib(w.get('rss_before_restart_bytes'))}; "
                    f"peak through the first recall {mib(w.get('peak_rss_first_recall_restart_bytes'))}, through the recalls "
                    f"{mib(w.get('peak_rss_restart_bytes'))})"
                )
        for row in r["recall"]:
            rem = row["worker"].get("remember_ms")
            if rem:
                lines.append(
                    f"   remember at {row['worker'].get('memories', row['size'])} ({row['worker'].get('dtype', 'float32')}), p50 of {rem['n']} "
                    "(supersession off, what it adds; timed notes on that superseded):"
                )
                lines.extend(
                    f"     {kind}: {rem[kind]['p50']:.0f} ms (off {rem[kind + '_off']['p50']:.0f} ms, "
                    f"{rem['added_p50_ms'][kind]:+.0f}; supersession itself {rem[kind]['supersession_p50']:.1f} ms); "
                    f"{rem['superseding'][kind]} superseded"
                    for kind in rem["kinds"]
                )
        if "base_corpus" in r:
            b = r["base_corpus"]
            lines.append(
                f"   (stores made of copies of {b['turns']} LoCoMo turns in {b['sessions']} sessions; noise {r['settings']['noise']})"
            )
    if "forget_cli" in r:
        fc = r["forget_cli"]
        lines.append(
            f"   memcli forget --dry-run --json via the warm service at {fc['size']} memories: p50 {fc['p50_s']:.2f} s "
            f"over {fc['calls']} (the first call, starting the service: {fc['first_s']:.1f} s)"
        )
    if "shell" in r:
        s = r["shell"]
        lines += [
            "",
            f"2. memcli from a shell (wall time, p50; store: LoCoMo {s['user']} imported, {s['memories']} memories)",
            f"{'command':<16} {'warm':>9} {'cold':>9} {'--no-service':>13}",
        ]
        for verb in ("recall", "remember"):
            v = s["p50_s"][verb]
            lines.append(f"memcli {verb:<9} {v['warm']:>8.2f}s {v['cold']:>8.2f}s {v['in_process']:>12.2f}s")
        lines.append(f"memcli --help    {s['help_s'] * 1e3:>7.0f}ms")
        inside = s.get("service_side_warm_ms", {})
        lines.append(
            f"   service-side time of the warm calls (its log), p50: recall {inside.get('recall', float('nan')):.0f} ms, "
            f"remember {inside.get('remember', float('nan')):.0f} ms; the call that started the service: {s['first_call_starting_service_s']:.1f} s"
        )
        st = s.get("service_status") or {}
        lines.append(
            f"   calls: warm {s['calls']['warm']}, cold {s['calls']['cold']} (service stopped before each), "
            f"in-process {s['calls']['in_process']}; help 10. Service after the warm calls: RSS {mib(st.get('rss_bytes'))}, "
            f"{st.get('requests_served', '-')} requests served; other processes used {100 * s.get('other_processes_share', 0):.0f}% of the CPU meanwhile"
        )
    if "import" in r:
        i = r["import"]
        lines += [
            "",
            f"3. Import throughput (LoCoMo {i['conversations']}: {i['turns']} turns + {i['windows']} windows = {i['texts']} texts)",
            f"   raw Embedder.embed (model loaded): {i['raw_s']:.1f} s = {i['raw_tps']:.1f} texts/s (turns alone {i['raw_turns_only_tps']:.1f}/s)",
            (
                f"   memcli import into a fresh store (CLI wall, service started by it): {i['import_wall_s']:.1f} s = "
                f"{i['import_tps']:.1f} texts/s  -> ratio {i['ratio']:.2f} (goal >= 0.90)"
            ),
            (
                f"   (the import's own duration as reported: {i['import_reported_s']:.1f} s = {i['import_reported_tps']:.1f} texts/s, "
                f"ratio {i['ratio_reported']:.2f}); other processes used {100 * i.get('other_processes_share', 0):.0f}% of the CPU meanwhile"
            ),
        ]
        if i.get("import_service_cpu_s"):
            lines.append(
                f"   CPU: raw {i['raw_cpu_s']:.1f} s, the service's for the import (its start and the embedder's load "
                f"included) {i['import_service_cpu_s']:.1f} s -> CPU ratio {i['ratio_cpu']:.2f} (less slowed by a busy machine)"
            )
        e = i.get("with_export") or {}
        if e.get("skipped"):
            lines.append(f"   second import (ONNX export present): skipped, {e['skipped']}")
        elif e:
            lines += [
                "   first import (no export: torch) and second import (ONNX export present), each against raw encoding"
                " with the same runtime:",
                f"   {'':<24}{'raw s':>8}{'import s':>10}{'ratio':>7}{'raw CPU s':>11}{'import CPU s':>14}{'CPU ratio':>11}",
            ]
            for label, v in (("first (torch)", i), (f"second ({e['runtime']})", e)):
                lines.append(
                    f"   {label:<24}{v['raw_s']:>8.1f}{v['import_wall_s']:>10.1f}{v['ratio']:>7.2f}"
                    f"{v['raw_cpu_s']:>11.1f}{(v.get('import_service_cpu_s') or float('nan')):>14.1f}{v['ratio_cpu']:>11.2f}"
                )
            lines.append(f"   (the second import against raw torch encoding: ratio {e['ratio_to_raw_torch']:.2f})")
    if "client" in r:
        c = r["client"]
        lines += [
            "",
            "5. Client import time",
            f"   python -X importtime -c 'import memcli.transport.client': {c['importtime_client_ms']:.1f} ms (memcli's top-level imports, cumulative)",
            (
                f"   python -c 'import memcli.cli, memcli.transport.client': {c['import_cli_client_wall_ms']:.0f} ms wall "
                f"(python -c pass: {c['python_pass_wall_ms']:.0f} ms)"
            ),
            "   heaviest non-memcli imports under it: "
            + ", ".join(f"{k} {v:.1f} ms" for k, v in c["heaviest_imports_ms"].items()),
        ]
    other = r["machine"].get("other_processes") or {}
    if other.get("share_of_machine", 0) > 0.05 or r["machine"]["loadavg_at_start"][0] > 0.5:
        lines += [
            "",
            (
                f"Note: other processes used the CPU during the run: {other.get('cpu_seconds')} CPU-s, "
                f"{100 * other.get('share_of_machine', 0):.0f}% of the machine ({other.get('by_name')}); load average at start "
                f"{r['machine']['loadavg_at_start']}. Every figure above is slowed by them."
            ),
        ]
    if "waits" in r:
        w = r["waits"]
        c = w["cold_p50_s"]
        lines += [
            "",
            "6. Where a person waits (demo store; p50, seconds from a shell)",
            f"   cold ask {c['ask']:.2f}   cold list {c['list']:.2f}   cold show {c['show']:.2f}   cold stats {c['stats']:.2f}"
            f"   warm recall {w['warm_recall_p50_s']:.2f}   --help {w['help_p50_s']:.2f}"
            f"   (embedder at a cold start: {w.get('embedder_runtime', 'torch')})",
        ]
        if "chat" in w:
            turns = w["chat"]["turns"]
            lines += [
                f"   chat on the embedded model: opened in {w['chat']['open_s']:.2f} s; time to first token, turns 2-{len(turns)}: "
                f"p50 {w['chat']['first_piece_p50_s']:.2f} s; pieces/s p50 {w['chat']['pieces_per_s_p50']:.1f}",
                "   per turn (s to first token): " + " ".join(f"{row['first_piece_s']:.2f}" for row in turns),
                f"   empty replies: {w['chat'].get('empty_replies', 0)} of {len(turns)}",
            ]
            again = w["chat"].get("opening_on_disk")
            if again:
                lines.append(
                    f"   a second chat after a service restart ({again['states_on_disk']} opening states on disk): "
                    f"opened in {again['open_s']:.2f} s; time to first token, turn 1: {again['first_piece_s']:.2f} s"
                )
        if "ctrl_c_s" in w:
            k = w["ctrl_c_s"]
            lines.append(
                f"   Ctrl-C to the end of memcli chat: before the first token {k['before_first_piece']:.2f} s, "
                f"after it {k['after_first_piece']:.2f} s"
            )
    if r.get("failures") or r.get("service_log"):
        lines += ["", "Problems seen"]
        lines += [f"   {f}" for f in r.get("failures", [])]
        lines += [f"   service log: {f}" for f in r.get("service_log", [])[:20]]
    lines += ["", f"total benchmark time {r['total_s'] / 60:.1f} min"]
    return "\n".join(lines)


DOCS_START = "<!-- bench:summary:start (written by scripts/bench.py --docs; do not edit by hand) -->"
DOCS_END = "<!-- bench:summary:end -->"


def docs_summary(r: dict[str, Any]) -> str:
    """The results ``r`` as the Markdown summary ``--docs`` writes into docs/benchmark.md:
    the machine (cores, load average at the start and the end, the CPU share other
    processes took) and one row a figure the goals of docs/benchmark.md name, "—" for a
    part the run skipped."""
    m = r["machine"]
    other = (m.get("other_processes") or {}).get("share_of_machine", 0)
    load_end = m.get("loadavg_at_end") or ["?"]
    seen = m.get("loadavg_1min_seen") or []
    lines = [
        f"Run of {r['started']} (memcli {m['memcli']}, {m['platform']}, {m['cpus']} CPUs, Python {m['python']}); "
        f"load average {m['loadavg_at_start'][0]} at the start, {load_end[0]} at the end"
        + (f" ({min(seen)}–{max(seen)} between the parts)" if seen else "")
        + "; other processes took "
        f"{100 * other:.0f} % of the machine meanwhile (every figure is slowed by them). "
        f"Total {r['total_s'] / 60:.1f} min.",
        "",
        "| figure | value |",
        "|---|---|",
    ]

    def row(name: str, value: str) -> None:
        lines.append(f"| {name} | {value} |")

    def sec(value: Any, digits: int = 2) -> str:
        return "—" if value is None or value != value else f"{value:.{digits}f} s"

    w = r.get("waits")
    if w:
        cold = w.get("cold_p50_s", {})
        for verb in ("ask", "list", "show", "stats"):
            row(f"cold `memcli {verb}` (demo store, service stopped), p50", sec(cold.get(verb)))
        row("warm `memcli recall` from a shell, p50", sec(w.get("warm_recall_p50_s")))
        row("`memcli --help`, p50", sec(w.get("help_p50_s")))
        chat = w.get("chat")
        if chat:
            turns = chat["turns"]
            row("chat: time to first token, turn 1", sec(turns[0]["first_piece_s"]) if turns else "—")
            row(f"chat: time to first token, turns 2–{len(turns)}, p50", sec(chat.get("first_piece_p50_s")))
            again = chat.get("opening_on_disk")
            if again:
                row(
                    "chat: time to first token, turn 1 of a chat after a service restart (its opening on disk)",
                    sec(again.get("first_piece_s")),
                )
            row(
                "chat: pieces (about a token each) per second, p50", f"{chat.get('pieces_per_s_p50', float('nan')):.1f}"
            )
        k = w.get("ctrl_c_s")
        if k:
            row("Ctrl-C to the end of `memcli chat`: before the first token", sec(k.get("before_first_piece")))
            row("Ctrl-C to the end of `memcli chat`: after the first token", sec(k.get("after_first_piece")))
    for entry in r.get("recall", []):
        wk = entry["worker"]
        alone = ", recall only: no Chroma" if wk.get("recall_only") else ""
        size = f"{wk.get('memories', entry['size']):,} memories ({wk.get('dtype', 'float32')}{alone})"
        rec = wk.get("recall_ms", {})
        row(
            f"recall p50 / p95 in the service's code path, {size}",
            f"{rec.get('p50', float('nan')):.0f} / {rec.get('p95', float('nan')):.0f} ms",
        )
        reinf = wk.get("recall_reinforce_ms", {}).get("p50")
        if reinf is not None:
            row(f"recall p50 with reinforcement, {size}", f"{reinf:.0f} ms")
        row(f"first recall after a restart, {size}", sec(wk.get("first_recall_restart_s")))
        if wk.get("rss_bytes"):
            row(f"resident memory after the recalls, {size}", mib(wk["rss_bytes"]))
        if wk.get("peak_rss_restart_bytes"):
            row(f"peak resident memory from a restart through its recalls, {size}", mib(wk["peak_rss_restart_bytes"]))
        if wk.get("delete_s"):
            row(f"delete for good, p50 of {len(wk['delete_s'])}, {size}", sec(p50(wk["delete_s"])))
        rem = wk.get("remember_ms")
        if rem:
            slots = [k for k in rem["kinds"] if k != "plain"]
            row(
                f"`remember` p50, {size}: superseding one (slowest slot) / supersession itself (slowest slot)",
                f"{max(rem[k]['p50'] for k in slots):.0f} ms / {max(rem[k]['supersession_p50'] for k in slots):.1f} ms",
            )
    if "import" in r:
        row("import rate ÷ the embedder's raw rate (LoCoMo)", f"{r['import']['ratio']:.2f}")
    if "shell" in r:
        v = r["shell"]["p50_s"]
        row(
            "warm / cold `memcli recall` (LoCoMo store), p50",
            f"{v['recall']['warm']:.2f} / {v['recall']['cold']:.2f} s",
        )
    return "\n".join(lines)


def write_docs(path: Path, r: dict[str, Any]) -> None:
    """Put ``docs_summary(r)`` between the ``DOCS_START`` and ``DOCS_END`` lines of ``path``
    (what was there is replaced). Raises SystemExit when the file lacks them."""
    text = path.read_text(encoding="utf-8")
    start, end = text.find(DOCS_START), text.find(DOCS_END)
    if start < 0 or end < start:
        raise SystemExit(f"bench: {path} has no {DOCS_START!r} ... {DOCS_END!r} section to write")
    body = text[: start + len(DOCS_START)] + "\n" + docs_summary(r) + "\n" + text[end:]
    path.write_text(body, encoding="utf-8")


# --- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command-line options; ``--quick`` lowers the sizes and conversations unless given, and the
    calls, repeats, remembers and chat turns."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog="See the module docstring for how each figure is measured."
    )
    p.add_argument(
        "--sizes",
        default="1000,10000,100000",
        help="store sizes (memories of one user), comma-separated (default: %(default)s)",
    )
    p.add_argument(
        "--million",
        action="store_true",
        help="also measure a store of 1,000,000 memories, built for recall alone (its recall index, no Chroma)",
    )
    p.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo file (default: %(default)s)")
    p.add_argument(
        "--conversations", default="", help="LoCoMo sample_ids to embed and import, comma-separated (default: all)"
    )
    p.add_argument(
        "--shell-conversation",
        default="conv-26",
        help="the LoCoMo conversation of the small store for the shell timings (default: %(default)s)",
    )
    p.add_argument("--queries", type=int, default=50, help="LoCoMo questions sampled as queries (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=2, help="times each query is asked per size (default: %(default)s)")
    p.add_argument(
        "--vector-dtype",
        default="float32,float16",
        help="types of the in-memory recall vectors to measure recall with, comma-separated (default: %(default)s; memcli uses float32)",
    )
    p.add_argument(
        "--noise", type=float, default=0.35, help="norm of the noise added to copied vectors (default: %(default)s)"
    )
    p.add_argument("--calls", type=int, default=10, help="warm shell calls per command (default: %(default)s)")
    p.add_argument(
        "--cold-calls", type=int, default=5, help="cold and in-process shell calls per command (default: %(default)s)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run, not a measure (the test suite's): size 1000 in float32, conversation conv-26 only, one "
        "call of each kind, 4 queries (and a 'when' one), one repeat, one remember of each kind, 2 chat turns, both imports on section 6's export",
    )
    p.add_argument(
        "--skip", default="", help="parts to skip, comma-separated: recall, shell, import, forget-cli, client, waits"
    )
    p.add_argument("--skip-cli-forget", action="store_true", help="same as --skip forget-cli")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--json-out", type=Path, help="also write the JSON object to this file")
    p.add_argument(
        "--docs",
        type=Path,
        help="also write a Markdown summary of the run into this file, between its bench:summary lines (docs/benchmark.md)",
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary directory (its path goes to stderr)")
    p.add_argument(
        "--chat-turns",
        type=int,
        default=10,
        help="turns of the scripted chat in section 6 (default: %(default)s; 0: no chat)",
    )
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--chat-worker", type=int, help=argparse.SUPPRESS)
    p.add_argument("--worker-queries", help=argparse.SUPPRESS)
    p.add_argument("--worker-recall-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker-restart-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker-remembers", type=int, default=REMEMBERS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        # A smoke run (the test suite's), not a measure: every part and code path once, on the
        # smallest inputs that still take it (two chat turns: the second is the "later turn"
        # figure; a size under RECALL_ONLY_AT; float32 alone unless given, the type memcli
        # uses: float16 runs the same worker code on another type, a measure, ~25 s more).
        if args.sizes == p.get_default("sizes"):
            args.sizes = "1000"
        args.conversations = args.conversations or "conv-26"
        args.calls = min(args.calls, 1)
        args.cold_calls = min(args.cold_calls, 1)
        args.repeats = min(args.repeats, 1)
        if args.queries == p.get_default("queries"):
            args.queries = 4  # the worker's recalls, encodes and reinforced recalls: each query 3 times or more
        args.chat_turns = min(args.chat_turns, 2)
        args.worker_remembers = 1
        if args.vector_dtype == p.get_default("vector_dtype"):
            args.vector_dtype = "float32"
    return args


def service_times(home: Path, skip_lines: int = 0) -> dict[str, list[float]]:
    """The service's own duration of each request (``VERB ok in X ms`` in its log), after ``skip_lines`` lines."""
    out: dict[str, list[float]] = {}
    path = home / "state" / "service.log"
    with contextlib.suppress(OSError):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[skip_lines:]:
            m = re.search(r" INFO (\S+) ok in ([\d.]+) ms", line)
            if m:
                out.setdefault(m.group(1), []).append(float(m.group(2)))
    return out


def log_lines(home: Path) -> int:
    """The number of lines in the service log of ``home`` (0 if there is none)."""
    with contextlib.suppress(OSError):
        return len((home / "state" / "service.log").read_text(encoding="utf-8", errors="replace").splitlines())
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (or, with ``--worker``, one worker) and print the table or JSON; returns the exit status."""
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.worker:
        queries = json.loads(Path(args.worker_queries).read_text(encoding="utf-8"))
        print(
            json.dumps(
                worker(
                    Path(args.worker),
                    queries,
                    args.repeats,
                    args.vector_dtype,
                    args.worker_recall_only,
                    args.worker_restart_only,
                    args.worker_remembers,
                )
            )
        )
        return 0
    if args.chat_worker is not None:
        print(json.dumps(chat_worker(args.chat_worker)))
        return 0

    import memcli

    started = time.time()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()] + ([MILLION] if args.million else [])
    dtypes = [d.strip() for d in args.vector_dtype.split(",") if d.strip()]
    conversations = [c.strip() for c in args.conversations.split(",") if c.strip()] or None
    skip = {s.strip() for s in args.skip.split(",") if s.strip()} | ({"forget-cli"} if args.skip_cli_forget else set())
    root = Path(tempfile.mkdtemp(prefix="memcli-bench-"))
    # the run's own shared cache (the workers inherit it): never the user's, and no export yet
    os.environ[SHARED_CACHE_ENV] = str(root / "shared-cache")
    shell = Shell(root / "shared-cache")
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    r: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "memcli": memcli.__version__,
            "loadavg_at_start": [round(x, 2) for x in load],
        },
        "settings": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if not k.startswith("worker")
        },
    }
    loads: list[float] = [load[0]]
    foreign = ForeignCpu(root).start()
    try:
        if "client" not in skip:
            log("5. client import time")
            r["client"] = client_import_time(1, 1) if args.quick else client_import_time()

        if "waits" not in skip:
            log("6. where a person waits (demo store)")
            mark = foreign.mark()
            try:
                r["waits"] = waits_bench(shell, root / "demo", args.calls, args.cold_calls, args.chat_turns)
                r["waits"]["other_processes_share"] = foreign.since(mark)
            finally:
                shell.stop(root / "demo")
            loads.append(os.getloadavg()[0])

        from memcli.models.embedding import Embedder
        from memcli.store.recall_index import batch_windows

        embedder = Embedder()
        if not {"import", "recall"} <= skip:
            log("loading the embedder")
            embedder.embed_one("warm up")
        vectors: dict[str, Any] = {}
        small = args.shell_conversation
        small_turns = [m for s in locomo_sessions(args.locomo, [small]) for m in s]

        if not {"import", "shell"} <= skip:
            home = root / "small"
            # a cache of the import's own: its first import is a person's first, on torch, even
            # after the demo store's (section 6) made the export in the run's shared cache.
            # --quick shares the run's cache when section 6 made the export there: both imports
            # then run on it, and the smoke run makes no second export (~30 CPU-s) to wait for
            quick_cache = args.quick and "waits" not in skip
            shell.shared_caches[home] = root / ("shared-cache" if quick_cache else "import-shared")
            imported: dict[str, Any] = {}
            mark = foreign.mark()
            try:
                if "import" not in skip:
                    windows = batch_windows(small_turns)
                    log(
                        f"3. import throughput: raw encoding of {small}: {len(small_turns)} turns + {len(windows)} windows"
                    )
                    t = time.perf_counter()
                    cpu = time.process_time()
                    small_vectors = embedder.embed([m.index_text() for m in small_turns])
                    turn_s = time.perf_counter() - t
                    embedder.embed(windows)
                    raw_s = time.perf_counter() - t
                    raw_cpu_s = time.process_time() - cpu
                    vectors.update({m.id: v for m, v in zip(small_turns, small_vectors)})
                    texts = len(small_turns) + len(windows)
                    log(
                        f"  raw: {texts} texts in {raw_s:.1f} s (turns {turn_s:.1f} s); now memcli import into a fresh store"
                    )
                wall, done = shell.run(home, ["import", str(args.locomo), "--conversation", small, "--json", "--quiet"])
                with contextlib.suppress(ValueError):
                    imported = json.loads(done.stdout)
                service_cpu_s = service_cpu(home)
                if "import" not in skip:
                    own = float(imported.get("duration_seconds", imported.get("seconds", float("nan"))))
                    r["import"] = {
                        "conversations": small,
                        "turns": len(small_turns),
                        "windows": len(windows),
                        "texts": texts,
                        "raw_s": raw_s,
                        "raw_tps": texts / raw_s,
                        "raw_turns_only_tps": len(small_turns) / turn_s,
                        "import_wall_s": wall,
                        "import_tps": texts / wall,
                        "ratio": raw_s / wall,
                        "import_reported_s": own,
                        "import_reported_tps": texts / own,
                        "ratio_reported": raw_s / own,
                        "added": imported.get("added"),
                        "raw_cpu_s": raw_cpu_s,
                        "import_service_cpu_s": service_cpu_s,
                        "ratio_cpu": raw_cpu_s / service_cpu_s if service_cpu_s else float("nan"),
                    }
                    r["import"]["other_processes_share"] = foreign.since(mark)
                    log(f"  import {wall:.1f} s wall ({own:.1f} s reported), ratio {r['import']['ratio']:.2f}")
                shell.stop(home)
                loads.append(os.getloadavg()[0])
                if "import" not in skip:
                    r["import"]["with_export"] = import_with_export(shell, home, root / "small-export", args, small, r)
                    loads.append(os.getloadavg()[0])
                if "shell" not in skip:
                    log(f"2. memcli from a shell (store: {small})")
                    questions = locomo_questions(args.locomo, [small], 50, seed=1)
                    mark = foreign.mark()
                    r["shell"] = shell_bench(
                        shell, home, small, questions, args.calls, args.cold_calls, args.calls if args.quick else 10
                    )
                    r["shell"].update(
                        user=small,
                        memories=imported.get("found", len(small_turns)),
                        other_processes_share=foreign.since(mark),
                    )
                    loads.append(os.getloadavg()[0])
            finally:
                shell.stop(home)

        if "recall" not in skip:
            sessions = locomo_sessions(args.locomo, conversations)
            todo = [m for s in sessions for m in s if m.id not in vectors]
            log(f"embedding {len(todo)} LoCoMo turns for the synthetic stores")
            t = time.perf_counter()
            done_vectors = embedder.embed(
                [m.index_text() for m in todo], progress=lambda d, n: d % 1024 == 0 and log(f"  embedded {d}/{n} turns")
            )
            vectors.update({m.id: v for m, v in zip(todo, done_vectors)})
            r["base_corpus"] = {
                "turns": sum(len(s) for s in sessions),
                "sessions": len(sessions),
                "embedded_s": time.perf_counter() - t,
            }
            log(f"  embedded in {r['base_corpus']['embedded_s']:.1f} s")
            del embedder
            queries = locomo_questions(args.locomo, conversations, args.queries)
            qfile = root / "queries.json"
            qfile.write_text(json.dumps(queries), encoding="utf-8")
            r["recall"] = []
            for size in sizes:
                home = root / f"store-{size}"
                recall_only = size >= RECALL_ONLY_AT
                if recall_only:
                    log(f"1. writing the recall index of {size} memories (a store for recall alone: no Chroma)")
                    build = build_recall_only(home, sessions, vectors, size, args.noise)
                else:
                    log(f"1. building a store of {size} memories")
                    build = build_store(home, sessions, vectors, size, args.noise)
                log(f"  built in {build['build_s']:.1f} s; measuring recall in a worker process")
                # Each dtype's worker gets the store as built: a worker remembers, reinforces and
                # deletes, and the next one would otherwise measure a bigger store whose notes to
                # remember are already there (nothing superseded: remember 2 ms, supersession 0).
                runs = ["float32"] if recall_only else dtypes
                pristine = root / f"store-{size}-as-built"
                if len(runs) > 1:
                    shutil.copytree(home, pristine, symlinks=True)
                for order, dtype in enumerate(runs):
                    if order:
                        shutil.rmtree(home)
                        shutil.copytree(pristine, home, symlinks=True)
                    mark = foreign.mark()
                    done = subprocess.run(
                        [
                            sys.executable,
                            str(Path(__file__).resolve()),
                            "--worker",
                            str(home),
                            "--worker-queries",
                            str(qfile),
                            "--repeats",
                            str(args.repeats),
                            "--vector-dtype",
                            dtype,
                            "--worker-remembers",
                            str(args.worker_remembers),
                            *(["--worker-recall-only"] if recall_only else []),
                        ],
                        capture_output=True,
                        text=True,
                        check=False,
                    )
                    loads.append(os.getloadavg()[0])
                    if done.returncode != 0:
                        shell.failures.append(
                            f"worker at {size} ({dtype}): exit {done.returncode}: {done.stderr.strip()[-600:]}"
                        )
                        log(f"  worker failed: {done.stderr.strip()[-600:]}")
                        continue
                    w = json.loads(done.stdout.strip().splitlines()[-1])
                    if recall_only:  # the restart in a fresh process (see ``worker``)
                        again = subprocess.run(
                            [*done.args, "--worker-restart-only"], capture_output=True, text=True, check=False
                        )
                        if again.returncode != 0:
                            shell.failures.append(
                                f"restart worker at {size}: exit {again.returncode}: {again.stderr.strip()[-600:]}"
                            )
                        else:
                            w2 = json.loads(again.stdout.strip().splitlines()[-1])
                            w.update(
                                {k: v for k, v in w2.items() if "restart" in k or k == "rss_embedder_restart_bytes"}
                            )
                            w["rss_embedder_restart_bytes"] = w2["rss_embedder_bytes"]
                    r["recall"].append(
                        {"size": size, "build": build, "worker": w, "other_processes_share": foreign.since(mark)}
                    )
                    reinf = w.get("recall_reinforce_ms", {}).get("p50", float("nan"))
                    rem = w.get("remember_ms", {})
                    if rem:
                        log(
                            f"  {size}: remember p50 (ms), with supersession / without, wall (CPU): "
                            + "; ".join(
                                f"{k} {rem[k]['p50']:.0f}/{rem[k + '_off']['p50']:.0f} "
                                f"({rem[k]['cpu_p50']:.0f}/{rem[k + '_off']['cpu_p50']:.0f}; "
                                f"supersession {rem[k]['supersession_p50']:.1f})"
                                for k in rem["kinds"]
                            )
                        )
                    log(
                        f"  {size} ({dtype}): first recall {w['first_recall_s']:.2f} s, p50 {w['recall_ms']['p50']:.1f} ms, "
                        f"p95 {w['recall_ms']['p95']:.1f} ms, p50 reinforced {reinf:.1f} ms, peak RSS {mib(w['peak_rss_bytes'])}, "
                        f"forget dry-run {min(w.get('forget_dry_run_s', [float('nan')])):.2f} s, first recall after a restart "
                        f"{w.get('first_recall_restart_s', float('nan')):.2f} s (a 'when' question then "
                        f"{w.get('first_when_restart_s', float('nan')):.2f} s), delete p50 {p50(w.get('delete_s', [])):.2f} s"
                    )
                shutil.rmtree(pristine, ignore_errors=True)
            whole = [x for x in r["recall"] if not x["build"].get("recall_only")]  # forget reads Chroma
            if "forget-cli" not in skip and whole:
                size = whole[-1]["size"]
                home = root / f"store-{size}"
                log(f"4. memcli forget --dry-run via the service at {size} memories")
                try:
                    command = ["forget", "--dry-run", "--json", "--quiet"]
                    first, _ = shell.run(home, command, USER)
                    times = shell.timed(home, command, 2 if first > 10 else 3, USER)
                    r["forget_cli"] = {
                        "size": size,
                        "first_s": first,
                        "p50_s": p50(times),
                        "calls": len(times),
                        "service_ms": service_times(home).get("forget", []),
                    }
                    log(f"  p50 {p50(times):.2f} s (first {first:.1f} s)")
                finally:
                    shell.stop(home)
    finally:
        for home in sorted(shell.homes):
            with contextlib.suppress(Exception):
                shell.stop(home)
        r["failures"] = shell.failures
        r["service_log"] = scan_logs(sorted(shell.homes))
        r["total_s"] = time.time() - started
        r["machine"]["loadavg_1min_seen"] = [round(x, 2) for x in loads]
        r["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
        foreign.stop()
        r["machine"]["other_processes"] = foreign.report()
        if args.keep:
            log(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(r, indent=2, default=str) + "\n", encoding="utf-8")
    if args.docs:
        write_docs(args.docs, r)
    print(json.dumps(r, indent=2, default=str) if args.json else table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
