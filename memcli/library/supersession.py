"""Supersession at write time with a capable chat model (issue 31): Mem0's update phase
(Chhikara et al. 2025, Algorithm 1: ADD / UPDATE / DELETE / NOOP of a new memory against
the s most similar stored ones) run when ``remember`` stores a note, through the same
pydantic models (``memcli.consolidation.model_output``), prompt and grounding checks
(``memcli.consolidation.grounding``) as consolidation's fact stage.

What the model decides may only mark an older memory superseded, exactly as the rules do
(``memcli.recall.changes.Changes.supersede``: ``valid_to``, ``superseded_by``, an UPDATE in
its history); the text it writes for an UPDATE is checked and then dropped, so nothing it
invents becomes a memory and nothing the person said is rewritten or deleted. A decision
naming a memory it was not shown, an UPDATE whose text is not grounded in the new memory,
a reply that stays invalid, a server that fails or a reply not there within
``model_timeout`` seconds leaves the decision to the rules, as without a model.

Which path: the ``consolidation`` setting decides, as for consolidation ("extractive": the
rules; "llm": the model; "auto": the model when one with a chat template is configured —
a model server, or a GGUF whose chat template is known without loading it — so the
embedded 270M base model keeps the rules). ``model_timeout`` 0 (no limit) keeps the rules:
``remember`` must not wait without bound.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from memcli.config import Settings
from memcli.consolidation.grounding import Grounding
from memcli.consolidation.model_output import DECISIONS_PER_CALL, DecisionsOutput, decision_request
from memcli.consolidation.shared import DECISION_TOKENS, RELATED_SIMILARITY, SIMILAR_FACTS
from memcli.errors import InvalidOutputError, MemcliError
from memcli.memory import SUPERSEDED_KINDS, Memory, tells
from memcli.models import prompts
from memcli.models.llm import ChatModel, Message, structured_output
from memcli.recall.changes import UpdateDecision, said_by
from memcli.recall.retrieval import Recaller

Result = TypeVar("Result")


def model_decides(settings: Settings, template_known: Callable[[], bool | None]) -> bool:
    """Whether supersession at write time asks the chat model (see the module docstring):
    the ``consolidation`` setting, "auto" meaning a model server (``model_url``) or a GGUF
    whose chat template ``template_known`` tells without loading it (None: it cannot tell,
    so the rules); never with ``model_timeout`` 0."""
    if settings.consolidation == "extractive" or settings.model_timeout <= 0:
        return False
    if settings.consolidation == "llm" or settings.model_url:
        return True
    return bool(template_known())


def related_memories(recaller: Recaller, new: Memory, vector: Sequence[float], others: Sequence[str]) -> list[Memory]:
    """The current memories the model may find ``new`` updates (Mem0's s most similar):
    notes and people's turns of the same user and speaker (``said_by``), older than it,
    neither archived nor superseded, at least ``RELATED_SIMILARITY`` cosine-similar to its
    ``vector`` (a unit vector), the ``SIMILAR_FACTS`` most similar first; ``others``: ids
    left out (the memories written with it). Read from the user's recall index
    (``Recaller.index``)."""
    index = recaller.index(new.user)
    if not len(index):
        return []
    mask = index.alive & ~index.archived & ~index.ended & index.kind_mask(SUPERSEDED_KINDS)
    similarity = np.where(mask, index.turn @ np.asarray(vector, dtype=index.turn.dtype), -1.0)
    order = np.argsort(-similarity, kind="stable")
    left_out = {new.id, *others}
    wanted = [
        int(i)
        for i in order[: 4 * SIMILAR_FACTS]
        if similarity[i] >= RELATED_SIMILARITY and index.ids[i] not in left_out
    ]
    found = {m.id: m for m in recaller.store.get_many([index.ids[i] for i in wanted])}
    out = [
        m
        for m in (found.get(index.ids[i]) for i in wanted)
        if m is not None and tells(m) and said_by(m) == said_by(new) and m.created_at < new.created_at
    ]
    return out[:SIMILAR_FACTS]


class _Deadline:
    """A chat model that refuses a call once ``deadline`` (``time.monotonic``) has passed:
    ``structured_output``'s retry is made only while there is time left."""

    def __init__(self, model: ChatModel, deadline: float) -> None:
        self.model, self.deadline = model, deadline

    def structured(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any],
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> str:
        """``ChatModel.structured``; raises TimeoutError when no time is left."""
        if time.monotonic() >= self.deadline:
            raise TimeoutError("no time left for another try (model_timeout)")
        return self.model.structured(messages, schema, max_tokens, temperature, seed)


def within(seconds: float, call: Callable[[], Result], in_thread: bool) -> Result:
    """``call()``, given up after ``seconds`` (TimeoutError): in a daemon thread when
    ``in_thread`` (a model server: the request left behind ends on its own time limits),
    else in this thread (a model in this process stops itself at ``model_timeout``, and a
    thread left running in it would outlive the command)."""
    if not in_thread:
        return call()
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["value"] = call()
        except BaseException as exc:  # handed to the caller's thread
            done["error"] = exc

    worker = threading.Thread(target=run, name="memcli-update-decision", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeoutError(f"the model did not decide within {seconds:g} s (model_timeout)")
    if "error" in done:
        raise done["error"]
    return done["value"]


def decide(
    model: ChatModel,
    news: Sequence[Memory],
    related: Sequence[Sequence[Memory]],
    min_overlap: float,
    timeout: float,
    in_thread: bool,
) -> dict[str, UpdateDecision]:
    """Mem0's update decision for each of ``news`` (at most ``DECISIONS_PER_CALL``) against
    the stored memories ``related`` to it (``related_memories``), in one call of ``model``
    under a JSON schema (``DecisionsOutput``, consolidation's prompt ``DECIDE_FACTS``),
    within ``timeout`` seconds. A reply is refused (and asked once more, while there is
    time) when a decision names a memory it was not shown or one not related to its new
    memory, or an UPDATE's text is empty or not grounded in the new memory: every name and
    number in it and ``min_overlap`` of its content words must be in the new memory or the
    one it updates (``Grounding``), and it must hold something of the new memory that the
    old one lacks. Returns new memory id -> ``UpdateDecision``.

    Raises InvalidOutputError (refused or malformed twice), TimeoutError (no decision within
    ``timeout``), ModelError / ModelServerError (the model failed)."""
    shown = list({m.id: m for group in related for m in group}.values())
    schema, content = decision_request([m.text for m in shown], [m.text for m in news])

    def check(out: DecisionsOutput) -> None:
        if len(out.events) != len(news):
            raise ValueError(f"{len(out.events)} events for {len(news)} new memories")
        for decision, new, group in zip(out.events, news, related):
            if decision.event == "NOOP" or decision.event == "ADD":
                continue
            if not 0 <= decision.target < len(shown):
                raise ValueError(f"target {decision.target} is not one of the memories shown")
            old = shown[decision.target]
            if old not in group:
                raise ValueError(f"target {decision.target} is not related to the new memory {new.text[:40]!r}")
            if decision.event == "UPDATE":
                text = decision.text.strip()
                problem = (
                    "the text is empty"
                    if not text
                    else Grounding(f"{old.text}\n{new.text}").problem(text, min_overlap)
                    or _adds_nothing_new(text, new, old)
                )
                if problem:
                    raise ValueError(f"update rejected: {problem}")

    limit = time.monotonic() + timeout
    messages = prompts.consolidation_messages(prompts.DECIDE_FACTS, "decisions", content)
    out = within(
        timeout,
        lambda: structured_output(
            _Deadline(model, limit),  # type: ignore[arg-type]
            messages,
            DecisionsOutput,
            len(news) * DECISION_TOKENS + 24,
            schema,
            check,
        ),
        in_thread,
    )
    decided: dict[str, UpdateDecision] = {}
    for decision, new, group in zip(out.events, news, related):
        ended = {shown[decision.target].id} if decision.event in ("UPDATE", "DELETE") else set()
        decided[new.id] = UpdateDecision(frozenset(m.id for m in group), frozenset(ended))
    return decided


def _adds_nothing_new(text: str, new: Memory, old: Memory) -> str | None:
    """Why an UPDATE's ``text`` does not come from ``new``: it holds no word or number of
    the new memory that the old one lacks (an "update" to the old words), or None."""
    grounding = Grounding(text)
    before = set(grounding.content_words(old.text))
    if any(grounding.overlap(w) == 1.0 for w in grounding.content_words(new.text) if w not in before):
        return None
    return "it holds nothing of the new memory"


def write_time_decisions(
    memories: Sequence[Memory],
    vectors: Mapping[str, Sequence[float]],
    recaller: Recaller,
    model: Callable[[], ChatModel],
    settings: Settings,
    in_thread: bool,
    notice: Callable[[str], None],
) -> dict[str, UpdateDecision]:
    """The chat model's update decisions for ``memories`` about to be stored (embedded as
    ``vectors``, id -> unit vector), for ``Changes.supersede``: those with related memories
    (``related_memories``), when they are at most ``DECISIONS_PER_CALL``, in one call
    (``decide``); ``model`` gives the chat model (loaded only when there is something to
    decide). On any failure, nothing (the rules decide), and ``notice`` gets one line."""
    news = [m for m in memories if tells(m) and m.id in vectors]
    if not news or len(news) > DECISIONS_PER_CALL:
        return {}
    ids = [m.id for m in news]
    related = [related_memories(recaller, m, vectors[m.id], ids) for m in news]
    asked = [(m, group) for m, group in zip(news, related) if group]
    if not asked:
        return {}
    try:
        return decide(
            model(),
            [m for m, _ in asked],
            [group for _, group in asked],
            settings.fact_grounding,
            settings.model_timeout,
            in_thread,
        )
    except (MemcliError, TimeoutError) as exc:
        why = exc.message if isinstance(exc, MemcliError) else str(exc)
        if isinstance(exc, InvalidOutputError):
            why = f"its decision was refused ({why})"
        notice(f"the chat model's update decision was not used: {why}; the rules decided what the note supersedes")
        return {}
