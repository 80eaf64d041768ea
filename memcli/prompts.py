"""Prompt templates. Kept short and plain: a weak local model follows simple prompts best
(Landwehr et al. 2023, "keep prompts simple")."""

from __future__ import annotations

from collections.abc import Sequence

from memcli.llm import Message
from memcli.memory import Memory

CITE_LEN = 8
"""Memories are cited in prompts and answers by the first CITE_LEN characters of their id."""

MEMORY_TEXT_LIMIT = 400
"""Characters of a memory's text shown in a prompt."""

SYSTEM = (
    "You are memcli, the personal assistant of {user}, with a long-term memory of your "
    "conversations. Today is {today}. Answer briefly and truthfully. Use the memories below "
    "when they are relevant and cite each one you use by its id in square brackets, like [{example}]. "
    "If the memories do not tell, say that you do not remember; never invent facts."
)

SUMMARIZE_SESSION = (
    "Summarize the events and key information in the content below in at most three short "
    "sentences. Keep names, dates and facts.\n\n{content}"
)
"""MemoryBank's event-summary prompt, applied to the older turns of a chat session."""


def cite(memory: Memory) -> str:
    """The short id a prompt shows and an answer cites."""
    return memory.id[:CITE_LEN]


def format_memory(memory: Memory) -> str:
    """One memory as a prompt line: ``[id] YYYY-MM-DD speaker: text (image: caption)``."""
    text = memory.text.strip().replace("\n", " ")
    if len(text) > MEMORY_TEXT_LIMIT:
        text = text[: MEMORY_TEXT_LIMIT - 1] + "…"
    who = f"{memory.speaker}: " if memory.speaker else ""
    image = f" (shared an image: {memory.caption})" if memory.caption else ""
    return f"[{cite(memory)}] {memory.day} {who}{text}{image}"


def system_prompt(
    user: str,
    today: str,
    memories: Sequence[Memory],
    portrait: str = "",
    event_summary: str = "",
    session_summary: str = "",
) -> str:
    """The system text of a chat or ask prompt: instructions, portrait, global event summary,
    the summary of older turns of this session, and the recalled memories, oldest first."""
    parts = [SYSTEM.format(user=user, today=today, example=cite(memories[0]) if memories else "1a2b3c4d")]
    if portrait:
        parts.append(f"What you know of {user}: {portrait.strip()}")
    if event_summary:
        parts.append(f"What has happened so far: {event_summary.strip()}")
    if session_summary:
        parts.append(f"Earlier in this conversation: {session_summary.strip()}")
    if memories:
        ordered = sorted(memories, key=lambda m: m.created_at)
        parts.append("Memories:\n" + "\n".join(format_memory(m) for m in ordered))
    else:
        parts.append("Memories: none found.")
    return "\n\n".join(parts)


def chat_messages(system: str, history: Sequence[Message], user_text: str) -> list[Message]:
    """System text, the recent turns verbatim, then the new user message."""
    return [Message("system", system), *history, Message("user", user_text)]


def summarize_messages(previous_summary: str, turns: Sequence[Message]) -> list[Message]:
    """The prompt that folds older chat turns into the session summary."""
    lines = [f"Summary so far: {previous_summary}"] if previous_summary else []
    lines += [f"{m.role}: {m.content}" for m in turns]
    return [Message("user", SUMMARIZE_SESSION.format(content="\n".join(lines)))]
