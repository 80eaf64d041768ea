"""What memcli says: the result of every verb, defined once.

The library's verbs return these pydantic models (``memcli.library.library``, named by the verb
table ``memcli.library.verbs``), the service sends them as JSON, the client reads them back into
these models, and ``--json`` prints exactly that JSON, so a script sees one shape whether
a command ran in the service or in-process. The conventions:

- one ``Memory`` object everywhere; ``recall`` and ``ask`` add a ``score`` block, ``forget``
  a ``forgetting`` block;
- times are ISO 8601 strings in local time with their UTC offset
  (``2023-05-08T13:56:00+02:00``), and ``null`` when there is none (never recalled, not
  archived, a fact without bounds); ``day`` is the calendar day ``YYYY-MM-DD``;
- a quantity with a unit says it in its name (``duration_seconds``, ``rss_bytes``);
- counts use one vocabulary: ``found`` (read from the input), ``examined``, ``added``,
  ``skipped`` (already stored), ``updated``, ``deleted``, ``archived``, ``purged``.

This module imports pydantic and nothing heavy: the thin client reads these shapes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from memcli import PROTOCOL  # noqa: F401  (the version of these shapes)


def iso_time(seconds: float, timespec: str = "seconds") -> Optional[str]:
    """Unix seconds as ISO 8601 local time with offset, to ``timespec`` (``seconds``,
    ``microseconds``: see ``datetime.isoformat``); None for 0 (none)."""
    if not seconds:
        return None
    return datetime.fromtimestamp(seconds).astimezone().isoformat(timespec=timespec)


class Out(BaseModel):
    """Base of every result: extra fields are an error, so the schema is the whole truth."""

    # defer_build: a model's validator is built when it is first used, so the thin client,
    # which reads back one verb's result, does not build the thirty others at import.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Memory(Out):
    """One memory (DESIGN.md, "One memory record")."""

    id: str = Field(description="16 hex digits")
    user: str
    kind: str = Field(
        description="turn, note, fact, event_daily, event_global, portrait_daily, portrait_global or running_summary"
    )
    text: str
    speaker: str = Field(description="who said it (turns); empty otherwise")
    caption: str = Field(description="caption of an image shared in the turn; empty when none")
    session: str
    day: str = Field(description="the calendar day it belongs to, YYYY-MM-DD")
    created_at: Optional[str] = Field(description="when it was learned, ISO 8601 (an imported turn keeps its own time)")
    source: str = Field(description="where it came from: a LoCoMo dia_id, file:line, remember, chat:SESSION")
    source_ids: list[str] = Field(description="ids of the memories a consolidated memory was made from")
    tags: list[str]
    importance: float = Field(description="0..1")
    strength: float = Field(description="Ebbinghaus strength S (MemoryBank §2.3)")
    recall_count: int
    last_recalled_at: Optional[str] = Field(description="ISO 8601, null when never recalled")
    retained_from: Optional[str] = Field(
        None,
        description="ISO 8601: when its retention clock started, if later than created_at (an imported memory: the import); else null",
    )
    feedback: float = Field(description="sum of up (+1) and down (-1) votes")
    pinned: bool
    archived: bool = Field(description="forgotten by memcli forget (restorable)")
    archived_at: Optional[str]
    valid_from: Optional[str] = Field(description="facts: start of validity, null when unbounded")
    valid_to: Optional[str] = Field(
        description="facts: end of validity (UPDATE/DELETE); notes and turns: when a newer memory superseded it; null while valid"
    )
    superseded_by: Optional[str] = Field(
        None, description="the id of the newer memory that superseded it (UPDATE); null while it holds"
    )


class Score(Out):
    """Why recall placed a memory where it did (see ``memcli recall --explain``)."""

    score: float = Field(description="the ranking score, or the relevance when ranking is off")
    relevance: float = Field(description="sum of the weighted signals (z-scores, unbounded)")
    similarity: float = Field(description="cosine similarity of the memory's own vector to the query, -1..1")
    signals: dict[str, float] = Field(
        description="each weighted signal: lexical, window, turn, speaker, date, when, prior, superseded (negative: a newer memory replaced it)"
    )
    components: dict[str, float] = Field(
        description="each ranking component: relevance, importance, retention, use, recent_penalty, feedback"
    )


class RecalledMemory(Memory):
    """A memory as recall returns it: the memory and its ``score`` block."""

    score: Score


class Forgetting(Out):
    """What the forget pass saw of a memory."""

    retention: float = Field(
        description="R = exp(-d t / S), 0..1 (S: the memory's strength); 1 for a pinned memory and a daily summary or portrait, which follow their day's turns"
    )
    elapsed_seconds: float = Field(description="t: seconds since it was learned or last recalled")
    elapsed: float = Field(0.0, description="t in time_unit (days by default), as the formula uses it")
    decay: float = Field(1.0, description="d: the user's decay constant")
    forgotten: bool = Field(
        True, description="whether the pass forgets it (false only in --explain's list of every memory examined)"
    )


class ForgottenMemory(Memory):
    """A memory the forget pass forgot (or, with --dry-run, would forget)."""

    forgetting: Forgetting


class Remembered(Out):
    """``memcli remember``: the note, and whether it was new (the same text twice is one note).
    A text longer than 1000 characters (250 CJK characters) is stored as one note a chunk:
    ``memory`` is the first, ``ids`` lists them all."""

    memory: Memory
    added: bool
    ids: list[str] = Field(description="the ids of the notes stored, in order: one, or one a chunk of a long text")


class Answer(Out):
    """``memcli ask``: the answer, the ids it cites, the memories placed in its prompt (or
    quoted from), what wrote it: ``llm`` (the chat model) or ``extractive`` (a recalled
    sentence, quoted; the ``answers`` setting), and whether it answered. "Not found" is an
    answer: exit status 0 with ``answered`` false (the same through the service, MCP's ask
    tool and ``eval qa``)."""

    answer: str
    cited: list[str]
    memories: list[RecalledMemory]
    answered_by: str
    answered: bool = Field(
        True,
        description="false when nothing recalled answers the question (the answer says so, cites nothing, exit status 0)",
    )


class ImportResult(Out):
    """``memcli import``. An interrupted import (Ctrl-C) prints this too, with ``interrupted``
    true, and exits 130; one stopped by a full device, with ``error``, and exits 10:
    ``added`` + ``skipped`` of the ``found`` memories are stored, the ``failed`` rest are
    stored by running the same import again."""

    path: str
    format: str = Field(description="locomo, memorybank, jsonl, text or memcli")
    found: int = Field(description="memories read from the file (a long paragraph or message: one a chunk)")
    added: int
    skipped: int = Field(description="already stored")
    users: dict[str, int] = Field(description="memories found per user")
    duration_seconds: float
    interrupted: bool = Field(
        False, description="stopped by Ctrl-C before the end: found - added - skipped memories were not stored"
    )
    failed: int = Field(
        0,
        description="memories not stored: the import stopped before them (Ctrl-C, a full device); the same import run again stores them",
    )
    error: Optional[str] = Field(
        None,
        description="why the import stopped before the end when the device of the store filled up (exit 10), counting what was stored; null when it did not",
    )


class ExportResult(Out):
    """``memcli export``: what was written, to a file or to standard output (the lines
    themselves are the export: ``memcli import --format memcli`` reads them back)."""

    path: Optional[str] = Field(description="the file written; null when the lines went to standard output")
    format_version: int = Field(description="the version of the memcli export format")
    embedder: str = Field(
        description="the identity of the embedder that made the store's vectors, as the header names it"
    )
    lines: int = Field(description="lines written, the header included")
    memories: int
    history_events: int = Field(description="history events written (--history)")
    progress_marks: int = Field(
        description="consolidation progress rows written (which turns went through which stage)"
    )
    vectors: bool = Field(description="whether each memory's stored vector was written (--with-vectors)")
    size_bytes: int = Field(description="UTF-8 bytes written")
    duration_seconds: float


class ForgetResult(Out):
    """``memcli forget``."""

    dry_run: bool
    examined: int
    forgotten: int
    archived: int
    purged: int
    derived_purged: int = Field(
        0,
        description="memories made from the purged ones (summaries, portraits, facts, the running memory), deleted with them; the next consolidate makes them again",
    )
    duration_seconds: float
    threshold: float = Field(
        0.05, description="the forget_threshold in effect: R below it is forgotten (unless --stochastic)"
    )
    time_unit: str = Field("day", description="the time_unit of t and of each memory's strength S")
    memories: list[ForgottenMemory] = Field(
        description="the memories forgotten; with --explain every memory examined, forgotten or not"
    )


class PurgeUserResult(Out):
    """``memcli purge-user``: every memory of a user deleted for good, with their history
    and consolidation progress, and the store compacted."""

    user: str
    purged: int
    history_events: int = Field(description="history events deleted")
    journal_files: int = Field(description="journaled (not yet stored) memories of the user dropped")
    compaction_seconds: float
    duration_seconds: float


class FactCounts(Out):
    """Mem0's events on facts during one consolidation, and the candidates set aside."""

    added: int
    updated: int
    deleted: int
    unchanged: int = Field(description="NOOP")
    rejected: int = Field(description="not grounded in their source turns")
    deduplicated: int


