"""Compare ways of cutting Chinese text into lexical terms: recall and index size.

    python scripts/cjk_tokenizers.py [--history memory_bank_cn.json] [--probes tests/data/memorybank/probes_zh.jsonl]

For each segmenter, every CJK run of memories and queries is cut by it (``memcli.text.lexical.
segment`` replaced for the run), the MemoryBank history is imported into a temporary store
and the probes are recalled (``memcli eval memorybank``); prints hit@1/hit@5 and the size of
the lexical index over the whole history (distinct terms, postings = nonzero (document,
term, field) counts). Segmenters:

- ``jieba-search`` (memcli's): jieba's search mode, the words and the shorter words inside long ones;
- ``jieba``: jieba's precise mode, one cut;
- ``bigram``: every two adjacent characters (and a character alone), as Lucene's CJKAnalyzer;
- ``trigram``: every three adjacent characters (shorter runs whole), as SQLite FTS5's
  ``trigram`` tokenizer indexes text (FTS5 matches a query of fewer than three characters by
  scanning, which an index of terms cannot; here such a query word matches only a run of its
  length).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memcli import lexical  # noqa: E402


def grams(n: int):
    """A segmenter giving every ``n`` adjacent characters of a run (a shorter run whole)."""

    def cut(run: str) -> list[str]:
        if len(run) <= n:
            return [run]
        return [run[i : i + n] for i in range(len(run) - n + 1)]

    return cut


def jieba_precise(run: str) -> list[str]:
    """jieba's precise mode: one cut, no shorter words inside long ones."""
    import jieba

    return [w for w in jieba.lcut(run) if w.strip()]


SEGMENTERS = {"jieba-search": lexical.segment, "jieba": jieba_precise, "bigram": grams(2), "trigram": grams(3)}


def index_size(history: Path) -> tuple[int, int]:
    """(distinct terms, postings) of the lexical index of every memory of ``history``."""
    from memcli.formats.importers import parse_memorybank, read_text

    memories = parse_memorybank(history, read_text(history))
    index = lexical.LexicalIndex()
    index.put(list(range(len(memories))), [(m.index_text(), "", m.day) for m in memories])
    index._merge()
    return len(index._vocab), int(index._base.nnz)


def main() -> None:
    """Run each segmenter over the probes and print its recall and index size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--history", type=Path, default=ROOT.parent / "shared" / "data" / "memorybank" / "memory_bank_cn.json"
    )
    parser.add_argument("--probes", type=Path, default=ROOT / "tests" / "data" / "memorybank" / "probes_zh.jsonl")
    parser.add_argument("--json", action="store_true", help="one JSON object per segmenter")
    args = parser.parse_args()

    from memcli.config import Settings
    from memcli.library.engine import make_embedder
    from memcli.library.evaluation import eval_memorybank

    settings = Settings()
    embedder = make_embedder(settings)
    original = lexical.segment
    for name, cut in SEGMENTERS.items():
        lexical.segment = cut
        try:
            report = eval_memorybank(args.history, args.probes, settings, embedder)
            terms, postings = index_size(args.history)
        finally:
            lexical.segment = original
        row = {
            "segmenter": name,
            "hit@1": report.overall["hit@1"],
            "hit@5": report.overall["hit@5"],
            "terms": terms,
            "postings": postings,
        }
        print(
            json.dumps(row)
            if args.json
            else f"{name:<14} hit@1 {row['hit@1']:.3f}  hit@5 {row['hit@5']:.3f}  terms {terms:>7,}  postings {postings:>8,}",
            flush=True,
        )


if __name__ == "__main__":
    main()
