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
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    Usage,
)

from acp import PROTOCOL_VERSION, RequestError, helpers
from openprogram_lsp import __version__
from openprogram_lsp.acp import commands as cmds
from openprogram_lsp.acp import forks, legacy
from openprogram_lsp.acp import settings as conf
from openprogram_lsp.acp.approvals import Peer
from openprogram_lsp.acp.content import Block, build_prompt
from openprogram_lsp.acp.outbox import Outbox
from openprogram_lsp.acp.session import AcpSession, modes
from openprogram_lsp.acp.stream import TurnStream, tools_added
from openprogram_lsp.acp.toolsources import NoToolSources, ToolSources
from openprogram_lsp.acp.updates import EXT_EVENT, SessionUpdate, camel_keys, replay
from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.context.attachments import downscaled_notes
from openprogram_lsp.core.errors import InvalidParams, NotFound, OpenProgramError, SessionBusy
from openprogram_lsp.core.ids import new_session_id
from openprogram_lsp.core.types import (
    INHERIT,
    PERMISSION_MODES,
    Node,
    PermissionMode,
    TurnRequest,
)
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from openprogram_lsp.store.watcher import WorkspaceWatcher

log = logging.getLogger(__name__)

AUTH_METHOD = "environment"
PAGE = 50
STOP_REASONS = {"done": "end_turn", "cancelled": "cancelled", "truncated": "max_tokens",
                "refused": "refusal"}
