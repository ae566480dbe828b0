"""A real HTTP/1.1 server on 127.0.0.1 (h11 over asyncio, in its own thread) replaying replies."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any

import h11

HOLD_LIMIT = 30.0  # seconds a held stream waits for the client to go away


@dataclass
class Reply:
    """One scripted response."""

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)  # each its own HTTP chunk, flushed
    body: bytes | None = None  # a plain (Content-Length) body instead of chunks
    cut: bool = False  # close the connection after the chunks, mid-body
    hold: bool = False  # after the chunks, keep the stream open until the client leaves


@dataclass
class Received:
    """One request the server got."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    connection: int

    @property
    def json(self) -> Any:
        """The request body parsed as JSON."""
        return json.loads(self.body)


class LoopbackServer:
    """Serves scripted replies in order; records requests, connections and client hang-ups."""

    def __init__(self) -> None:
        self.replies: collections.deque[Reply] = collections.deque()
        self.received: list[Received] = []
        self.connections = 0
        self.client_left = threading.Event()
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        """The server's base URL."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackServer:
        """Bind an ephemeral port and serve in the background thread."""
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", 0), self._loop)
        self._server = fut.result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        """Stop serving and end the thread."""
        async def _close() -> None:
            if self._server is not None:
                self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            if self._tasks:
                await asyncio.wait(self._tasks, timeout=5)
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def queue(self, *replies: Reply) -> None:
        """Append replies to serve, one per request, in order."""
        self.replies.extend(replies)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        conn = h11.Connection(h11.SERVER)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self._writers.add(writer)
        holding = False
        try:
            while True:
                request = await self._read_request(conn, reader, number)
                if request is None:
                    return
                self.received.append(request)
                reply = self.replies.popleft() if self.replies else Reply(
                    status=500, headers=[("x-should-retry", "false")],
                    body=b'{"error": {"message": "no reply scripted"}}')
                holding = reply.hold
                if not await self._send(conn, reply, reader, writer):
                    return
                if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.RemoteProtocolError):
            return
        finally:
            if holding:  # however the held stream ended, the client is gone
                self.client_left.set()
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _read_request(self, conn: h11.Connection, reader: asyncio.StreamReader,
                            number: int) -> Received | None:
        head: h11.Request | None = None
        body = b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(65536))
                continue
            if isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage) and head is not None:
                headers = {k.decode().lower(): v.decode() for k, v in head.headers}
                return Received(head.method.decode(), head.target.decode(), headers, body,
                                number)
            else:
                return None

    async def _send(self, conn: h11.Connection, reply: Reply, reader: asyncio.StreamReader,
                    writer: asyncio.StreamWriter) -> bool:
        """Send one reply; False when the connection is finished."""
        headers = list(reply.headers)
        if reply.body is not None:
            headers.append(("content-length", str(len(reply.body))))
            if not any(k.lower() == "content-type" for k, _ in headers):
                headers.append(("content-type", "application/json"))
            writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers)))
            writer.write(conn.send(h11.Data(data=reply.body)))
            writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
            return True
        headers += [("content-type", "text/event-stream; charset=utf-8"),
                    ("cache-control", "no-cache")]
        writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers)))
        await writer.drain()
        try:
            for chunk in reply.chunks:
                writer.write(conn.send(h11.Data(data=chunk)))
                await writer.drain()
        except ConnectionError:  # the client left while the head was still being written
            if reply.hold:
                self.client_left.set()
            return False
        if reply.cut:
            return False
        if reply.hold:
            with contextlib.suppress(TimeoutError, ConnectionError):
                while await asyncio.wait_for(reader.read(65536), HOLD_LIMIT):
                    pass
            self.client_left.set()
            return False
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()
        return True
