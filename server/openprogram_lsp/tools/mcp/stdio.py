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
import os
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

        async def reader() -> None:
            buf = bytearray()
            live = True  # False once the session stopped taking messages: read and drop
            skipping = False  # inside a line longer than MAX_MESSAGE: drop to its end
            async with read_send:
                while chunk := await stdout.read(2 ** 16):
                    items: list[SessionMessage | Exception] = []
                    start = len(buf)
                    buf += chunk
                    end = buf.find(b"\n", start)
                    while end >= 0:
                        line = bytes(buf[:end])
                        del buf[:end + 1]
                        if not skipping and line.strip():
                            items.append(_parse(line))
                        skipping = False
                        end = buf.find(b"\n")
                    if len(buf) > MAX_MESSAGE and not skipping:
                        skipping = True
                        items.append(ValueError(f"the server sent a message longer than "
                                                f"{MAX_MESSAGE} bytes; it was dropped"))
                    if skipping:
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
