"""What a service just started imports for a verb that embeds nothing and reads no text
(``list``, ``show``, ``stats``): not the models, not Chroma (a store its last service closed
opens without it, ``memcli.store.store_open``), not the evaluation, and not the modules
that read what texts say, whose hundreds of patterns compile at import (a CPU-second of a
cold ``memcli list`` on 2 cores). They load when a verb needs them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cli_checks import ok
from typer.testing import CliRunner

from memcli.cli import app
from memcli.config import resolve_paths
from memcli.store.store import MemoryStore

pytestmark = pytest.mark.usefixtures("fake_embedder")

NOT_FOR_A_LISTING = (
    "chromadb",
    "sentence_transformers",
    "torch",
    "onnxruntime",
    "llama_cpp",
    "memcli.library.evaluation",
    "memcli.library.chat",
    "memcli.recall.answers",
    "memcli.recall.retrieval",
    "memcli.recall.changes",
    "memcli.text.updates",
    "memcli.text.entities",
    "memcli.text.extractive",
)
"""Modules a service's start and its ``list``, ``show`` and ``stats`` requests leave unimported."""

SERVICE_REQUESTS = """
import json, sys
from memcli.config import load_settings, resolve_paths
from memcli.library import api, verbs
from memcli.library.library import Memcli
from memcli.transport.service import Service

requests, watched = json.loads(sys.argv[1]), json.loads(sys.argv[2])
paths = resolve_paths()
service = Service(paths, load_settings(paths))
service.resources.store.open_resident()
try:
    for verb, args in requests:
        request = {"verb": verb, "args": args, "env": {}, "now": None}
        verbs.dump(api.run(Memcli(service.resources.engine(request)), verb, args))
finally:
    service.resources.store.close()
print(json.dumps(sorted(name for name in watched if name in sys.modules)))
"""


def test_a_service_answers_list_show_and_stats_without_models_chroma_or_text_reading(runner: CliRunner) -> None:
    ok(runner.invoke(app, ["remember", "I moved to York in May"]))
    ok(runner.invoke(app, ["remember", "My sister Ana takes pottery classes"]))
    listed = runner.invoke(app, ["list", "--json"])
    first_id = json.loads(listed.stdout)[0]["id"]
    store = MemoryStore(resolve_paths())
    store.open_resident()
    store.close()  # as a service's stop: the next opening reads without Chroma

    requests = [["list", {}], ["show", {"id": first_id}], ["stats", {}]]
    assert _imported(requests, NOT_FOR_A_LISTING) == []
    # a list of a user with no memories (a mistyped -u) asks Chroma whether it holds any of
    # theirs, but neither makes the statements tables nor reads a text
    not_for_a_stranger = [name for name in NOT_FOR_A_LISTING if name.startswith("memcli.")]
    assert _imported([["list", {"user": "nobody"}]], not_for_a_stranger) == []


def _imported(requests: list, watched: tuple[str, ...] | list[str]) -> list[str]:
    """The modules of ``watched`` that a service just started has imported once it has
    answered ``requests`` (``[verb, args]`` each), in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", SERVICE_REQUESTS, json.dumps(requests), json.dumps(list(watched))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


WARM_UP_BESIDE_A_LIST = """
import functools, json, sys, threading, time
from memcli.config import load_settings, resolve_paths
from memcli.library.library import Memcli
from memcli.transport import service as service_module
from memcli.transport.client import Handlers, ServiceClient, client_env

seen = []
listing = Memcli.list_memories

@functools.wraps(listing)  # the verb table reads its parameters
def list_memories(self, *args, **kwargs):
    found = listing(self, *args, **kwargs)
    seen.extend(name for name in service_module.TEXT_READING if name in sys.modules)
    return found

Memcli.list_memories = list_memories
paths = resolve_paths()
service_module.WARM_UP_AFTER = 60.0  # the warm-up waits for the list's answer, however slow the machine
service = service_module.Service(paths, load_settings(paths))
thread = threading.Thread(target=service.serve, daemon=True)
thread.start()
client = ServiceClient(paths)
while (connection := client.connect()) is None:
    time.sleep(0.01)
