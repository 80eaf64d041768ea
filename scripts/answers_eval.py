#!/usr/bin/env python3
"""How often ``memcli ask`` answers right on the default install: extractive answers
against the base model's own (``answers = extractive`` vs ``answers = llm``).

Run it from the environment memcli is installed in::

    python scripts/answers_eval.py                      # English and Chinese, every probe
    python scripts/answers_eval.py --lang en --dev      # the users not held out only
    python scripts/answers_eval.py --json > answers.json

For each language, the MemoryBank history (``../shared/data/memorybank/``) is imported into
a temporary memcli home with the default settings (the packaged embedder, the embedded
Gemma 3 270M base model) but ``max_tokens`` 64, and the home is copied, one copy a mode;
each probe of ``tests/data/answers/probes_<lang>.jsonl`` is asked through the library
(``Memcli.ask``, as ``memcli ask`` in-process) in each copy, on a clock that starts on
2023-05-07 20:00 (the evening after the last dialogue) and moves on by 3,700 s an ask, so
that no recall is penalised as one moments ago.

An answer is right when it holds each of the probe's ``gold`` words (case-insensitive; an
entry ``a|b`` is right with either); the gold words were written with the probes, before
any run. An error (the base model's empty reply, exit 3 for ``memcli ask``) is a wrong
answer. Reported per language, per question type, for the users held out (``holdout``:
never run while the extractive scorer was written) apart, with the p50 and p95 time of an
ask (the models loaded, the process warm).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HISTORY = {
    "en": ROOT.parent / "shared" / "data" / "memorybank" / "memory_bank_en.json",
    "zh": ROOT.parent / "shared" / "data" / "memorybank" / "memory_bank_cn.json",
}
PROBES = {lang: ROOT / "tests" / "data" / "answers" / f"probes_{lang}.jsonl" for lang in HISTORY}
START = datetime(2023, 5, 7, 20, 0).timestamp()
STEP = 3700.0
MODES = ("extractive", "llm")


def right(answer: str, gold: list[str]) -> bool:
    """Whether ``answer`` holds every gold entry (an entry ``a|b``: either)."""
    text = answer.lower()
    return all(any(option.lower() in text for option in entry.split("|")) for entry in gold)


def run_language(
    lang: str, dev_only: bool, log: Any, cache: Path | None = None, modes: tuple[str, ...] = MODES
) -> list[dict[str, Any]]:
    """Every probe of ``lang`` asked in each mode: one row a probe and mode."""
    from memcli.config import Settings, home_paths
    from memcli.errors import MemcliError
    from memcli.library.engine import Engine
    from memcli.library.library import Memcli

    probes = [json.loads(line) for line in PROBES[lang].read_text(encoding="utf-8").splitlines() if line.strip()]
    if dev_only:
        probes = [p for p in probes if not p["holdout"]]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="memcli-answers-") as tmp:
        base = cache / lang if cache else Path(tmp) / "import"
        settings = Settings(max_tokens=64, service="off")
        engine = Engine(settings, home_paths(base), clock=lambda: START)
        if not (cache and (base / "done").exists()):
            started = time.perf_counter()
            report = engine.import_file(HISTORY[lang], "memorybank")
            print(f"{lang}: imported {report.added} memories in {time.perf_counter() - started:.0f} s", file=log)
            (base / "done").touch()
        engine.store.close()
        embedder, chat_model = engine.embedder, engine.chat_model
        for mode in modes:
            home = Path(tmp) / mode
            shutil.copytree(base, home, ignore=shutil.ignore_patterns("done"))
            asked = [0]
            mode_settings = settings.model_copy(update={"answers": mode})
            library = Memcli(
                Engine(
                    mode_settings,
                    home_paths(home),
                    clock=lambda asked=asked: START + STEP * asked[0],
                    embedder=embedder,
                    chat_model=chat_model,
                )
            )
            for n, probe in enumerate(probes):
                asked[0] = n
                t0 = time.perf_counter()
                try:
                    text = library.ask(probe["question"], probe["user"]).answer
                except MemcliError as exc:  # the base model's empty reply: exit 3 for memcli ask, no answer here
                    text = f"(error: {exc})"
                seconds = time.perf_counter() - t0
                row = {
                    "lang": lang,
                    "mode": mode,
                    "user": probe["user"],
                    "type": probe["type"],
                    "holdout": probe["holdout"],
                    "question": probe["question"],
                    "gold": probe["gold"],
                    "answer": text,
                    "right": not text.startswith("(error") and right(text, probe["gold"]),
                    "seconds": round(seconds, 3),
                }
                rows.append(row)
                print(
                    f"{lang} {mode:10} {'OK ' if row['right'] else 'no '} {seconds:5.2f}s {probe['question']} -> "
                    f"{text[:160]!r}",
                    file=log,
                )
            library.engine.store.close()
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Share right per language, mode, set (dev / held out / all) and question type; p50/p95 seconds."""
    out: dict[str, Any] = {}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["lang"], row["mode"])].append(row)
    for (lang, mode), mine in sorted(groups.items()):
        entry: dict[str, Any] = {}
        for name, subset in (
            ("all", mine),
            ("dev", [r for r in mine if not r["holdout"]]),
            ("holdout", [r for r in mine if r["holdout"]]),
        ):
            if not subset:
                continue
            by_type: dict[str, list[bool]] = defaultdict(list)
            for r in subset:
                by_type[r["type"]].append(r["right"])
            entry[name] = {
                "right": f"{sum(r['right'] for r in subset)}/{len(subset)}",
                "per_type": {t: f"{sum(v)}/{len(v)}" for t, v in sorted(by_type.items())},
            }
        times = sorted(r["seconds"] for r in mine)
        entry["p50_seconds"] = round(statistics.median(times), 3)
        entry["p95_seconds"] = round(times[min(len(times) - 1, int(0.95 * len(times)))], 3)
        out[f"{lang} {mode}"] = entry
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lang", choices=["en", "zh", "both"], default="both")
    parser.add_argument("--dev", action="store_true", help="only the users not held out")
    parser.add_argument("--json", action="store_true", help="the rows and the summary as one JSON object")
    parser.add_argument("--mode", choices=[*MODES, "both"], default="both", help="the answers setting(s) to measure")
    parser.add_argument("--cache", type=Path, help="keep each language's imported home here and reuse it")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for lang in ("en", "zh") if args.lang == "both" else (args.lang,):
        rows += run_language(lang, args.dev, sys.stderr, args.cache, MODES if args.mode == "both" else (args.mode,))
    result = summary(rows)
    if args.json:
        print(json.dumps({"summary": result, "rows": rows}, ensure_ascii=False, indent=1))
    else:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