class GraphCounts(Out):
    """What the graph step of a consolidation did (Mem0g: ``memcli.consolidation.graph_memory``)."""

    scanned: int = Field(
        description="turns, notes and facts read for entities and relations (or, with dry_run, to read)"
    )
    mentions: int = Field(description="entity mentions found")
    relations: int = Field(description="relations stated (a relation stated again counts again)")
    closed: int = Field(description="relations closed by a newer one of a single-valued kind (kept, with valid_to)")
    relation_memories: int = Field(description="memories of kind relation written or updated")


class ConsolidateResult(Out):
    """``memcli consolidate``."""

    dry_run: bool
    users: list[str]
    days: int = Field(description="days consolidated (or, with dry_run, to consolidate)")
    sessions: int
    message_pairs: int
    global_folds: int
    summaries_written: int
    facts: FactCounts
    invalid_outputs: int = Field(
        description="model replies still invalid after a retry: the unit got the extractive result instead (a fact decision: the fact was skipped)"
    )
    duration_seconds: float
    warnings: list[str]
    path: str = Field(
        "",
        description="how this run wrote: llm or extractive (the consolidation setting; auto decides by the chat model); empty when nothing was written",
    )
    written_by: dict[str, int] = Field(
        default_factory=dict,
        description="units written by each path: llm, extractive, fallback (the model's output rejected, the extractive one written)",
    )
    failed: int = Field(
        0, description="units not done because the model server failed (memcli exits 3); the next consolidate does them"
    )
    failures: list[str] = Field(
        default_factory=list, description="each unit not done and why: the server's URL and the cause"
    )
    graph: GraphCounts = Field(
        description="the graph step: entities and relations read from new turns, notes and facts"
    )


