"""What the chat model returns during consolidation (``memcli.consolidation.consolidate``): the pydantic
models its JSON-schema constrained output is validated against (``llm.structured_output``),
with the bounds on their strings and lists.

A weak local model must not poison memory, so every string and list here is bounded: the
schema given to the model says so, and a reply outside it is invalid (retried once, then
the unit gets the extractive result instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

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


def decision_request(existing: Sequence[str], new: Sequence[str]) -> tuple[dict[str, Any], str]:
    """The JSON schema and the user message of one call of Mem0's update decision
    (Chhikara et al. 2025, Algorithm 1): ``existing`` numbered from 0 (what ``target``
    indexes: the schema allows only those numbers) and ``new``, one decision asked for each
    of them. Shared by consolidation's fact stage and supersession at write time."""
    schema = DecisionsOutput.model_json_schema()
    schema["properties"]["events"].update(minItems=len(new), maxItems=len(new))
    schema["$defs"]["DecisionOutput"]["properties"]["target"] = {"enum": list(range(len(existing))), "type": "integer"}
    content = "Existing facts:\n" + "\n".join(f"{i}. {text}" for i, text in enumerate(existing))
    content += "\n\nNew facts:\n" + "\n".join(f"- {text}" for text in new)
    return schema, content
