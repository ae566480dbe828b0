"""A recording ACP client on the SDK's client side, and ways to connect it to our agent."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.client.connection import ClientSideConnection
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    FileSystemCapabilities,
    Implementation,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp.stdio import spawn_agent_process

from acp import PROTOCOL_VERSION
from tests import forkserver

Answer = str | Callable[[Any], Any]


@dataclass
class RecordingClient:
    """Records every update and request; answers permissions with ``answer`` (an option kind)."""

    answer: Answer = "allow_once"
    fs: bool = False
    terminal: bool = False
    elicitation: bool = False
    buffers: dict[str, str] = field(default_factory=dict)
    log: list[tuple[str, Any]] = field(default_factory=list)
    hold: asyncio.Event | None = None
    elicit_answer: str = "blue"
    terminals: dict[str, Any] = field(default_factory=dict)
    processes: list[asyncio.subprocess.Process] = field(default_factory=list)
    name: str = "sdk-test-client"  # clientInfo.name

    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs),
            terminal=self.terminal,
            elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
            if self.elicitation else None)

    # what tests read
    def updates(self, kind: str | None = None) -> list[Any]:
        return [u for name, u in self.log if name == "update"
                and (kind is None or u.session_update == kind)]

    def names(self) -> list[str]:
        return [name if name != "update" else f"update:{u.session_update}" for name, u in self.log]

    def text(self) -> str:
        return "".join(u.content.text for u in self.updates("agent_message_chunk"))

    # the Client protocol
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.log.append(("update", update))

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.log.append(("permission", {"sessionId": session_id, "toolCall": tool_call,
                                        "options": options}))
        if self.hold is not None:
            await self.hold.wait()
        answer = self.answer(options) if callable(self.answer) else self.answer
        chosen = next((o for o in options if o.kind == answer or o.option_id == answer), None)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=chosen.option_id))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        self.log.append(("fs/read_text_file", path))
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text("utf-8"))

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        self.log.append(("fs/write_text_file", path))
        Path(path).write_text(content, "utf-8")
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              cwd: str | None = None, **kwargs: Any) -> Any:
        """A real terminal: the command runs as a child of the client, as an editor does it."""
        self.log.append(("terminal/create", [command, *(args or [])]))
        proc = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        self.processes.append(proc)
        tid = f"t{len(self.terminals)}"
        self.terminals[tid] = (proc, asyncio.ensure_future(proc.stdout.read()))  # type: ignore[union-attr]
        return CreateTerminalResponse(terminal_id=tid)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> Any:
        self.log.append(("terminal/wait_for_exit", terminal_id))
        proc, _ = self.terminals[terminal_id]
        code = await proc.wait()
        return WaitForTerminalExitResponse(exit_code=code if code >= 0 else None,
                                           signal=None if code >= 0 else str(-code))

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.log.append(("terminal/output", terminal_id))
        proc, reader = self.terminals[terminal_id]
        data = await asyncio.wait_for(reader, 5) if proc.returncode is not None else b""
        return TerminalOutputResponse(output=data.decode(), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.log.append(("terminal/kill", terminal_id))
        proc, _ = self.terminals[terminal_id]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.log.append(("terminal/release", terminal_id))
        proc, reader = self.terminals.pop(terminal_id)
        await _end(proc)
        reader.cancel()
        return ReleaseTerminalResponse()

    async def close_terminals(self) -> None:
        """End every terminal process and close its transport before the test's loop closes.

        A killed command's pipe can stay open a moment longer than its exit (a sandbox's init
        in a session of its own dies after bwrap): a terminal released then, or a kill whose
        handler the closing connection cancelled, left a subprocess transport with an open
        pipe, and its ``__del__`` in a later test raised "Event loop is closed"."""
        for proc in self.processes:
            await _end(proc)
            transport = getattr(proc, "_transport", None)  # asyncio exposes no close
            if transport is not None:
                transport.close()
        self.processes.clear()

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.log.append(("elicitation/create", {"message": message, "mode": mode}))
        return AcceptElicitationResponse(action="accept", content={"answer": self.elicit_answer})

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        self.log.append(("elicitation/complete", elicitation_id))

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.log.append(("ext_method", (method, params)))
        return {}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.log.append(("ext", (method, params)))

    def ext_events(self, type: str | None = None) -> list[dict[str, Any]]:
        return [p for name, (m, p) in ((n, v) for n, v in self.log if n == "ext")
                if m == "openprogram/event" and (type is None or p.get("type") == type)]

    def on_connect(self, conn: Any) -> None:
        pass


async def _end(proc: asyncio.subprocess.Process) -> None:
    """Kill a terminal's process group if it runs, and wait (bounded) for its exit and the end
    of its pipes (what ``wait`` waits for on 3.11)."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), 10)


