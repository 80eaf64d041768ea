"""Typed-entity accuracy of the offline extractor (``memcli.text.entities.extract``) on a
probe set of everyday notes (tests/data/entity_types/, see its README).

    python scripts/entity_types_eval.py tests/data/entity_types/dev.jsonl [--show]

Prints, per language and in all: gold names found (same normalised key) and typed right
(found with the gold type), and with ``--show`` every gold name that was missed or mistyped.
Each note is read as a note is by consolidation: the user ("Sam") is its speaker.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from memcli.text.entities import extract, normalise


def score(path: Path, show: bool = False) -> dict[str, tuple[int, int, int]]:
    """Language ("en", "zh", "all") -> (gold names, found, typed right)."""
    counts: dict[str, list[int]] = {"en": [0, 0, 0], "zh": [0, 0, 0], "all": [0, 0, 0]}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        language = "zh" if re.search(r"[\u4e00-\u9fff]", row["text"]) else "en"
        mentions = {m.key: m for m in extract(row["text"], speaker="Sam").mentions}
        for name, kind in row["gold"]:
            found = mentions.get(normalise(name))
            for key in (language, "all"):
                counts[key][0] += 1
                counts[key][1] += found is not None
                counts[key][2] += found is not None and found.type == kind
            if show and (found is None or found.type != kind):
                got = "missed" if found is None else found.type
                print(f"  {name!r} {kind} -> {got}   | {row['text']}  {[(m.name, m.type) for m in mentions.values()]}")
    return {k: (v[0], v[1], v[2]) for k, v in counts.items()}


def main() -> None:
    """Score each file given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--show", action="store_true", help="list every gold name missed or mistyped")
    args = parser.parse_args()
    for path in args.files:
        print(path.name)
        for language, (gold, found, right) in score(path, args.show).items():
            print(f"  {language}: {gold} names, {found} found, {right} typed right ({right / max(gold, 1):.0%})")


if __name__ == "__main__":
    main()
