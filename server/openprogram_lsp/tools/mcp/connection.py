"""One MCP server connection on the official SDK, kept up by a supervisor task.

Runs on the MCP loop only. The supervisor connects (a stdio subprocess started by
``tools.procs``, see ``stdio.py``, or streamable HTTP),
lists tools, prompts and resources, then waits for a stop, a restart request or the transport
closing; a crash reconnects with backoff, and too many failures in a row leave the server
``failed`` until a restart is asked for. The server's stderr goes to our log.
"""

from __future__ import annotations

import asyncio
import collections
import importlib
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp import __version__
from openprogram_lsp.tools.mcp.catalog import (
    CallResult,
    McpCallError,
    Offer,
    PromptArg,
    PromptInfo,
    ResourceInfo,
    ServerState,
    ToolInfo,
)
from openprogram_lsp.tools.mcp.config import HttpServer, ServerDef, StdioServer
from openprogram_lsp.tools.mcp.stdio import stdio_server

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger(__name__)
stderr_log = logging.getLogger("openprogram_lsp.mcp.stderr")

MAX_FAILURES = 5
"""Failed (re)connects in a row before a server is left ``failed``."""
BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0)
PAGE_CAP = 50
_WITHHELD = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


def server_env(extra: dict[str, str]) -> dict[str, str]:
    """Our environment minus model keys and our own settings, plus the definition's env."""
    env = {k: v for k, v in os.environ.items()
           if k not in _WITHHELD and not k.endswith("_API_KEY")
           and not k.startswith("OPENPROGRAM_")}
    env.update(extra)
    return env