SETTINGS_POLL = 1.0  # seconds between looks at open sessions' stored settings
POLLED = 32  # the sessions looked at: the most recently opened or prompted
PER_KIND_CLIENTS = frozenset({"CodeCompanion.nvim"})
"""Clients (by ``clientInfo.name``) that draw a permission option by its kind, with their own
label and key, not by its name."""


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
        self.client_name: str | None = None
        self.sessions: dict[str, AcpSession] = {}
        self.commands = cmds.Commands(dispatcher)
        self.watchers: dict[Path, WorkspaceWatcher] = {}
        self._outbox: Outbox | None = None
        self._walks: set[asyncio.Future[Any]] = set()
        self._walk_stop = threading.Event()  # set at shutdown: the walks stop, so we can exit
        self._settings_task: asyncio.Future[None] | None = None
        self._hears_tools_added = False

    # -- plumbing ----------------------------------------------------------------------------

    def on_connect(self, conn: Any) -> None:
        """Keep the client side of the connection (the SDK calls this)."""
        self.peer = conn
        self._outbox = Outbox(asyncio.get_running_loop())
        self._outbox.start()
        if not self._hears_tools_added:
            self._hears_tools_added = True
            self.dispatcher.services.bus.subscribe(self._on_tools_added)

    def _on_tools_added(self, ev: Event) -> None:
        """An MCP server added tools after it was trusted: every open session of its workspace
        is told, a turn running or not (a relisting may end between two turns; any thread)."""
        if ev.type != "mcp.tools_added" or ev.session_id is not None:
            return
        for sess in list(self.sessions.values()):
            if str(sess.workspace) == ev.payload.get("workspace"):
                event, note = tools_added(ev, sess.session_id)
                self.ext(event)
                self.notify_text(sess.session_id, note)

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

    def notify_thought(self, session_id: str, text: str) -> None:
        """Queue reasoning text (joined like ``notify_text``, never with reply text)."""
        peer = self.peer
        if peer is None:
            return

        def make(joined: str) -> Any:
            return lambda: peer.session_update(  # type: ignore[attr-defined]
                session_id=session_id, update=helpers.update_agent_thought_text(joined))

        self.outbox.put_text(f"{session_id}\0thought", text, make)

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

    def shows_option_names(self) -> bool:
        """Whether the client draws each permission option by its name (Zed, agent-shell,
        acpx), so that several options of one kind (a question's choices) can be told apart.
        codecompanion draws one line and key per kind under its own labels, and avante, which
        sends no ``clientInfo``, maps the kinds to yes / all / no."""
        return self.client_name is not None and self.client_name not in PER_KIND_CLIENTS

    def workspace_of(self, session_id: str) -> Path:
        """The workspace of a session (an ACP id or a stored session's id)."""
        sess = self.sessions.get(session_id)
        if sess is None:
            found = self.acp_id(session_id)
            sess = self.sessions.get(found) if found else None
        if sess is not None:
            return sess.workspace
        sid = session_id.partition(forks.SEP)[0]
        meta_ws = self.dispatcher.services.store.meta(sid).get("workspace")
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

    def acp_id(self, store_id: str) -> str | None:
        """The ACP session a stored session's turn belongs to: the one running a prompt in
        it, else the one opened under that id, else any fork of it (None: not open here)."""
        mine = [s for s in self.sessions.values() if s.store_id == store_id]
        running = [s for s in mine if s.running]
        if running:
            return running[0].session_id
        if store_id in self.sessions:
            return store_id
        return mine[0].session_id if mine else None

    def approved(self, session_id: str, tool_call_id: str) -> None:
        sess = self.sessions.get(self.acp_id(session_id) or session_id)
        if sess is not None and sess.stream is not None:
            sess.stream.running(tool_call_id)

    def announced(self, session_id: str, tool_call_id: str) -> bool:
        """Whether the client was shown ``tool_call`` for this id in the running turn."""
        sess = self.sessions.get(self.acp_id(session_id) or session_id)
        return sess is not None and sess.stream is not None and sess.stream.knows(tool_call_id)

    def show_terminal(self, session_id: str, terminal_id: str) -> None:
        """Point the session's running command at the client terminal it runs in."""
        sess = self.sessions.get(self.acp_id(session_id) or session_id)
        if sess is not None and sess.stream is not None:
            sess.stream.terminal(terminal_id)

    def _session(self, session_id: str) -> AcpSession:
        """An open session, or a stored one (or a fork of one) opened now; -32002 if none."""
        sess = self.sessions.get(session_id)
        if sess is not None:
            return sess
        try:
            sid, key = forks.split(session_id)
        except OpenProgramError as exc:
            raise _rpc(exc) from None
        store = self.dispatcher.services.store
        if not store.exists(sid):
            raise RequestError.resource_not_found(session_id)
        if key is not None:
            try:
                forks.record(store, sid, key)
            except NotFound:
                raise RequestError.resource_not_found(session_id) from None
        return self._open(session_id, self.workspace_of(sid), store_id=sid, fork_key=key)

    def _open(self, acp_id: str, workspace: Path, *, store_id: str | None = None,
              fork_key: str | None = None, stored: bool = True) -> AcpSession:
        sess = self.sessions.get(acp_id)
        if sess is None:
            sess = AcpSession(acp_id, workspace, self.default_mode, store_id=store_id or acp_id,
                              fork_key=fork_key, stored=stored)
            if stored:
                conf.adopt(sess, self.dispatcher.services.store.meta(sess.store_id))
            self.sessions[acp_id] = sess
        sess.told = conf.shown(self.dispatcher, sess)
        self._watch(workspace)
        self._poll_settings()
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

    def _announce(self, acp_id: str, *, if_changed: bool = False) -> None:
        """Advertise the slash commands (after the session's response is out); with
        ``if_changed`` only when they differ from what the client was last shown."""
        from openprogram_lsp.context.commands import load_commands

        sess = self.sessions.get(acp_id)
        if sess is None:
            return
        hub = self.dispatcher.services.mcp
        prompts = hub.prompts(sess.workspace) if hub is not None else []
        try:
            custom = load_commands(sess.workspace)
        except OSError:
            custom = []
        available = cmds.available(prompts, custom)
        shown = [f"{c.name}\0{c.description}" for c in available]
        if if_changed and shown == sess.commands:
            return
        sess.commands = shown
        asyncio.get_running_loop().call_soon(self.notify, acp_id,
                                             helpers.update_available_commands(available))

    def _poll_settings(self) -> None:
        """Start the look at open sessions' stored settings (once per connection)."""
        if self._settings_task is None and not self._walk_stop.is_set():
            self._settings_task = asyncio.ensure_future(self._follow_settings())

    async def _follow_settings(self) -> None:
        """Every ``SETTINGS_POLL`` seconds: what another client of an open session changed
        (model, mode) reaches this one as ``config_option_update``/``current_mode_update``."""
        store = self.dispatcher.services.store
        while not self._walk_stop.is_set():
            await asyncio.sleep(SETTINGS_POLL)
            for sess in list(self.sessions.values())[-POLLED:]:
                if not sess.stored or sess.running:
                    continue
                try:
                    meta = await asyncio.to_thread(store.meta, sess.store_id)
                    kept = meta.get(conf.META_KEY)
                    if kept is None or kept == conf.record(sess):
                        continue
                    # read again on the loop: a change made here while the thread read must
                    # not be undone by the older copy
                    meta = store.meta(sess.store_id)
                    self._sync(sess, meta)
                except (OpenProgramError, OSError):
                    continue  # deleted or unreadable meanwhile: its next request says so
                except Exception:  # never let one session end the look for all of them
                    log.exception("could not follow the settings of %s", sess.session_id)

    def _sync(self, sess: AcpSession, meta: dict[str, Any]) -> None:
        """Adopt the stored settings and tell this client what changed."""
        conf.adopt(sess, meta)
        for update in conf.updates(self.dispatcher, sess):
            self.notify(sess.session_id, update)

    def _save_settings(self, sess: AcpSession) -> None:
        """Store the session's settings (every client of it runs and shows them)."""
        if sess.stored:
            try:
                self.dispatcher.services.store.update_meta(
                    sess.store_id, **{conf.META_KEY: conf.record(sess)})
            except OpenProgramError as exc:
                raise _rpc(exc) from None

    # -- lifecycle ---------------------------------------------------------------------------

    async def initialize(self, protocol_version: int,
                         client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None,
                         **kwargs: Any) -> InitializeResponse:
        """Agree on version 1 and say what we support."""
        self.client = client_capabilities or ClientCapabilities()
        self.client_name = client_info.name if client_info else None
        log.info("ACP client %s (protocol %s)",
                 client_info.name if client_info else "unknown", protocol_version)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, audio=False,
                                                       embedded_context=True),
                mcp_capabilities=McpCapabilities(http=self.tool_sources.http, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), resume=SessionResumeCapabilities(),
                    fork=SessionForkCapabilities(), close=SessionCloseCapabilities(),
                    delete=SessionDeleteCapabilities())),
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
        """A new session rooted at ``cwd``, stored once it holds a message; its MCP servers
        become tool sources."""
        workspace = _absolute_dir(cwd)
        sess = self._open(new_session_id(), workspace, stored=False)
        await self._connect_tools(sess, mcp_servers)
        self._announce(sess.session_id)
        options = conf.options(self.dispatcher, sess)
        return legacy.NewSession(session_id=sess.session_id, modes=modes(sess.mode),
                                 config_options=options, models=legacy.model_state(options))

    async def load_session(self, cwd: str, session_id: str,
                           mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        """Open a stored session (from any front end) or a fork of one, and replay its
        branch."""
        sess = await self._reopen(cwd, session_id, mcp_servers)
        nodes = self._chain(sess)
        for node in nodes:
            for update in replay(node, sess.workspace, self._tool_nodes(sess.store_id, node)):
                self.notify(session_id, update)
        await self.flush()
        self._announce(session_id)
        options = conf.options(self.dispatcher, sess)
        return legacy.LoadSession(modes=modes(sess.mode), config_options=options,
                                  models=legacy.model_state(options))

    async def resume_session(self, cwd: str, session_id: str,
                             mcp_servers: list[Any] | None = None,
                             **kwargs: Any) -> ResumeSessionResponse:
        """``session/load`` without the replay (the client kept the history)."""
        sess = await self._reopen(cwd, session_id, mcp_servers)
        self._announce(session_id)
        options = conf.options(self.dispatcher, sess)
        return legacy.ResumeSession(modes=modes(sess.mode), config_options=options,
                                    models=legacy.model_state(options))

    async def _reopen(self, cwd: str, session_id: str, servers: list[Any] | None) -> AcpSession:
        _absolute_dir(cwd)
        sess = self._session(session_id)
        if sess.stored:
            try:
                self._sync(sess, self.dispatcher.services.store.meta(sess.store_id))
            except OpenProgramError as exc:
                raise _rpc(exc) from None
        sess.told = conf.shown(self.dispatcher, sess)
        await self._connect_tools(sess, servers)
        return sess

    def _head(self, sess: AcpSession) -> str | None:
        """Where the session's conversation ends: the active head, or its fork's tip (or,
        before the fork's first message, the node it starts after)."""
        if not sess.stored:
            return None
        store = self.dispatcher.services.store
        try:
            if sess.fork_key is None:
                return store.head(sess.store_id)
            fork = forks.record(store, sess.store_id, sess.fork_key)
            return forks.tip(store, sess.store_id, fork) or fork.from_node
        except OpenProgramError as exc:
            raise _rpc(exc) from None

    def _chain(self, sess: AcpSession) -> list[Node]:
        head = self._head(sess)
        try:
            return self.dispatcher.services.store.get_branch(sess.store_id, head) if head else []
        except OpenProgramError as exc:
            raise _rpc(exc) from None

    def _tool_nodes(self, sid: str, node: Node) -> dict[str, Node]:
        if node.role != "assistant":
            return {}
        return {str(c.metadata.get("toolCallId")): c
                for c in self.dispatcher.services.store.callees(sid, node.id) if c.role == "tool"}

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """Stored sessions, newest first, optionally only those of ``cwd``; 50 sessions a
        page, each followed by its forks that hold a message; the cursor opaque (an offset).
        Sessions without a message are not listed."""
        want = None
        if cwd is not None:  # a folder since deleted has no sessions: an empty list
            try:
                if not Path(cwd).is_absolute():
                    raise ValueError("not absolute")
                want = str(Path(cwd).resolve())
            except (ValueError, OSError):  # relative, a NUL byte, a loop of links
                raise RequestError.invalid_params({"field": "cwd", "message":
                                                   f"cwd must be an absolute path, got "
                                                   f"{cwd!r}"}) from None
        start = 0
        if cursor:
            if not cursor.isdigit() or len(cursor) > 9:
                raise RequestError.invalid_params({"field": "cursor",
                                                   "message": "unknown cursor"})
            start = int(cursor)
        rows, total = await asyncio.to_thread(self.dispatcher.services.store.session_page,
                                              workspace=want, offset=start, limit=PAGE)
        infos: list[SessionInfo] = []
        for r in rows:
            if not isinstance(r.get("id"), str) or not r.get("headId"):
                continue
            cwd, title = str(r.get("workspace") or ""), r.get("title") or None
            infos.append(SessionInfo(session_id=r["id"], cwd=cwd, title=title,
                                     updated_at=r.get("updatedAt")))
            for key, name in forks.listed(r):  # its forks with a message, beside it
                infos.append(SessionInfo(session_id=forks.join(r["id"], key), cwd=cwd,
                                         title=f"{title or 'untitled'} ({name})",
                                         updated_at=r.get("updatedAt")))
        more = start + PAGE < total
        return ListSessionsResponse(sessions=infos,
                                    next_cursor=str(start + PAGE) if more else None)

    async def fork_session(self, cwd: str, session_id: str,
                           mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> ForkSessionResponse:
        """A new branch of the session as a new ACP session (``forks``): from the session's
        head, or from ``_meta.openprogram.fromNodeId``; named ``_meta.openprogram.name`` (else
        ``fork-N``); ``restoreCode`` brings the workspace to that node's code first, as
        ``openprogram/fork`` does."""
        workspace = _absolute_dir(cwd)
        src = self._session(session_id)
        if not src.stored:
            raise RequestError.invalid_params({"field": "sessionId", "message":
                                               "nothing to fork: the session has no message"})
        given = kwargs.get("openprogram")
        opts: dict[str, Any] = given if isinstance(given, dict) else {}
        store, sid = self.dispatcher.services.store, src.store_id
        try:
            from_node = self._fork_point(src, opts)
            name = forks.check_name(store, sid, opts["name"]) if "name" in opts \
                else forks.free_name(store, sid)
            rules = opts.get("rules", "inherit")
            if rules not in ("inherit", "reset", "copy") or (rules != "inherit"
                                                               and from_node is None):
                raise InvalidParams("_meta.openprogram.rules: inherit, reset or copy, and "
                                    "reset or copy only with a node to fork at")
            restored = await self._restore_code(src, from_node) \
                if opts.get("restoreCode") is True and from_node is not None else None
            fork = forks.create(store, sid, from_node, name, rules)
        except OpenProgramError as exc:
            raise _rpc(exc) from None
        acp_id = forks.join(sid, fork.key)
        sess = self._open(acp_id, src.workspace if src.workspace else workspace, store_id=sid,
                          fork_key=fork.key)
        sess.mode, sess.model, sess.effort = src.mode, src.model, src.effort
        sess.told = conf.shown(self.dispatcher, sess)
        await self._connect_tools(sess, mcp_servers)
        self._announce(acp_id)
        extra: dict[str, Any] = {"sessionId": sid, "branch": name, "fromNodeId": from_node}
        if restored is not None:
            extra["codeRestore"] = restored
        options = conf.options(self.dispatcher, sess)
        return legacy.ForkSession(session_id=acp_id, modes=modes(sess.mode),
                                  config_options=options, models=legacy.model_state(options),
                                  field_meta={"openprogram": extra})

    def _fork_point(self, src: AcpSession, opts: dict[str, Any]) -> str | None:
        if "fromNodeId" not in opts:
            return self._head(src)
        node_id = opts["fromNodeId"]
        if node_id is None:
            return None
        store = self.dispatcher.services.store
        if not isinstance(node_id, str) or not store.has_node(src.store_id, node_id):
            raise InvalidParams(f"_meta.openprogram.fromNodeId: no message {node_id!r} in "
                                f"session {src.store_id}")
        node = store.get_node(src.store_id, node_id)
        if node.role not in ("user", "assistant") or node.caller is not None:
            raise InvalidParams(f"_meta.openprogram.fromNodeId: {node_id!r} is not a "
                                "conversation message")
        return node_id

    async def _restore_code(self, src: AcpSession, node_id: str) -> dict[str, Any]:
        """The code state of ``node_id``'s branch restored (undoable), as its record."""
        from openprogram_lsp.store.branch_code import switch_code
        from openprogram_lsp.store.checkpoints.store import CheckpointStore

        checkpoints = self.dispatcher.checkpointer(src.workspace)
        if not isinstance(checkpoints, CheckpointStore):
            raise InvalidParams("_meta.openprogram.restoreCode: this workspace has no "
                                "checkpoints")
        busy = [t for t in self.dispatcher.active_turns()
                if t.workspace.resolve() == src.workspace.resolve()]
        if busy:
            raise SessionBusy("a turn is running in this workspace; cancel it before forking "
                              "with restoreCode")
        out = await asyncio.to_thread(switch_code, self.dispatcher.services.store, checkpoints,
                                      src.store_id, node_id)
        record: dict[str, Any] = {"restored": out.restored,
                                  "safetyCheckpointId": out.safety_checkpoint_id}
        if out.code_checkpoint_id:
            record["codeCheckpointId"] = out.code_checkpoint_id
        if out.conflicts:
            record["conflicts"] = out.conflicts
        return record

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Stop the session's prompt and its MCP servers and forget it on this connection
        (it stays stored: load or resume it again)."""
        log.info("session/close for %s", session_id)
        sess = self.sessions.get(session_id)
        if sess is None:
            self._session(session_id)  # -32002 for an unknown id; a stored one is not open
            return CloseSessionResponse()
        await self._close(sess)
        return CloseSessionResponse()

    async def _close(self, sess: AcpSession) -> None:
        if sess.control is not None:
            sess.control.request_cancel()
            self.dispatcher.cancel(sess.store_id)
        self.sessions.pop(sess.session_id, None)
        if not any(s.store_id == sess.store_id for s in self.sessions.values()):
            await self.tool_sources.disconnect(sess.store_id)
            hooks = self.dispatcher.services.hooks
            if hooks is not None:  # its SessionEnd hooks
                await asyncio.to_thread(hooks.end_sessions, "other", [sess.store_id])

    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Delete a stored session and everything of it (refused while any process runs a
        turn in it); for a fork, forget the fork (its messages stay a branch of the
        session)."""
        sess = self._session(session_id)
        if sess.running:
            raise RequestError(-32002, f"session {session_id} is running a prompt; cancel it "
                               "first")
        store = self.dispatcher.services.store
        for other in [s for s in self.sessions.values() if s.store_id == sess.store_id
                      and (sess.fork_key is None or s.session_id == session_id)]:
            await self._close(other)
        if not sess.stored:
            return DeleteSessionResponse()
        try:
            if sess.fork_key is not None:
                forks.forget(store, sess.store_id, sess.fork_key)
            else:
                await asyncio.to_thread(store.delete_session, sess.store_id)
        except OpenProgramError as exc:
            raise _rpc(exc) from None
        return DeleteSessionResponse()

    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> SetSessionModeResponse:
        """Switch the session's permission mode (applies from the next turn)."""
        sess = self._session(session_id)
        if mode_id not in PERMISSION_MODES:
            raise RequestError.invalid_params({"field": "modeId", "message":
                                               f"use one of {', '.join(PERMISSION_MODES)}"})
        self.set_setting(sess, conf.MODE, mode_id)
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        """Set the model, the permission mode or the reasoning effort (from the next
        prompt)."""
        sess = self._session(session_id)
        if not isinstance(value, str):
            raise RequestError.invalid_params({"field": "value",
                                               "message": f"{config_id} takes a value id"})
        self.set_setting(sess, config_id, value)
        return SetSessionConfigOptionResponse(
            config_options=conf.options(self.dispatcher, sess))

    async def set_session_model(self, session_id: str, model_id: str,
                                **kwargs: Any) -> dict[str, Any]:
        """``session/set_model`` (unstable ACP): the model option by another name."""
        self.set_setting(self._session(session_id), conf.MODEL, model_id)
        return {}

    def set_setting(self, sess: AcpSession, config_id: str, value: str) -> None:
        """Change one setting, store it, and show this client the change."""
        before = dict(sess.told)
        try:
            conf.choose(self.dispatcher, sess, config_id, value)
        except OpenProgramError as exc:
            raise _rpc(exc) from None
        self._save_settings(sess)
        sess.told = before
        for update in conf.updates(self.dispatcher, sess):
            self.notify(sess.session_id, update)

    async def _connect_tools(self, sess: AcpSession, servers: list[Any] | None) -> None:
        if servers:
            try:
                await self.tool_sources.connect(sess.store_id, sess.workspace, servers)
            except OpenProgramError as exc:
                raise _rpc(exc) from None

    # -- prompts -----------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Block], **kwargs: Any) -> PromptResponse:
        """Run one turn; updates stream while it runs; answers with the stop reason."""
        sess = self._session(session_id)
        if sess.running:
            raise RequestError(-32002, f"session {session_id} is already running a prompt; "
                               "cancel it first")
        self.sessions[session_id] = self.sessions.pop(session_id)  # the most recent: followed
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

        services = self.dispatcher.services
        if sess.stored:  # another client may have changed the model or mode: run with those
            try:
                self._sync(sess, services.store.meta(sess.store_id))
            except OpenProgramError as exc:
                raise _rpc(exc) from None
        answered = await run_slash(self, sess, blocks)
        if isinstance(answered, PromptResponse):
            return answered
        request: TurnRequest
        if isinstance(answered, TurnRequest):
            request = answered
        else:
            try:
                content = await build_prompt(blocks, sess.workspace,
                                             self._reader(sess.store_id),
                                             services.store.images.put)
            except OpenProgramError as exc:
                raise RequestError.invalid_params({"field": "prompt",
                                                   "message": exc.message}) from None
            if not content.text:
                raise RequestError.invalid_params({"field": "prompt",
                                                   "message": "the prompt is empty"})
            meta: dict[str, Any] = {"client": "acp"}
            if content.attachments:
                meta.update(promptText=content.typed, attachments=content.attachments)
            if content.images:  # rendered as the editors' image attachments are
                meta.update(promptText=content.typed, context=content.images)
            if content.unseen:  # not advertised, sent anyway: the user learns it went unseen
                self.notify_text(sess.session_id, f"(Not passed to the model: "
                                 f"{', '.join(content.unseen)}. This agent takes text, files, "
                                 "images and resources only.)\n\n")
            for note in downscaled_notes(content.images):  # the user learns before the reply
                self.notify_text(sess.session_id, f"({note}.)\n\n")
            request = TurnRequest(text=content.text, session_id=sess.store_id,
                                  workspace=str(sess.workspace), metadata=meta)
        first_of_fork = self._place(sess, request)
        request.permission_mode = sess.mode
        request.model = sess.model
        request.reasoning_effort = sess.effort if conf.thinks(self.dispatcher, sess) else None
        await self._store(sess)
        stream = TurnStream(sess.store_id, sess.workspace, services.tools, sess.mode,
                            services.rules_for(sess.workspace),
                            send=lambda u: self.notify(sess.session_id, u),
                            ext=lambda e: self.ext({**e, "sessionId": sess.session_id}),
                            text=lambda t: self.notify_text(sess.session_id, t),
                            thought=lambda t: self.notify_thought(sess.session_id, t))
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
            if first_of_fork is not None \
                    and services.store.find_branch(sess.store_id, first_of_fork.name):
                forks.mark_started(services.store, sess.store_id, first_of_fork)
        title = services.store.meta(sess.store_id).get("title")
        if title:
            self.notify(sess.session_id, SessionInfoUpdate(
                session_update="session_info_update", title=title))
        self._announce(sess.session_id, if_changed=True)
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
                                        if result.checkpoint else result.checkpoint_pending}})

    def _place(self, sess: AcpSession, request: TurnRequest) -> forks.Fork | None:
        """Point a fork's prompt at its branch: its tip, or for its first message the node it
        starts after, named (the returned fork, to mark started after the turn)."""
        if sess.fork_key is None or request.branch_from is not INHERIT:
            return None
        store = self.dispatcher.services.store
        try:
            fork = forks.record(store, sess.store_id, sess.fork_key)
            tip = forks.tip(store, sess.store_id, fork)
        except OpenProgramError as exc:
            raise _rpc(exc) from None
        if tip is not None:
            request.branch_from = tip
            return None
        request.branch_from = fork.from_node
        request.branch_name = fork.name
        if fork.rules != "inherit":
            request.metadata["rules"] = fork.rules
        return fork

    async def _store(self, sess: AcpSession) -> None:
        """Create a new session in the store with its first message (and its settings)."""
        if sess.stored:
            return
        try:
            extra: dict[str, Any] = {conf.META_KEY: conf.record(sess)}
            await asyncio.to_thread(lambda: self.dispatcher.services.store.create_session(
                sid=sess.store_id, workspace=str(sess.workspace), **extra))
        except OpenProgramError as exc:
            raise _rpc(exc) from None
        sess.stored = True

    def _reader(self, sid: str) -> Any:
        from openprogram_lsp.acp.editor import read_text

        return lambda path: read_text(self, sid, path)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's running prompt (it answers ``cancelled``)."""
        log.info("session/cancel for %s", session_id)
        sess = self.sessions.get(session_id)
        if sess is not None and sess.control is not None:
            sess.control.request_cancel()
        sid = sess.store_id if sess is not None else session_id.partition(forks.SEP)[0]
        if self.dispatcher.services.store.exists(sid):
            self.dispatcher.cancel(sid)

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
        if self._settings_task is not None:
            self._settings_task.cancel()
        for sess in self.sessions.values():
            if sess.control is not None:
                sess.control.interrupt()
        self.dispatcher.cancel_all()
        await self.dispatcher.agents.drain(timeout)
        if self.dispatcher.services.hooks is not None:  # SessionEnd of the sessions we ran
            await asyncio.to_thread(self.dispatcher.services.hooks.end_sessions, "other")
        for watcher in list(self.watchers.values()):
            await watcher.stop()
        self.watchers.clear()
        await self.tool_sources.close()
        await self.dispatcher.services.tools.aclose()  # background commands end with us
        if self._outbox is not None:
            await self._outbox.close()
