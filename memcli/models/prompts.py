"""Prompt templates. Kept short and plain: a weak local model follows simple prompts best
(Landwehr et al. 2023, "keep prompts simple")."""

from __future__ import annotations

from collections.abc import Sequence

from memcli.memory import Memory
from memcli.models.llm import Message

CITE_LEN = 8
"""Memories are cited in prompts and answers by the first CITE_LEN characters of their id."""

MEMORY_TEXT_LIMIT = 400
"""Characters of a memory's text shown in a prompt."""

CONSOLIDATED_LIMIT = 1500
"""Characters of each consolidated memory (portrait, event summary, running memory) a chat
or ask prompt carries, about 400 tokens: extractive ones hold up to 20 lines (2–3,000
characters each on LoCoMo conv-26), and the three together would otherwise take half of a
4,096-token context."""


def fit_lines(text: str, limit: int = CONSOLIDATED_LIMIT) -> str:
    """The last whole lines of ``text`` (its most recent, in a time-ordered summary) that fit
    in ``limit`` characters, and after them its line "Interests: …" (a portrait's), cut to
    half the limit. A single line longer than what is left is cut at the end with "…"."""
    lines = [line for line in text.strip().split("\n") if line.strip()]
    half = max(1, limit // 2)
    interests = [
        line if len(line) <= half else line[: half - 1] + "…" for line in lines if line.startswith("Interests: ")
    ]
    rest = [line for line in lines if not line.startswith("Interests: ")]
    kept: list[str] = []
    used = sum(len(line) + 1 for line in interests[-1:])
    for line in reversed(rest):
        if used + len(line) + 1 > limit:
            break
        kept.insert(0, line)
        used += len(line) + 1
    if not kept and rest:
        kept = [rest[-1][: max(1, limit - used - 1)] + "…"] if len(rest[-1]) > limit - used else [rest[-1]]
    return "\n".join(kept + interests[-1:])


SYSTEM = (
    "You are memcli, the personal assistant of {user}, with a long-term memory of your "
    "conversations. Today is {today}. Answer briefly and truthfully. Use the memories {where} "
    "when they are relevant and cite each one you use by its id in square brackets, like [{example}]. "
    "If the memories do not tell, say that you do not remember; never invent facts."
)
EXAMPLE_ID = "1a2b3c4d"
"""The id the instructions cite as an example when no memory's is used (a chat's: its
system text stays the same from turn to turn)."""

EARLIER = "Earlier in this conversation: {summary}"
"""How a chat prompt gives the summary of a session's older turns (``chat_messages``)."""


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
    running: str = "",
    memories_apart: bool = False,
) -> str:
    """The system text of a chat or ask prompt: instructions, portrait, global event summary,
    the running memory of past conversations (Wang et al. 2023), the summary of older turns
    of this session, and the recalled memories, oldest first (``memories_block``). The
    consolidated memories are cut to their most recent lines that fit CONSOLIDATED_LIMIT
    characters each.

    ``memories_apart`` (chat): the recalled memories are left out, to come with the user's
    messages (``chat_messages``), and the instructions say so and cite ``EXAMPLE_ID``: what
    changes from turn to turn then comes after the conversation, and the prompt's start,
    the same from turn to turn, is not evaluated again (llama.cpp reuses the evaluated
    state of the longest common start of two prompts)."""
    example = EXAMPLE_ID if memories_apart or not memories else cite(memories[0])
    where = "given with the message" if memories_apart else "below"
    parts = [SYSTEM.format(user=user, today=today, example=example, where=where)]
    if portrait:
        parts.append(f"What you know of {user}: {fit_lines(portrait)}")
    if event_summary:
        parts.append(f"What has happened so far: {fit_lines(event_summary)}")
    if running:
        parts.append("Your memory of past conversations:\n" + fit_lines(running))
    if session_summary:
        parts.append(EARLIER.format(summary=session_summary.strip()))
    if not memories_apart:
        parts.append(memories_block(memories))
    return "\n\n".join(parts)


def memories_block(memories: Sequence[Memory]) -> str:
    """The recalled memories of a prompt, oldest first, one ``format_memory`` line each
    under "Memories:" ("Memories: none found." without any)."""
    if not memories:
        return "Memories: none found."
    ordered = sorted(memories, key=lambda m: m.created_at)
    return "Memories:\n" + "\n".join(format_memory(m) for m in ordered)


