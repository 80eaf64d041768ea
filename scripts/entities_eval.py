"""Hand-check samples and speed of the offline entity extractor (memcli.text.entities, issue 26).

Reads LoCoMo and MemoryBank from ../shared/data (relative to the repository root) and runs
``memcli.text.entities.extract`` over every turn, as consolidation does: the speaker's name for
I/me/my, the other speaker (or the user, for the assistant's replies) as the addressee, the
session's day, and as ``known`` the speakers and the names the conversation writes
capitalised away from a sentence start, and the words it writes in lower case (``common``).

    python scripts/entities_eval.py dump --conv conv-26            # every entity and relation of a conversation
    python scripts/entities_eval.py entities --seed 26 --n 60      # a seeded sample of entities per language, to judge
    python scripts/entities_eval.py entities --seed 3 --exclude conv-42,Linda    # ... from sources not shown before
    python scripts/entities_eval.py entities --seed 4 --unshown round1.txt      # ... of entities no saved sample showed
    python scripts/entities_eval.py relations --seed 26 --n 40     # a seeded sample of relations, with their source turns
    python scripts/entities_eval.py session --conv conv-42 --session 3          # a session's turns, to list names by hand
    python scripts/entities_eval.py session --conv conv-42 --session 3 --found  # then the persons/places found
    python scripts/entities_eval.py speed --conv conv-26           # turns per second

The development set (conv-26, conv-30 and the first five MemoryBank users of each language)
is never sampled. Entities come from three other LoCoMo conversations and three other users
per language chosen with the seed (more Chinese users until ``--n`` entities); relations,
rarer, from every conversation outside the development set.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memcli.memory import ASSISTANT
from memcli.text.entities import Extraction, KnownNames, common_words, extract, normalise, turn_names

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DEV_LOCOMO = ("conv-26", "conv-30")
DEV_USERS = 5
"""The first five MemoryBank users of each file are the development set."""


@dataclass(frozen=True)
class Turn:
    source: str
    session: str
    speaker: str
    addressee: str
    day: str
    text: str


def locomo(conv: str) -> list[Turn]:
    """The turns of one LoCoMo conversation."""
    data = {c["sample_id"]: c for c in json.loads((DATA / "locomo" / "locomo10.json").read_text())}
    c = data[conv]["conversation"]
    a, b = c["speaker_a"], c["speaker_b"]
    turns: list[Turn] = []
    n = 1
    while f"session_{n}" in c:
        day = datetime.strptime(c[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y").date().isoformat()
        for t in c[f"session_{n}"]:
            turns.append(
                Turn(
                    f"{conv}/{t['dia_id']}", f"{conv}/s{n}", t["speaker"], b if t["speaker"] == a else a, day, t["text"]
                )
            )
        n += 1
    return turns


def memorybank_users(lang: str) -> list[str]:
    return list(json.loads((DATA / "memorybank" / f"memory_bank_{lang}.json").read_text()))


def memorybank(lang: str, user: str) -> list[Turn]:
    """The turns of one MemoryBank user: their queries and the assistant's responses."""
    data = json.loads((DATA / "memorybank" / f"memory_bank_{lang}.json").read_text())[user]
    name = data["name"].strip()
    turns: list[Turn] = []
    for day, pairs in data["history"].items():
        for i, pair in enumerate(pairs):
            source = f"mb-{lang}/{name}/{day}#{i}"
            turns.append(Turn(source + "q", f"mb-{lang}/{name}/{day}", name, ASSISTANT, day, pair["query"]))
            turns.append(Turn(source + "r", f"mb-{lang}/{name}/{day}", ASSISTANT, name, day, pair["response"]))
    return turns


def run(turns: list[Turn]) -> Iterator[tuple[Turn, Extraction]]:
    speakers = {t.speaker for t in turns} - {ASSISTANT}
    known = KnownNames.of(list(speakers) + turn_names(t.text for t in turns))
    common = common_words(t.text for t in turns)
    for t in turns:
        yield t, extract(t.text, speaker=t.speaker, addressee=t.addressee, day=t.day, known=known, common=common)


