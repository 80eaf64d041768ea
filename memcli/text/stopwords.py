"""Stop-word lists: bm25s's, read without importing the bm25s package.

memcli takes its stop words from bm25s (``bm25s.stopwords``: English, English with more
function words, Chinese...) and nothing else from it. Importing ``bm25s.stopwords`` runs
the package's ``__init__`` first, which imports numpy and scipy.sparse for bm25s's own
retrieval: about 0.3 CPU-s (1.8 s on a busy 2-core machine) on the path of a cold
``memcli ask``, for a module of plain lists. ``stopwords`` runs that module's file alone
(it imports nothing); where the installed bm25s has no such file, it imports the module
the ordinary way.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType


@cache
def _module() -> ModuleType:
    """bm25s's ``stopwords`` module, run from its file without the package's ``__init__``."""
    package = importlib.util.find_spec("bm25s")  # finds it without importing it
    for folder in (package.submodule_search_locations or []) if package is not None else []:
        path = Path(folder) / "stopwords.py"
        spec = importlib.util.spec_from_file_location("memcli.text._bm25s_stopwords", path)
        if path.is_file() and spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    # heavy: a bm25s laid out otherwise; the package's __init__ imports scipy
    import bm25s.stopwords

    return bm25s.stopwords


@cache
def stopwords(*names: str) -> frozenset[str]:
    """The union of bm25s's stop-word lists ``names`` (attributes of ``bm25s.stopwords``:
    ``"STOPWORDS_EN"``, 33 English function words; ``"STOPWORDS_EN_PLUS"``, a longer
    English list; ``"STOPWORDS_CHINESE"``, 841 Chinese function words, pronouns and
    question words), lower-case as bm25s gives them. Read once a process. Raises
    AttributeError for a name bm25s does not have, ImportError when bm25s is not installed."""
    module = _module()
    return frozenset(word for name in names for word in getattr(module, name))
