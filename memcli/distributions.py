"""Which version of a Python distribution is installed: read from its metadata
(``importlib.metadata``), no package imported. The one reader of it for the digests that
name an environment (the embedder export's key, the supersession rules' version) and for
``memcli version``."""

from __future__ import annotations


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (its name on PyPI, e.g. "onnxruntime"),
    None when it is not installed."""
    # heavy: importlib.metadata takes 0.3 s to import here (email, zipfile, csv), so only a caller that reads a version pays it
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