def with_memories(memories: str, text: str) -> str:
    """A user message as a chat prompt gives it: ``memories`` (a ``memories_block``), when
    given, then the message ``text``."""
    return f"{memories}\n\n{text}" if memories else text


def chat_messages(
    system: str, history: Sequence[Message], user_text: str, memories: str = "", summary: str = ""
) -> list[Message]:
    """System text, the recent turns verbatim (each user message with the memories it was
    given: ``with_memories``), then the new user message; ``memories`` (a
    ``memories_block``), when given, opens the new message, so that everything before it
    is the same as in the previous turn's prompt.

    ``summary`` (of the session's older turns, ``EARLIER``) opens the first user message
    after the system text, not the system text itself: the system text then stays the
    same for the whole session, and when older turns fold into a new summary only what
    follows it is evaluated again (llama.cpp reuses the evaluated state of the longest
    common start of two prompts)."""
    messages = [*history, Message("user", with_memories(memories, user_text))]
    if summary.strip():
        first = next(i for i, m in enumerate(messages) if m.role == "user")
        messages[first] = Message("user", f"{EARLIER.format(summary=summary.strip())}\n\n{messages[first].content}")
    return [Message("system", system), *messages]


def summarize_messages(previous_summary: str, turns: Sequence[Message]) -> list[Message]:
    """The prompt that folds older chat turns into the session summary."""
    lines = [f"Summary so far: {previous_summary}"] if previous_summary else []
    lines += [f"{m.role}: {m.content}" for m in turns]
    return [Message("user", SUMMARIZE_SESSION.format(content="\n".join(lines)))]


# Consolidation ------------------------------------------------------------------------
# Decision prompts, kept apart from the chat prompt (Landwehr et al. 2023). Each asks for
# JSON; the schema in ``memcli.consolidation.consolidate`` constrains decoding, so the wording only has
# to say what goes in it. The MemoryBank sentences are the paper's own (DESIGN.md §1).
# Each task carries two worked examples as earlier turns: a base model learns the task from
# them, not from the instruction. They name nobody and no place: their speakers are "A"
# and "B", so a model that copies an example instead of reading its material writes a text
# that names nobody of the material, which the grounding checks reject.

EVENT_SUMMARY = (
    "Summarize the events and key information in the content below. Write in the third "
    "person, keep names, places and dates, and add nothing the content does not say. "
    'Answer in JSON: {"summary": "..."}'
)
"""MemoryBank's event-summary prompt (daily, and global over the daily summaries)."""

DAILY_PORTRAIT = (
    "Based on the following dialogue, please summarize the personality traits and emotions "
    'of {who}. Answer in JSON: {{"portrait": "..."}}'
)
"""MemoryBank's daily personality-insight prompt; ``who`` names the people (not the assistant)."""

GLOBAL_PORTRAIT = (
    "The following are the personality traits and emotions {who} exhibited throughout "
    "multiple days. Please provide a highly concise and general summary of their "
    'personality. Answer in JSON: {{"portrait": "..."}}'
)
"""MemoryBank's global-portrait prompt over the daily portraits."""

RUNNING_MEMORY = (
    "You keep a memory of past conversations as a list of short sentences. Update it with "
    "the new conversation: keep what still matters from the previous memory, add new names, "
    "facts, events and dates, and drop what is no longer true. At most {limit} sentences. "
    'Answer in JSON: {{"memory": ["...", "..."]}}'
)
"""Recursive summarization (Wang et al. 2023): M_i = LLM(S_i, M_{i-1})."""

EXTRACT_FACTS = (
    "Extract facts about the people in the new messages: personal details, preferences, "
    "plans, events, relationships, with their dates. Only what the new messages say; "
    "nothing from the earlier messages alone, nothing invented, no questions or greetings. "
    "Each fact is one short sentence that names the person it is about. "
    'Answer in JSON: {"facts": ["..."]}, or {"facts": []} when there is no fact.'
)
"""Mem0's extraction phase: candidate facts from a window of message pairs, with context."""

DECIDE_FACTS = (
    "You keep a list of facts. Compare each new fact with the existing facts and choose one "
    "event for it, in the order of the new facts. ADD: it is new information. UPDATE: it "
    "changes or adds detail to existing fact number target; text is the updated fact. "
    "DELETE: it contradicts existing fact number target, which is no longer true. NOOP: it "
    'is already known. Answer in JSON: {"events": [{"event": "ADD", "target": 0, "text": "..."}]}'
)
"""Mem0's update phase: ADD / UPDATE / DELETE / NOOP of several new facts against the
most similar stored facts, in one call."""