class GraphEntity(Out):
    """An entity of the graph memory: a person, place, organisation, pet, work or event."""

    id: int
    name: str
    type: str = Field(
        description="person, place, organisation, pet, work, event (or date, number, text: a relation's value)"
    )
    role: str = Field(description="user (the user themself), assistant, or empty")
    aliases: list[str] = Field(description="other names that resolve to it")
    mentions: int = Field(description="memories that mention it")
    first_seen: Optional[str]
    last_seen: Optional[str]


class GraphRelation(Out):
    """A relation of the graph memory, with the span of days it held."""

    id: int
    subject: str
    relation: str = Field(description="a label of the declared relation table, or 'mentioned with'")
    phrase: str = Field(description="the label in words: 'lives in' for lives_in, Chinese words between Chinese names")
    object: str
    valid_from: str = Field(description="YYYY-MM-DD (or YYYY, YYYY-MM) it began, empty when unknown")
    valid_to: str = Field(description="the day a newer relation closed it; empty while it holds")
    current: bool
    count: int = Field(description="times it was stated (memories that mention both, for 'mentioned with')")
    sources: list[str] = Field(description="ids of the memories it was read from")


class GraphNeighbour(Out):
    """An entity near the one shown, and how."""

    name: str
    type: str
    depth: int = Field(description="edges away")
    relation: str = Field(
        description="the label of the edge that reaches it (a typed relation before 'mentioned with')"
    )
    count: int


class GraphShow(Out):
    """``memcli graph show``: an entity, its relations (current and past) and its neighbours."""

    user: str
    at: Optional[str] = Field(description="the day it is shown as of (--at); null: now, with the past relations too")
    entity: GraphEntity
    relations: list[GraphRelation]
    neighbours: list[GraphNeighbour]


class GraphExport(Out):
    """``memcli graph export``: the user's graph in a networkx writer's format."""

    user: str
    format: str
    nodes: int
    edges: int
    text: str = Field(description="the document (GraphML, GEXF, node-link JSON or DOT)")


