"""Lexical recall in memory (``memcli.text.lexical``): BM25 as SQLite FTS5's ``bm25()`` scores
the same documents (FTS5 is the reference implementation here), tokens, and postings
kept current through writes, drops, merges and compactions."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.text import lexical
from memcli.text.lexical import LexicalIndex, tokens

# Words whose stems PyStemmer's porter and FTS5's porter agree on (they differ on a few
# suffixes such as "-logy"), so that FTS5 can serve as the reference.
WORDS = (
    "puppy rex adopted painting painted paints lake zeppelin birthday pottery class classes camping "
    "mountain running runs sister brother 2023 may june march caroline melanie support group dog cat "
    "the a of and"
).split()

text = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
document = st.tuples(
    text, st.lists(text, max_size=3).map("\n".join), st.sampled_from(["8 May 2023", "1 June 2023", ""])
)
weights = st.tuples(*(st.floats(0.0, 3.0, allow_nan=False) for _ in range(3)))


def fts5_scores(documents: list[tuple[str, str, str]], query: list[str], w: tuple[float, float, float]) -> np.ndarray:
    """-bm25() of each document for the OR of ``query``'s terms, 0 where none matches."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5 (own, ctx, day, tokenize = 'porter unicode61')")
    db.executemany(
        "INSERT INTO t (rowid, own, ctx, day) VALUES (?, ?, ?, ?)", [(i, *d) for i, d in enumerate(documents)]
    )
    out = np.zeros(len(documents))
    match = " OR ".join(f'"{t}"' for t in query)
    for rowid, score in db.execute(f"SELECT rowid, bm25(t, {w[0]}, {w[1]}, {w[2]}) FROM t WHERE t MATCH ?", (match,)):
        out[rowid] = -score
    return out


def fresh(documents: list[tuple[str, str, str]]) -> LexicalIndex:
    index = LexicalIndex()
    index.put(list(range(len(documents))), documents)
    return index


def stems(words: list[str]) -> list[str]:
    return [s for w in words for s in tokens(w)]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(document, min_size=1, max_size=25),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
    weights,
)
def test_bm25_scores_as_fts5_does(
    documents: list[tuple[str, str, str]], query: list[str], w: tuple[float, float, float]
) -> None:
    query = list({tokens(word)[0]: word for word in query}.values())  # one word a stem, as query_stems gives
    got = fresh(documents).scores(stems(query), w, len(documents))
    np.testing.assert_allclose(got, fts5_scores(documents, query, w), rtol=1e-5, atol=1e-7)


def test_tokens_are_lower_case_stems_with_diacritics_folded() -> None:
    assert tokens("Painting, PAINTED and paints!") == ["paint", "paint", "and", "paint"]
    assert tokens("Café crème, naïve") == tokens("cafe creme, naive")
    assert tokens("snake_case don't 3rd-floor") == ["snake", "case", "don", "t", "3rd", "floor"]


def test_chinese_text_is_cut_into_words_and_the_shorter_words_inside_long_ones() -> None:
    assert tokens("我很喜欢弹钢琴") == ["我", "很", "喜欢", "钢琴", "弹钢琴"]
    assert "钢琴" in tokens("我的钢琴课") and "钢琴" in tokens("弹钢琴")  # the word meets the longer one


def test_mixed_text_keeps_english_stems_and_chinese_words() -> None:
    got = tokens("I like painting油画 and 钢琴 lessons")
    assert got[:3] == ["i", "like", "paint"] and "油画" in got and "lesson" in got and "钢琴" in got
    assert tokens("Painting, PAINTED") == ["paint", "paint"]  # English alone is untouched by the segmenter


def test_a_chinese_query_word_finds_the_memory_that_holds_it() -> None:
    documents = [("我很喜欢弹钢琴", "", ""), ("今天我去公园散步了", "", ""), ("你可以读一本关于绘画的书", "", "")]
    index = fresh(documents)
    assert index.scores(["钢琴"], (1.5, 1.0, 1.0), 3).argmax() == 0
    assert index.scores(["公园", "散步"], (1.5, 1.0, 1.0), 3).argmax() == 1
    assert index.scores(tokens("绘画的书"), (1.5, 1.0, 1.0), 3).argmax() == 2
    assert index.scores(["钢"], (1.5, 1.0, 1.0), 3).max() == 0  # a character alone is not a word of these


def test_chinese_query_stems_drop_function_words_but_keep_one_character_words() -> None:
    from memcli.recall.retrieval import query_stems

    stems = query_stems("你给我推荐过哪些书？")
    assert "推荐" in stems and "书" in stems
    assert not {"你", "我", "哪些", "过"} & set(stems)


