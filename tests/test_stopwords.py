"""memcli.text.stopwords: bm25s's stop-word lists, read without the bm25s package (whose
``__init__`` imports scipy.sparse, which nothing on recall's path needs)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memcli.text.stopwords import stopwords


def test_the_lists_are_bm25s_own() -> None:
    import bm25s.stopwords as lists

    assert stopwords("STOPWORDS_EN") == frozenset(lists.STOPWORDS_EN)
    assert stopwords("STOPWORDS_EN", "STOPWORDS_CHINESE") == frozenset(lists.STOPWORDS_EN) | frozenset(
        lists.STOPWORDS_CHINESE
    )
    assert "the" in stopwords("STOPWORDS_EN_PLUS") and "的" in stopwords("STOPWORDS_CHINESE")


def test_a_list_bm25s_does_not_have_is_an_error() -> None:
    with pytest.raises(AttributeError):
        stopwords("STOPWORDS_KLINGON")


def test_reading_a_query_imports_neither_bm25s_nor_scipy() -> None:
    code = (
        "import sys\n"
        "from memcli.recall.retrieval import query_terms\n"
        "from memcli.consolidation.grounding import Grounding\n"
        "assert query_terms('what did I buy at the market') == ['what', 'did', 'buy', 'market']\n"
        "assert Grounding('Caroline went to the market').content_words('She went to the market') == ['went', 'market']\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('bm25s', 'scipy')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