class HistoryEntry(Out):
    """One event in the life of a memory: consolidation's changes (Mem0's history), your edits, purges."""

    seq: int
    memory_id: str
    user: str
    kind: str
    event: str = Field(
        description="ADD, UPDATE, DELETE, EDIT (memcli edit changed its text), INVALIDATE (a relation closed by a newer one), REOPEN (the memory that superseded it was edited or deleted), or PURGE (deleted for good: the texts of its events are emptied)"
    )
    old_text: str
    new_text: str
    at: Optional[str]
    source_ids: list[str]
    related_id: str


class Stats(Out):
    """``memcli stats``: counts of one user's active memories and of the store."""

    user: str
    memories: int = Field(description="active (not archived) memories of the user")
    by_kind: dict[str, int]
    first_day: Optional[str]
    last_day: Optional[str]
    sessions: int
    retention_histogram: list[int] = Field(description="active memories per retention bin, 10 bins over 0..1")
    fading: int = Field(description="retention below forget_threshold")
    archived: int
    pinned: int
    all_users: dict[str, int] = Field(description="memories (archived included) per user")
    pending: int = Field(description="journaled, not yet in the store")
    store_bytes: int
    embedder: Optional[str] = Field(
        None,
        description="the embedder that made the store's vectors, name@fingerprint or server:<model>@<dimension> (reindexing:... while a reindex runs); null until the first write or recall",
    )
    embedder_configured: str = Field(
        "",
        description="the embedder the settings name (unusable: why, for a bad setting); when it differs from embedder, memcli reindex re-embeds the store",
    )


class ChatTurn(Out):
    """One message of a chat session's verbatim history."""

    role: str = Field(description="user or assistant")
    content: str
    id: str = Field(description="the id of the turn stored for it")
    memories: str = Field(
        default="",
        description="a user message's recalled memories as its prompt gave them with it (they stay in the next prompts); empty for none",
    )
    memory_ids: list[str] = Field(default_factory=list, description="the ids of the memories in memories")


class ChatState(Out):
    """A chat session as the client keeps it between replies, so a service restart
    loses nothing of it."""

    user: str
    session_id: str
    model: str = Field(description="the chat model's name")
    history: list[ChatTurn]
    summary: str = Field(description="this session's older turns, folded")
    earlier: list[ChatTurn] = Field(
        default_factory=list,
        description="older turns folded into summary but still given verbatim in the prompt, before history: their evaluated state is reused until the prompt would not fit the context",
    )
    earlier_summary: str = Field(
        default="",
        description="the summary the prompt gives (of the turns before earlier): summary as it was when the prompt last left out the earlier turns",
    )
    last_turn_at: Optional[str] = Field(
        description="ISO 8601 time of the last stored turn, to the microsecond; null before the first"
    )
    said_ids: list[str] = Field(
        default_factory=list,
        description="the ids of the turns the last user message was stored as (a long message: one a chunk, the first being its id in history)",
    )
    system: str = Field(
        default="",
        description="the session's own instruction (chat --system), added to every system prompt; empty for none",
    )
    resumed: bool = Field(
        default=False, description="the session goes on from earlier turns in the store (chat --continue)"
    )
    base_model: bool = Field(
        default=False,
        description="the chat model is a base model without a chat template (the embedded default): its replies are tagged base-model and make no memories",
    )


class ChatReply(Out):
    """One reply in a chat session (its text was streamed as it was generated). A reply
    cancelled with Ctrl-C ends where it was: ``reply`` holds the partial text, which is
    stored (tagged ``interrupted``) and kept in the history like a whole one."""

    reply: str
    interrupted: bool = Field(description="the user cancelled the reply (Ctrl-C) before it finished")
    empty_reason: str = Field(
        "",
        description="why the reply is empty, in one line (the model wrote nothing, or only what is not shown); empty otherwise",
    )
    memories: list[RecalledMemory]
    state: ChatState


class ServiceStatus(Out):
    """``memcli service status``."""

    pid: int
    version: str
    protocol: int
    started_at: Optional[str]
    uptime_seconds: float
    users_loaded: list[str] = Field(description="users whose recall index is in memory")
    rss_bytes: int = Field(description="resident memory of the service process")
    requests_served: int
    socket: str
    log_file: str
    read_mostly: Optional[str] = Field(
        None,
        description="why the store refuses writes for want of space (reads and deletes work; writes exit 10), null when writes fit",
    )


