"""``memcli mcp``: one user's memory over the Model Context Protocol, driven by the ``mcp``
SDK's own client: in this process over the SDK's in-memory transport (the verbs run
in-process with the fake models), and once as a real stdio session with the ``memcli mcp``
command line (``python tests/fakes cli``: the real command line with the fakes as its models)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_checks import ok
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from memcli import schema
from memcli.cli import app
from memcli.config import load_settings
from memcli.errors import DiskFullError, UsageError
from memcli.library.engine import Engine
from memcli.memory import Memory
from memcli.paths import resolve_paths
from memcli.transport import entry
from memcli.transport.mcp_server import MAX_TOOL_TEXT, Verbs, bearer_token, build

USER = "sam"
READ_TOOLS = {"recall", "list_memories", "show_memory", "portrait", "summary"}
ALL_TOOLS = READ_TOOLS | {"remember", "ask", "forget_memory", "delete_memory"}


def session(test: Callable[[Client], Awaitable[None]], user: str = USER, read_only: bool = False) -> None:
    """Run ``test`` with an SDK client connected in-process to ``user``'s server."""

    async def main() -> None:
        async with Client(build(Verbs(resolve_paths(), user), read_only)) as client:
            await test(client)

    anyio.run(main)


async def tool(client: Client, name: str, **arguments: Any) -> Any:
    """The structured result of a tool call that succeeded (unwrapped from ``result``
    for a list or an optional result)."""
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    data = result.structured_content
    return data["result"] if set(data) == {"result"} else data


async def tool_error(client: Client, name: str, **arguments: Any) -> str:
    """The one line of a tool call that failed."""
    result = await client.call_tool(name, arguments)
    assert result.is_error
    [content] = result.content
    return content.text


def test_the_tools_are_typed_by_the_schemas_of_json_output(fake_embedder: Any) -> None:
    """One schema: a tool's output schema is the pydantic model that ``--json`` prints
    (wrapped in ``result`` for a list or null), and its annotations say what it changes."""

    async def test(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == ALL_TOOLS
        assert tools["show_memory"].output_schema == schema.Memory.model_json_schema()
        assert tools["remember"].output_schema == schema.Remembered.model_json_schema()
        assert tools["ask"].output_schema == schema.Answer.model_json_schema()
        recalled = tools["recall"].output_schema
        assert recalled["properties"]["result"]["items"] == {"$ref": "#/$defs/RecalledMemory"}
        assert recalled["$defs"]["RecalledMemory"] == {
            k: v for k, v in schema.RecalledMemory.model_json_schema().items() if k != "$defs"
        }
        assert set(tools["recall"].input_schema["properties"]) == {"query", "k", "kind", "since", "tags"}
        assert not any(
            "user" in t.input_schema.get("properties", {}) for t in tools.values()
        )  # whose memory is the server's
        for name in READ_TOOLS - {"recall"}:
            assert tools[name].annotations.read_only_hint is True
        recall = tools["recall"].annotations  # it reinforces what it returns
        assert (recall.read_only_hint, recall.destructive_hint, recall.idempotent_hint) == (False, False, False)
        delete = tools["delete_memory"].annotations
        assert (delete.read_only_hint, delete.destructive_hint, delete.idempotent_hint) == (False, True, True)
        archive = tools["forget_memory"].annotations
        assert (archive.destructive_hint, archive.idempotent_hint) == (False, True)
        assert tools["remember"].annotations.idempotent_hint is True

    session(test)


def test_remember_then_recall_finds_it_with_the_json_of_the_cli(runner: CliRunner, fake_embedder: Any) -> None:
    async def test(client: Client) -> None:
        done = schema.Remembered.model_validate(
            await tool(client, "remember", text="My sister's birthday is 4 March", tags=["family"], importance=0.9)
        )
        assert done.added and done.memory.user == USER and done.memory.tags == ["family"]
        assert (await tool(client, "remember", text="My sister's birthday is 4 March"))["added"] is False
        hits = [
            schema.RecalledMemory.model_validate(h)
            for h in await tool(client, "recall", query="When is my sister's birthday?", k=3)
        ]
        assert hits[0].id == done.memory.id and hits[0].score.score > 0
        assert (await tool(client, "show_memory", id=done.memory.id[:6]))["recall_count"] == 1  # recall reinforced it
        assert [m["id"] for m in await tool(client, "list_memories", tags=["family"])] == [done.memory.id]

    session(test)
    shown = ok(runner.invoke(app, ["list", "--user", USER, "--json"])).stdout
    assert "My sister's birthday is 4 March" in shown


def test_ask_answers_with_the_memories_it_used(fake_model: Any) -> None:
    fake_model.replies = ["Her birthday is on 4 March."]

    async def test(client: Client) -> None:
        await tool(client, "remember", text="My sister's birthday is 4 March")
        answer = schema.Answer.model_validate(await tool(client, "ask", question="When is my sister's birthday?"))
        assert answer.answer == "Her birthday is on 4 March." and answer.memories

    session(test)


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("recall", {"query": "  "}, "the query is empty"),
        ("recall", {"query": "tea", "k": 0}, "-k must be at least 1"),
        ("recall", {"query": "tea", "kind": "poem"}, "unknown kind 'poem'"),
        ("remember", {"text": ""}, "nothing to remember: the text is empty"),
        ("remember", {"text": "tea", "importance": 2}, "--importance must be between 0 and 1, not 2"),
        ("show_memory", {"id": "0123456789abcdef"}, "no memory with id '0123456789abcdef'"),
        ("delete_memory", {"id": "0123456789abcdef"}, "no memory with id '0123456789abcdef'"),
        ("summary", {"day": "not a day"}, "--day"),
    ],
)
def test_a_bad_argument_is_a_tool_error_with_the_cli_message_and_the_server_goes_on(
    fake_embedder: Any, name: str, arguments: dict[str, Any], message: str
) -> None:
    async def test(client: Client) -> None:
        assert message in await tool_error(client, name, **arguments)
        assert await tool(client, "list_memories") == []

    session(test)


