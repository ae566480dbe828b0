"""An MCP server over stdio, started and ended by ``tools.procs`` as a tool's command is.

The SDK's ``stdio_client`` leaves the server to asyncio's child watcher, which reaps it at once,
then signals its process group by number; it gives the server no death signal; and a server
that exits within the grace period leaves its children running (``docs/decisions/
tool-spawn.md``, "MCP stdio servers"). This transport gives the SDK's ``Client`` the same two
streams over a ``procs.Child``: newline-delimited JSON-RPC, and the MCP shutdown sequence
(close stdin, wait, SIGTERM, wait, SIGKILL) on a process we reap ourselves.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.tools import procs

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

GRACE = 2.0  # seconds a server gets to exit after its stdin closes (the SDK's figure)
TERM_WAIT = 2.0  # seconds after SIGTERM before SIGKILL
MAX_MESSAGE = 64 * 2 ** 20  # bytes of one line; a longer one is dropped as an error
TOO_LARGE = -32000  # the error a request whose answer was dropped for its size gets


def resolve(command: str, env: dict[str, str], cwd: Path) -> str:
    """``command`` as an exec would find it (the server's PATH; a relative path from ``cwd``),
    or FileNotFoundError naming it."""
    if "/" in command:
        found = str(cwd / command)
        if os.access(found, os.X_OK) and not os.path.isdir(found):
            return found
    else:
        which = shutil.which(command, path=env.get("PATH", os.defpath))
        if which is not None:
            return which
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)


def _parse(line: bytes) -> SessionMessage | Exception:
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # pydantic's ValidationError is one
        return exc


def too_large(size: int) -> str:
    """What a call whose answer was dropped for its size fails with."""
    return (f"its answer ({size:,} bytes) is over the {MAX_MESSAGE // 2 ** 20} MiB limit of one "
            "MCP message and was dropped; ask for less (a smaller page, range or file)")


_ENDS = 512  # bytes kept of each end of a dropped line: where its id is
_ID = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
_JSONRPC = rb'"jsonrpc"\s*:\s*"2\.0"\s*,\s*'
# a response that begins with its id (the Python SDK: jsonrpc, id, result) ...
_HEAD_ID = re.compile(rb'\s*\{\s*(?:' + _JSONRPC + rb')?"id"\s*:\s*' + _ID
                      + rb'\s*,\s*(?:' + _JSONRPC + rb')?"(?:result|error)"')
# ... or with its result and ends with its id (the TypeScript SDK: result, jsonrpc, id)
_HEAD_RESULT = re.compile(rb'\s*\{\s*(?:' + _JSONRPC + rb')?"(?:result|error)"')
_TAIL_ID = re.compile(rb'"id"\s*:\s*' + _ID + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*\Z')


class _Oversize:
    """A line over ``MAX_MESSAGE``: only its size and its two ends are kept, and when it is
    an answer to one of our requests, that request fails now (not at its timeout)."""

    def __init__(self, head: bytes) -> None:
        self.head = head
        self.tail = b""
        self.size = 0

    def more(self, data: bytes | bytearray) -> None:
        self.size += len(data)
        self.tail = (self.tail + bytes(data[-_ENDS:]))[-_ENDS:]

    def finish(self, rest: bytes, pending: set[int | str]) -> list[Any]:
        """What the session gets for the dropped line: an error answering the request it
        answered (every unanswered one when its id cannot be read), and the reason."""
        from mcp.shared.message import SessionMessage
        from mcp_types import ErrorData, JSONRPCError

        self.more(rest)
        reason = too_large(self.size)
        ids: list[int | str] = []
        match = _HEAD_ID.match(self.head)
        if match is None and _HEAD_RESULT.match(self.head):
            match = _TAIL_ID.search(self.tail)
            if match is None:  # an answer, but to which request: each waiting one fails
                ids = sorted(pending, key=str)
        if match is not None:
            found = json.loads(match.group(1))
            ids = [found] if found in pending else []  # an answer nobody waits for
        out: list[Any] = [ValueError(f"the server sent a message of {self.size:,} bytes, over "
                                     f"the limit of {MAX_MESSAGE:,}; it was dropped")]
        for msg_id in ids:
            pending.discard(msg_id)
            out.append(SessionMessage(JSONRPCError(
                jsonrpc="2.0", id=msg_id, error=ErrorData(code=TOO_LARGE, message=reason))))
        return out


def _asked(message: Any, pending: set[int | str]) -> None:
    """Track one outgoing message: a request waits for its answer; a cancel ends the wait."""
    method, msg_id = getattr(message, "method", None), getattr(message, "id", None)
    if method is not None and msg_id is not None:
        pending.add(msg_id)
    elif method == "notifications/cancelled":
        params = getattr(message, "params", None)
        request = params.get("requestId") if isinstance(params, dict) else None
        if request is not None:
            pending.discard(request)


def _answered(item: Any, pending: set[int | str]) -> None:
    """Track one incoming message: a response or error answers a request of ours."""
    message = getattr(item, "message", None)
    if message is not None and getattr(message, "method", None) is None:
        msg_id = getattr(message, "id", None)
        if msg_id is not None:
            pending.discard(msg_id)


@asynccontextmanager
async def stdio_server(command: str, args: list[str], *, env: dict[str, str], cwd: Path,
                       stderr: int) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server and yield (read stream, write stream) for ``mcp.Client``."""
    import anyio
    from mcp.shared.message import SessionMessage

    argv = (resolve(command, env, cwd), *args)
    child = await procs.spawn(*argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=stderr, cwd=cwd, env=env)
    try:
        assert child.stdin is not None and child.stdout is not None
        stdin, stdout = child.stdin, child.stdout
        read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)

        pending: set[int | str] = set()  # ids of our requests still unanswered

        async def reader() -> None:
            buf = bytearray()
            live = True  # False once the session stopped taking messages: read and drop
            big: _Oversize | None = None  # inside a line longer than MAX_MESSAGE: its ends
            async with read_send:
                while chunk := await stdout.read(2 ** 16):
                    items: list[SessionMessage | Exception] = []
                    start = len(buf)
                    buf += chunk
                    end = buf.find(b"\n", start)
                    while end >= 0:
                        line = bytes(buf[:end])
                        del buf[:end + 1]
                        if big is not None:
                            items.extend(big.finish(line, pending))
                            big = None
                        elif line.strip():
                            item = _parse(line)
                            _answered(item, pending)
                            items.append(item)
                        end = buf.find(b"\n")
                    if big is None and len(buf) > MAX_MESSAGE:
                        big = _Oversize(bytes(buf[:_ENDS]))
                    if big is not None:
                        big.more(buf)
                        buf.clear()
                    for item in items if live else ():
                        try:
                            await read_send.send(item)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            live = False
                            break

        async def writer() -> None:
            try:
                async with write_recv:
                    async for message in write_recv:
                        data = message.message.model_dump_json(by_alias=True,
                                                               exclude_unset=True)
                        _asked(message.message, pending)
                        stdin.write(data.encode() + b"\n")
                        await stdin.drain()
            except (OSError, RuntimeError):  # the server closed its stdin or exited
                await read_send.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_recv, write_send
            finally:
                read_recv.close()  # a reader blocked on delivery goes on draining stdout
                write_send.close()
                with anyio.CancelScope(shield=True):
                    await _stop(child)
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await child.close()


async def _stop(child: procs.Child) -> None:
    """The MCP shutdown: close stdin, give the server ``GRACE`` to exit, then SIGTERM its
    group, then SIGKILL everything it started. Its exit kills what it left (``procs``): its
    group, and the processes it had started when the close began, wherever they moved."""
    import anyio

    child.hold_tree()  # a child it moved out of its group dies with it too
    if child.stdin is not None:
        child.stdin.close()
    for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, TERM_WAIT)):
        with anyio.move_on_after(wait):
            await child.wait()
            return
        if sig == signal.SIGTERM:
            child.signal_group(signal.SIGTERM)
    with contextlib.suppress(Exception):
        await child.kill()