async def until(pred: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    """Wait until ``pred()`` holds (bounded; generous for a loaded CI machine)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not pred():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def initialize(conn: ClientSideConnection, client: RecordingClient) -> Any:
    return await asyncio.wait_for(conn.initialize(
        protocol_version=PROTOCOL_VERSION, client_capabilities=client.capabilities(),
        client_info=Implementation(name=client.name, version="0")), 120)


@contextlib.asynccontextmanager
async def in_process(dispatcher: Any, client: RecordingClient, **agent_kw: Any
                     ) -> AsyncIterator[tuple[ClientSideConnection, Any]]:
    """Our agent and the SDK client on one loop, over a real socket pair (ndjson frames)."""
    from openprogram_lsp.acp.routes import connect
    from openprogram_lsp.acp.server import attach

    agent = attach(dispatcher, **agent_kw)
    a, b = socket.socketpair()
    a_reader, a_writer = await asyncio.open_connection(sock=a)
    b_reader, b_writer = await asyncio.open_connection(sock=b)
    agent_conn = connect(agent, a_reader, a_writer)
    serving = asyncio.ensure_future(agent_conn.listen())
    conn = ClientSideConnection(client, b_writer, b_reader, use_unstable_protocol=True)
    try:
        await initialize(conn, client)
        yield conn, agent
    finally:  # every step bounded: a stuck agent fails the test instead of hanging the suite
        await asyncio.wait_for(conn.close(), 20)
        b_writer.close()
        await asyncio.wait_for(agent.shutdown(10), 20)
        await asyncio.wait_for(agent_conn.close(), 20)
        serving.cancel()
        with contextlib.suppress(BaseException):
            await serving
        await client.close_terminals()


def agent_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env.update(OPENPROGRAM_HOME=str(home), **extra)
    return env


AGENT_COMMAND = (sys.executable, "-m", "openprogram_lsp.cli", "acp")


def agent_command() -> tuple[str, ...]:
    """``openprogram-lsp acp`` through this worker's fork server (tests/forkclient.py: the
    real agent on the SDK's own pipes, without an exec's 1.6 s of imports), or the exec'd
    ``AGENT_COMMAND`` when ``OPLSP_TESTS_EXEC`` asks for it. A fresh interpreter's agent stays
    covered by test_subprocess.py's log flood and the documented line by acpx's first test."""
    forked = forkserver.launcher()
    return AGENT_COMMAND if forked is None else (forked, "acp")


@contextlib.asynccontextmanager
async def subprocess_agent(client: RecordingClient, home: Path, cwd: Path, *args: str,
                           command: tuple[str, ...] | None = None,
                           env: dict[str, str] | None = None
                           ) -> AsyncIterator[tuple[ClientSideConnection, Any]]:
    """``openprogram-lsp acp`` as a child process, driven by the SDK client over stdio."""
    if command is None:
        command = agent_command()
    # the agent gets longer to exit than the SDK's 2 s: it gives its own MCP servers the 2 s
    # grace the MCP spec asks for after closing their stdin, and under load the SDK's
    # terminate() then raced the exit (ProcessLookupError)
    async with spawn_agent_process(client, command[0], *command[1:], *args,
                                   env=agent_env(home, **(env or {})), cwd=cwd,
                                   transport_kwargs={"shutdown_timeout": 10.0},
                                   use_unstable_protocol=True) as (conn, proc):
        try:
            await initialize(conn, client)
            yield conn, proc
        finally:
            await client.close_terminals()
    # the SDK waited for the agent's exit and pipes, but leaves its transport to the GC
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()
