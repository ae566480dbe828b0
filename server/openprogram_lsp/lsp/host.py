"""What the connections of one server share: dispatcher, watchers, turns, the event fan-out.

Each connection (an ``Link``) keeps its own settings, capabilities, approver and
asker. Turns remember the connection that started them: approvals and questions go there, and
the other connections subscribed to the session see them as read-only cards
(``permission.requested`` / ``permission.resolved``, ``question.asked`` / ``question.replied``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from openprogram_lsp.core.types import (
    ClientOptions,
    PermissionMode,
    PermissionOutcome,
    PermissionRequest,
    Question,
)
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event, make_event
from openprogram_lsp.lsp.bridge import EventBridge
from openprogram_lsp.lsp.documents import DocumentBuffers
from openprogram_lsp.lsp.dumps import notification
from openprogram_lsp.lsp.language import EditorLanguageServers
from openprogram_lsp.lsp.logs import WindowLogHandler
from openprogram_lsp.lsp.page_keeper import PageKeeper
from openprogram_lsp.lsp.turn_replay import TurnReplay
from openprogram_lsp.lsp.turns import TurnRunner
from openprogram_lsp.lsp.wire import EVENT
from openprogram_lsp.store.watcher import WorkspaceWatcher
from openprogram_lsp.tools.filelist import FileList

if TYPE_CHECKING:
    from openprogram_lsp.lsp.link import Link

log = logging.getLogger(__name__)
T = TypeVar("T")
NO_EDITOR = "no editor that started this session's turn is connected"


@dataclass(eq=False)
class Orphan:
    """The running turns of an editor that went away (``--keep-turns``): they run on until an
    editor re-attaches (``openprogram/subscribe`` to one of ``sessions``) or ``timer`` ends them.
    Holding ``link`` keeps its ``id`` (the turns' owner key) from being reused meanwhile."""

    link: Link
    sessions: set[str]
    timer: asyncio.TimerHandle | None = None
    adopted: asyncio.Future[Link | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future())


def frame(method: str, params: Any) -> bytes:
    """A framed JSON-RPC notification, serialised once for every receiver."""
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class ServerHost:
    """The shared half of a server; ``single`` when one editor started it over stdio."""

    def __init__(self, dispatcher: Dispatcher, *, flag_mode: PermissionMode | None = None,
                 single: bool = True) -> None:
        self.dispatcher = dispatcher
        self.flag_mode = flag_mode
        self.single = single
        self.connections: list[Link] = []
        self.bridge: EventBridge | None = None
        self.listeners: list[Callable[[Event], None]] = []
        self.runner = TurnRunner(dispatcher, None, self.listeners)
        self.pages = PageKeeper(dispatcher.services.store)  # first pages for the next server
        self.listeners.append(self.pages.on_event)
        self.listeners.append(self._tools_added)
        self.watchers: dict[Path, WorkspaceWatcher] = {}
        self.log_handler: WindowLogHandler | None = None
        self.owners: dict[str, Link] = {}  # session id -> connection driving it
        self._background: set[asyncio.Future[None]] = set()
        services = dispatcher.services
        services.approver = RoutingApprover(self)
        services.asker = RoutingAsker(self)
        services.client_options = self.client_options_of
        self.buffers = services.buffers = DocumentBuffers(self)
        services.language = EditorLanguageServers(self)
        self.file_lists: dict[Path, FileList] = {}
        self.replay = TurnReplay()  # what running turns streamed, for late subscribers
        self.keep_turns = 0.0  # ``serve --tcp --keep-turns``: how long a turn waits for its editor
        self.orphans: dict[str, Orphan] = {}  # session id -> turns whose editor went away
        self._lost: dict[int, asyncio.Future[None]] = {}  # link id -> set when it goes away
        self.runner.keeps = lambda link: any(o.link is link for o in self.orphans.values())

    # -- connections ------------------------------------------------------------------------

    def attach(self, server: Link) -> None:
        """A connection joined (after its initialize)."""
        if server not in self.connections:
            self.connections.append(server)
        self.start()
        if self.log_handler is not None:
            self.log_handler.attach(self, asyncio.get_running_loop())

    def detach(self, server: Link) -> None:
        """A connection ended: its turns are cancelled (or, with ``keep_turns``, wait for an
        editor to re-attach), its sessions lose their owner."""
        if server in self.connections:
            self.connections.remove(server)
        self.release(server)
        for sid in [s for s, owner in self.owners.items() if owner is server]:
            del self.owners[sid]
        lost = self._lost.pop(id(server), None)
        if lost is not None and not lost.done():
            lost.set_result(None)
        if self.dispatcher.services.mcp is not None:  # its MCP servers are its own
            self.dispatcher.services.mcp.set_editor_servers(None, owner=server.owner_key)
        self.sync_watchers()

    def release(self, server: Link) -> None:
        """An editor shut down or went away: interrupt its running turns, or with
        ``keep_turns`` keep them running for that long, waiting for an editor to re-attach."""
        sessions = {s for s, owner in self.owners.items() if owner is server}
        # its own turns, or a subagent still at work in one of its sessions (the agent tool
        # returns at once: the child outlives the turn that spawned it)
        busy = self.runner.owns(server) or any(self.dispatcher.active_turns(s) for s in sessions)
        if self.keep_turns <= 0 or not busy:
            self.runner.cancel_owner(server)
            return
        if any(o.link is server for o in self.orphans.values()):
            return  # shutdown, then the connection's end: orphaned once
        orphan = Orphan(server, sessions)
        orphan.timer = asyncio.get_running_loop().call_later(
            self.keep_turns, self._expire, orphan)
        for sid in sessions:
            self.orphans[sid] = orphan
        log.info("editor gone: %s running turn(s) of %s wait %ss for it to re-attach",
                 len(sessions), ", ".join(sorted(sessions)), self.keep_turns)
        # another window already watching the session takes the turns over at once
        watcher = next((c for c in self.connections if c is not server
                        and any(sid in c.subscriptions for sid in sessions)), None)
        if watcher is not None:
            self.adopt(watcher, next(iter(sessions)))

    def _expire(self, orphan: Orphan) -> None:
        """No editor re-attached in time: the turns end as interrupted."""
        self._drop(orphan)
        self.runner.cancel_key(id(orphan.link))
        if not orphan.adopted.done():
            orphan.adopted.set_result(None)

    def _drop(self, orphan: Orphan) -> None:
        if orphan.timer is not None:
            orphan.timer.cancel()
        for sid in orphan.sessions:
            if self.orphans.get(sid) is orphan:
                del self.orphans[sid]

    def adopt(self, server: Link, session_id: str) -> bool:
        """An editor subscribed to a session whose editor went away mid-turn: it re-attaches,
        owning the turns (their approvals and questions come to it) and seeing their sessions."""
        orphan = self.orphans.get(session_id)
        if orphan is None or server not in self.connections:
            return False
        self._drop(orphan)
        for sid in orphan.sessions:
            self.owners[sid] = server
            server.subscriptions.add(sid)
        self.runner.hand_over(id(orphan.link), server)
        if not orphan.adopted.done():
            orphan.adopted.set_result(server)
        log.info("an editor re-attached to %s", ", ".join(sorted(orphan.sessions)))
        return True

    def lost(self, server: Link) -> asyncio.Future[None]:
        """Settles when the connection goes away (at once when it is gone already)."""
        fut = self._lost.get(id(server))
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            if server in self.connections:
                self._lost[id(server)] = fut
            else:
                fut.set_result(None)
        return fut

    async def owner_or_wait(self, session_id: str | None) -> Link | None:
        """The session's live owner; while its turns wait for their editor to re-attach, the
        editor that does (None when none does in time)."""
        orphan = self.orphans.get(session_id or "")
        if orphan is None:
            return self.owner_for(session_id)
        # its editor shut down (it may still be connected until its ``exit``): the next one
        return await asyncio.shield(orphan.adopted)

    async def ask_owner(self, session_id: str | None,
                           ask: Callable[[Link], Awaitable[T]]) -> tuple[Link | None, T | None]:
        """Ask the session's owner; if it goes away meanwhile and the turn waits for an editor
        to re-attach, ask the one that does (the first prompt is withdrawn). ``(None, None)``
        when no editor is there to ask."""
        owner = await self.owner_or_wait(session_id)
        while owner is not None:
            asked = asyncio.ensure_future(ask(owner))
            try:
                waited: set[asyncio.Future[Any]] = {asked, self.lost(owner)}
                await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:  # the turn was cancelled: the prompt is withdrawn
                await _cancelled(asked)
                raise
            orphan = self.orphans.get(session_id or "")
            if orphan is None and self.owner_for(session_id) is owner:
                return owner, await asked
            # the editor shut down or went away meanwhile (another took the turn over, or one
            # may re-attach): its answer (the prompt failing with the connection) is void
            await _cancelled(asked)
            owner = await self.owner_or_wait(session_id)
        return None, None

    def claim(self, server: Link, session_id: str) -> None:
        """A connection starts a turn in a session: it owns the prompts and sees the events."""
        self.owners[session_id] = server
        server.subscriptions.add(session_id)

    def owner_for(self, session_id: str | None) -> Link | None:
        """The live connection that prompts of a session go to."""
        owner = self.owners.get(session_id or "")
        if owner is not None and owner in self.connections:
            return owner
        if self.single and self.connections:  # one editor: everything is its own
            return self.connections[0]
        return None

    def client_options_of(self, session_id: str) -> ClientOptions | None:
        """The options of the editor driving a session (its turns run with them)."""
        owner = self.owner_for(session_id)
        return owner.client_options if owner is not None else None

    def window_log_message(self, params: Any) -> None:
        """``window/logMessage`` to every connection (the log handler's peer)."""
        for server in list(self.connections):
            try:
                server.window_log_message(params)
            except Exception:
                log.debug("log message not delivered", exc_info=True)

    # -- events -----------------------------------------------------------------------------

    def start(self) -> None:
        """Subscribe to the bus and run jobs on this loop (once)."""
        if self.bridge is None:
            loop = asyncio.get_running_loop()
            self.bridge = EventBridge(self.dispatcher.services.bus, self.publish, loop,
                                      self.listeners)
            self.dispatcher.agents.attach_loop(loop)
            self.bridge.start()

    def publish(self, event: Event, payload: dict[str, Any],
                exclude: Link | None = None) -> int:
        """Send one event to every connection that sees its session; returns how many."""
        sid = event.session_id
        if event.type == "subagent.started":
            self._follow_child(sid, payload.get("data") or {})
        self.replay.record(sid, event.turn_id, event.type, payload)
        data = frame(EVENT, payload)
        sent = 0
        for server in list(self.connections):
            if server is exclude or not server.sees(sid):
                continue
            if server.send_raw(data):
                sent += 1
        return sent

    def _tools_added(self, event: Event) -> None:
        """An MCP server added tools after it was trusted: every editor is told (a warning),
        besides the ``mcp.tools_added`` event its panel shows."""
        if event.type != "mcp.tools_added":
            return
        tools = ", ".join(str(t.get("tool")) for t in event.payload.get("tools") or [])
        message = (f"OpenProgram: MCP server {event.payload.get('server')} added tools after "
                   f"you trusted it: {tools}. Each asks before its first use.")
        for server in list(self.connections):
            if server.sees(None):
                server.show_warning(message)

    def _follow_child(self, sid: str | None, data: dict[str, Any]) -> None:
        """A child session is seen, and prompted, where its parent session is."""
        parent = data.get("parentSessionId")
        if not sid or not isinstance(parent, str) or parent == sid:
            return
        for server in self.connections:
            if parent in server.subscriptions:
                server.subscriptions.add(sid)
        if parent in self.owners and sid not in self.owners:
            self.owners[sid] = self.owners[parent]

    def card(self, owner: Link, session_id: str, turn_id: str | None,
             type: str, data: dict[str, Any]) -> None:
        """A read-only prompt card for the other connections watching a session."""
        event = Event(type=type, payload=data, session_id=session_id, turn_id=turn_id,
                      origin="lsp")
        self.publish(event, notification(event), exclude=owner)

    # -- watchers ---------------------------------------------------------------------------

    def folders(self) -> list[Path]:
        """Every workspace folder of the live connections."""
        out: list[Path] = []
        for server in self.connections:
            out.extend(f for f in server.folders if f not in out)
        return out

    def sync_watchers(self) -> None:
        """Watch exactly the folders of the live connections."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        wanted = self.folders()
        for root in list(self.watchers):
            if root not in wanted:
                stopping = asyncio.ensure_future(self.watchers.pop(root).stop())
                self._background.add(stopping)
                stopping.add_done_callback(self._background.discard)
        for root in wanted:
            if root not in self.watchers and root.is_dir():
                watcher = WorkspaceWatcher(root, self.dispatcher.services.bus,
                                           on_changes=self._note_changes,
                                           exclude=[self.dispatcher.services.store.home])
                self.watchers[root] = watcher
                watcher.start()

    def file_list(self, root: Path) -> FileList:
        """The file list of a workspace root (built on first use, kept current by watchers)."""
        found = self.file_lists.get(root)
        if found is None:
            found = self.file_lists[root] = FileList(root)
        return found

    def _note_changes(self, root: Path, changes: list[dict[str, str]]) -> None:
        listed = self.file_lists.get(root)
        if listed is not None:
            listed.note_changes(changes)
        checkpointer = self.dispatcher.checkpointer(root)
        if checkpointer is not None:
            checkpointer.note_paths([c["path"] for c in changes])

    async def stop(self) -> None:
        """Cancel turns, wait for their finalize, stop watchers and the bridge."""
        await self.runner.shutdown()
        if self.dispatcher.services.hooks is not None:  # SessionEnd of the sessions we ran
            await asyncio.to_thread(self.dispatcher.services.hooks.end_sessions, "other")
        for watcher in list(self.watchers.values()):
            await watcher.stop()
        self.watchers.clear()
        if self.dispatcher.services.mcp is not None:
            await self.dispatcher.services.mcp.aclose()
        await self.dispatcher.services.tools.aclose()  # background commands end with us
        if self.bridge is not None:
            self.bridge.stop()
            self.bridge = None


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel a prompt and wait until it has withdrawn itself."""
    task.cancel()
    with contextlib.suppress(BaseException):
        await task


class RoutingApprover:
    """The Approver port of the dispatcher: asks the connection that owns the session."""

    def __init__(self, host: ServerHost) -> None:
        self.host = host

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        """Ask the owner; the other watchers get a read-only card and its outcome."""
        owner = await self.host.owner_or_wait(request.session_id)
        if owner is None:
            return PermissionOutcome(outcome="cancelled", reason=NO_EDITOR)
        card = {**request.model_dump(mode="json", exclude_none=True), "read_only": True}
        outcome = PermissionOutcome(outcome="cancelled", reason="cancelled")

        async def ask(link: Link) -> PermissionOutcome:
            self.host.card(link, request.session_id, request.turn_id, "permission.requested",
                           card)
            return await link.approver.request_permission(request)

        try:
            asked, answer = await self.host.ask_owner(request.session_id, ask)
            outcome = answer if asked is not None and answer is not None else \
                PermissionOutcome(outcome="cancelled", reason=NO_EDITOR)
            return outcome
        finally:
            self.host.dispatcher.services.bus.emit(make_event(
                "permission.resolved",
                {"tool_call_id": request.tool_call.tool_call_id, "outcome": outcome.outcome,
                 "option_id": outcome.option_id, "kind": outcome.kind, "reason": outcome.reason,
                 **({"accepted_hunks": outcome.accepted_hunks}
                    if outcome.accepted_hunks is not None else {})},
                session_id=request.session_id, turn_id=request.turn_id, origin="lsp"))


class RoutingAsker:
    """The Asker port: questions go to the connection that owns the session."""

    def __init__(self, host: ServerHost) -> None:
        self.host = host

    async def ask(self, question: Question) -> str | None:
        """Ask the owner (the others see ``question.asked`` and its answer on the bus)."""
        _, answer = await self.host.ask_owner(question.session_id,
                                              lambda link: link.asker.ask(question))
        return answer