@pytest.mark.parametrize("merge_at", [1, 4, 10_000])
def test_writes_drops_and_compaction_score_as_a_fresh_index(monkeypatch: pytest.MonkeyPatch, merge_at: int) -> None:
    """Whatever path the postings took (the delta, merges into the matrix, stale rows, a
    compaction), the scores are those of an index built at once from what is left."""
    monkeypatch.setattr(lexical, "MERGE_AT", merge_at)
    rng = np.random.default_rng(7)

    def random_document() -> tuple[str, str, str]:
        words = lambda n: " ".join(rng.choice(WORDS, n))  # noqa: E731
        return words(rng.integers(1, 8)), f"{words(rng.integers(0, 6))}\n{words(rng.integers(0, 6))}", "8 May 2023"

    index = LexicalIndex()
    first = [random_document() for _ in range(20)]
    index.put(list(range(20)), first)
    held: dict[int, tuple[str, str, str]] = dict(enumerate(first))
    next_slot = 20
    for step in range(120):
        action = rng.integers(0, 3)
        if action == 0 or not held:  # a new document
            doc = random_document()
            index.put([next_slot], [doc])
            held[next_slot] = doc
            next_slot += 1
        elif action == 1:  # a document written again
            slot = int(rng.choice(list(held)))
            held[slot] = random_document()
            index.put([slot], [held[slot]])
        else:
            slot = int(rng.choice(list(held)))
            index.drop(slot)
            del held[slot]
        if step % 40 == 39:  # compaction renumbers the slots alive in order
            keep = np.array(sorted(held))
            index.compact(keep)
            held = {i: held[int(old)] for i, old in enumerate(keep)}
            next_slot = len(keep)
    n = next_slot
    for query in (["puppy"], ["painting", "lake"], ["may", "2023"], ["the", "zeppelin", "sister"]):
        got = index.scores(stems(query), (1.5, 1.0, 1.0), n)
        expected = np.zeros(n)
        alive = sorted(held)
        reference = fresh([held[s] for s in alive]).scores(stems(query), (1.5, 1.0, 1.0), len(alive))
        expected[alive] = reference
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
    assert len(index) == len(held)


def test_a_term_in_half_the_documents_or_more_weighs_almost_nothing() -> None:
    """FTS5 floors such a term's IDF at 1e-6: it adds next to nothing, but still tells its
    documents from the others when nothing else matches."""
    documents = [("dog", "", ""), ("dog cat", "", ""), ("cat", "", ""), ("dog", "", "")]
    scores = fresh(documents).scores(["dog"], (1.0, 1.0, 1.0), 4)
    assert scores[2] == 0 and 0 < scores[0] < 1e-5


def test_a_merge_keeps_the_postings_in_their_own_types_and_widens_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folding writes and drops into the postings copies them in int32 slots and uint16
    counts: its peak memory stays within a few times the postings' own size (a million
    memories hold about a hundred million postings; widened to int64 and float64 they
    took several GB), and the result scores as a fresh index."""
    import tracemalloc

    monkeypatch.setattr(lexical, "MERGE_AT", 10**9)  # merged only when asked below
    rng = np.random.default_rng(3)

    def random_document() -> tuple[str, str, str]:
        words = lambda n: " ".join(rng.choice(WORDS, n))  # noqa: E731
        return words(8), f"{words(8)}\n{words(8)}", "8 May 2023"

    held = {slot: random_document() for slot in range(12_000)}
    index = LexicalIndex()
    index.put(list(held), list(held.values()))
    for slot in range(0, 12_000, 12):  # written again: the old postings go stale
        held[slot] = random_document()
        index.put([slot], [held[slot]])
    for slot in range(12_000, 12_500):  # the delta: an eighth of the documents, as before a merge
        held[slot] = random_document()
        index.put([slot], [held[slot]])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        arrays, _, _ = index.state()  # merges first
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert arrays["indices"].dtype == np.int32 and arrays["counts"].dtype == np.uint16
    postings = arrays["indices"].nbytes + arrays["counts"].nbytes
    assert peak < 4 * postings, (peak, postings)
    query = stems(["puppy", "lake", "sister"])
    expected = fresh([held[s] for s in sorted(held)]).scores(query, (1.5, 1.0, 1.0), len(held))
    np.testing.assert_allclose(index.scores(query, (1.5, 1.0, 1.0), len(held)), expected, rtol=1e-6, atol=1e-9)


def test_scores_follow_lengths_that_change_while_their_total_stays() -> None:
    """Two documents written again with each other's length (the total and the count the
    same): the length normalisation a query worked out before is not reused."""
    short, long = ("puppy lake", "", ""), ("puppy lake sister brother camping mountain", "", "")
    index = fresh([short, long, ("dog cat", "", "")])
    query = stems(["puppy"])
    index.scores(query, (1.5, 1.0, 1.0), 3)
    index.put([0, 1], [long, short])
    expected = fresh([long, short, ("dog cat", "", "")]).scores(query, (1.5, 1.0, 1.0), 3)
    np.testing.assert_allclose(index.scores(query, (1.5, 1.0, 1.0), 3), expected, rtol=1e-9)


def test_a_query_scores_the_same_after_other_queries() -> None:
    """The buffers kept between queries (field sums, slots seen, scratch) leave nothing
    behind: a query scores the same on a fresh index, after other queries and again, with
    documents in the delta and stale rows in the postings."""
    rng = np.random.default_rng(3)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS, n))

    documents = [(words(5), f"{words(4)}\n{words(3)}", "8 May 2023") for _ in range(60)]
    queries = [["puppy", "lake"], ["may", "painting", "sister"], ["zeppelin"], ["2023", "runs"]]
    index = fresh(documents)
    index.put(list(range(0, 50, 2)), documents[:25])  # rewritten: stale in the postings, new in the delta
    written = list(documents)
    written[0:50:2] = documents[:25]
    first = [fresh(written).scores(stems(q), (1.5, 1.0, 1.0), 60) for q in queries]
    for _ in range(2):
        for query, expected in zip(queries, first):
            np.testing.assert_allclose(index.scores(stems(query), (1.5, 1.0, 1.0), 60), expected, rtol=1e-6)
