"""Check that the gates of ``memcli.dates`` (``may_name_date_en``, ``may_name_date_zh``)
change no date: ``query_dates`` of every question and note of the test sets (and of LoCoMo's
questions and turns and MemoryBank's messages, when ../shared/data beside the repository
holds them), with the gates and with dateparser and JioNLP given every text, must be the
same. Run again after upgrading either library.

    python scripts/dates_gate_check.py [DATA_DIR ...]

Prints the count of texts, how many each gate spared, and every text whose dates differ;
exits 1 when any does.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from unittest import mock

from memcli import dates

ROOT = Path(__file__).resolve().parents[1]
"""The repository; the benchmark data lies in ``../shared/data`` beside it, as for the tests."""
NOW = datetime(2023, 5, 4, 20, 0).timestamp()
"""The clock of texts that carry none (a Thursday evening)."""


def texts(roots: list[Path]) -> list[tuple[str, float]]:
    """(text, now) of every question and note of the test sets, of LoCoMo and of MemoryBank
    under ``roots``."""
    out: list[tuple[str, float]] = []
    for root in roots:
        for path in sorted(
            p for d in ("changes", "answers", "memorybank") for p in root.glob(f"tests/data/{d}/*.jsonl")
        ):
            for line in path.read_text(encoding="utf-8").splitlines():
                item = json.loads(line)
                now = datetime.fromisoformat(item["now"]).timestamp() if item.get("now") else NOW
                out.append((item["question"], now))
                out += [(note["text"], now) for note in item.get("notes", [])]
        locomo = root / "locomo" / "locomo10.json"
        if locomo.exists():
            for sample in json.loads(locomo.read_text(encoding="utf-8")):
                out += [(qa["question"], NOW) for qa in sample["qa"]]
                for key, turns in sample["conversation"].items():
                    if key.startswith("session_") and isinstance(turns, list):
                        out += [(turn["text"], NOW) for turn in turns]
        for bank in sorted((root / "memorybank").glob("memory_bank_*.json")):
            for user in json.loads(bank.read_text(encoding="utf-8")).values():
                for day, turns in user.get("history", {}).items():
                    now = datetime.fromisoformat(day).timestamp() + 86399
                    out += [(turn[side], now) for turn in turns for side in ("query", "response") if turn.get(side)]
    return out


def main(argv: list[str]) -> int:
    """Compare ``query_dates`` with and without the gates over the texts; 1 when any differs."""
    roots = [Path(a) for a in argv] or [ROOT, ROOT.parent / "shared" / "data"]
    found = texts(roots)
    gated = [repr(dates.query_dates(text, now)) for text, now in found]
    spared_en = sum(not dates.may_name_date_en(text) for text, _ in found)
    spared_zh = sum(not dates.may_name_date_zh(text) for text, _ in found if dates._HAN.search(text))
    with (
        mock.patch.object(dates, "may_name_date_en", lambda text: True),
        mock.patch.object(dates, "may_name_date_zh", lambda text: True),
    ):
        ungated = [repr(dates.query_dates(text, now)) for text, now in found]
    differ = [(text, a, b) for (text, _), a, b in zip(found, gated, ungated, strict=True) if a != b]
    chinese = sum(bool(dates._HAN.search(text)) for text, _ in found)
    print(f"{len(found)} texts ({chinese} with Chinese), {len(set(found))} distinct")
    print(f"dateparser spared on {spared_en}; JioNLP spared on {spared_zh} of {chinese}")
    print(f"texts with dates: {sum(g != '[]' for g in gated)}; differing: {len(differ)}")
    for text, a, b in differ:
        print(f"DIFFERS {text!r}\n  gated   {a}\n  ungated {b}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