connection.close()
client.request({"verb": "list", "args": {}, "env": client_env()}, Handlers(), start=False)
service.stop()
thread.join(60)
print(json.dumps(seen))
"""


def test_a_service_answers_its_first_list_before_its_warm_up_imports_what_reads_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm-up imports what reads texts (a CPU-second of Python holding the GIL) once the
    first request is answered, not beside it: a ``list`` that started the service waited for
    the GIL at every row it read (0.3-0.5 s instead of 0.06 s at load 10)."""
    monkeypatch.delenv("MEMCLI_SERVICE")
    done = subprocess.run(
        [sys.executable, "-P", "-c", WARM_UP_BESIDE_A_LIST], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


ENGLISH_ANSWERS = """
import json, sys
from datetime import datetime
from memcli.memory import Memory
from memcli.recall.answers import answer

def note(letter, text, day):
    return Memory(letter * 16, "sam", "note", text, day.timestamp(), f"{day:%Y-%m-%d}")

now = datetime(2025, 9, 1, 9).timestamp()
notes = [
    note("a", "I take lisinopril 10 mg once a day", datetime(2025, 2, 3)),
    note("b", "I moved from Leeds to York last month", datetime(2025, 6, 3)),
    note("c", "My passport number is 123456789", datetime(2025, 7, 3)),
]
for question in ("What dose of lisinopril do I take?", "Where do I live?", "What is my passport number?"):
    answer(question, notes, "sam", now)
print(json.dumps("jieba" in sys.modules))
"""


def test_an_english_answer_does_not_load_the_chinese_segmenter() -> None:
    """An English question's answer reads no Chinese: jieba and its dictionary (about 1.4 s
    of a cold ``memcli ask`` on 2 cores) load only for a text that holds Chinese. The
    answers' Chinese kind words (血型, 剂量) are read whole, as jieba reads each of them."""
    done = subprocess.run([sys.executable, "-P", "-c", ENGLISH_ANSWERS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) is False


FIRST_REQUEST_HELD = """
import functools, json, threading, time
from memcli.config import load_settings, resolve_paths
from memcli.library.library import Memcli
from memcli.transport import service as service_module
from memcli.transport.client import Handlers, ServiceClient, client_env

held, due, proceeded, release = threading.Event(), threading.Event(), threading.Event(), threading.Event()
calls = []
listing = Memcli.list_memories

@functools.wraps(listing)  # the verb table reads its parameters
def list_memories(self, *args, **kwargs):
    calls.append(1)
    if len(calls) == 1:
        held.set()
        release.wait(60)  # the first request runs until the test lets it go
    return listing(self, *args, **kwargs)

class Watched(threading.Event):
    # the warm-up's wait for the first answer: it falls due (WARM_UP_AFTER) only once the
    # first request runs, however slow the machine; due once it waits without a limit
    def wait(self, timeout=None):
        if timeout is not None:
            held.wait(60)
        if timeout is None:
            due.set()
        got = super().wait(timeout)
        if timeout is None or got:
            proceeded.set()
        return got

Memcli.list_memories = list_memories
paths = resolve_paths()
service_module.WARM_UP_AFTER = 0.2
service = service_module.Service(paths, load_settings(paths))
service._answered = Watched()
thread = threading.Thread(target=service.serve, daemon=True)
thread.start()
client = ServiceClient(paths)
while (connection := client.connect()) is None:
    time.sleep(0.01)
connection.close()

def ask():
    client.request({"verb": "list", "args": {}, "env": client_env()}, Handlers(), start=False)

first = threading.Thread(target=ask)
first.start()
found = {"due": due.wait(60)}
ask()  # a second request, answered while the first still runs
found["went_on_before_the_first_answer"] = proceeded.wait(5)
release.set()
first.join(60)
service.stop()
thread.join(60)
print(json.dumps(found))
"""


def test_the_warm_up_due_while_the_first_request_runs_waits_for_that_answer_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first request that outlasts ``WARM_UP_AFTER`` (a cold ask on a busy machine) imports
    what it needs itself: the warm-up waits for its answer instead of importing what reads
    texts beside it, which took the GIL from the request and had dateparser read its first
    date twice; and the answer of a later, quicker request does not end that wait."""
    monkeypatch.delenv("MEMCLI_SERVICE")
    done = subprocess.run([sys.executable, "-P", "-c", FIRST_REQUEST_HELD], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"due": True, "went_on_before_the_first_answer": False}