QUERY_CREATOR = (
    "Write the search query that finds, in a memory of past conversations, what is needed "
    "to answer the last message. Name the people and things it refers to. "
    'Answer in JSON: {"query": "..."}'
)
"""Landwehr et al. (2023)'s query creator: the chat so far becomes a search query."""

_DIALOGUE_A = (
    "Conversation of Friday 3 March 2023:\n"
    "A: I finally ran the city marathon last Sunday!\n"
    "B: Congratulations! How long did it take you?\n"
    "A: Four hours. My knee hurt at the end, but I am so proud."
)
_DIALOGUE_B = (
    "Conversation of Tuesday 9 January 2024:\n"
    "A: We are moving to the coast in April, my wife got a job at the hospital there.\n"
    "B: That's big news! Will you sell the flat?\n"
    "A: Yes, and we already found a school for our son. I'm nervous but happy."
)

EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "summary": [
        (
            _DIALOGUE_A,
            '{"summary": "A told B that A ran the city marathon last Sunday in four hours and that A\'s knee hurt."}',
        ),
        (
            _DIALOGUE_B,
            '{"summary": "A said A and A\'s wife are moving to the coast in April for her hospital job; they will sell their flat and found a school for their son."}',
        ),
    ],
    "portrait": [
        (
            _DIALOGUE_A,
            '{"portrait": "A is determined and proud of the achievement despite the pain. B is supportive."}',
        ),
        (
            _DIALOGUE_B,
            '{"portrait": "A is organised and feels both nervous and happy about the change. B is curious."}',
        ),
    ],
    "memory": [
        (
            "Previous memory:\n(empty)\n\nNew " + _DIALOGUE_A[0].lower() + _DIALOGUE_A[1:],
            '{"memory": ["A ran the city marathon in four hours in late February 2023.", "A\'s knee hurt after the marathon."]}',
        ),
        (
            "Previous memory:\n- A ran the city marathon in four hours in late February 2023.\n\nNew "
            + _DIALOGUE_B[0].lower()
            + _DIALOGUE_B[1:],
            '{"memory": ["A ran the city marathon in four hours in late February 2023.", "A and A\'s wife are moving to the coast in April 2024.", "A has a son."]}',
        ),
    ],
    "facts": [
        (
            "New messages (Friday 3 March 2023):\nA: I finally ran the city marathon last Sunday!\nB: Congratulations! I start my new job at the bakery on Monday.",
            '{"facts": ["A ran the city marathon.", "B starts a new job at a bakery on Monday."]}',
        ),
        ("New messages (Tuesday 9 January 2024):\nA: How are you?\nB: Fine, thanks.", '{"facts": []}'),
    ],
    "query": [
        (
            "A: I finally ran the city marathon last Sunday!\nB: How long did it take you?",
            '{"query": "A city marathon last Sunday time"}',
        ),
        (
            "A: We are moving in April.\nB: Where to? And what about your son's school?",
            '{"query": "A moving in April destination, school of A\'s son"}',
        ),
    ],
    "decisions": [
        (
            "Existing facts:\n0. A lives in the city.\n1. A has a son.\n\nNew facts:\n- A is moving to the coast.\n- A's son has a new school.",
            '{"events": [{"event": "UPDATE", "target": 0, "text": "A is moving from the city to the coast."}, {"event": "ADD", "target": 1, "text": ""}]}',
        ),
        (
            "Existing facts:\n0. A ran the city marathon.\n\nNew facts:\n- A ran a marathon in the city.",
            '{"events": [{"event": "NOOP", "target": 0, "text": ""}]}',
        ),
    ],
}
"""Two worked examples per consolidation task: (user message, assistant reply)."""


def consolidation_messages(instruction: str, task: str, content: str) -> list[Message]:
    """A decision prompt: the instruction as system text, the worked examples of ``task``
    (a key of EXAMPLES) as earlier turns, then the material as the user message."""
    messages = [Message("system", instruction)]
    for example, reply in EXAMPLES[task]:
        messages += [Message("user", example), Message("assistant", reply)]
    return [*messages, Message("user", content)]