class PathCheck(Out):
    """One path ``memcli doctor`` checked."""

    name: str = Field(
        description="what it is: a name of memcli paths (data_dir, database...) or a path under one of them (data_dir/chroma/chroma.sqlite3)"
    )
    path: str
    type: str = Field(
        description="dir, file, socket, symlink, other, missing (not made yet: nothing to check), or unreadable (this user may not look at it: it is under another user's folder)"
    )
    mode: Optional[str] = Field(description="permission bits in octal (0600), null when missing")
    owner_uid: Optional[int] = Field(description="uid of its owner, null when missing")
    ok: bool = Field(
        description="private: no group or other permission bits, owned by this user (a missing path is ok)"
    )
    problem: Optional[str] = Field(description="what is wrong, null when ok")


class ModelCheck(Out):
    """One check of the configured chat model or embedding server by ``memcli doctor``."""

    name: str = Field(
        description="model file, server reachable, model listed or completion (the chat model); embedding server reachable, embedder listed or embedding (the embedding server)"
    )
    ok: bool
    detail: str = Field(description="what was found, or what failed and the fix")


class DoctorReport(Out):
    """``memcli doctor``: every path memcli uses, checked for privacy (mode 0700 folders, 0600
    files, this user's own) and the store for writability."""

    ok: bool = Field(description="no warning")
    store_writable: bool = Field(description="the data folder can be written (false: a read-only store, writes exit 9)")
    store_space: Optional[str] = Field(
        None,
        description="why writes are refused for want of space on the store's device (reads and deletes work; writes exit 10), null when they fit",
    )
    checked: int = Field(description="paths checked")
    warnings: list[str] = Field(
        description="one line each, as printed on stderr (without the 'memcli: warning: ' prefix)"
    )
    checks: list[PathCheck]
    model_checks: list[ModelCheck] = Field(
        default_factory=list,
        description="the configured chat model: its file, or its server reachable, the model listed and a one-token completion answered",
    )


class ServiceStop(Out):
    """``memcli service stop``: whether a service was running and was stopped."""

    stopped: bool
    pid: Optional[int] = Field(description="the stopped service's pid, null when none was running")


class ScheduleResult(Out):
    """``memcli schedule``: the scheduled jobs, as files to write (crontab lines, systemd
    units, launchd agents), and whether ``--install`` installed them."""

    kind: str = Field(description="cron, systemd or launchd")
    files: dict[str, str] = Field(
        description="path -> text of each file (for cron, the crontab block under the name crontab)"
    )
    installed: bool


class UninstallResult(Out):
    """``memcli uninstall``: what was removed (with ``--dry-run``: what would be)."""

    removed: list[str] = Field(description="the schedule's entries and files, and the folders deleted")
    dry_run: bool


class PathsResult(Out):
    """``memcli paths``: every path memcli uses."""

    config_file: str
    config_dir: str
    data_dir: str
    store_dir: str = Field(description="the Chroma store")
    database: str = Field(description="the SQLite sidecar: recall index, history, consolidation progress")
    lock_file: str
    consolidate_lock: str
    pending_dir: str = Field(description="the journal of what was said and is not stored yet")
    cache_dir: str
    model_dir: str
    prompt_states_dir: str = Field(
        description="the chat openings' evaluated states: a cache, emptied by a delete for good"
    )
    embedder_exports_dir: str = Field(
        description="the embedder's ONNX exports, shared by every home of this user: a cache of the model alone"
    )
    state_dir: str
    run_dir: str = Field(description="the service's private directory")
    socket: str
    service_file: str
    start_lock: str
    log_file: str = Field(description="the service's log")
    chat_history: str = Field(
        description="the chat prompt's typed lines: private, scrubbed of what a delete for good takes"
    )


class EvalResult(Out):
    """``memcli eval locomo``: evidence recall@k of LoCoMo's questions (categories 1-4)."""

    questions: int
    conversations: list[str]
    without: list[str] = Field(description="the recall levers turned off")
    per_category: dict[str, dict[str, Union[int, float]]] = Field(description="category -> {n, R@5, R@10, R@20}")
    overall: dict[str, Union[int, float]] = Field(description="{n, R@5, R@10, R@20} over every question")
    latency_ms: dict[str, float] = Field(description="{p50, p95} of one recall, in milliseconds")
    duration_seconds: float