def test_sources(seed: int, exclude: Collection[str] = ()) -> tuple[list[str], dict[str, list[str]]]:
    """The conversations and users the samples come from, in a seeded order: LoCoMo
    conversations and MemoryBank users outside the development set and ``exclude`` (sources
    an earlier check has shown), the first three of each taken (more users when three do
    not hold enough entities, see ``cmd_entities``)."""
    rng = random.Random(seed)
    convs = [c for c in (f"conv-{n}" for n in (41, 42, 43, 44, 47, 48, 49, 50)) if c not in exclude]
    users = {lang: [u for u in memorybank_users(lang)[DEV_USERS:] if u.strip() not in exclude] for lang in ("en", "cn")}
    return rng.sample(convs, len(convs)), {lang: rng.sample(u, len(u)) for lang, u in users.items()}


def show(text: str, start: int, end: int) -> str:
    return text[:start] + "[[" + text[start:end] + "]]" + text[end:]


def cmd_dump(args: argparse.Namespace) -> None:
    turns = locomo(args.conv) if args.conv.startswith("conv-") else memorybank(args.lang, args.conv)
    for t, x in run(turns):
        if x.mentions or x.relations or x.aliases:
            print(f"{t.source} {t.speaker}: {t.text}")
            print("   ", ", ".join(f"{m.name}/{m.type}" for m in x.mentions))
            for r in x.relations:
                print(f"    REL {r.subject} —{r.relation}→ {r.object} ({r.valid_from})")
            if x.aliases:
                print("    ALIAS", x.aliases)


def cmd_entities(args: argparse.Namespace) -> None:
    convs, users = test_sources(args.seed, args.exclude.split(",") if args.exclude else ())
    sources = {
        "en": [locomo(c) for c in convs[:3]] + [memorybank("en", u) for u in users["en"][:3]],
        "zh": [memorybank("cn", u) for u in users["cn"]],
    }
    if args.unshown:
        # every source outside the development set, less the entities earlier samples showed
        sources = {"en": [locomo(c) for c in convs] + [memorybank("en", u) for u in users["en"]], "zh": sources["zh"]}
    shown = shown_entities(args.unshown.split(",")) if args.unshown else set()
    if args.unshown:
        print(f"# seed {args.seed}: every source outside the development set, less the entities of {args.unshown}")
    else:
        print(
            f"# seed {args.seed}: LoCoMo {', '.join(convs[:3])}; MemoryBank en {[u.strip() for u in users['en'][:3]]}"
        )
    for lang, groups in sources.items():
        # an entity is one name in one conversation (a LoCoMo conversation, a MemoryBank user)
        pool: dict[tuple[str, str], tuple[Turn, int, int, str]] = {}
        taken = 0
        for turns in groups:
            if lang == "zh" and taken >= 3 and len(pool) >= args.n and not args.unshown:
                break  # three Chinese users hold about 40 entities: more users until n
            taken += 1
            for t, x in run(turns):
                for m in x.mentions:
                    if (_conversation(t.source), m.key) in shown:
                        continue
                    pool.setdefault((_conversation(t.source), m.key), (t, m.start, m.end, m.type))
        keys = sorted(pool)
        chosen = random.Random(args.seed).sample(keys, min(args.n, len(keys)))
        if lang == "zh" and not args.unshown:
            print(f"# MemoryBank cn {[u.strip() for u in users['cn'][:taken]]}")
        print(f"\n## {lang}: {len(keys)} distinct entities, {len(chosen)} drawn")
        for i, key in enumerate(chosen, 1):
            t, start, end, kind = pool[key]
            print(f"{i:2d}. {t.text[start:end]} / {kind}    [{t.source} {t.speaker}] {show(t.text, start, end)}")


def _conversation(source: str) -> str:
    """The conversation of a turn's source: "conv-42/D3:1" -> "conv-42", "mb-en/Linda/2023-05-01#2q" -> "mb-en/Linda"."""
    return "/".join(source.split("/")[:2]) if source.startswith("mb-") else source.split("/")[0]


def shown_entities(files: list[str]) -> set[tuple[str, str]]:
    """(conversation, key) of the entities that earlier samples (``entities`` output saved to
    ``files``) showed."""
    shown: set[tuple[str, str]] = set()
    for file in files:
        for line in Path(file).read_text().splitlines():
            if m := re.match(r"\s*\d+\. (.+?) / \w+\s+\[(\S+) ", line):
                shown.add((_conversation(m.group(2)), normalise(m.group(1))))
    return shown


