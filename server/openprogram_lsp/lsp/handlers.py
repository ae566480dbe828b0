"""Handlers of the custom requests: typed params (``@handles``, parsed by ``requests``) -> call
the dispatcher -> dump the result."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core import memory
from openprogram_lsp.core.errors import (
    CheckpointError,
    InvalidParams,
    NotFound,
    SessionBusy,
    Unauthorized,
)
from openprogram_lsp.core.types import INHERIT, Checkpoint, TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import make_event
from openprogram_lsp.lsp import dumps, requests
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.agent_actions import AgentActions
from openprogram_lsp.lsp.attachments import resolve as resolve_attachments
from openprogram_lsp.lsp.blame_features import BlameFeatures
from openprogram_lsp.lsp.code_handlers import CodeHandlers
from openprogram_lsp.lsp.context_handlers import ContextHandlers
from openprogram_lsp.lsp.documents import DocumentBuffers, RestoreBuffers
from openprogram_lsp.lsp.history_result import history_result
from openprogram_lsp.lsp.host import frame
from openprogram_lsp.lsp.mcp_handlers import McpHandlers
from openprogram_lsp.lsp.node_wire import WireCache
from openprogram_lsp.lsp.protocol import RawResult
from openprogram_lsp.lsp.requests import Handler, handles
from openprogram_lsp.lsp.rules_handlers import RulesHandlers
from openprogram_lsp.lsp.session_rows import sessions_result
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.checkpoints.results import FileChange, RestoreOutcome
from openprogram_lsp.store.page_snapshot import MIN_NODES

if TYPE_CHECKING:
    from openprogram_lsp.lsp.view import ConnectionView

log = logging.getLogger(__name__)
RELEASE_AFTER = 0.2
"""Seconds after a long history answer before the heap it freed is given back (it is sent
by then)."""


class Handlers:
    """The custom request handlers of one server."""

    def __init__(self, server: ConnectionView) -> None:
        self.server = server
        self.code = CodeHandlers(self)
        self.blame = BlameFeatures(self)
        self.agent_actions = AgentActions(server, self._turn, self._model)
        self.node_wire = WireCache()

    # -- helpers -----------------------------------------------------------------------------

    @property
    def dispatcher(self) -> Dispatcher:
        return self.server.dispatcher

    def _session(self, sid: str) -> str:
        if not self.dispatcher.services.store.exists(sid):
            raise NotFound(f"unknown session id {sid!r}")
        return sid

    def _node(self, sid: str, node_id: str, field: str) -> str:
        if not self.dispatcher.services.store.has_node(sid, node_id):
            raise NotFound(f"{field}: unknown node id {node_id!r} in session {sid!r}")
        return node_id

    def _model(self, requested: str | None) -> str | None:
        if requested:
            return requested
        # --model and OPENPROGRAM_MODEL beat the editor's option; config files do not
        services = self.dispatcher.services
        if services.settings_for is not None:  # the editor's folder decides, not the cwd
            configured = self.server.workspace_settings()
            if configured is not None and configured.sources.get("model", "").startswith(
                    ("env ", "flag ")):
                return None
            return self.server.settings.options.model
        default = services.default_model
        configured = services.settings
        if default and (configured is None or configured.get(CoreSettings).model != default
                        or configured.sources.get("model", "").startswith(("env ", "flag "))):
            return None
        return self.server.settings.options.model

    def _checkpointer(self) -> Any:
        cp = self.dispatcher.checkpointer(self.server.primary_workspace)
        if cp is None:
            raise CheckpointError("checkpoints are not available for this workspace")
        return cp

    async def _turn(self, request: TurnRequest) -> dict[str, Any]:
        server = self.server
        # this connection's own rules: its settings, read at each decision (a removed setting
        # stops covering calls at once), and inherited by the turn's children
        request.rules = [server.settings]
        result = await server.runner.run(
            request, progress=server.settings.client.work_done_progress, server=server,
            on_session=lambda sid: server.host.claim(server, sid))
        return result.wire()

    # -- turns -------------------------------------------------------------------------------

    @handles("openprogram/chat")
    async def chat(self, p: w.ChatParams) -> dict[str, Any]:
        if p.session_id is not None:
            self._session(p.session_id)
        branch: Any = INHERIT if p.branch_from == "inherit" else p.branch_from
        if isinstance(branch, str) and p.session_id is None:
            raise InvalidParams("branchFrom: a node id needs a sessionId")
        if isinstance(branch, str) and p.session_id is not None:
            self._node(p.session_id, branch, "branchFrom")
        elif p.rules != "inherit":
            raise InvalidParams("rules: applies to a fork (branchFrom a node id)")
        meta = await self._turn_meta(p.client_turn_id, p.context)
        if p.rules != "inherit":
            meta["rules"] = p.rules
        return await self._turn(TurnRequest(
            text=p.text, session_id=p.session_id, branch_from=branch,
            workspace=str(self.server.primary_workspace) if p.session_id is None else None,
            model=self._model(p.model), permission_mode=self.server.settings.permission_mode,
            metadata=meta))

    async def _turn_meta(self, client_turn_id: str | None,
                         context: list[w.ContextItem] | None) -> dict[str, Any]:
        """The user node's metadata from the request: its client id and its attachments."""
        meta: dict[str, Any] = {"clientTurnId": client_turn_id} if client_turn_id else {}
        if context:
            meta["context"] = await resolve_attachments(self.server, context)
        return meta

    @handles("openprogram/fork")
    async def fork(self, p: w.ForkParams) -> dict[str, Any]:
        self._session(p.session_id)
        if p.from_node_id is not None:
            self._node(p.session_id, p.from_node_id, "fromNodeId")
        meta = await self._turn_meta(p.client_turn_id, p.context)  # refused before any restore
        if p.rules != "inherit":
            meta["rules"] = p.rules  # the fork's rules scope (dispatcher.history.rules_branch)
        switched: RestoreOutcome | None = None
        if p.restore_code and p.from_node_id is not None:
            if self.dispatcher.user_turn(p.session_id) is not None:
                raise SessionBusy(f"session {p.session_id} is running a turn; cancel it "
                                  "before forking with restoreCode")
            switched = await self.code.restore_code(p.session_id, p.from_node_id, p.keep_paths)
        result = await self._turn(TurnRequest(
            text=p.text, session_id=p.session_id, branch_from=p.from_node_id,
            branch_name=p.name, model=self._model(p.model),
            permission_mode=self.server.settings.permission_mode, metadata=meta))
        if switched is not None:
            result["codeRestore"] = dumps.code_restore(switched)
        return result

    @handles("openprogram/cancel")
    async def cancel(self, p: w.SessionParams) -> dict[str, Any]:
        cancelled = self.dispatcher.cancel(self._session(p.session_id))
        return w.CancelResult(cancelled=cancelled).wire()

    @handles("openprogram/steer")
    async def steer(self, p: w.SteerParams) -> dict[str, Any]:
        accepted = self.dispatcher.steer(self._session(p.session_id), p.text)
        return w.AcceptedResult(accepted=accepted).wire()

    # -- sessions and branches ---------------------------------------------------------------

    @handles("openprogram/sessions")
    async def sessions(self, p: w.SessionsParams) -> dict[str, Any]:
        rows, total = self.dispatcher.services.store.session_page(
            workspace=p.workspace, offset=p.offset, limit=p.limit)
        return sessions_result(rows, total, p.offset)  # ``SessionsResult``, no model a row

    @handles("openprogram/renameSession")
    async def rename_session(self, p: w.RenameSessionParams) -> dict[str, Any]:
        sid = self._session(p.session_id)
        self.dispatcher.services.store.update_meta(sid, title=p.title.strip() or p.title)
        return w.EmptyResult().wire()

    @handles("openprogram/deleteSession")
    async def delete_session(self, p: w.SessionParams) -> dict[str, Any]:
        sid = self._session(p.session_id)
        if self.dispatcher.user_turn(sid) is not None:
            raise SessionBusy(f"session {sid} is running a turn; cancel it before deleting")
        await self.dispatcher.services.tools.end_session(sid)  # its background commands
        await asyncio.to_thread(self.dispatcher.services.store.delete_session, sid)
        return w.EmptyResult().wire()

    @handles("openprogram/history")
    async def history(self, p: w.HistoryParams) -> dict[str, Any] | RawResult:
        sid = self._session(p.session_id)
        store = self.dispatcher.services.store
        # a session this process has not opened: its kept first page when nothing it was
        # read from changed (``page_snapshot``), else its node log's tail (``cold_page``)
        limit = min(p.limit, w.HISTORY_MAX)  # a longer branch: hasMore, the client pages on
        kept = store.kept_page(sid, p.head_id, limit=limit, before=p.before_node_id)
        if kept is not None:
            log.debug("history of %s: its kept first page", sid)
            return RawResult(kept)
        page = store.history_page(
            sid, p.head_id, limit=limit, before=p.before_node_id, reply_role="system")
        if p.before_node_id is None and len(page.nodes) >= MIN_NODES:
            self.server.host.pages.want(sid, limit)  # keep it for the next fresh server
        if len(page.nodes) > w.HISTORY_PAGE:  # once it is sent, its memory goes back
            asyncio.get_running_loop().call_later(RELEASE_AFTER, memory.release)
        return history_result(sid, page, self.node_wire.wire_many)

    @handles("openprogram/nameBranch")
    async def name_branch(self, p: w.NameBranchParams) -> dict[str, Any]:
        sid = self._session(p.session_id)
        self._node(sid, p.head_id, "headId")
        self.dispatcher.services.store.name_branch(sid, p.head_id, p.name)
        return w.EmptyResult().wire()

    @handles("openprogram/answer")
    async def answer(self, p: w.AnswerParams) -> dict[str, Any]:
        owner = self.server.host.owner_for(
            self.dispatcher.services.questions.session_of(p.question_id))
        if owner is not None and owner is not self.server:
            raise Unauthorized(f"question {p.question_id} belongs to the editor that started "
                               "the turn; it is shown here read-only")
        accepted = self.dispatcher.services.questions.answer(p.question_id, p.answer)
        return w.AcceptedResult(accepted=accepted).wire()

    @handles("openprogram/agents")
    async def agents(self, p: w.OptionalSessionParams) -> dict[str, Any]:
        if p.session_id is not None:
            self._session(p.session_id)
        rows = self.dispatcher.list_agents(p.session_id)
        engine = self.dispatcher.services.hooks
        definitions = [dumps.model(w.AgentDefinitionInfo, d) for d in engine.agent_listing(
            self._workspace())] if engine is not None else []
        return w.AgentsResult(agents=[dumps.model(w.AgentInfo, r) for r in rows],
                              definitions=definitions).wire()

    # -- hooks and trust ---------------------------------------------------------------------

    def _workspace(self) -> Path:
        return Path(self.server.primary_workspace).resolve()

    def _engine(self) -> Any:
        engine = self.dispatcher.services.hooks
        if engine is None:
            raise NotFound("hooks are not available in this server")
        return engine

    @handles("openprogram/hooks")
    async def hooks(self, _p: w.EmptyParams) -> dict[str, Any]:
        engine = self._engine()
        ws = self._workspace()
        listing = await asyncio.to_thread(engine.listing, ws)
        return dumps.hooks(listing, engine.config(ws).warnings)

    @handles("openprogram/trust")
    async def trust(self, p: w.TrustParams) -> dict[str, Any]:
        engine = self._engine()
        state = engine.set_trust(self._workspace(), p.id, p.decision)
        return w.TrustResult(id=p.id, trust=state).wire()

    @handles("openprogram/subscribe")
    async def subscribe(self, p: w.SubscribeParams) -> dict[str, Any]:
        sid = self._session(p.session_id)
        host = self.server.host
        self.server.subscriptions.add(sid)
        sessions = [sid]
        orphan = host.orphans.get(sid)
        if orphan is not None and host.adopt(self.server, sid):  # its editor went away mid-turn
            sessions += sorted(orphan.sessions - {sid})
        elif host.owner_for(sid) is None:  # nobody answers its prompts (a subagent's): this one
            host.owners[sid] = self.server
        if p.replay:  # in the same step: every later event reaches this editor after these
            for each in sessions:
                for payload in host.replay.of_session(each):
                    self.server.send_raw(frame(w.EVENT, payload))
        running = self.dispatcher.user_turn(sid)
        return w.SubscribeResult(session_id=sid,
                                 head_id=self.dispatcher.services.store.head(sid),
                                 running_turn_id=running.turn_id if running else None).wire()

    @handles("openprogram/unsubscribe")
    async def unsubscribe(self, p: w.SessionParams) -> dict[str, Any]:
        had = p.session_id in self.server.subscriptions
        self.server.subscriptions.discard(p.session_id)
        return w.AcceptedResult(accepted=had).wire()

    # -- checkpoints -------------------------------------------------------------------------

    @handles("openprogram/checkpoints")
    async def checkpoints(self, p: w.OptionalSessionParams) -> dict[str, Any]:
        if p.session_id is not None:
            self._session(p.session_id)
        cp = self._checkpointer()
        items: list[Checkpoint] = await asyncio.to_thread(cp.list, session_id=p.session_id)
        return {"checkpoints": [c.wire() for c in items]}

    @handles("openprogram/checkpointDiff")
    async def checkpoint_diff(self, p: w.CheckpointDiffParams) -> dict[str, Any]:
        cp = self._checkpointer()
        return dumps.diff(await asyncio.to_thread(cp.diff, p.checkpoint_id, p.path))

    def _refuse_during_turn(self) -> None:
        root_ws = Path(self.server.primary_workspace).resolve()
        busy = [t for t in self.dispatcher.active_turns() if t.workspace.resolve() == root_ws]
        if busy:  # a restore under a running turn would mix its files into that turn
            raise SessionBusy(f"a turn is running in this workspace (session "
                              f"{busy[0].session_id}); cancel it or wait before restoring")

    def _changed(self, out: RestoreOutcome) -> None:
        """Tell editors which files a restore wrote."""
        root = Path(self.server.primary_workspace)
        if out.restored:
            changes = out.changes or [
                FileChange(path, "modified" if (root / path).exists() else "deleted")
                for path in out.restored]
            self.dispatcher.services.bus.emit(make_event(
                "file.changed", {"changes": [dataclasses.asdict(c) for c in changes],
                                 "root": str(root)},
                session_id=None, turn_id=None, origin="restore"))

    def _buffer_sink(self, cp: Any) -> RestoreBuffers | None:
        """The editors' open documents for a restore: files with unsaved changes there are
        restored into the buffer (``workspace/applyEdit``), never under it on disk."""
        buffers = self.dispatcher.services.buffers
        if not isinstance(buffers, DocumentBuffers) or not isinstance(cp, CheckpointStore):
            return None
        return RestoreBuffers(buffers, cp.workspace, asyncio.get_running_loop())

    @handles("openprogram/restore")
    async def restore(self, p: w.RestoreParams) -> dict[str, Any]:
        cp = self._checkpointer()
        self._refuse_during_turn()
        if p.undo and p.paths:
            raise InvalidParams("paths: not allowed with undo (an undo covers the turn's files)")
        sink = self._buffer_sink(cp)
        out: RestoreOutcome = (
            await asyncio.to_thread(cp.undo, p.checkpoint_id, buffers=sink) if p.undo else
            await asyncio.to_thread(cp.restore, p.checkpoint_id, p.paths or None,
                                    buffers=sink))
        self._changed(out)
        return dumps.restore(out)

    @handles("openprogram/restoreHunk")
    async def restore_hunk(self, p: w.RestoreHunkParams) -> dict[str, Any]:
        cp = self._checkpointer()
        self._refuse_during_turn()
        out: RestoreOutcome = await asyncio.to_thread(cp.restore_hunk, p.checkpoint_id,
                                                      p.path, p.hunk,
                                                      buffers=self._buffer_sink(cp))
        self._changed(out)
        return dumps.restore(out)

    def table(self) -> dict[str, Handler]:
        """Method name -> guarded handler: the ``@handles`` methods of this class and of the
        handler groups (a new group is added here)."""
        return requests.table(self, self.code, self.blame, McpHandlers(self.server),
                              ContextHandlers(self.server), RulesHandlers(self.server))
