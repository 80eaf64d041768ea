"""``memcli chat`` as a REPL at a terminal: driven through a pseudo-terminal (pexpect) with
the fake models, in-process (``python tests/fakes cli``) and through the service
(``python tests/fakes serve``): history across sessions, Ctrl-C during a reply and at the
prompt, Ctrl-D, --system, --continue, the /recall table. The fake model streams "word0 ...
word19" at once, except where a Ctrl-C must land mid-reply: there its first reply comes
one word every few tenths of a second. The stored turns are read in this process, through
the command line (in-process with the fakes, or from the running service)."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import list_json
from typer.testing import CliRunner

from memcli.cli import app
from memcli.paths import Paths, resolve_paths
from memcli.transport.client import ServiceClient

pexpect = pytest.importorskip("pexpect")

TESTS = Path(__file__).resolve().parent
UP = "\x1b[A"


def terminal_env(home: Path, service: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    # A pseudo-terminal that answers no cursor-position request: prompt_toolkit is told not to ask.
    env.update(MEMCLI_HOME=str(home), MEMCLI_LOCK_TIMEOUT="5", TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
    if not service:
        env["MEMCLI_SERVICE"] = "off"
    return env


class Terminal:
    """``memcli chat ARGS`` on a pseudo-terminal: in-process with the fakes, or (``service``)
    the real ``memcli`` talking to a running fake service."""

    def __init__(
        self, home: Path, *args: str, slow: float = 0.0, echo_system: bool = False, service: bool = False
    ) -> None:
        """``slow``: seconds per word of the first reply (the later ones stream at once)."""
        if service:
            argv = ["-m", "memcli", "chat", *args]
        else:
            models = ["--slow-model", str(slow), "--slow-first", *(["--echo-system"] if echo_system else [])]
            argv = [str(TESTS / "fakes"), "cli", *models, "--", "chat", *args]
        self.process, self.child = spawn_on_a_terminal([sys.executable, *argv], terminal_env(home, service))
        self.child.expect("you>")

    def say(self, line: str) -> None:
        self.child.sendline(line)

    def expect(self, pattern: str) -> str:
        """Wait for ``pattern`` (a regex); returns what came before it, without escape codes."""
        self.child.expect(pattern)
        return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", self.child.before)

    def prompt(self) -> None:
        """Wait for the next prompt (keys sent earlier could reach the terminal before
        prompt_toolkit reads it in raw mode)."""
        self.child.expect("you>")

    def ctrl(self, key: str) -> None:
        self.child.send(chr(ord(key.lower()) - ord("a") + 1))

    def leave(self) -> int:
        """Ctrl-D at the prompt; the exit status. Sent again while the session goes on: a
        Ctrl-D that reaches the terminal in the moment before prompt_toolkit switches it to
        raw mode is taken by the terminal itself."""
        for _ in range(10):
            self.ctrl("d")
            if self.child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=3) == 0:
                break
        self.child.close()
        return self.exit_status()

    def exit_status(self) -> int:
        """The exit status of the chat (after it left)."""
        return self.process.wait(timeout=60)


def spawn_on_a_terminal(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[bytes], Any]:
    """Run ``argv`` on a new pseudo-terminal of 40 x 120 that is its controlling terminal
    (so a Ctrl-C sent to it is SIGINT), and a pexpect handle on the terminal's other end.
    Not ``pexpect.spawn``: it forks this pytest process, whose other threads (Chroma's,
    torch's) may hold a lock at that moment, and the child then hangs before its exec;
    ``subprocess`` forks and execs without running Python in between (``setsid -c`` makes
    the terminal the controlling one)."""
    import fcntl
    import struct
    import termios

    from pexpect import fdpexpect

    primary, secondary = os.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    try:
        process = subprocess.Popen(
            ["setsid", "-c", "-w", *argv], stdin=secondary, stdout=secondary, stderr=secondary, env=env
        )
    finally:
        os.close(secondary)
    return process, fdpexpect.fdspawn(primary, encoding="utf-8", timeout=90)


def turns() -> list[dict[str, Any]]:
    """The stored chat turns of the test's MEMCLI_HOME, oldest first: ``memcli list`` run in
    this process, in-process with the fake embedder or (when a test's service runs) through it."""
    return list(reversed(list_json(CliRunner(), "--kind", "turn")))


def test_history_is_kept_across_sessions_privately_and_up_arrow_recalls_it(
    memcli_home: Path, fake_embedder: Any
) -> None:
    first = Terminal(memcli_home)
    first.say("my bike is the red one")
    first.expect("word19")
    first.prompt()
    assert first.leave() == 0
    history = memcli_home / "state" / "chat_history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert stat.S_IMODE(history.parent.stat().st_mode) == 0o700

    second = Terminal(memcli_home)
    second.child.send(UP)
    second.expect("my bike is the red one")
    second.say("")
    second.expect("word19")
    second.prompt()
    assert second.leave() == 0
    said = [t for t in turns() if t["speaker"] != "assistant"]
    assert [t["text"] for t in said] == ["my bike is the red one", "my bike is the red one"]
    assert said[0]["session"] != said[1]["session"]


def test_ctrl_c_with_a_line_typed_drops_it_but_up_arrow_brings_it_back(memcli_home: Path, fake_embedder: Any) -> None:
    chat = Terminal(memcli_home)
    chat.child.send("half a thought")
    chat.expect("half a thought")
    chat.ctrl("c")
    chat.prompt()
    chat.child.send(UP)
    chat.expect("half a thought")
    chat.say("")
    chat.expect("word19")
    chat.prompt()
    assert chat.leave() == 0
    assert [t["text"] for t in turns() if t["speaker"] != "assistant"] == ["half a thought"]


def _cancel_a_reply(chat: Terminal) -> None:
    chat.say("tell me a long story")
    chat.expect("word1 ")
    chat.ctrl("c")
    said = chat.expect("reply stopped")
    assert "leave at once" not in said  # one line says the reply stopped (not the client's notice too)
    chat.prompt()
    chat.say("are you still there")  # the session goes on
    chat.expect("word19")
    chat.prompt()


def _check_cancelled_turns() -> None:
    stored = turns()
    by_text = {t["text"]: t for t in stored}
    assert "tell me a long story" in by_text and "are you still there" in by_text  # the user's turns, both
    partial = [t for t in stored if "interrupted" in t["tags"]]
    assert len(partial) == 1 and partial[0]["speaker"] == "assistant"
    assert partial[0]["text"].startswith("word0 word1") and "word19" not in partial[0]["text"]
    assert len({t["session"] for t in stored}) == 1
    assert [t["speaker"] for t in stored] == ["tester", "assistant", "tester", "assistant"]


def test_ctrl_c_during_a_reply_stops_it_and_keeps_the_session_in_process(memcli_home: Path, fake_embedder: Any) -> None:
    chat = Terminal(memcli_home, slow=0.3)
    _cancel_a_reply(chat)
    assert chat.leave() == 0
    _check_cancelled_turns()


@pytest.fixture
def fake_service(memcli_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Paths]:
    """A running ``python tests/fakes serve`` whose first reply is slow; stopped after the test."""
    monkeypatch.delenv("MEMCLI_SERVICE")
    paths = resolve_paths()
    process = subprocess.Popen(
        [sys.executable, str(TESTS / "fakes"), "serve", "--slow-model", "0.3", "--slow-first"],
        env=terminal_env(memcli_home, service=True),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        assert "listening" in line, line + process.stderr.read().decode()
        yield paths
    finally:
        ServiceClient(paths).stop()
        if process.poll() is None:
            process.kill()
        process.wait(30)
        process.stderr.close()  # type: ignore[union-attr]


def test_ctrl_c_during_a_reply_stops_it_in_the_service_which_stays_healthy(
    fake_service: Paths, memcli_home: Path
) -> None:
    pid = ServiceClient(fake_service).pid()
    chat = Terminal(memcli_home, service=True)
    _cancel_a_reply(chat)
    assert chat.leave() == 0
    assert ServiceClient(fake_service).pid() == pid  # the same service answered it all
    _check_cancelled_turns()
    log = fake_service.log_file.read_text(encoding="utf-8")
    assert log.count("chat.respond ok") == 2  # the cancelled reply was answered, not failed
    assert ServiceClient(fake_service).status()["requests_served"] >= 4


def test_ctrl_c_twice_at_an_empty_prompt_leaves_cleanly(memcli_home: Path) -> None:
    chat = Terminal(memcli_home)
    chat.ctrl("c")
    chat.expect("press Ctrl-C again or Ctrl-D to leave")
    chat.prompt()
    chat.ctrl("c")
    chat.expect("saved")
    chat.child.expect(pexpect.EOF)
    chat.child.close()
    assert chat.exit_status() == 0


def test_system_instruction_reaches_the_prompt(memcli_home: Path) -> None:
    chat = Terminal(memcli_home, "--system", "Answer like a pirate", echo_system=True)
    chat.say("hello")
    chat.expect("memcli> ")
    said = chat.expect("you>")
    assert "Answer like a pirate" in said  # the echo model answers with its system prompt's last paragraph
    assert chat.leave() == 0


def test_recall_is_a_table_on_a_terminal(memcli_home: Path) -> None:
    chat = Terminal(memcli_home)
    chat.say("/remember the spare key is under the blue pot")
    chat.expect("remembered [0-9a-f]{16}")
    chat.prompt()
    chat.say("/recall spare key")
    table = chat.expect("under the blue pot").splitlines()
    assert table[-2].split() == ["id", "day", "kind", "score", "text"]
    assert re.fullmatch(r"[0-9a-f]{16} +\d{4}-\d\d-\d\d +note +\d\.\d{3} +the spare key is ", table[-1])
    assert chat.leave() == 0


# --continue (no terminal needed: each stdin line is one message) ---------------------------


def test_continue_resumes_the_last_session_with_its_recent_turns(runner: CliRunner, fake_model: Any) -> None:
    fake_model.replies = ["Rex is a lovely name.", "You told me: Rex."]
    first = runner.invoke(app, ["chat"], input="My dog is Rex\n")
    assert first.exit_code == 0, first.output
    resumed = runner.invoke(app, ["chat", "-c"], input="What is my dog called?\n")
    assert resumed.exit_code == 0, resumed.output
    stored = turns()
    session = stored[0]["session"]
    assert {t["session"] for t in stored} == {session}
    assert f"resuming session {session}" in resumed.stderr
    assert [(m.role, m.content) for m in fake_model.prompts[-1][1:-1]] == [
        ("user", "My dog is Rex"),
        ("assistant", "Rex is a lovely name."),
    ]
    last = fake_model.prompts[-1][-1]
    assert last.role == "user" and last.content.endswith("\n\nWhat is my dog called?")
    assert last.content.startswith("Memories:")


def test_a_chat_prompt_starts_as_the_previous_turns_did(runner: CliRunner, fake_model: Any) -> None:
    """The recalled memories come with the new message, after the conversation, so that each
    prompt starts with the whole previous one but its last message (llama.cpp then
    evaluates only the new turns)."""
    assert runner.invoke(app, ["remember", "My dog Rex was born in Lyon"]).exit_code == 0
    fake_model.replies = ["Hello.", "Lyon, I think.", "Rex."]
    done = runner.invoke(app, ["chat"], input="Hi there\nWhere was Rex born?\nWhat is my dog called?\n")
    assert done.exit_code == 0, done.output
    chats = [p for p in fake_model.prompts if p[0].role == "system" and "memcli" in p[0].content]
    assert len(chats) == 3
    for before, after in zip(chats, chats[1:]):
        assert after[0] == before[0]
        assert after[1 : len(before) - 1] == before[1:-1]
    assert any("Rex was born in Lyon" in p[-1].content for p in chats)
    assert all("Rex was born in Lyon" not in p[0].content for p in chats)


def test_continue_without_an_earlier_session_starts_a_new_one(runner: CliRunner, fake_model: Any) -> None:
    runner.invoke(app, ["remember", "not a chat turn"])
    result = runner.invoke(app, ["chat", "--continue", "--system", "Be brief"], input="hello\n")
    assert result.exit_code == 0, result.output
    assert "no earlier chat session of tester; starting a new one" in result.stderr
    assert fake_model.prompts[-1][0].content.endswith("Be brief")
    assert [m.role for m in fake_model.prompts[-1][1:]] == ["user"]
    assert fake_model.prompts[-1][-1].content.endswith("\n\nhello")


def test_deleting_a_memory_takes_out_every_line_typed_for_it_even_after_an_edit(
    memcli_home: Path, fake_embedder: Any
) -> None:
    """Issue 25 §2: the prompt history is scrubbed by what was typed. The message stored as
    a turn goes with that turn although it was edited since; ``/remember`` and ``/recall``
    lines go with the note they name; other lines stay."""
    runner = CliRunner()
    chat = Terminal(memcli_home)
    for line in (
        "my PIN is zqpin4321",
        "/remember the safe code is zqsafe77",
        "/recall zqsafe77",
        "what is the weather like",
    ):
        chat.say(line)
        chat.expect("word19|remembered|zqsafe77\\s")
        chat.prompt()
    assert chat.leave() == 0
    history = memcli_home / "state" / "chat_history"
    assert history.read_text().count("memcli ids: ") == 4
    pin = next(t for t in turns() if t["text"] == "my PIN is zqpin4321")
    note = next(m for m in list_json(runner) if m["text"] == "the safe code is zqsafe77")

    edited = runner.invoke(app, ["edit", pin["id"], "--text", "my PIN is private"])
    assert edited.exit_code == 0, edited.stderr
    assert runner.invoke(app, ["delete", pin["id"], "--yes"]).exit_code == 0
    assert "zqpin4321" not in history.read_text()  # the original text, typed, is gone with the edited turn
    assert runner.invoke(app, ["delete", note["id"], "--yes"]).exit_code == 0
    left = history.read_text()
    assert "zqsafe77" not in left  # the /remember line and the /recall line that showed it
    assert "+what is the weather like" in left


def test_deleting_any_chunk_of_a_long_message_takes_its_line_out_of_the_history(
    memcli_home: Path, fake_embedder: Any
) -> None:
    """A message longer than a chunk is stored as one turn a chunk; the line typed for it
    names every one of them, so deleting a later chunk alone (a short one, whose text is
    no line typed nor one that a line holds) takes the line out too."""
    runner = CliRunner()
    chat = Terminal(memcli_home)
    chat.say(" ".join(["the garden wall needs paint again"] * 29) + ". My locker code is zqlock42.")
    chat.expect("word19")
    chat.prompt()
    assert chat.leave() == 0
    history = memcli_home / "state" / "chat_history"
    assert "zqlock42" in history.read_text()
    tail = next(t for t in turns() if "zqlock42" in t["text"])
    assert len(tail["text"]) < 40  # a chunk of its own, short
    assert runner.invoke(app, ["delete", tail["id"], "--yes"]).exit_code == 0
    assert "zqlock42" not in history.read_text()


def test_scrubbing_the_history_goes_by_recorded_ids_and_by_every_text_the_memory_had(tmp_path: Path) -> None:
    from memcli.paths import history_entry, scrub_history_file

    path = tmp_path / "chat_history"
    entries = [
        history_entry("/recall what is my code", ["aaaa000000000001", "bbbb000000000002"], "2026-11-26 01:00:00"),
        history_entry("my old words", [], "2026-11-26 01:00:01"),  # written before ids were recorded
        history_entry("something else", ["cccc000000000003"], "2026-11-26 01:00:02"),
        history_entry("/recall OLD WORDS", [], "2026-11-26 01:00:02"),  # a query, part of a text the memory had
        "\n# 2026-11-26 01:00:03\n+a line of prompt_toolkit's own\n",
    ]
    path.write_text("".join(entries))
    assert scrub_history_file(path, ["my new words", "my old words"], ["bbbb000000000002"]) == 3
    from prompt_toolkit.history import FileHistory

    assert list(FileHistory(str(path)).load_history_strings()) == ["a line of prompt_toolkit's own", "something else"]


def test_a_message_over_the_models_context_is_refused_and_the_session_goes_on(
    memcli_home: Path, fake_embedder: Any
) -> None:
    chat = Terminal(memcli_home)
    chat.child.send("x" * 6200 + "\r")
    chat.expect("the message is 6,200 characters")
    chat.prompt()
    chat.say("a short one")
    chat.expect("word19")
    chat.prompt()
    assert chat.leave() == 0
    assert [t["text"] for t in turns() if t["speaker"] != "assistant"] == ["a short one"]


def test_ctrl_c_while_the_service_loads_the_model_ends_the_session_before_any_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the service, a Ctrl-C while ``chat.open`` runs becomes a cancel that loading
    the model does not heed: the client gets the opened session back, not a
    KeyboardInterrupt. The chat must leave all the same (``memcli chat`` reading a pipe
    that stays open would otherwise answer the message and wait for the next one)."""
    import io
    import signal
    import time
    from types import SimpleNamespace

    from memcli.cli.repl import Repl

    sent: list[str] = []

    def call(verb: str, args: dict[str, Any], handlers: Any) -> Any:
        sent.append(verb)
        if verb != "chat.open":
            raise AssertionError(f"{verb} sent after a Ctrl-C while the model loaded")
        try:  # what ServiceClient._exchange does with a Ctrl-C once the request is accepted
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            pass  # a cancel is sent; the service answers the request all the same
        return SimpleNamespace(
            session_id="s1", user="demo", model="m.gguf", base_model=False, resumed=False, history=[], last_turn_at=""
        )

    monkeypatch.setattr(sys, "stdin", io.StringIO("What did I make last week?\n"))
    # Python's own Ctrl-C handler, as a command has it (a pytest-xdist worker ignores SIGINT).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            Repl(call, tmp_path, lambda memory: "", quiet=True, interactive=False).run("demo")
        assert sent == ["chat.open"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back as it was
    finally:
        signal.signal(signal.SIGINT, previous)
