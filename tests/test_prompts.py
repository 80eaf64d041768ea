"""The chat prompt's share of consolidated memory (``memcli.models.prompts``): each consolidated
memory is cut to its most recent whole lines within CONSOLIDATED_LIMIT characters."""

from __future__ import annotations

from memcli.models.prompts import CONSOLIDATED_LIMIT, fit_lines, system_prompt


def test_a_short_text_is_kept_whole() -> None:
    assert fit_lines("Ana: I adopted Rex.\nAna: I moved to Lisbon.") == "Ana: I adopted Rex.\nAna: I moved to Lisbon."


def test_a_long_summary_keeps_its_most_recent_whole_lines_and_its_interests() -> None:
    lines = [f"Ana: On day {i} I painted the harbour again with my friends." for i in range(60)]
    kept = fit_lines("\n".join(lines + ["Interests: painting, harbour."]), 500)
    assert len(kept) <= 500
    assert kept.endswith("Interests: painting, harbour.")
    body = kept.split("\n")[:-1]
    assert body == lines[-len(body) :] and len(body) >= 5


def test_one_line_longer_than_the_limit_is_cut() -> None:
    kept = fit_lines("x" * 50, 20)
    assert len(kept) <= 20 and kept.endswith("…")


def test_the_system_prompt_carries_at_most_the_limit_of_each_consolidated_memory() -> None:
    long = "\n".join(f"Ana: sentence number {i} of a long extractive summary of many days." for i in range(200))
    prompt = system_prompt("ana", "2023-06-01", [], portrait=long, event_summary=long, running=long)
    assert len(prompt) < 3 * CONSOLIDATED_LIMIT + 1000
    assert "sentence number 199" in prompt and "sentence number 0 " not in prompt
