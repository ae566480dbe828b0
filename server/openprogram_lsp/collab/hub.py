"""The state every collaboration helper shares: lanes, the job runner, origins, child turns."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING, Any

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.collab.lanes import Lane, LaneKey, Lanes
from openprogram_lsp.collab.task_runner import Job, JobKind, TaskRunner
from openprogram_lsp.collab.types import AgentTurnResult, Origin
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.ids import new_id
from openprogram_lsp.core.types import TurnRequest, TurnResult
from openprogram_lsp.events.bus import Event

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher import Dispatcher
    from openprogram_lsp.dispatcher.active import ActiveTurn

DEFAULT_MAX_MESSAGES = 8
_LATITUDE = {"plan": 0, "ask": 1, "accept-edits": 2, "bypass": 3}  # what each mode lets run
WAKE_INTERVAL = 0.5  # seconds between re-checks of a busy branch when no turn-end wakes us


class Hub:
    """One dispatcher's collaboration state and the operations every helper builds on."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self.runner = TaskRunner()
        self.lanes = Lanes(dispatcher)
        self._lock = threading.Lock()
        self._depth: dict[str, int] = {}  # running turn id -> depth raised by follow-ups
        self._wake: asyncio.Event | None = None  # touched on the runner loop only

    # -- configuration ------------------------------------------------------------------------

    def max_messages(self, session_id: str) -> int:
        """The message budget of a chain: the driving editor's, ``agent.max_messages``, 8."""
        services = self.dispatcher.services
        value = services.options_of(session_id).max_messages or services.extra.get(
            "agent.max_messages", DEFAULT_MAX_MESSAGES)
        return int(value)

    def child_model(self, parent: ActiveTurn | None) -> str | None:
        """The model children run with: the editor's or ``agent.model``, else the parent's."""
        services = self.dispatcher.services
        spec = (services.options_of(parent.session_id).agent_model if parent is not None
                else None) or services.extra.get("agent.model")
        if isinstance(spec, str) and spec:
            return spec
        return parent.request.model if parent is not None else None

    def depth_of(self, turn: ActiveTurn) -> int:
        """A running turn's message count, raised by replies it absorbed."""
        with self._lock:
            return max(turn.request.message_depth, self._depth.get(turn.turn_id, 0))

    def raise_depth(self, turn_id: str, depth: int) -> None:
        """Record that a running turn absorbed a reply at this depth."""
        with self._lock:
            self._depth[turn_id] = max(self._depth.get(turn_id, 0), depth)

    # -- origins ------------------------------------------------------------------------------

    def lane_key_of(self, sid: str, tip: str, agent_id: str | None) -> LaneKey:
        """The lane a branch tip belongs to: its name, its agent, or the tip itself."""
        info = (self.dispatcher.services.store.meta(sid).get("branches") or {}).get(tip) or {}
        name = info.get("name")
        if isinstance(name, str) and name:
            return ("name", name)
        if agent_id and self.lanes.find(sid, ("agent", agent_id)) is not None:
            return ("agent", agent_id)
        return ("node", tip)

    def origin_of_turn(self, turn: ActiveTurn, *, running: bool = True) -> Origin:
        """The origin for work started by a turn (replies follow it up while it runs)."""
        sid, tid = turn.session_id, turn.turn_id
        return Origin(session_id=sid, anchor=tid, turn_id=tid if running else None,
                      lane_key=self.lane_key_of(sid, tid, turn.request.agent_id),
                      agent_id=turn.request.agent_id,
                      permission_mode=turn.request.permission_mode,
                      model=turn.request.model, depth=self.depth_of(turn),
                      rules=tuple(turn.request.rules))

    def origin_of_head(self, sid: str) -> Origin:
        """The origin for work started outside a turn: the session head."""
        store = self.dispatcher.services.store
        head = store.head(sid)
        if head is None:
            raise ToolError(f"session {sid} has no messages yet; nothing to anchor a reply to")
        agent_id = store.get_node(sid, head).metadata.get("agentId")
        agent_id = agent_id if isinstance(agent_id, str) else None
        return Origin(session_id=sid, anchor=head, turn_id=None,
                      lane_key=self.lane_key_of(sid, head, agent_id), agent_id=agent_id)

    # -- running one branch turn --------------------------------------------------------------

    def emit(self, type: str, data: dict[str, Any], *, session_id: str,
             turn_id: str | None = None) -> None:
        """Emit with the session given explicitly (a worker's ContextVars are not the turn's)."""
        self.dispatcher.services.bus.emit(Event(type=type, payload=data, session_id=session_id,
                                                turn_id=turn_id, origin="subagents"))

    async def turn(self, req: TurnRequest, job: Job | None) -> TurnResult:
        """Run one dispatcher turn under a job's control (so the job can cancel it)."""
        control = TurnControl()
        if job is not None:
            job.control = control
            job.in_turn = True
            if job.cancel_requested:
                control.request_cancel()

        def started(turn: ActiveTurn) -> None:
            if job is not None:
                job.turn_ids.append(turn.turn_id)
                job.head_id = job.head_id or turn.turn_id

        try:
            return await self.dispatcher.run_turn(req, control=control, on_started=started)
        finally:
            if job is not None:
                job.in_turn = False

    async def run_agent_turn(self, sid: str, prompt: str, agent_id: str | None = None,
                             branch_from: Any = None, label: str | None = None, *,
                             model: str | None = None, message_depth: int = 0,
                             parent: Origin | None = None, job: Job | None = None,
                             source: str = "agent_spawn", advance_head: bool = False,
                             kind: JobKind = "agent", unattended: bool = False,
                             metadata: dict[str, Any] | None = None,
                             permission_mode: str | None = None) -> AgentTurnResult:
        """Run one child turn in ``sid`` (the parent's mode, or bypass when ``unattended``;
        a definition's ``permission_mode`` only narrows it; head untouched); returns its tip."""
        agent_id = agent_id or new_id("ag")
        mode: str = "bypass" if unattended else (
            parent.permission_mode if parent is not None and parent.permission_mode
            else self.dispatcher.services.permission_mode)
        if permission_mode and _LATITUDE.get(permission_mode, 0) < _LATITUDE.get(mode, 0):
            mode = permission_mode  # a definition may narrow the mode, never widen it
        meta: dict[str, Any] = {"agentKind": kind, "messageDepth": message_depth,
                                **(metadata or {})}
        if label:
            meta["label"] = label
        if parent is not None:
            meta.update(parentSessionId=parent.session_id, parentNodeId=parent.anchor)
        if unattended:
            meta["unattended"] = True
        req = TurnRequest(text=prompt, session_id=sid, branch_from=branch_from, model=model,
                          source=source, permission_mode=mode,  # type: ignore[arg-type]
                          advance_head=advance_head, agent_id=agent_id, label=label,
                          message_depth=message_depth, metadata=meta,
                          rules=list(parent.rules) if parent is not None else [])
        base = {"agent_id": agent_id, "kind": kind, "label": label, "permission_mode": mode,
                "parent_session_id": parent.session_id if parent else None,
                "parent_turn_id": parent.turn_id if parent else None,
                "branch_from": branch_from if isinstance(branch_from, str) else None}
        self.emit("subagent.started", base, session_id=sid)
        try:
            res = await self.turn(req, job)
        except Exception as exc:
            self.emit("subagent.ended", {**base, "status": "error", "error": str(exc)},
                      session_id=sid)
            raise
        out = AgentTurnResult(agent_id=agent_id, session_id=sid, head_id=res.assistant_node_id,
                              user_node_id=res.user_node_id, status=res.status, text=res.text,
                              label=label,
                              checkpoint_id=res.checkpoint.id if res.checkpoint
                              else res.checkpoint_pending,
                              error=res.error.message if res.error else None)
        if job is not None:
            job.result = out
        self.emit("subagent.ended", {**base, "status": out.status, "head_id": out.head_id,
                                     "checkpoint_id": out.checkpoint_id, "error": out.error},
                  session_id=sid, turn_id=out.head_id)
        return out

    async def wait_free(self, lane: Lane) -> str | None:
        """The lane's tip once no turn runs on it (None when the branch does not exist)."""
        while True:
            tip = self.lanes.current_tip(lane)
            if tip is None or self.lanes.busy_with(lane.session_id, tip) is None:
                return tip
            await self.sleep()

    async def sleep(self) -> None:
        """Wait (on the runner loop) until some turn ends, or a short interval passes."""
        if self._wake is None:
            self._wake = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), WAKE_INTERVAL)

    def kick(self) -> None:
        """Wake jobs waiting for a busy branch (called when any turn ends)."""

        def wake() -> None:
            ev, self._wake = self._wake, None
            if ev is not None:
                ev.set()

        loop = self.runner.running_loop
        if loop is not None:
            loop.call_soon_threadsafe(wake)