def test_a_store_error_is_a_tool_error_and_the_server_goes_on(
    fake_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A MemcliError (here the disk is full) gives its line; anything else the SDK's
    generic error; either way the next call is served."""
    real = entry.call
    failures = [DiskFullError("no space left on the device of the store"), OSError("boom")]

    def failing(*args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop(0)
        return real(*args, **kwargs)

    monkeypatch.setattr("memcli.transport.mcp_server.call", failing)

    async def test(client: Client) -> None:
        assert "no space left on the device of the store" in await tool_error(client, "remember", text="tea")
        assert "boom" not in await tool_error(client, "remember", text="tea")
        assert (await tool(client, "remember", text="tea"))["added"] is True

    session(test)


def test_forget_memory_archives_and_delete_memory_deletes_for_good(runner: CliRunner, fake_embedder: Any) -> None:
    ids: dict[str, str] = {}

    async def test(client: Client) -> None:
        ids["kept"] = (await tool(client, "remember", text="I collect old maps of Lisbon"))["memory"]["id"]
        ids["gone"] = (await tool(client, "remember", text="My locker code is 4921"))["memory"]["id"]
        archived = await tool(client, "forget_memory", id=ids["kept"])
        assert archived["archived"] is True and archived["archived_at"]
        assert (await tool(client, "forget_memory", id=ids["kept"]))["archived_at"] == archived[
            "archived_at"
        ]  # idempotent
        assert ids["kept"] not in [h["id"] for h in await tool(client, "recall", query="maps of Lisbon")]
        deleted = await tool(client, "delete_memory", id=ids["gone"])
        assert deleted["text"] == "My locker code is 4921"
        assert "no memory with id" in await tool_error(client, "show_memory", id=ids["gone"])

    session(test)
    ok(runner.invoke(app, ["restore", ids["kept"]]))  # the CLI brings an archived memory back
    assert ids["kept"] in ok(runner.invoke(app, ["recall", "--user", USER, "maps of Lisbon"])).stdout


def test_another_users_memory_is_out_of_reach(runner: CliRunner, fake_embedder: Any) -> None:
    """The user is the server's: an id of another user's memory is not found, by any tool."""
    theirs = ok(runner.invoke(app, ["remember", "--user", "alice", "Alice's PIN is 1234"])).stdout.strip()

    async def test(client: Client) -> None:
        for name in ("show_memory", "forget_memory", "delete_memory"):
            assert (
                await tool_error(client, name, id=theirs)
                == f"Error executing tool {name}: no memory with id {theirs!r}"
            )
        # sam has no memories while alice has: recall says so, as ask does (exit 6 on the command line)
        assert "no user 'sam'" in await tool_error(client, "recall", query="PIN")

    session(test)
    assert "archived: False" in ok(runner.invoke(app, ["show", theirs])).stdout


def test_a_read_only_server_has_only_the_read_tools_and_recall_does_not_reinforce(
    runner: CliRunner, fake_embedder: Any
) -> None:
    note = ok(runner.invoke(app, ["remember", "--user", USER, "I take my tea without sugar"])).stdout.strip()

    async def test(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == READ_TOOLS
        assert all(t.annotations.read_only_hint for t in tools.values())
        assert [h["id"] for h in await tool(client, "recall", query="tea")] == [note]
        assert (await tool(client, "show_memory", id=note))["recall_count"] == 0
        assert (await client.call_tool("delete_memory", {"id": note})).is_error  # no such tool here

    session(test, read_only=True)
    assert note in ok(runner.invoke(app, ["list", "--user", USER])).stdout


def test_the_resources_are_read_afresh(fake_embedder: Any) -> None:
    """The portrait, event summary and running memory of the server's user, as they are
    at each read."""
    paths = resolve_paths()

    def consolidated(memory_id: str, kind: str, text: str) -> None:
        engine = Engine(load_settings(paths), paths, embedder=fake_embedder)
        engine.add_memories(
            [
                Memory(
                    id=memory_id, user=USER, kind=kind, text=text, created_at=time.time(), day=time.strftime("%Y-%m-%d")
                )
            ]
        )

    async def test(client: Client) -> None:
        uris = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert set(uris) == {f"memcli://{USER}/portrait", f"memcli://{USER}/summary", f"memcli://{USER}/running"}

        async def read(what: str) -> str:
            [content] = (await client.read_resource(f"memcli://{USER}/{what}")).contents
            return content.text

        assert await read("portrait") == "no portrait yet: memcli consolidate writes it"
        consolidated("00000000000000a1", "portrait_global", "Sam is curious and likes tea.")
        consolidated("00000000000000a2", "event_global", "Sam moved to Lyon.")
        assert await read("portrait") == "Sam is curious and likes tea."
        assert await read("summary") == "Sam moved to Lyon."
        assert await read("running") == "no running memory yet: memcli consolidate writes it"

    session(test)


def test_the_bearer_token_file_is_made_private_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "mcp-token"
    token = bearer_token(path)
    assert len(token) >= 32 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert bearer_token(path) == token
    os.chmod(path, 0o644)
    with pytest.raises(UsageError, match="readable by others"):
        bearer_token(path)


def test_a_stdio_session_with_the_memcli_mcp_command(tmp_path: Path) -> None:
    """The real command line over stdio, as a desktop client runs it: given only
    MEMCLI_HOME and MEMCLI_SERVICE in its environment."""
    fakes = Path(__file__).with_name("fakes")
    env = {"MEMCLI_HOME": os.environ["MEMCLI_HOME"], "MEMCLI_SERVICE": "off", "PYTHONPATH": os.pathsep.join(sys.path)}
    server = StdioServerParameters(
        command=sys.executable, args=[str(fakes), "cli", "--", "mcp", "--user", USER], env=env
    )

    async def main() -> None:
        async with Client(server) as client:
            assert client.server_info.name == "memcli"
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == ALL_TOOLS and tools["show_memory"].output_schema == schema.Memory.model_json_schema()
            note = (await tool(client, "remember", text="The spare key is under the blue pot"))["memory"]["id"]
            assert [h["id"] for h in await tool(client, "recall", query="where is the spare key", k=1)] == [note]
            [content] = (await client.read_resource(f"memcli://{USER}/summary")).contents
            assert content.text == "no event summary yet: memcli consolidate writes it"
            assert "-k must be at least 1" in await tool_error(client, "recall", query="key", k=0)
            assert (await tool(client, "delete_memory", id=note))["id"] == note
            assert await tool(client, "recall", query="where is the spare key") == []

    anyio.run(main)


def test_the_http_transport_needs_the_bearer_token_and_never_shows_it(tmp_path: Path) -> None:
    """``memcli mcp --http``: on 127.0.0.1, a request without the token is refused (401),
    one with it is served; stderr names the token file, not the token."""
    import socket
    import subprocess

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token_file = tmp_path / "token"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [
        sys.executable,
        str(Path(__file__).with_name("fakes")),
        "cli",
        "--",
        "mcp",
        "--user",
        USER,
        "--http",
        "--port",
        str(port),
        "--token-file",
        str(token_file),
    ]
    server = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        line = server.stderr.readline()
        assert line == f"memcli: MCP server for {USER} at http://127.0.0.1:{port}/mcp; bearer token in {token_file}\n"
        token = token_file.read_text().strip()
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(100):  # the line comes just before uvicorn listens
            try:
                refused = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
                break
            except httpx2.ConnectError:
                time.sleep(0.1)
        else:
            pytest.fail("memcli mcp --http did not listen")
        assert refused.status_code == 401

        async def main() -> None:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    assert set(t.name for t in (await client.list_tools()).tools) == ALL_TOOLS
                    assert (await tool(client, "remember", text="over HTTP"))["added"] is True

        anyio.run(main)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert token not in line + err


def test_a_note_over_the_tool_bound_is_a_tool_error_and_nothing_is_stored(fake_embedder: Any) -> None:
    async def test(client: Client) -> None:
        line = await tool_error(client, "remember", text="word " * (MAX_TOOL_TEXT // 5 + 1))
        assert "remember takes at most 100,000" in line and "nothing was stored" in line
        assert await tool(client, "list_memories") == []

    session(test)


def test_a_stdio_client_gets_a_json_rpc_error_for_each_message_it_cannot_send(tmp_path: Path) -> None:
    """The SDK alone answers none of these, and its client waits for ever: malformed JSON,
    a top-level array, no "jsonrpc", a lone surrogate, bytes that are not UTF-8 (which it
    would store as U+FFFD)."""
    fakes = Path(__file__).with_name("fakes")
    env = {"MEMCLI_HOME": os.environ["MEMCLI_HOME"], "MEMCLI_SERVICE": "off", "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen(
        [sys.executable, str(fakes), "cli", "--", "mcp", "--user", USER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )

    def send(line: bytes) -> dict[str, Any]:
        server.stdin.write(line + b"\n")
        server.stdin.flush()
        return json.loads(server.stdout.readline())

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert "result" in send(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode()
        )
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        remember = (
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"text":"%s"}}}'
        )
        for line, code, ident in (
            (b"{not json", -32700, None),
            (b"[1, 2]", -32600, None),
            (b'{"id": 5, "method": "tools/list"}', -32600, 5),
            (remember % (6, b"a\\ud800b"), -32700, 6),
            (remember % (7, b"caf\xe9"), -32700, None),
        ):
            reply = send(line)
            assert (reply["error"]["code"], reply["id"]) == (code, ident), (line, reply)
        assert "result" in send(b'{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}')  # the server goes on
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    assert json.loads(ok(CliRunner().invoke(app, ["list", "--json", "--user", USER])).stdout) == []


def test_mcp_http_refuses_a_port_out_of_range_and_one_in_use_in_one_line(runner: CliRunner) -> None:
    result = runner.invoke(app, ["mcp", "--http", "--port", "99999"])
    assert result.exit_code == 2 and "65535" in result.stderr and result.stderr.count("\n") == 1
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["mcp", "--http", "--port", str(port)])
    assert (
        result.exit_code == 2
        and result.stderr.count("\n") == 1
        and f"cannot listen on 127.0.0.1:{port}" in result.stderr
    )
