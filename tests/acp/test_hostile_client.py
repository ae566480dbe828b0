"""A hostile ACP client writing raw lines to a real ``openprogram-lsp acp``: every line that is
no JSON-RPC message object gets its error and the agent keeps serving; an unanswered
permission request ends after ``approval_timeout``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from acp import text_block
from tests.acp.client import RecordingClient, agent_command, agent_env, subprocess_agent

pytestmark = pytest.mark.timeout(120)

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}
DEEP = b"[" * 100_000
# (what the line is, the raw line, the error code, the id the answer carries)
HOSTILE: list[tuple[str, bytes, int, Any]] = [
    ("an empty array", b"[]", -32600, None),
    ("a batch", json.dumps([{"jsonrpc": "2.0", "id": 5, "method": "session/new",
                             "params": {"cwd": "/", "mcpServers": []}}]).encode(), -32600, None),
    ("a string", b'"x"', -32600, None),
    ("a number", b"12345", -32600, None),
    ("null", b"null", -32600, None),
    ("invalid JSON", b"{not json", -32700, None),
    ("100,000 nested brackets", DEEP, -32600, None),
    ("a deep request", b'{"jsonrpc":"2.0","id":6,"method":"session/new","params":'
     + b'{"x":' * 5000 + b"1" + b"}" * 5000 + b"}", -32600, None),
    ("an object id", b'{"jsonrpc":"2.0","id":{},"result":1}', -32600, None),
    ("a string error", b'{"jsonrpc":"2.0","id":3,"error":"boom"}', -32600, 3),
    ("a number method", b'{"jsonrpc":"2.0","id":4,"method":12}', -32600, 4),
    ("no jsonrpc", b'{"id":7,"method":"session/new"}', -32600, 7),
]


class RawPeer:
    """One agent process and the raw lines between us."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.stderr = bytearray()
        self._drain = asyncio.ensure_future(self._read_stderr())

    async def _read_stderr(self) -> None:
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk

    async def send(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        await self.proc.stdin.drain()

    async def frame(self, timeout: float = 30) -> dict[str, Any]:
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        assert line, f"the agent closed stdout; stderr: {self.stderr[-3000:].decode()}"
        message: dict[str, Any] = json.loads(line)
        assert message.get("jsonrpc") == "2.0", message
        return message

    async def answer_to(self, msg_id: Any) -> dict[str, Any]:
        """The next response with ``msg_id``, skipping notifications."""
        while True:
            message = await self.frame()
            if "method" not in message and message.get("id") == msg_id:
                return message


@contextlib.asynccontextmanager
async def raw_agent(home: Path, cwd: Path) -> AsyncIterator[RawPeer]:
    """``openprogram-lsp acp`` (through the fork client when the suite has one)."""
    proc: Any = await asyncio.create_subprocess_exec(
        *agent_command(), env=agent_env(home), cwd=cwd, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=1 << 24)
    peer = RawPeer(proc)
    try:
        yield peer
    finally:
        if proc.returncode is None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await peer._drain


async def test_every_line_that_is_no_message_is_answered_and_the_agent_serves_on(
        home: Path, workspace: Path) -> None:
    async with raw_agent(home, workspace) as peer:
        await peer.send(json.dumps(INIT).encode())
        assert "agentCapabilities" in (await peer.answer_to(0))["result"]
        for name, line, code, msg_id in HOSTILE:
            await peer.send(line)
            answer = await peer.frame()
            assert answer.get("error", {}).get("code") == code, (name, answer)
            assert answer["id"] == msg_id, (name, answer)
        # a response to nothing we asked is ignored, not answered, and breaks nothing
        await peer.send(b'{"jsonrpc":"2.0","id":"nobody-asked","result":{}}')
        new = {"jsonrpc": "2.0", "id": 8, "method": "session/new",
               "params": {"cwd": str(workspace), "mcpServers": []}}
        await peer.send(json.dumps(new).encode())
        assert (await peer.answer_to(8))["result"]["sessionId"]
        assert peer.proc.returncode is None
        peer.proc.stdin.close()
        assert await asyncio.wait_for(peer.proc.wait(), 30) == 0
    assert b"Traceback" not in peer.stderr, peer.stderr[-3000:].decode()


async def test_an_over_long_line_is_answered_and_skipped(home: Path, workspace: Path) -> None:
    async with raw_agent(home, workspace) as peer:
        await peer.send(json.dumps(INIT).encode())
        await peer.answer_to(0)
        await peer.send(b'{"jsonrpc":"2.0","id":9,"method":"x","params":"'
                        + b"a" * (51 * 1024 * 1024) + b'"}')
        answer = await peer.frame(timeout=60)
        assert answer["error"]["code"] == -32600 and answer["id"] is None, answer
        assert "over the limit" in answer["error"]["message"]
        await peer.send(json.dumps({"jsonrpc": "2.0", "id": 10, "method": "session/new",
                                    "params": {"cwd": str(workspace),
                                               "mcpServers": []}}).encode())
        assert (await peer.answer_to(10))["result"]["sessionId"]


async def test_an_unanswered_permission_request_ends_after_approval_timeout(
        home: Path, workspace: Path) -> None:
    (workspace / ".openprogram").mkdir()
    (workspace / ".openprogram" / "config.toml").write_text("approval_timeout = 2\n")
    client = RecordingClient(answer="allow_once", hold=asyncio.Event())  # never answers
    async with subprocess_agent(client, home, workspace) as (conn, _proc):
        session = await conn.new_session(cwd=str(workspace))
        began = time.monotonic()
        resp = await asyncio.wait_for(conn.prompt(
            session_id=session.session_id, prompt=[text_block("write a.txt\nhello\n")]), 60)
        elapsed = time.monotonic() - began
        assert client.hold is not None
        client.hold.set()
    assert "permission" in client.names()
    assert resp.stop_reason == "end_turn"
    assert not (workspace / "a.txt").exists()
    assert 2 <= elapsed < 30, elapsed
