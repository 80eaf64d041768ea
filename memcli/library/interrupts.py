"""Ctrl-C held back while a write must not be cut in half."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) back for the block, then deliver it: a write to the store is
    not cut between Chroma and the recall index by it (a kill still can; the store
    repairs that). Only the main thread gets signals: elsewhere (the service's request
    threads), and where the handler is not Python's, it does nothing."""
    if threading.current_thread() is not threading.main_thread() or not callable(signal.getsignal(signal.SIGINT)):
        yield
        return
    caught: list[Any] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught and callable(previous):
        previous(signal.SIGINT, caught[0])
