#!/usr/bin/env python3
"""Whether supersession at write time (issue 31, the rules path) marks what it should, and
only that, on the life-change scenarios of ``tests/data/changes/*.jsonl``: the answer left
out, so that the rules are measured apart from what ``ask`` makes of them.

Run it from the environment memcli is installed in::

    python scripts/supersession_eval.py                       # every set
    python scripts/supersession_eval.py tests/data/changes/heldout7.jsonl --details

Each scenario's notes are remembered at their dates (``Engine.remember``, as ``eval
changes`` does, each scenario its own user, ``consolidation = extractive`` so that the
rules decide) in a temporary home. Then, per scenario type:

- *changes*: in a scenario of a change (dose, residence, job, diet, membership,
  relationship, habit_stopped, negation, paraphrase with a ``superseded`` value, and past),
  the notes holding the old value and not the new one: for a question about the present
  those holding ``superseded`` and no gold word; for ``past`` (where ``superseded`` is the
  newer value) those holding a gold word and not ``superseded``. A change is *read* when
  every such note is superseded, *missed* otherwise.
- *false*: memories superseded where nothing should be (additive, list, dated, date,
  abstain and question_not_evidence scenarios without a change), plus, in any scenario,
  a memory superseded by a note that asks (``memcli.text.updates.asks``) or a note holding
  the new value superseded by one holding the old.

Prints a table (or ``--json``); ``--details`` lists every miss and false supersession.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SETS = sorted((ROOT / "tests" / "data" / "changes").glob("*.jsonl"))
CHANGE_TYPES = frozenset(
    "dose residence job diet membership relationship habit_stopped negation paraphrase past".split()
)
NO_CHANGE_TYPES = frozenset("additive list dated date abstain question_not_evidence question".split())


def _holds(text: str, words: list[str]) -> bool:
    low = text.casefold()
    return any(w.casefold() in low for w in words if w)


def measure(paths: list[Path]) -> tuple[dict[str, dict[str, int]], list[dict[str, Any]]]:
    """Per type: scenarios, changes, read, missed, false supersessions; and the rows of the
    misses and false supersessions."""
    from memcli.config import Settings, home_paths
    from memcli.library.engine import Engine
    from memcli.library.evaluation import read_changes
    from memcli.text.updates import asks

    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    rows: list[dict[str, Any]] = []
    moment = [0.0]
    with tempfile.TemporaryDirectory(prefix="memcli-supersession-") as home:
        engine = Engine(
            Settings(service="off", consolidation="extractive"), home_paths(Path(home)), clock=lambda: moment[0]
        )
        try:
            for path in paths:
                print(f"{path.name} ...", file=sys.stderr, flush=True)
                for change in read_changes(path):
                    user = f"{path.stem}-{change.id}"
                    ids: list[str] = []
                    for text, learned in sorted(change.notes, key=lambda n: n[1]):
                        moment[0] = learned
                        ids.append(engine.remember(text, user)[0].id)
                    notes = {m.id: m for m in engine.store.get_many(ids)}
                    stored = [notes[i] for i in ids if i in notes]
                    kind = change.type
                    row = table[kind]
                    row["scenarios"] += 1
                    old_new: tuple[list[str], list[str]] | None = None
                    if kind in CHANGE_TYPES and change.superseded and change.gold:
                        if kind == "past":
                            old_new = (list(change.gold), [change.superseded])
                        else:
                            old_new = ([change.superseded], list(change.gold))
                    by_id = {m.id: m for m in stored}
                    falses = []
                    for m in stored:
                        if not m.superseded_by:
                            continue
                        newer = by_id.get(m.superseded_by)
                        newer_text = newer.text if newer else "?"
                        why = ""
                        if kind in NO_CHANGE_TYPES and not (old_new and _holds(m.text, old_new[0])):
                            why = "no change in this scenario"
                        elif newer is not None and asks(newer.text):
                            why = "superseded by a question"
                        elif old_new and _holds(m.text, old_new[1]) and not _holds(m.text, old_new[0]):
                            why = "the new value superseded"
                        if why:
                            falses.append({"old": m.text, "new": newer_text, "why": why})
                    row["false"] += len(falses)
                    for f in falses:
                        rows.append({"set": path.stem, "id": change.id, "type": kind, "result": "false", **f})
                    if old_new is None:
                        continue
                    olds = [m for m in stored if _holds(m.text, old_new[0]) and not _holds(m.text, old_new[1])]
                    if not olds:
                        row["unmeasurable"] += 1
                        continue
                    row["changes"] += 1
                    if all(m.superseded_by for m in olds):
                        row["read"] += 1
                    else:
                        row["missed"] += 1
                        rows.append(
                            {
                                "set": path.stem,
                                "id": change.id,
                                "type": kind,
                                "result": "missed",
                                "notes": [(m.text, bool(m.superseded_by)) for m in stored],
                            }
                        )
        finally:
            engine.store.discard()
    return {k: dict(v) for k, v in table.items()}, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="scenario files (default: every set)")
    parser.add_argument("--json", action="store_true", help="the table and rows as JSON")
    parser.add_argument("--details", action="store_true", help="list each miss and false supersession")
    args = parser.parse_args()
    paths = args.paths or SETS
    table, rows = measure(paths)
    if args.json:
        json.dump({"per_type": table, "rows": rows if args.details else []}, sys.stdout, ensure_ascii=False, indent=1)
        print()
        return 0
    print(f"{'type':22} {'scen':>5} {'changes':>8} {'read':>5} {'missed':>7} {'false':>6}")
    total: dict[str, int] = defaultdict(int)
    for kind in sorted(table):
        row = table[kind]
        for k, v in row.items():
            total[k] += v
        print(
            f"{kind:22} {row.get('scenarios', 0):5} {row.get('changes', 0):8} {row.get('read', 0):5}"
            f" {row.get('missed', 0):7} {row.get('false', 0):6}"
        )
    print(
        f"{'all':22} {total['scenarios']:5} {total['changes']:8} {total['read']:5} {total['missed']:7} {total['false']:6}"
    )
    if args.details:
        for r in rows:
            if r["result"] == "missed":
                print(f"\nMISSED {r['set']} {r['id']} ({r['type']})")
                for text, sup in r["notes"]:
                    print(f"  {'[S]' if sup else '   '} {text}")
            else:
                print(f"\nFALSE {r['set']} {r['id']} ({r['type']}; {r['why']})\n  old: {r['old']}\n  new: {r['new']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
