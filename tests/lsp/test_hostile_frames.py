"""Raw frames to the real language server, over stdio and over TCP: nesting too deep to parse
is answered and the link serves on, and the LSP lifecycle holds (-32002 before ``initialize``,
-32600 after ``shutdown``, ``exit`` ends the process)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.lsp.conftest import SERVER
from tests.lsp.tcp_helpers import Client, encode, read_frame, start_tcp_server, stop_tcp_server

pytestmark = pytest.mark.timeout(120)

DEEP_BODIES = [
    b"[" * 100_000,  # what killed the stdio server (RecursionError, exit 70)
    b"[" * 100_000 + b"]" * 100_000,
    b'{"jsonrpc":"2.0","id":5,"method":"openprogram/sessions","params":{"a":'
    + b"[" * 50_000 + b"]" * 50_000 + b"}}",
]


def _raw(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _init(workspace: Path, msg_id: int = 1, **options: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize",
            "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {},
                       "initializationOptions": options}}


class Link:
    """Frames both ways over one reader/writer pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any) -> None:
        self.reader, self.writer = reader, writer

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def answer_to(self, msg_id: Any, timeout: float = 30) -> dict[str, Any]:
        """The next response carrying ``msg_id`` (notifications skipped)."""
        async with asyncio.timeout(timeout):
            while True:
                message = await read_frame(self.reader)
                assert message is not None, "the server closed the link"
                if "method" not in message and message.get("id") == msg_id:
                    return message

    async def request(self, msg_id: int, method: str, params: Any = None) -> dict[str, Any]:
        await self.send(encode({"jsonrpc": "2.0", "id": msg_id, "method": method,
                                "params": params}))
        return await self.answer_to(msg_id)


async def _hostile_then_serving(link: Link) -> None:
    for body in DEEP_BODIES:
        await link.send(_raw(body))
        answer = await link.answer_to(None)
        assert answer["error"]["code"] == -32600, answer
        assert "nested deeper" in answer["error"]["message"]
    sessions = await link.request(20, "openprogram/sessions", {})
    assert "sessions" in sessions["result"], sessions


@contextlib.asynccontextmanager
async def stdio_server(home: Path, cwd: Path) -> AsyncIterator[tuple[Link, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env["OPENPROGRAM_HOME"] = str(home)
    forked = forkserver.forkable(SERVER)
    proc: Any = await (asyncio.create_subprocess_exec(
        *SERVER, env=env, cwd=cwd, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        if forked is None else forkserver.start_async(forked, env=env, cwd=str(cwd)))
    stderr = bytearray()

    async def drain() -> None:
        while chunk := await proc.stderr.read(65536):
            stderr.extend(chunk)

    draining = asyncio.ensure_future(drain())
    try:
        yield Link(proc.stdout, proc.stdin), proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(proc.wait(), 30)
        await draining
    assert b"Traceback" not in stderr and b"RecursionError" not in stderr, stderr.decode()


async def test_stdio_answers_deep_nesting_and_holds_the_lifecycle(
        tmp_path: Path, workspace: Path) -> None:
    async with stdio_server(tmp_path / "home", workspace) as (link, proc):
        early = await link.request(1, "openprogram/sessions", {})
        assert early["error"]["code"] == -32002, early
        await link.send(_raw(b"[" * 100_000))  # before initialize too
        assert (await link.answer_to(None))["error"]["code"] == -32600
        await link.send(encode(_init(workspace, 2)))
        assert "capabilities" in (await link.answer_to(2))["result"]
        await link.send(encode({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        await link.send(encode(_init(workspace, 3)))
        again = await link.answer_to(3)
        assert again["error"]["code"] == -32600, again
        await _hostile_then_serving(link)
        assert (await link.request(30, "shutdown"))["result"] is None
        late = await link.request(31, "openprogram/sessions", {})
        assert late["error"]["code"] == -32600, late
        assert "shutting down" in late["error"]["message"]
        await link.send(encode({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(proc.wait(), 30) == 0


async def test_tcp_answers_deep_nesting_and_holds_the_lifecycle(
        tmp_path: Path, workspace: Path) -> None:
    server = await start_tcp_server(tmp_path / "home")
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        link = Link(reader, writer)
        await link.send(_raw(b"[" * 100_000))  # before authenticating: answered, not fatal
        assert (await link.answer_to(None))["error"]["code"] == -32600
        await link.send(encode(_init(workspace, 1, token=server.token)))
        assert "capabilities" in (await link.answer_to(1))["result"]
        await _hostile_then_serving(link)
        assert (await link.request(30, "shutdown"))["result"] is None
        late = await link.request(31, "openprogram/sessions", {})
        assert late["error"]["code"] == -32600, late
        writer.close()
        other = await Client.connect(server.port)  # the server itself serves on
        try:
            assert "result" in await other.initialize(server.token, workspace)
            assert "sessions" in await other.call("openprogram/sessions", {})
        finally:
            await other.close()
        assert server.alive
        assert not any("RecursionError" in line or "Traceback" in line
                       for line in server.stderr), "".join(server.stderr)
    finally:
        await stop_tcp_server(server)
