"""The ``memcli chat`` loop: read a line, run a slash command or send it as a message, and
stream the reply.

On a terminal (stdin and stdout both ttys) lines are read with prompt_toolkit: line
editing, and a history kept across sessions in ``chat_history`` under the state dir (one
file per MEMCLI_HOME, mode 0600 in a 0700 folder, since it holds what the user typed). Each
line is written once its request has answered, with the ids of the memories it was typed
for (the turn a message was stored as, the note of ``/remember``, what ``/recall`` showed),
so that deleting one of them takes the line out, whatever the memory's text has become
(``memcli.paths.scrub_history_file``).
A spinner on stderr (rich, when stderr is a tty and not ``--quiet``) shows while the model
loads and until the first token of each reply. Ctrl-C:

- while a reply is generated: the reply stops there (through the service, the client sends
  a cancel and the service stops at the next token; in-process, the KeyboardInterrupt stops
  it), its partial text is stored tagged ``interrupted`` and kept in the session, and the
  prompt comes back. The user's message was stored before the reply began.
- at the prompt with text typed: the line is dropped from the buffer but kept in the
  history (up-arrow brings it back).
- at an empty prompt, or right after a cancelled reply: a first press says how to leave,
  a second one (or Ctrl-D) leaves; leaving is a clean exit (status 0).

Without a terminal each line of stdin is one message, ``/recall`` prints tab-separated
lines, and Ctrl-C (or the end of input) ends the session.

A line refused as bad input (a message longer than the model's context, text that is not
UTF-8) stores nothing: on a terminal it is one error line and the session goes on; without
one the error ends the session with its exit code (5).

The loop sends its requests through ``call`` (``memcli.transport.entry.call`` bound to this
invocation's paths and options), so it runs the same on the service and in-process, and
imports nothing heavy: prompt_toolkit and rich only on a terminal.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memcli.errors import BadInputError, Interrupted
from memcli.paths import CHAT_HISTORY, history_entry, open_private, private_dir
from memcli.transport.client import Handlers

Call = Callable[[str, dict[str, Any], Handlers], Any]
"""Sends one request: ``call(verb, args, handlers)`` returns its schema model (``memcli.transport.entry.call``)."""

HELP = """/recall QUERY   show the memories that match QUERY
/remember TEXT  store a note
/exit           leave (or Ctrl-D)
Ctrl-C stops a reply; at an empty prompt, twice leaves."""

LEAVE_HINT = "press Ctrl-C again or Ctrl-D to leave"


def history_path(state_dir: Path) -> Path:
    """The prompt history file of a MEMCLI_HOME's state dir, made private (0600 in a 0700
    folder) and empty when missing. Raises OSError when it cannot be made."""

    path = private_dir(state_dir) / CHAT_HISTORY
    os.close(open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND))
    return path


class Repl:
    """One chat session at the terminal (or over stdin without one).

    Args:
        call: sends a request (``Call``).
        state_dir: where the prompt history is kept (``paths.state_dir``).
        memory_line: one recalled memory as a tab-separated line (``/recall`` without a terminal).
        quiet: no status, warnings or spinner on stderr.
        interactive: read with line editing and history; default: stdin and stdout are ttys.
    """

    def __init__(
        self,
        call: Call,
        state_dir: Path,
        memory_line: Callable[[dict[str, Any]], str],
        quiet: bool = False,
        interactive: bool | None = None,
    ) -> None:
        self.call = call
        self.state_dir = state_dir
        self.memory_line = memory_line
        self.quiet = quiet
        self.interactive = sys.stdin.isatty() and sys.stdout.isatty() if interactive is None else interactive
        self.spinning = not quiet and self.interactive and sys.stderr.isatty()
        self._mid_line = False  # a streamed reply has written a line not yet ended
        self._history: Any = None  # the prompt history (TypedHistory, in _reader), on a terminal

    # output ------------------------------------------------------------------------------

    def status(self, message: str) -> None:
        """A status line on stderr (not with ``quiet``), on a line of its own."""
        if self.quiet:
            return
        self._end_line()
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    def _end_line(self) -> None:
        if self._mid_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._mid_line = False

    @contextlib.contextmanager
    def _spinner(self, message: str) -> Iterator[Callable[[], None]]:
        """A transient spinner on stderr for the block; yields a function that stops it early."""
        if not self.spinning:
            yield lambda: None
            return
        # thin client: rich is needed only to render, and memcli starts at every TAB press
        from rich.console import Console

        status = Console(stderr=True).status(message, spinner="dots")
        status.start()
        try:
            yield status.stop
        finally:
            status.stop()

    def _handlers(self, **given: Any) -> Handlers:
        return Handlers(notice=self.status, warning=self.status, **given)

    # the session ---------------------------------------------------------------------------

    def run(self, user: str | None = None, system: str = "", resume: bool = False) -> str:
        """Open the session (loading the model), then read and answer until the user
        leaves; returns the session id. Raises the MemcliError of a request that failed
        (a model that does not load, a bad user), and KeyboardInterrupt for a Ctrl-C
        while the model loads."""
        with self._spinner("loading the chat model..."), self._noting_ctrl_c() as pressed:
            state = self.call("chat.open", {"user": user, "system": system or "", "resume": resume}, self._handlers())
        if pressed():
            # Through the service the Ctrl-C became a cancel, which loading the model does
            # not heed: the session opened all the same, but the person asked to stop.
            raise KeyboardInterrupt
        if resume:
            if state.resumed:
                turns = len(state.history)
                self.status(
                    f"memcli: resuming session {state.session_id} ({turns} recent turns, last at {state.last_turn_at[:16].replace('T', ' ')})"
                )
            else:
                self.status(f"memcli: no earlier chat session of {state.user}; starting a new one")
        self.status(f"memcli chat as {state.user} ({state.model}); /help for commands, Ctrl-D to leave")
        if state.base_model:
            self.status(
                f"memcli: {state.model} is a small base model: its replies ramble and invent (they are kept, marked, and make no "
                "memories); for real answers: memcli config set model PATH-TO-AN-INSTRUCT-MODEL.gguf (docs/models.md: 'Using a better GGUF')"
            )
        try:
            with contextlib.suppress(KeyboardInterrupt):  # one between two prompts (a second, quick Ctrl-C) leaves too
                state = self._loop(state)
        finally:
            self._typed([])  # a line whose request failed is kept, without ids
        self._end_line()
        self.status(f"memcli: session {state.session_id} saved")
        return str(state.session_id)

    def _loop(self, state: Any) -> dict[str, Any]:
        """Read and answer until the user leaves; returns the session's last state."""
        read = self._reader()
        armed = False  # a Ctrl-C was pressed at an empty prompt: the next one leaves
        while True:
            try:
                line = read()
            except EOFError:
                break
            except KeyboardInterrupt:
                if not self.interactive or armed:
                    break
                armed = True
                self.status(f"memcli: {LEAVE_HINT}")
                continue
            if line is None:  # Ctrl-C with text typed: dropped
                armed = False
                continue
            armed = False
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                try:
                    going_on, ids = self._command(text, state)
                    self._typed(ids)
                    if not going_on:
                        break
                except Interrupted:  # Ctrl-C through the service: the command stopped, the session goes on
                    self.status("memcli: stopped")
                except BadInputError as exc:
                    self._refused(exc)
                continue
            try:
                reply, pressed = self._respond(
                    state, text
                )  # a second Ctrl-C while the first one stops the reply leaves
            except BadInputError as exc:  # nothing was stored: the person may say it otherwise
                self._refused(exc)
                continue
            state = reply.state
            # every turn the message was stored as (a long one: a turn a chunk), so that
            # deleting any of them takes the line out
            self._typed(list(state.said_ids))
            if pressed or reply.interrupted:  # (a Ctrl-C may come as the reply ends: it arms all the same)
                if not self.interactive:
                    break
                armed = True
                self.status(f"memcli: reply stopped; {LEAVE_HINT}" if reply.interrupted else f"memcli: {LEAVE_HINT}")
            elif not reply.reply:
                self.status(
                    f"memcli: no reply: {reply.empty_reason}"
                    if reply.empty_reason
                    else "memcli: the model gave no reply"
                )
        return state

    def _reader(self) -> Callable[[], str | None]:
        """A function that reads the next line: raises EOFError at the end (Ctrl-D) and
        KeyboardInterrupt for Ctrl-C at an empty prompt; None for Ctrl-C with text typed."""
        if not self.interactive:
            return lambda: input()
        # thin client: needed only by an interactive chat, and memcli starts at every TAB press
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory

        class TypedHistory(FileHistory):
            """prompt_toolkit's file history, except that a line is written once the memcli
            request it was typed for has answered (``_typed``), with the ids of the memories
            it was typed for (``memcli.paths.history_entry``), so that deleting one of them
            takes the line out (``memcli.paths.scrub_history_file``) whatever the memory's
            text has become."""

            held: str | None = None

            def store_string(self, string: str) -> None:
                self.write([])  # a line typed before, that no request followed (Ctrl-C)
                self.held = string

            def write(self, ids: list[str]) -> None:
                if self.held is None:
                    return
                entry, self.held = history_entry(self.held, ids, str(datetime.datetime.now())), None
                with open(self.filename, "ab") as f:
                    f.write(entry.encode("utf-8", errors="replace"))

        self._history = TypedHistory(str(history_path(self.state_dir)))
        session: PromptSession[str] = PromptSession(history=self._history)

        def read() -> str | None:
            try:
                return session.prompt("you> ")
            except KeyboardInterrupt:
                dropped = session.default_buffer.text
                if not dropped.strip():
                    raise
                session.history.append_string(dropped)  # up-arrow brings it back
                return None

        return read

    def _refused(self, exc: BadInputError) -> None:
        """A line refused as bad input (a message over the model's context): on a terminal
        the session goes on after one error line; without one the error ends it, as the
        same line given to ``memcli ask`` would (exit 5)."""
        if not self.interactive:
            raise exc
        self._end_line()
        sys.stderr.write(f"memcli: error: {exc.message}\n")
        sys.stderr.flush()

    def _typed(self, ids: list[str]) -> None:
        """Write the line just typed to the prompt history (on a terminal), naming the
        memories it was typed for: ``ids``."""
        if self._history is not None:
            self._history.write(ids)

    @contextlib.contextmanager
    def _noting_ctrl_c(self) -> Iterator[Callable[[], bool]]:
        """For the block, Ctrl-C raises KeyboardInterrupt as usual and is also noted: yields
        a function that says whether it was pressed. The client turns the first Ctrl-C of a
        request accepted by the service into a cancel and waits for the answer (no
        KeyboardInterrupt reaches the caller), so this is how the caller learns of it."""
        pressed = False

        def interrupt(signum: int, frame: Any) -> None:
            nonlocal pressed
            pressed = True
            signal.default_int_handler(signum, frame)

        if threading.current_thread() is not threading.main_thread():  # signals go to the main thread only
            yield lambda: pressed
            return
        previous = signal.signal(signal.SIGINT, interrupt)
        try:
            yield lambda: pressed
        finally:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)

    def _respond(self, state: Any, text: str) -> tuple[dict[str, Any], bool]:
        """Send ``text``, stream the reply to stdout; returns the ``schema.ChatReply`` data
        and whether Ctrl-C was pressed meanwhile.

        Ctrl-C raises KeyboardInterrupt as usual (the client turns the first one into a
        cancel to the service; in-process it stops the model's stream); it is only noted
        here, so that the client's own "stopping" notice is left out: the loop says it."""
        with self._noting_ctrl_c() as pressed:

            def notice(message: str) -> None:
                if not pressed():
                    self.status(message)

            reply = self._stream(state, text, notice)
            return reply, pressed()

    def _stream(self, state: Any, text: str, notice: Callable[[str], None]) -> Any:
        with self._spinner("thinking...") as stop:

            def piece(chunk: str) -> None:
                if not self._mid_line:
                    stop()
                    if self.interactive:
                        sys.stdout.write("memcli> ")
                    self._mid_line = True
                sys.stdout.write(chunk)
                sys.stdout.flush()

            try:
                reply = self.call(
                    "chat.respond",
                    {"state": state.to_json(), "text": text},
                    Handlers(notice=notice, warning=self.status, piece=piece),
                )
            finally:
                stop()
                if self._mid_line or not self.interactive:
                    sys.stdout.write("\n")
                    sys.stdout.flush()
                self._mid_line = False
        return reply

    def _command(self, text: str, state: Any) -> tuple[bool, list[str]]:
        """Run a slash command; returns whether the session goes on, and the ids of the
        memories the command was typed for (those ``/recall`` showed, the note of
        ``/remember``)."""
        command, _, argument = text.partition(" ")
        argument = argument.strip()
        if command in ("/exit", "/quit"):
            return False, []
        if command == "/help":
            print(HELP)
        elif command == "/recall" and argument:
            hits = self.call("recall", {"query": argument, "user": state.user, "k": None}, self._handlers())
            self._print_recalled(hits)
            return True, [hit.id for hit in hits]
        elif command == "/remember" and argument:
            done = self.call("remember", {"text": argument, "user": state.user}, self._handlers())
            print(f"remembered {done.memory.id}" if done.added else f"already remembered as {done.memory.id}")
            return True, [done.memory.id, *(i for i in done.ids if i != done.memory.id)]
        else:
            self.status(f"memcli: unknown or incomplete command {text!r}; /help lists them")
        return True, []

    def _print_recalled(self, hits: list[dict[str, Any]]) -> None:
        """Recalled memories: a table on a terminal (id, day, kind, score, text), else one
        tab-separated line each, as ``memcli recall`` prints them."""
        if not hits:
            self.status("memcli: no memories found")
            return
        if not sys.stdout.isatty():
            for hit in hits:
                print(self.memory_line(hit))
            return
        # thin client: rich is needed only to render, and memcli starts at every TAB press
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        table = Table(box=None, header_style="bold", pad_edge=False)
        for name, justify in (("id", "left"), ("day", "left"), ("kind", "left"), ("score", "right"), ("text", "left")):
            table.add_column(name, justify=justify, no_wrap=name != "text", overflow="fold")  # type: ignore[arg-type]
        for hit in hits:
            who = f"{hit.speaker}: " if hit.speaker else ""
            text = " ".join(hit.text.split())
            if hit.caption:
                text += f" [image: {hit.caption}]"
            table.add_row(hit.id, hit.day, hit.kind, f"{hit.score.score:.3f}", Text(who + text))
        Console(highlight=False).print(table)
