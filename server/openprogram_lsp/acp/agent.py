"""The ACP agent: ``initialize``, sessions, prompts, cancel and modes over the dispatcher."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthMethodAgent,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SetSessionModeResponse,
    Usage,
)

from acp import PROTOCOL_VERSION, RequestError, helpers
from openprogram_lsp import __version__
from openprogram_lsp.acp import commands as cmds
from openprogram_lsp.acp.approvals import Peer
from openprogram_lsp.acp.content import Block, build_prompt
from openprogram_lsp.acp.outbox import Outbox
from openprogram_lsp.acp.session import AcpSession, modes
from openprogram_lsp.acp.stream import TurnStream
from openprogram_lsp.acp.toolsources import NoToolSources, ToolSources
from openprogram_lsp.acp.updates import EXT_EVENT, SessionUpdate, camel_keys, replay
from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.core.types import PERMISSION_MODES, Node, PermissionMode, TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.store.watcher import WorkspaceWatcher

log = logging.getLogger(__name__)

AUTH_METHOD = "environment"
PAGE = 50
STOP_REASONS = {"done": "end_turn", "cancelled": "cancelled"}


def _rpc(exc: OpenProgramError) -> RequestError:
    return RequestError(exc.code, exc.message, camel_keys(exc.data))


def _absolute_dir(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"field": "cwd",
                                           "message": f"cwd must be absolute, got {cwd!r}"})
    if not path.is_dir():
        raise RequestError.invalid_params({"field": "cwd",
                                           "message": f"cwd {cwd!r} is not a directory"})
    return path.resolve()


class OpenProgramAgent:
    """One ACP connection's agent; every session shares the dispatcher and its stores."""

    def __init__(self, dispatcher: Dispatcher, *, mode: PermissionMode = "ask",
                 tool_sources: ToolSources | None = None,
                 approval_timeout: float | None = 600.0) -> None:
        self.dispatcher = dispatcher
        self.default_mode: PermissionMode = mode
        self.tool_sources = tool_sources or NoToolSources()
        self.approval_timeout = approval_timeout
        self.question_timeout = dispatcher.services.question_timeout
        self.peer: Peer | None = None
        self.client = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}
        self.commands = cmds.Commands(dispatcher)
        self.watchers: dict[Path, WorkspaceWatcher] = {}
        self._outbox: Outbox | None = None
        self._walks: set[asyncio.Future[Any]] = set()
        self._walk_stop = threading.Event()  # set at shutdown: the walks stop, so we can exit

    # -- plumbing ----------------------------------------------------------------------------

    def on_connect(self, conn: Any) -> None:
        """Keep the client side of the connection (the SDK calls this)."""
        self.peer = conn
        self._outbox = Outbox(asyncio.get_running_loop())
        self._outbox.start()

    @property
    def outbox(self) -> Outbox:
        if self._outbox is None:
            self._outbox = Outbox(asyncio.get_running_loop())
            self._outbox.start()
        return self._outbox

    def notify(self, session_id: str, update: SessionUpdate) -> None:
        """Queue a ``session/update`` (from any thread)."""
        peer = self.peer
        if peer is not None:
            self.outbox.put(lambda: peer.session_update(  # type: ignore[attr-defined]
                session_id=session_id, update=update))

    def notify_text(self, session_id: str, text: str) -> None:
        """Queue agent text (joined with text still waiting right before it)."""
        peer = self.peer
        if peer is None:
            return

        def make(joined: str) -> Any:
            return lambda: peer.session_update(  # type: ignore[attr-defined]
                session_id=session_id, update=helpers.update_agent_message_text(joined))

        self.outbox.put_text(session_id, text, make)

    def ext(self, params: dict[str, Any]) -> None:
        """Queue an ``_openprogram/event`` notification (from any thread)."""
        peer = self.peer
        if peer is not None:
            self.outbox.put(lambda: peer.ext_notification(  # type: ignore[attr-defined]
                EXT_EVENT, params))

    async def flush(self) -> None:
        """Wait until every queued notification was sent."""
        await self.outbox.flush()

    def elicits(self) -> bool:
        """Whether the client offers elicitation forms."""
        return self.client.elicitation is not None and self.client.elicitation.form is not None

    def workspace_of(self, session_id: str) -> Path:
        sess = self.sessions.get(session_id)
        if sess is not None:
            return sess.workspace
        meta_ws = self.dispatcher.services.store.meta(session_id).get("workspace")
        return Path(meta_ws) if meta_ws else Path(self.dispatcher.services.workspace)

    def approval_timeout_of(self, session_id: str) -> float | None:
        """How long a permission request waits: the session's workspace config says
        (``approval_timeout``), else what the agent was started with."""
        try:
            settings = self.dispatcher.services.workspace_settings(self.workspace_of(session_id))
            if settings is not None and self.dispatcher.services.settings_for is not None:
                return settings.get(CoreSettings).approval_timeout
        except (OpenProgramError, OSError):  # a broken workspace file fails its turns instead
            log.debug("no approval_timeout for %s", session_id, exc_info=True)
        return self.approval_timeout

    def approved(self, session_id: str, tool_call_id: str) -> None:
        sess = self.sessions.get(session_id)
        if sess is not None and sess.stream is not None:
            sess.stream.running(tool_call_id)

    def show_terminal(self, session_id: str, terminal_id: str) -> None:
        """Point the session's running command at the client terminal it runs in."""
        sess = self.sessions.get(session_id)
        if sess is not None and sess.stream is not None:
            sess.stream.terminal(terminal_id)

    def _session(self, session_id: str) -> AcpSession:
        sess = self.sessions.get(session_id)
        if sess is not None:
            return sess
        store = self.dispatcher.services.store
        if not store.exists(session_id):
            raise RequestError.resource_not_found(session_id)
        return self._open(session_id, self.workspace_of(session_id))

    def _open(self, sid: str, workspace: Path) -> AcpSession:
        sess = self.sessions.get(sid) or AcpSession(sid, workspace, self.default_mode)
        self.sessions[sid] = sess
        self._watch(workspace)
        return sess

    def _watch(self, root: Path) -> None:
        if root in self.watchers or not root.is_dir():
            return
        services = self.dispatcher.services

        def note(root: Path, changes: list[dict[str, str]]) -> None:
            cp = self.dispatcher.checkpointer(root)
            if cp is not None:
                cp.note_paths([c["path"] for c in changes])

        watcher = WorkspaceWatcher(root, services.bus, on_changes=note,
                                   exclude=[services.store.home])
        self.watchers[root] = watcher
        watcher.start()
        self._first_walk(root)

    def _first_walk(self, root: Path) -> None:
        """The workspace's first checkpoint walk in the background (``CheckpointStore.
        prepare``): a turn's first edit then waits for it only while it runs."""
        try:
            prepare = getattr(self.dispatcher.checkpointer(root), "prepare", None)
        except OpenProgramError:
            return  # a bad workspace config: the turn reports it
        if prepare is None:
            return
        if self._walk_stop.is_set():
            return
        walk = asyncio.ensure_future(asyncio.to_thread(prepare, None, self._walk_stop))
        self._walks.add(walk)

        def done(fut: asyncio.Future[Any]) -> None:
            self._walks.discard(fut)
            if not fut.cancelled() and fut.exception() is not None:
                log.warning("background checkpoint walk of %s failed: %s", root,
                            fut.exception())

        walk.add_done_callback(done)

    def _announce(self, sid: str) -> None:
        """Advertise the slash commands once the session's response is out."""
        hub, sess = self.dispatcher.services.mcp, self.sessions.get(sid)
        prompts = hub.prompts(sess.workspace) if hub is not None and sess is not None else []
        asyncio.get_running_loop().call_soon(self.notify, sid, helpers.update_available_commands(
            cmds.available(prompts)))

    # -- lifecycle ---------------------------------------------------------------------------

    async def initialize(self, protocol_version: int,
                         client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None,
                         **kwargs: Any) -> InitializeResponse:
        """Agree on version 1 and say what we support."""
        self.client = client_capabilities or ClientCapabilities()
        log.info("ACP client %s (protocol %s)",
                 client_info.name if client_info else "unknown", protocol_version)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False,
                                                       embedded_context=True),
                mcp_capabilities=McpCapabilities(http=self.tool_sources.http, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities())),
            auth_methods=[AuthMethodAgent(
                id=AUTH_METHOD, name="Model keys from the environment",
                description="OpenProgram reads OPENPROGRAM_MODEL and the provider's API key "
                            "from its environment; nothing to enter here.")],
            agent_info=Implementation(name="openprogram-lsp", title="OpenProgram",
                                      version=__version__))

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """Nothing to collect: keys come from the environment."""
        if method_id != AUTH_METHOD:
            raise RequestError.invalid_params({"field": "methodId",
                                               "message": f"unknown method {method_id!r}"})
        return AuthenticateResponse()

    # -- sessions ----------------------------------------------------------------------------

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None,
                          **kwargs: Any) -> NewSessionResponse:
        """A new session rooted at ``cwd``; its MCP servers become tool sources."""
        workspace = _absolute_dir(cwd)
        store = self.dispatcher.services.store
        sid = await asyncio.to_thread(store.create_session, workspace=str(workspace))
        sess = self._open(sid, workspace)
        await self._connect_tools(sess, mcp_servers)
        self._announce(sid)
        return NewSessionResponse(session_id=sid, modes=modes(sess.mode))

    async def load_session(self, cwd: str, session_id: str,
                           mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        """Open a stored session (from any front end) and replay its active branch."""
        _absolute_dir(cwd)
        store = self.dispatcher.services.store
        if not store.exists(session_id):
            raise RequestError.resource_not_found(session_id)
        sess = self._open(session_id, self.workspace_of(session_id))
        await self._connect_tools(sess, mcp_servers)
        try:
            head = store.head(session_id)
            nodes = store.get_branch(session_id, head) if head else []
        except OpenProgramError as exc:
            raise _rpc(exc) from None
        for node in nodes:
            for update in replay(node, sess.workspace, self._tool_nodes(session_id, node)):
                self.notify(session_id, update)
        await self.flush()
        self._announce(session_id)
        return LoadSessionResponse(modes=modes(sess.mode))

    def _tool_nodes(self, sid: str, node: Node) -> dict[str, Node]:
        if node.role != "assistant":
            return {}
        return {str(c.metadata.get("toolCallId")): c
                for c in self.dispatcher.services.store.callees(sid, node.id) if c.role == "tool"}

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """Stored sessions, newest first, optionally only those of ``cwd``; 50 a page."""
        rows = await asyncio.to_thread(self.dispatcher.services.store.list_sessions)
        if cwd is not None:
            want = str(_absolute_dir(cwd))
            rows = [r for r in rows if r.get("workspace")
                    and str(Path(r["workspace"]).resolve()) == want]
        start = 0
        if cursor:
            if not cursor.isdigit():
                raise RequestError.invalid_params({"field": "cursor",
                                                   "message": "unknown cursor"})
            start = int(cursor)
        page = rows[start:start + PAGE]
        infos = [SessionInfo(session_id=r["id"], cwd=str(r.get("workspace") or ""),
                             title=r.get("title") or None, updated_at=r.get("updatedAt"))
                 for r in page if isinstance(r.get("id"), str)]
        more = start + PAGE < len(rows)
        return ListSessionsResponse(sessions=infos,
                                    next_cursor=str(start + PAGE) if more else None)

    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> SetSessionModeResponse:
        """Switch the session's permission mode (applies from the next turn)."""
        sess = self._session(session_id)
        if mode_id not in PERMISSION_MODES:
            raise RequestError.invalid_params({"field": "modeId", "message":
                                               f"use one of {', '.join(PERMISSION_MODES)}"})
        sess.mode = mode_id  # type: ignore[assignment]
        return SetSessionModeResponse()

    async def _connect_tools(self, sess: AcpSession, servers: list[Any] | None) -> None:
        if servers:
            try:
                await self.tool_sources.connect(sess.session_id, sess.workspace, servers)
            except OpenProgramError as exc:
                raise _rpc(exc) from None

    # -- prompts -----------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Block], **kwargs: Any) -> PromptResponse:
        """Run one turn; updates stream while it runs; answers with the stop reason."""
        sess = self._session(session_id)
        if sess.running:
            raise RequestError(-32002, f"session {session_id} is already running a prompt; "
                               "cancel it first")
        control = TurnControl()
        sess.control = control
        try:
            resp = await self._prompt(sess, prompt, control)
            log.info("session/prompt of %s answers %s", session_id, resp.stop_reason)
            return resp
        finally:
            sess.control = None
            sess.stream = None
            await self.flush()

    async def _prompt(self, sess: AcpSession, blocks: list[Block],
                      control: TurnControl) -> PromptResponse:
        from openprogram_lsp.acp.slash import run_slash

        answered = await run_slash(self, sess, blocks)
        if isinstance(answered, PromptResponse):
            return answered
        request: TurnRequest
        if isinstance(answered, TurnRequest):
            request = answered
        else:
            content = await build_prompt(blocks, sess.workspace, self._reader(sess.session_id))
            if not content.text:
                raise RequestError.invalid_params({"field": "prompt",
                                                   "message": "the prompt is empty"})
            meta: dict[str, Any] = {"client": "acp"}
            if content.attachments:
                meta.update(promptText=content.typed, attachments=content.attachments)
            request = TurnRequest(text=content.text, session_id=sess.session_id,
                                  workspace=str(sess.workspace), metadata=meta)
        request.permission_mode = sess.mode
        services = self.dispatcher.services
        stream = TurnStream(sess.session_id, sess.workspace, services.tools, sess.mode,
                            services.rules_for(sess.workspace),
                            send=lambda u: self.notify(sess.session_id, u), ext=self.ext,
                            text=lambda t: self.notify_text(sess.session_id, t))
        sess.stream = stream
        unsubscribe = services.bus.subscribe(stream.on_event)
        try:
            result = await self.dispatcher.run_turn(
                request, control=control,
                on_started=lambda t: setattr(stream, "turn_id", t.turn_id))
        except OpenProgramError as exc:
            raise _rpc(exc) from None
        finally:
            unsubscribe()
            stream.close("cancelled" if control.cancelled else "not finished")
        title = services.store.meta(sess.session_id).get("title")
        if title:
            self.notify(sess.session_id, SessionInfoUpdate(
                session_update="session_info_update", title=title))
        if result.status == "error":
            await self.flush()
            err = result.error
            raise RequestError(err.code if err and err.code else -32603,
                               err.message if err else "the turn failed")
        usage = result.usage
        return PromptResponse(
            stop_reason=STOP_REASONS.get(result.status, "end_turn"),  # type: ignore[arg-type]
            usage=Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                        total_tokens=usage.input_tokens + usage.output_tokens,
                        cached_read_tokens=usage.cache_read_tokens,
                        cached_write_tokens=usage.cache_write_tokens),
            field_meta={"openprogram": {"turnId": result.assistant_node_id,
                                        "headId": result.head_id,
                                        "checkpointId": result.checkpoint.id
                                        if result.checkpoint else None}})

    def _reader(self, sid: str) -> Any:
        from openprogram_lsp.acp.editor import read_text

        return lambda path: read_text(self, sid, path)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's running prompt (it answers ``cancelled``)."""
        log.info("session/cancel for %s", session_id)
        sess = self.sessions.get(session_id)
        if sess is not None and sess.control is not None:
            sess.control.request_cancel()
        if self.dispatcher.services.store.exists(session_id):
            self.dispatcher.cancel(session_id)

    # -- extensions --------------------------------------------------------------------------

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension requests yet: answer MethodNotFound."""
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Unknown extension notifications are ignored, as the spec asks."""
        log.debug("ignored extension notification _%s", method)

    async def shutdown(self, timeout: float = 30.0) -> None:
        """Cancel running turns, wait for their finalize, stop watchers, first walks and
        tool sources."""
        self._walk_stop.set()
        for sess in self.sessions.values():
            if sess.control is not None:
                sess.control.request_cancel()
        self.dispatcher.cancel_all()
        await self.dispatcher.agents.drain(timeout)
        for watcher in list(self.watchers.values()):
            await watcher.stop()
        self.watchers.clear()
        await self.tool_sources.close()
        if self._outbox is not None:
            await self._outbox.close()
