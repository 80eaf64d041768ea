"""What the chat model returns during consolidation (``memcli.consolidation.consolidate``): the pydantic
models its JSON-schema constrained output is validated against (``llm.structured_output``),
with the bounds on their strings and lists.

A weak local model must not poison memory, so every string and list here is bounded: the
schema given to the model says so, and a reply outside it is invalid (retried once, then
the unit gets the extractive result instead).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

RUNNING_SENTENCES = 20
"""Wang et al. keep the running memory to at most 20 sentences."""
SUMMARY_CHARS = 600
PORTRAIT_CHARS = 400
SENTENCE_CHARS = 200
FACT_CHARS = 160
WINDOW_FACTS = 8
"""Facts one extraction call may return at most, whatever the window."""
DECISIONS_PER_CALL = 4
"""New facts decided (ADD/UPDATE/DELETE/NOOP) in one call at most."""

Summary = Annotated[str, StringConstraints(min_length=10, max_length=SUMMARY_CHARS)]
Sentence = Annotated[str, StringConstraints(min_length=3, max_length=SENTENCE_CHARS)]
FactText = Annotated[str, StringConstraints(min_length=8, max_length=FACT_CHARS)]


class EventSummaryOutput(BaseModel):
    """What the model returns for an event summary."""

    summary: Summary


class PortraitOutput(BaseModel):
    """What the model returns for a portrait."""

    portrait: Annotated[str, StringConstraints(min_length=10, max_length=PORTRAIT_CHARS)]


class RunningMemoryOutput(BaseModel):
    """What the model returns for the running memory: its sentences."""

    memory: list[Sentence] = Field(min_length=1, max_length=RUNNING_SENTENCES)


class FactsOutput(BaseModel):
    """What the model returns from fact extraction (a call's schema may allow fewer)."""

    facts: list[FactText] = Field(max_length=WINDOW_FACTS)


class DecisionOutput(BaseModel):
    """Mem0's update decision for one new fact; ``target`` indexes the facts shown."""

    event: Literal["ADD", "UPDATE", "DELETE", "NOOP"]
    target: int = Field(ge=0)
    text: Annotated[str, StringConstraints(max_length=FACT_CHARS)]


class DecisionsOutput(BaseModel):
    """Mem0's update decisions for several new facts, one per fact, in the order shown
    (a call's schema asks for exactly as many as it shows)."""

    events: list[DecisionOutput] = Field(min_length=1, max_length=DECISIONS_PER_CALL)