class ReindexResult(Out):
    """``memcli reindex``: the store re-embedded with the configured embedder."""

    embedder: str = Field(
        description="the embedder the store's vectors now come from, name@fingerprint or server:<model>@<dimension>"
    )
    previous: Optional[str] = Field(description="the embedder they came from, null when none was recorded")
    memories: int = Field(description="memories re-embedded (0: the store was already the embedder's)")
    users: int = Field(description="users whose memories were re-embedded")
    duration_seconds: float


class MigrateResult(Out):
    """``memcli migrate``: the memories copied, compared and the store_url setting switched."""

    source: str = Field(description="where the memories were: the folder, or the server (URL, tenant, database)")
    target: str = Field(description="where they are now, as source")
    memories: int = Field(
        description="memories copied, each with every field and its vector, and found equal in the copy"
    )
    max_vector_difference: float = Field(
        description="largest difference of a vector component between the store and the copy (0: bit-equal)"
    )
    duration_seconds: float


class ProbeEvalResult(Out):
    """``memcli eval memorybank``: hit@k of probe questions over a MemoryBank history."""

    questions: int
    users: list[str]
    without: list[str] = Field(description="the recall levers turned off")
    per_type: dict[str, dict[str, Union[int, float]]] = Field(description="probe type -> {n, hit@1, hit@5, hit@10}")
    overall: dict[str, Union[int, float]] = Field(description="{n, hit@1, hit@5, hit@10} over every probe")
    latency_ms: dict[str, float] = Field(description="{p50, p95} of one recall, in milliseconds")
    duration_seconds: float
    details: list[dict[str, Any]] = Field(
        description="with --details: one object a probe: user, question, type, evidence, rank (1-based rank of its first evidence turn in the top 10, or null), recalled (the top 10 turn references)"
    )


class ChangesEvalResult(Out):
    """``memcli eval changes``: answers to life-change scenarios (a value that changed, a habit stopped, additive facts, past questions, nothing to find)."""

    questions: int
    answers: str = Field(description="the answering path used: auto, llm or extractive")
    per_type: dict[str, dict[str, Union[int, float]]] = Field(
        description="scenario type -> {n, right, first_right, superseded_first, abstained_rightly}: shares of n. right: the answer holds every gold word (or, with nothing to find, says so); first_right: the first memory it quotes holds every gold word, or a list quoted from several memories each holding one of its items (or, with nothing to find, as right); superseded_first: the first memory it quotes holds the superseded value and not the gold one; abstained_rightly: nothing found where nothing should be"
    )
    overall: dict[str, Union[int, float]] = Field(description="the same over every scenario")
    duration_seconds: float
    details: list[dict[str, Any]] = Field(
        description="with --details: one object a scenario: id, type, question, answer, right, first_right, superseded_first, abstained_rightly"
    )


class ConsolidationEvalResult(Out):
    """``memcli eval consolidation``: consolidation of LoCoMo conversations against the dataset's own session summaries and observations."""

    path: str = Field(description="the consolidation path of the runs: extractive or llm")
    conversations: list[dict[str, Any]] = Field(
        description="one object a conversation: conversation, turns, days, days_summarized, facts, observations, seconds (the consolidate call), "
        "turns_per_second, rougeL_p, rougeL_r, rougeL_f (daily summary against the day's session summaries, mean over days, a day "
        "without summary scoring 0), coverage, coverage_facts, coverage_summaries (share of observations matched at cosine >= 0.6), "
        "coverage_turns (the same by the raw turns), coverage_strict (facts and summary lines at cosine >= 0.7), "
        "written_by (units per path); with --details also summaries ({day: text}) and fact_texts"
    )
    overall: dict[str, Union[int, float]] = Field(
        description="sums of the counts and seconds, turns_per_second over them, means of the scores"
    )
    duration_seconds: float