class _StderrPump:
    """A pipe whose write end the server gets as stderr; lines go to our log and a tail."""

    def __init__(self, name: str, tail: collections.deque[str]) -> None:
        self.name = name
        self.tail = tail
        read_fd, write_fd = os.pipe()
        self.writer = os.fdopen(write_fd, "w")
        self._reader = os.fdopen(read_fd, "rb")
        self._thread = threading.Thread(target=self._pump, name=f"mcp-stderr-{name}",
                                        daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        with self._reader:
            for raw in self._reader:
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    self.tail.append(line[:500])
                    stderr_log.info("[mcp %s] %s", self.name, line[:2000])

    def drain(self, timeout: float) -> None:
        """Wait (bounded) until every line the server wrote is in the tail (its exit closes
        the pipe)."""
        self._thread.join(timeout)

    def close_writer(self) -> None:
        """Drop our copy of the write end (the child keeps its own until it exits)."""
        if not self.writer.closed:
            self.writer.close()


class Connection:
    """One server of one workspace."""

    def __init__(self, definition: ServerDef, workspace: Path, *,
                 startup_timeout: float = 30.0, on_change: Callable[[], None] | None = None
                 ) -> None:
        self.definition = definition
        self.workspace = workspace
        self.startup_timeout = startup_timeout
        self.on_change = on_change
        self.state: ServerState = "stopped"
        self.offer = Offer()
        self.last_error: str | None = None
        self.restarts = 0
        self.generation = 0
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._wake = asyncio.Event()
        self._stopping = False
        self._restart_requested = False
        self._closed: asyncio.Event | None = None
        self._pump: _StderrPump | None = None  # the running stdio server's stderr
        # the tool names of its first listing (what its trust covered); a later listing's new
        # names are announced (``on_tools_added``) and ask before their first call
        self.known: set[str] | None = None
        self.unconfirmed: set[str] = set()
        self.on_tools_added: Callable[[list[ToolInfo]], None] | None = None
        self._listed = asyncio.Event()  # clear while a list_changed relisting runs
        self._listed.set()

    @property
    def name(self) -> str:
        return self.definition.name

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the supervisor unless it runs (a ``failed`` server waits for a restart)."""
        if self._task is None or self._task.done():
            self._stopping = False
            self._settled.clear()
            self._task = asyncio.get_running_loop().create_task(
                self._supervise(), name=f"mcp-{self.name}")

    async def wait_settled(self, timeout: float) -> None:
        """Wait until the server is ready or has failed, at most ``timeout`` seconds."""
        with suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout)

    async def wait_listed(self, timeout: float) -> None:
        """Wait, at most ``timeout`` seconds, for a relisting the server asked for (a
        ``list_changed`` notification) to end, so a turn starting after it sees its tools."""
        with suppress(TimeoutError):
            await asyncio.wait_for(self._listed.wait(), timeout)

    async def restart(self) -> None:
        """Reconnect now (also revives a ``failed`` server)."""
        self._restart_requested = True
        self._settled.clear()
        self._wake.set()
        if self._task is None or self._task.done():
            self._restart_requested = False
            self.start()

    async def stop(self) -> None:
        """Close the connection and end the supervisor."""
        self._stopping = True
        self._wake.set()
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=10)
            if not task.done():
                task.cancel()
                # wait for the cancel to unwind the transport: it is what ends the process
                await asyncio.wait({task}, timeout=10)
        self._set("stopped")

    def _set(self, state: ServerState, error: str | None = None) -> None:
        self.state = state
        if error is not None:
            self.last_error = error
        if state in ("ready", "failed", "stopped"):
            self._settled.set()
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:
                log.exception("MCP status listener failed")

    async def _supervise(self) -> None:
        failures = 0
        first = True
        while not self._stopping:
            self._set("starting" if first else "restarting")
            first = False
            self._wake.clear()
            try:
                await self._bounded_session()
                failures = 0  # it was up; a later crash starts the backoff again
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # anyio wraps failures in exception groups
                failures += 1
                self.last_error = _explain(exc, self.stderr_tail)
                log.warning("MCP server %s: %s", self.name, self.last_error)
            if self._stopping:
                break
            if self._restart_requested:
                self._restart_requested = False
                failures = 0
                self.restarts += 1
                continue
            if failures >= MAX_FAILURES:
                self._set("failed")
                await self._wake.wait()  # a restart (or stop) wakes it
                failures = 0
                self._restart_requested = False
                continue
            self.restarts += 1
            self._set("restarting")
            delay = BACKOFF[min(failures, len(BACKOFF) - 1)]
            with suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)
            self._restart_requested = False

    async def _bounded_session(self) -> None:
        """Run :meth:`_session` in its own task, cancelled when it is not up in time.

        The SDK's handshake has no deadline of its own, and a cancel scope around it would
        wrap the task groups the client leaves open; cancelling the whole session task
        unwinds the transport in the task that entered it, which ends the server process."""
        # the SDK's first import takes about a second of CPU: in a thread, before the clock
        # starts, so it neither stalls the event loop nor counts against the server's handshake
        await asyncio.to_thread(importlib.import_module, "mcp")
        up = asyncio.Event()
        session = asyncio.ensure_future(self._session(up))
        ready = asyncio.ensure_future(up.wait())
        woken = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({session, ready, woken}, timeout=self.startup_timeout,
                               return_when=asyncio.FIRST_COMPLETED)
            if not session.done() and not up.is_set():
                session.cancel()
                await asyncio.wait({session}, timeout=10)
                if woken.done():
                    return  # stopped or restarted while starting
                raise TimeoutError("did not answer the MCP handshake in time")
            ready.cancel()
            woken.cancel()
            await session
        finally:
            for waiter in (ready, woken):
                waiter.cancel()
            if not session.done():
                session.cancel()
                await asyncio.wait({session}, timeout=10)

    async def _session(self, up: asyncio.Event) -> None:
        """One connected lifetime: connect, list, serve until closed, stopped or restarted."""
        from mcp import Client

        closed = asyncio.Event()
        self._closed = closed
        # The handshake is bounded by the session's request timeout: a cancel scope around
        # __aenter__ would wrap the task groups the client leaves open.
        client = Client(self._transport(closed), client_info=_client_info(), cache=None,
                        read_timeout_seconds=self.startup_timeout,
                        logging_callback=self._on_log, message_handler=self._on_message)
        await client.__aenter__()
        try:
            with _fail_after(self.startup_timeout, "did not list its tools in time"):
                self._offered(await _list_offer(client))
            self._client = client
            self.generation += 1
            self.last_error = None
            self._set("ready")
            up.set()
            waiters = [asyncio.ensure_future(closed.wait()),
                       asyncio.ensure_future(self._wake.wait())]
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waiters:
                    w.cancel()
            if closed.is_set() and not self._stopping and not self._restart_requested:
                self._client = None  # calls and turns wait for the restart from here on
                self._settled.clear()
                self._set("restarting")
                raise ConnectionError("the server closed the connection")
        finally:
            self._client = None
            await client.__aexit__(None, None, None)

    @asynccontextmanager
    async def _transport(self, closed: asyncio.Event) -> AsyncIterator[Any]:
        config = self.definition.config
        if isinstance(config, StdioServer):
            async with self._stdio(config, closed) as streams:
                yield streams
        elif isinstance(config, HttpServer):
            async with self._http(config, closed) as streams:
                yield streams
        else:
            raise McpCallError(self.definition.problem or "invalid definition")

    @asynccontextmanager
    async def _stdio(self, config: StdioServer, closed: asyncio.Event) -> AsyncIterator[Any]:
        cwd = self.workspace / config.cwd if config.cwd else self.workspace
        pump = self._pump = _StderrPump(self.name, self.stderr_tail)
        try:
            async with stdio_server(config.command, list(config.args), cwd=cwd,
                                    env=server_env(config.env),
                                    stderr=pump.writer.fileno()) as (read, write):
                pump.close_writer()
                async with _watch(read, closed) as watched:
                    yield watched, write
        finally:
            pump.close_writer()

    @asynccontextmanager
    async def _http(self, config: HttpServer, closed: asyncio.Event) -> AsyncIterator[Any]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(30.0, read=300.0)
        async with httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as http, \
                streamable_http_client(config.url, http_client=http) as (read, write), \
                _watch(read, closed) as watched:
            yield watched, write

    async def _on_log(self, params: Any) -> None:
        stderr_log.info("[mcp %s] %s: %s", self.name, getattr(params, "level", "info"),
                        str(getattr(params, "data", ""))[:2000])

    async def _on_message(self, message: Any) -> None:
        from mcp import types

        root = getattr(message, "root", message)
        if isinstance(root, types.ToolListChangedNotification | types.PromptListChangedNotification
                      | types.ResourceListChangedNotification):
            client = self._client
            if client is not None:
                self._listed.clear()
                try:
                    self._offered(await _list_offer(client))
                    self.generation += 1
                    self._set(self.state)
                except Exception as exc:
                    log.warning("MCP server %s: relisting failed: %s", self.name, exc)
                finally:
                    self._listed.set()

    def _offered(self, offer: Offer) -> None:
        """Take a listing; tools new since the first one are unconfirmed and announced."""
        names = {t.name for t in offer.tools}
        if self.known is None:
            self.known = names
        added = [t for t in offer.tools if t.name not in self.known]
        self.offer = offer
        if not added:
            return
        self.known |= {t.name for t in added}
        self.unconfirmed |= {t.name for t in added}
        log.warning("MCP server %s added tools after it was trusted: %s (each asks before its "
                    "first call)", self.name, ", ".join(t.name for t in added))
        if self.on_tools_added is not None:
            try:
                self.on_tools_added(added)
            except Exception:
                log.exception("MCP tools-added listener failed")

    # -- calls -------------------------------------------------------------------------------

    async def _ready_client(self, timeout: float) -> Client:
        if self._client is None and self.state not in ("failed", "stopped"):
            await self.wait_settled(timeout)
        client = self._client
        if client is None:
            why = f": {self.last_error}" if self.last_error else ""
            raise McpCallError(f"MCP server {self.name!r} is {self.state}{why}")
        return client

    async def call_tool(self, tool: str, arguments: dict[str, Any], timeout: float) -> CallResult:
        """Call a tool; any failure becomes a McpCallError with a clear message."""
        from mcp import MCPError

        client = await self._ready_client(timeout)
        closed, pump = self._closed, self._pump
        try:
            with _fail_after(timeout, ""):
                result = await client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except TimeoutError:
            asyncio.get_running_loop().create_task(self._check_alive())
            raise McpCallError(f"MCP server {self.name!r} did not answer {tool} within "
                               f"{timeout:g}s; the call was cancelled") from None
        except MCPError as exc:
            if closed is not None and closed.is_set():
                if pump is not None:  # its last words (why it died) may still be in the pipe
                    await asyncio.to_thread(pump.drain, 2.0)
                raise McpCallError(f"MCP server {self.name!r} exited during the call "
                                   f"({_tail(self.stderr_tail) or exc.message}); it is being "
                                   "restarted") from None
            raise McpCallError(f"MCP server {self.name!r}: {exc.message}") from None
        except Exception as exc:  # a result that does not validate, a broken stream
            raise McpCallError(f"MCP server {self.name!r} sent an invalid answer: "
                               f"{type(exc).__name__}: {str(exc)[:300]}") from None
        blocks = [b.model_dump(mode="json", by_alias=True, exclude_none=True)
                  for b in result.content]
        return CallResult(blocks=blocks, is_error=bool(result.is_error),
                          structured=result.structured_content)

    async def get_prompt(self, name: str, arguments: dict[str, str], timeout: float
                         ) -> list[dict[str, Any]]:
        """A prompt's messages as ``{role, content}`` blocks."""
        client = await self._ready_client(timeout)
        try:
            with _fail_after(timeout, ""):
                result = await client.get_prompt(name, arguments)
        except TimeoutError:
            raise McpCallError(f"MCP server {self.name!r} did not return prompt {name} within "
                               f"{timeout:g}s") from None
        except Exception as exc:
            raise McpCallError(f"MCP server {self.name!r}: prompt {name}: {exc}") from None
        return [{"role": m.role, "content": m.content.model_dump(mode="json", by_alias=True,
                                                                 exclude_none=True)}
                for m in result.messages]

    async def read_resource(self, uri: str, timeout: float) -> list[dict[str, Any]]:
        """A resource's contents (``{uri, mimeType, text | blob}``)."""
        client = await self._ready_client(timeout)
        try:
            with _fail_after(timeout, ""):
                result = await client.read_resource(uri)
        except TimeoutError:
            raise McpCallError(f"MCP server {self.name!r} did not return {uri} within "
                               f"{timeout:g}s") from None
        except Exception as exc:
            raise McpCallError(f"MCP server {self.name!r}: {uri}: {exc}") from None
        return [c.model_dump(mode="json", by_alias=True, exclude_none=True)
                for c in result.contents]

    async def _check_alive(self) -> None:
        """After a timeout: a server that cannot even list its tools is hung; restart it."""
        client = self._client
        if client is None:
            return
        try:
            with _fail_after(5.0, ""):
                await client.list_tools()
        except Exception:
            log.warning("MCP server %s does not answer; restarting it", self.name)
            self.last_error = "hung (no answer to tools/list after a timeout)"
            await self.restart()


def _client_info() -> Any:
    from mcp import types
    return types.Implementation(name="openprogram-lsp", version=__version__)


@contextmanager
def _fail_after(seconds: float | None, message: str) -> Iterator[None]:
    """``anyio.fail_after`` (it cooperates with the SDK's cancel scopes) with a message."""
    import anyio

    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError:
        raise TimeoutError(message) from None


@asynccontextmanager
async def _watch(read: Any, closed: asyncio.Event) -> AsyncIterator[Any]:
    """Relay the read stream, setting ``closed`` when the server side ends."""
    import anyio

    send, recv = anyio.create_memory_object_stream[Any](16)

    async def pump() -> None:
        try:
            async with send:
                async for item in read:
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            closed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump)
        try:
            yield recv
        finally:
            tg.cancel_scope.cancel()