def cmd_relations(args: argparse.Namespace) -> None:
    # Relations with a named object are rare (about one in a hundred turns), so they are drawn
    # from every conversation and user outside the development set.
    groups = [locomo(f"conv-{n}") for n in (41, 42, 43, 44, 47, 48, 49, 50)]
    groups += [memorybank(lang, u) for lang in ("en", "cn") for u in memorybank_users(lang)[DEV_USERS:]]
    print(f"# seed {args.seed}: LoCoMo conv-41..50 but 26 and 30; MemoryBank users 6-15 of each language")
    pool: list[tuple[Turn, object]] = []
    for turns in groups:
        for t, x in run(turns):
            pool.extend((t, r) for r in x.relations)
    chosen = random.Random(args.seed).sample(range(len(pool)), min(args.n, len(pool)))
    print(f"{len(pool)} relations, {len(chosen)} drawn")
    for i, index in enumerate(sorted(chosen), 1):
        t, r = pool[index]
        print(f"{i:2d}. {r.subject} —{r.relation}→ {r.object} ({r.valid_from})    [{t.source} {t.speaker}] {t.text}")  # type: ignore[attr-defined]


def cmd_session(args: argparse.Namespace) -> None:
    if args.conv.startswith("conv-"):
        all_turns = locomo(args.conv)
        turns_of = [t for t in all_turns if t.session == f"{args.conv}/s{args.session}"]
    else:
        all_turns = memorybank(args.lang, args.conv)
        days = sorted({t.day for t in all_turns})
        turns_of = [t for t in all_turns if t.day == days[int(args.session) - 1]]
    if not args.found:
        for t in turns_of:
            print(f"{t.source} {t.speaker}: {t.text}")
        return
    found: dict[str, str] = {}
    wanted = set(turns_of)
    for t, x in run(all_turns):
        if t in wanted:
            for m in x.mentions:
                if m.type in ("person", "place"):
                    found.setdefault(m.name, m.type)
    for name, kind in found.items():
        print(f"{name}\t{kind}")


def cmd_speed(args: argparse.Namespace) -> None:
    turns = locomo(args.conv)
    extract("我住在北京。", speaker="x")  # jieba loads once, before the clock starts
    began = time.perf_counter()
    n = sum(1 for _ in run(turns))
    seconds = time.perf_counter() - began
    print(
        f"{args.conv}: {n} turns in {seconds:.2f} s = {n / seconds:.0f} turns/s (known names gathered once, included)"
    )
    zh = [t for u in memorybank_users("cn")[:3] for t in memorybank("cn", u)]
    began = time.perf_counter()
    n = sum(1 for _ in run(zh))
    seconds = time.perf_counter() - began
    print(f"MemoryBank cn (3 users): {n} turns in {seconds:.2f} s = {n / seconds:.0f} turns/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("dump")
    p.add_argument("--conv", required=True, help="conv-N, or a MemoryBank user name with --lang")
    p.add_argument("--lang", default="en", choices=["en", "cn"])
    p.set_defaults(func=cmd_dump)
    for name, func, n in (("entities", cmd_entities, 60), ("relations", cmd_relations, 40)):
        p = sub.add_parser(name)
        p.add_argument("--seed", type=int, required=True)
        p.add_argument("--n", type=int, default=n)
        if name == "entities":
            p.add_argument(
                "--exclude", default="", help="comma-separated conversations and users an earlier check has shown"
            )
            p.add_argument(
                "--unshown",
                default="",
                help="comma-separated files of earlier samples: draw from every source but their entities",
            )
        p.set_defaults(func=func)
    p = sub.add_parser("session")
    p.add_argument("--conv", required=True)
    p.add_argument("--lang", default="en", choices=["en", "cn"])
    p.add_argument("--session", required=True, help="LoCoMo session number, or the MemoryBank day's number (1..10)")
    p.add_argument(
        "--found", action="store_true", help="print the persons and places the extractor finds instead of the turns"
    )
    p.set_defaults(func=cmd_session)
    p = sub.add_parser("speed")
    p.add_argument("--conv", default="conv-26")
    p.set_defaults(func=cmd_speed)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