class QaEvalResult(Out):
    """``memcli eval qa``: answers to LoCoMo's questions scored with LoCoMo's own metric (token F1 after its answer normalisation; adversarial questions right when the answer says it is not mentioned)."""

    questions: int
    conversations: list[str]
    context: str = Field(
        description="memory, full or none: what the answers were written from: recalled memories (as ask), the whole conversation (its most recent turns that fit the context window), or the question alone"
    )
    answers: str = Field(description="the answering path used: llm or extractive")
    model: str = Field(description="the chat model that answered; empty for extractive answers")
    per_category: dict[str, dict[str, Union[int, float]]] = Field(
        description="category (1 multi-hop ... 5 adversarial) -> {n, F1, and with context memory for categories 1-4: R@5, R@10, R@20 of the evidence}"
    )
    overall: dict[str, Union[int, float]] = Field(
        description="{n, F1, R@5, R@10, R@20} over every question (R@k over those of categories 1-4)"
    )
    overall_1_4: dict[str, Union[int, float]] = Field(description="{n, F1} without the adversarial category")
    latency_seconds: dict[str, float] = Field(
        description="{p50, p95} of one answer (recall, prompt and reply), in seconds"
    )
    duration_seconds: float
    details: list[dict[str, Any]] = Field(
        description="with --details: one object a question: conversation, category, question, reference (the dataset's answer, or its adversarial answer), answer, answered (false: it found nothing, as ask --json says), score, seconds"
    )


class ConfigSetting(Out):
    """``memcli config list`` (one per setting), ``config get``, ``set`` and ``unset``: a
    setting in effect and where its value comes from."""

    key: str
    value: Any = Field(description="the value in effect, in its type (a table for user_decay)")
    source: str = Field(description="default, config file, or the MEMCLI_<KEY> variable that sets it")
    description: str


class ConfigPath(Out):
    """``memcli config path``: the config file."""

    path: str
    exists: bool


class Completion(Out):
    """One shell completion candidate (the ``complete`` request)."""

    value: str
    help: str = Field(description="what it is: a memory's text, a user's memory count, a kind's meaning")


class VersionInfo(Out):
    """``memcli version``: memcli, its engines, and the models the settings name (none is loaded to tell)."""

    memcli: str
    protocol: int = Field(description="the version of the service's requests and of these JSON shapes")
    python: str
    chromadb: Optional[str] = Field(description="installed version, null when not installed")
    llama_cpp_python: Optional[str]
    sentence_transformers: Optional[str]
    torch: Optional[str]
    chat_model: str = Field(
        description="the GGUF file of the model setting, or the embedded default's file (assembled on first use); with a model server, its model id (model_name)"
    )
    chat_model_package: Optional[str] = Field(
        description="the package of the embedded default chat model and its version; null for a model setting"
    )
    model_server: Optional[str] = Field(
        None,
        description="the model server's base URL (model_url), null for a GGUF model; chat_model is then the server's model id, or empty for the first it lists",
    )
    embedder: str = Field(
        description="the sentence-transformers directory of the embedder setting, or the packaged default's; with an embedding server, its model id (embedder_name)"
    )
    embedder_package: Optional[str] = Field(
        description="the package of the default embedder and its version; null for an embedder setting or an embedding server"
    )
    embedding_server: Optional[str] = Field(
        None,
        description="the embedding server's base URL (embedder_url), null for a sentence-transformers embedder; embedder is then the server's model id, or empty for the first it lists",
    )
    service: Optional[str] = Field(description="the version of the running memcli service, null when none runs")


RESULTS: dict[str, Any] = {
    "memory": Memory,
    "recalled memory": RecalledMemory,
    "score": Score,
    "forgotten memory": ForgottenMemory,
    "forgetting": Forgetting,
    "remember": Remembered,
    "ask": Answer,
    "import": ImportResult,
    "export": ExportResult,
    "forget": ForgetResult,
    "purge user": PurgeUserResult,
    "consolidate": ConsolidateResult,
    "facts": FactCounts,
    "graph counts": GraphCounts,
    "graph show": GraphShow,
    "graph entity": GraphEntity,
    "graph relation": GraphRelation,
    "graph neighbour": GraphNeighbour,
    "graph export": GraphExport,
    "history entry": HistoryEntry,
    "stats": Stats,
    "chat reply": ChatReply,
    "chat state": ChatState,
    "service status": ServiceStatus,
    "service stop": ServiceStop,
    "paths": PathsResult,
    "doctor": DoctorReport,
    "path check": PathCheck,
    "probe eval": ProbeEvalResult,
    "consolidation eval": ConsolidationEvalResult,
    "qa eval": QaEvalResult,
    "changes eval": ChangesEvalResult,
    "reindex": ReindexResult,
    "migrate": MigrateResult,
    "eval": EvalResult,
    "config setting": ConfigSetting,
    "config path": ConfigPath,
    "version": VersionInfo,
    "completion": Completion,
}
"""The documented shapes, by name (the man page's JSON OUTPUT section)."""