async def _list_offer(client: Client) -> Offer:
    caps = client.server_capabilities
    offer = Offer()
    info = client.server_info
    if info is not None:
        offer.server_name, offer.server_version = info.name, info.version
    if caps.tools is not None:
        cursor: str | None = None
        for _ in range(PAGE_CAP):
            page = await client.list_tools(cursor=cursor)
            for t in page.tools:
                ann = t.annotations
                offer.tools.append(ToolInfo(
                    name=t.name, description=t.description or "",
                    input_schema=dict(t.input_schema or {"type": "object"}), title=t.title,
                    read_only=ann.read_only_hint if ann else None,
                    destructive=ann.destructive_hint if ann else None))
            cursor = page.next_cursor
            if not cursor:
                break
    if caps.prompts is not None:
        cursor = None
        for _ in range(PAGE_CAP):
            ppage = await client.list_prompts(cursor=cursor)
            offer.prompts.extend(
                PromptInfo(p.name, p.description or "",
                           tuple(PromptArg(a.name, a.description or "", bool(a.required))
                                 for a in p.arguments or []))
                for p in ppage.prompts)
            cursor = ppage.next_cursor
            if not cursor:
                break
    if caps.resources is not None:
        cursor = None
        for _ in range(PAGE_CAP):
            rpage = await client.list_resources(cursor=cursor)
            offer.resources.extend(ResourceInfo(r.uri, r.name, r.description or "", r.mime_type)
                                   for r in rpage.resources)
            cursor = rpage.next_cursor
            if not cursor:
                break
    return offer


def _tail(lines: collections.deque[str]) -> str:
    return " | ".join(list(lines)[-3:])


def _explain(exc: BaseException, tail: collections.deque[str]) -> str:
    """A one-line reason from an exception (groups unwrapped) and the stderr tail."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        text = f"command not found: {exc.filename or exc}"
    elif isinstance(exc, TimeoutError):
        text = str(exc) or "timed out"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    stderr = _tail(tail)
    return f"{text} (stderr: {stderr})" if stderr else text
