"""A ``serve --tcp`` subprocess and a small JSON-RPC client over a real loopback socket."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import forkserver

SERVE = [sys.executable, "-m", "openprogram_lsp", "serve"]
LISTENING = re.compile(r"listening on 127\.0\.0\.1:(\d+); token (\S+); run file (\S+)")


@dataclass
class TcpServer:
    """A running ``serve --tcp 0``."""

    proc: asyncio.subprocess.Process
    port: int
    token: str
    run_file: Path
    stderr: list[str] = field(default_factory=list)
    tasks: set[asyncio.Future[None]] = field(default_factory=set)

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None


async def start_tcp_server(home: Path, *args: str, env: dict[str, str] | None = None
                           ) -> TcpServer:
    """Start a TCP server on a free loopback port and wait for its listening line."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    base["OPENPROGRAM_HOME"] = str(home)
    base.update(env or {})
    command = [*SERVE, "--tcp", "0", *args]
    forked = forkserver.forkable(command)
    proc: Any = await (
        asyncio.create_subprocess_exec(
            *command, env=base, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        if forked is None else forkserver.start_async(
            forked, env=base, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL))
    assert proc.stderr is not None
    lines: list[str] = []
    while True:
        raw = await asyncio.wait_for(proc.stderr.readline(), 30)
        if not raw:
            raise AssertionError(f"server did not listen: {''.join(lines)}")
        line = raw.decode(errors="replace")
        lines.append(line)
        match = LISTENING.search(line)
        if match:
            break
    server = TcpServer(proc, int(match.group(1)), match.group(2), Path(match.group(3)), lines)

    async def drain() -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            server.stderr.append(line.decode(errors="replace"))

    server.tasks.add(asyncio.ensure_future(drain()))
    return server


async def stop_tcp_server(server: TcpServer) -> None:
    """Terminate the server and wait for it."""
    if server.alive:
        server.proc.terminate()
        try:
            await asyncio.wait_for(server.proc.wait(), 30)
        except TimeoutError:
            server.proc.kill()
            await server.proc.wait()


def encode(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """One framed message, None at end of stream."""
    length = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    assert length is not None
    data: dict[str, Any] = json.loads(await reader.readexactly(length))
    return data


Handler = Callable[[str, Any], Awaitable[Any]]


class Client:
    """A JSON-RPC peer on one socket: requests, recorded notifications, server requests."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.events: list[dict[str, Any]] = []
        self.server_requests: list[tuple[str, Any]] = []
        self.on_request: Handler | None = None
        self._next = 0
        self._waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.closed = asyncio.Event()
        self._answers: set[asyncio.Future[None]] = set()
        self._task = asyncio.ensure_future(self._pump())

    @classmethod
    async def connect(cls, port: int) -> Client:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    def send(self, message: Any) -> None:
        self.writer.write(encode(message))

    async def _pump(self) -> None:
        try:
            while (msg := await read_frame(self.reader)) is not None:
                if "method" in msg and "id" in msg:
                    self.server_requests.append((msg["method"], msg.get("params")))
                    task = asyncio.ensure_future(self._answer(msg))
                    self._answers.add(task)
                    task.add_done_callback(self._answers.discard)
                elif "method" in msg:
                    if msg["method"] == "openprogram/event":
                        self.events.append(msg["params"])
                elif msg.get("id") in self._waiting:
                    self._waiting.pop(msg["id"]).set_result(msg)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.closed.set()
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("closed"))

    async def _answer(self, msg: dict[str, Any]) -> None:
        result = await self.on_request(msg["method"], msg.get("params")) \
            if self.on_request else None
        self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    async def request(self, method: str, params: Any = None, *,
                      timeout: float = 30) -> dict[str, Any]:
        """The whole response message (``result`` or ``error``)."""
        self._next += 1
        msg_id = self._next
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = fut
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await asyncio.wait_for(fut, timeout)

    async def call(self, method: str, params: Any = None, *, timeout: float = 30) -> Any:
        """The result, or AssertionError with the error."""
        resp = await self.request(method, params, timeout=timeout)
        assert "error" not in resp, resp["error"]
        return resp["result"]

    async def initialize(self, token: str | None, workspace: Path, *,
                         options: dict[str, Any] | None = None,
                         permissions: bool = True) -> dict[str, Any]:
        opts = dict(options or {})
        if token is not None:
            opts["token"] = token
        resp = await self.request("initialize", {
            "processId": None, "rootUri": workspace.as_uri(),
            "capabilities": {"experimental": {"openprogram": {"permissions": permissions,
                                                              "questions": permissions}}},
            "initializationOptions": opts})
        if "result" in resp:
            self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return resp

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    async def wait_event(self, kind: str, pred: Callable[[dict[str, Any]], bool] | None = None,
                         timeout: float = 20) -> dict[str, Any]:
        for _ in range(int(timeout / 0.01)):
            for e in self.of_type(kind):
                if pred is None or pred(e):
                    return e
            await asyncio.sleep(0.01)
        raise AssertionError(f"no {kind}; got {[e['type'] for e in self.events]}")

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), 5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._task, 5)


@contextlib.asynccontextmanager
async def clients() -> AsyncIterator[list[Client]]:
    """Clients opened in a test, all closed at its end."""
    opened: list[Client] = []
    try:
        yield opened
    finally:
        for c in opened:
            await c.close()
