"""Subagents: child branches of the same conversation, run in the background, reporting back.

``run_agent_turn`` is one more dispatcher call (source ``agent_spawn``, permission mode
``bypass`` -- the tool gate still applies -- and ``advance_head=False``). ``spawn`` runs it as a
job on the task runner and, when the child ends, writes an attach pointer in the parent's
session and follows up the parent: inside its turn if that is still running, else as a new
``follow_up`` turn on the parent's branch.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.ids import new_id
from openprogram_lsp.core.types import (
    Node,
    PermissionMode,
    TurnRequest,
    TurnResult,
    TurnStatus,
    Wire,
)
from openprogram_lsp.dispatcher.lanes import Lane, LaneKey, Lanes
from openprogram_lsp.dispatcher.task_runner import Job, JobKind, TaskRunner
from openprogram_lsp.events.bus import Event
from openprogram_lsp.tools.base import ToolContext

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher.turns import ActiveTurn, Dispatcher

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGES = 8
ATTACH_PREVIEW = 4000


class AgentTurnResult(Wire):
    """What one child run produced; ``head_id`` is the child's new branch tip."""

    agent_id: str
    session_id: str
    head_id: str
    user_node_id: str
    status: TurnStatus
    text: str = ""
    label: str | None = None
    checkpoint_id: str | None = None
    error: str | None = None


@dataclass(slots=True)
class Origin:
    """Who started a job, and where its outcome goes back."""

    session_id: str
    anchor: str  # the node replies attach to
    turn_id: str | None  # the running turn to follow up, when there is one
    lane_key: LaneKey
    agent_id: str | None = None
    permission_mode: PermissionMode | None = None
    model: str | None = None
    depth: int = 0


def branch_model(dispatcher: Dispatcher, sid: str, tip: str) -> str | None:
    """The model spec a branch was last driven with (user node metadata), else the session's."""
    store = dispatcher.services.store
    for node in reversed(store.get_branch(sid, tip)):
        spec = node.metadata.get("model") if node.role == "user" else None
        if isinstance(spec, str) and spec:
            return spec
    spec = store.meta(sid).get("model")
    return spec if isinstance(spec, str) and spec else None


@contextlib.asynccontextmanager
async def _entered(lane: Lane) -> AsyncIterator[None]:
    """Hold a lane (its FIFO lock), counting the job as waiting in the inbox until then."""
    try:
        await lane.lock.acquire()
    finally:
        lane.waiting -= 1
    try:
        yield
    finally:
        lane.lock.release()


class Subagents:
    """Child runs, message deliveries and replies of one dispatcher."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self.runner = TaskRunner()
        self.lanes = Lanes(dispatcher)
        self._lock = threading.Lock()
        self._depth: dict[str, int] = {}  # running turn id -> depth raised by follow-ups
        self._wake: asyncio.Event | None = None  # touched on the runner loop only

    # -- configuration ------------------------------------------------------------------------

    @property
    def max_messages(self) -> int:
        """The message budget of a chain (``agent.max_messages``, default 8)."""
        value = self.dispatcher.services.extra.get("agent.max_messages", DEFAULT_MAX_MESSAGES)
        return int(value)

    def child_model(self, parent: ActiveTurn | None) -> str | None:
        """The model children run with: ``agent.model``, else the parent's model spec."""
        spec = self.dispatcher.services.extra.get("agent.model")
        if isinstance(spec, str) and spec:
            return spec
        return parent.request.model if parent is not None else None

    def depth_of(self, turn: ActiveTurn) -> int:
        """A running turn's message count, raised by replies it absorbed."""
        with self._lock:
            return max(turn.request.message_depth, self._depth.get(turn.turn_id, 0))

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
                      model=turn.request.model, depth=self.depth_of(turn))

    def origin_of_head(self, sid: str) -> Origin:
        """The origin for work started outside a turn: the session head."""
        store = self.dispatcher.services.store
        head = store.head(sid)
        if head is None:
            raise ToolError(f"session {sid} has no messages yet; nothing to anchor a reply to")
        agent_id = store.get_node(sid, head).metadata.get("agentId")
        return Origin(session_id=sid, anchor=head, turn_id=None,
                      lane_key=self.lane_key_of(sid, head, agent_id),
                      agent_id=agent_id if isinstance(agent_id, str) else None)

    # -- running one branch turn --------------------------------------------------------------

    def _emit(self, type: str, data: dict[str, Any], *, session_id: str,
              turn_id: str | None = None) -> None:
        # The session is passed explicitly: a worker thread's ContextVars are not the turn's.
        self.dispatcher.services.bus.emit(Event(type=type, payload=data, session_id=session_id,
                                                turn_id=turn_id, origin="subagents"))

    async def _turn(self, req: TurnRequest, job: Job | None) -> TurnResult:
        control = TurnControl()
        if job is not None:
            job.control = control
            job.in_turn = True
            if job.cancel_requested:
                control.request_cancel()

        def started(turn: ActiveTurn) -> None:
            if job is not None:
                job.turn_ids.append(turn.turn_id)
                job.head_id = turn.turn_id

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
                             kind: JobKind = "agent",
                             metadata: dict[str, Any] | None = None) -> AgentTurnResult:
        """Run one child turn in ``sid`` (bypass mode, head untouched) and return its tip."""
        agent_id = agent_id or new_id("ag")
        meta: dict[str, Any] = {"agentKind": kind, "messageDepth": message_depth,
                                **(metadata or {})}
        if parent is not None:
            meta.update(parentSessionId=parent.session_id, parentNodeId=parent.anchor)
        if model:
            meta["model"] = model
        req = TurnRequest(text=prompt, session_id=sid, branch_from=branch_from, model=model,
                          source=source, permission_mode="bypass",  # type: ignore[arg-type]
                          advance_head=advance_head, agent_id=agent_id, label=label,
                          message_depth=message_depth, metadata=meta)
        base = {"agentId": agent_id, "kind": kind, "label": label,
                "parentSessionId": parent.session_id if parent else None,
                "parentTurnId": parent.turn_id if parent else None,
                "branchFrom": branch_from if isinstance(branch_from, str) else None}
        self._emit("subagent.started", base, session_id=sid)
        try:
            res = await self._turn(req, job)
        except Exception as exc:
            self._emit("subagent.ended", {**base, "status": "error", "error": str(exc)},
                       session_id=sid)
            raise
        out = AgentTurnResult(agent_id=agent_id, session_id=sid, head_id=res.assistant_node_id,
                              user_node_id=res.user_node_id, status=res.status, text=res.text,
                              label=label,
                              checkpoint_id=res.checkpoint.id if res.checkpoint else None,
                              error=res.error.message if res.error else None)
        if job is not None:
            job.head_id = out.head_id
            job.result = out
        self._emit("subagent.ended", {**base, "status": out.status, "headId": out.head_id,
                                      "checkpointId": out.checkpoint_id, "error": out.error},
                   session_id=sid, turn_id=out.head_id)
        return out

    # -- spawning -----------------------------------------------------------------------------

    def spawn(self, sid: str, prompt: str, *, label: str | None = None,
              branch_from: str | None = None, parent: Origin | None = None,
              model: str | None = None, depth: int = 0) -> Job:
        """Run a child in the background; its outcome is delivered back to ``parent``."""
        agent_id = new_id("ag")
        lane = self.lanes.get(sid, ("name", label) if label else ("agent", agent_id))
        lane.waiting += 1

        async def body(job: Job) -> AgentTurnResult | None:
            res: AgentTurnResult | None = None
            try:
                async with _entered(lane):
                    res = await self.run_agent_turn(sid, prompt, agent_id, branch_from, label,
                                                    model=model, message_depth=depth,
                                                    parent=parent, job=job)
                    lane.tip, lane.follow = res.head_id, True
            finally:
                if parent is not None and not job.cascaded:
                    self._report_agent(parent, job, res, depth + 1)
            return res

        return self.runner.submit(body, kind="agent", session_id=sid, job_id=agent_id,
                                  origin_session_id=parent.session_id if parent else None,
                                  parent_turn_id=parent.turn_id if parent else None,
                                  label=label)

    def _report_agent(self, parent: Origin, job: Job, res: AgentTurnResult | None,
                      depth: int) -> None:
        name = job.label or job.id
        if res is None:
            status = "cancelled" if job.cancel_requested else "error"
            text = f"[Agent {name} ended before finishing ({status})]"
            attach: dict[str, Any] = {"status": status}
        else:
            where = f"{res.session_id}:{res.head_id}"
            head = f"[Agent {name} finished ({res.status}); its branch tip is {where}]"
            if res.error:
                head += f"\n[error: {res.error}]"
            text = f"{head}\n\n{res.text}".rstrip()
            attach = {"status": res.status, "targetSessionId": res.session_id,
                      "targetNodeId": res.head_id}
        self.deliver_reply(parent, text, depth, kind="agent", source_id=job.id,
                           sender=name, attach=attach)

    # -- messages -----------------------------------------------------------------------------

    def enqueue_message(self, origin: Origin, lane: Lane, text: str, *, delivery_id: str,
                        agent_id: str | None, depth: int) -> Job:
        """Deliver a message to a lane: wait for the branch, run one turn, reply to origin."""
        sid = lane.session_id
        lane.waiting += 1

        async def body(job: Job) -> AgentTurnResult | None:
            res: AgentTurnResult | None = None
            problem = ""
            try:
                async with _entered(lane):
                    tip = await self._wait_free(lane)
                    if tip is None:
                        problem = f"branch {lane.display} has no messages to continue"
                        return None
                    store = self.dispatcher.services.store
                    tip_agent = store.get_node(sid, tip).metadata.get("agentId")
                    res = await self.run_agent_turn(
                        sid, text, agent_id or (tip_agent if isinstance(tip_agent, str)
                                                else None), tip, None,
                        model=branch_model(self.dispatcher, sid, tip), message_depth=depth,
                        parent=origin, job=job, source="send_message",
                        advance_head=store.head(sid) == tip, kind="message",
                        metadata={"deliveryId": delivery_id})
                    lane.tip, lane.follow = res.head_id, True
            finally:
                if not job.cascaded:
                    self._report_message(origin, lane, job, res, depth + 1, problem)
            return res

        return self.runner.submit(body, kind="message", session_id=sid, job_id=delivery_id,
                                  origin_session_id=origin.session_id,
                                  parent_turn_id=origin.turn_id, label=lane.display)

    def _report_message(self, origin: Origin, lane: Lane, job: Job,
                        res: AgentTurnResult | None, depth: int, problem: str) -> None:
        if res is None:
            status = "cancelled" if job.cancel_requested else "error"
            why = problem or job.error or status
            text = f"[Message {job.id} to {lane.display} was not answered: {why}]"
            attach: dict[str, Any] = {"status": status}
        else:
            where = f"{res.session_id}:{res.head_id}"
            head = f"[Reply from {lane.display} ({where}) to your message {job.id}]"
            if res.status != "done":
                head += f"\n[the run ended: {res.status}{': ' + res.error if res.error else ''}]"
            text = f"{head}\n\n{res.text}".rstrip()
            attach = {"status": res.status, "targetSessionId": res.session_id,
                      "targetNodeId": res.head_id}
        self.deliver_reply(origin, text, depth, kind="message", source_id=job.id,
                           sender=lane.display, attach=attach)

    async def _wait_free(self, lane: Lane) -> str | None:
        """The lane's tip once no turn runs on it (None when the branch does not exist)."""
        while True:
            tip = self.lanes.current_tip(lane)
            if tip is None or self.lanes.busy_with(lane.session_id, tip) is None:
                return tip
            await self._sleep()

    async def _sleep(self) -> None:
        if self._wake is None:
            self._wake = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), 0.5)

    def _kick(self) -> None:
        """Wake jobs waiting for a busy branch (called when any turn ends)."""

        def wake() -> None:
            ev, self._wake = self._wake, None
            if ev is not None:
                ev.set()

        loop = self.runner._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wake)

    # -- replies ------------------------------------------------------------------------------

    def _attach(self, origin: Origin, text: str, meta: dict[str, Any]) -> None:
        """Write the attach pointer: a node hanging off the origin's anchor."""
        try:
            self.dispatcher.services.store.append(origin.session_id, Node(
                id=new_id("att"), role="system", caller=origin.anchor, status="done",
                text=text[:ATTACH_PREVIEW], metadata={"kind": "attach", **meta}))
        except Exception:
            log.exception("attach pointer in %s failed", origin.session_id)

    def deliver_reply(self, origin: Origin, text: str, depth: int, *, kind: str,
                      source_id: str, sender: str, attach: dict[str, Any]) -> None:
        """Bring an outcome back to its origin: into the running turn, else a follow-up turn."""
        self._attach(origin, text, {"sourceKind": kind, "sourceId": source_id, **attach})
        data = {"from": sender, "to": f"{origin.session_id}:{origin.anchor}",
                "kind": "reply", "deliveryId": source_id}
        turn = self._active(origin.turn_id)
        if turn is not None and self._absorb(turn, text, depth):
            self._emit("branch.message_sent", {**data, "inTurn": True},
                       session_id=origin.session_id, turn_id=origin.anchor)
            return
        self._queue_follow_up(origin, text, depth)
        self._emit("branch.message_sent", {**data, "inTurn": False},
                   session_id=origin.session_id, turn_id=origin.anchor)

    def _absorb(self, turn: ActiveTurn, text: str, depth: int) -> bool:
        """Hand a reply to a running turn as a follow-up (False once it stopped taking them)."""
        if not turn.control.follow_up(text):
            return False
        with self._lock:
            self._depth[turn.turn_id] = max(self._depth.get(turn.turn_id, 0), depth)
        return True

    def _active(self, turn_id: str | None) -> ActiveTurn | None:
        if turn_id is None:
            return None
        return next((t for t in self.dispatcher.active_turns() if t.turn_id == turn_id), None)

    def _queue_follow_up(self, origin: Origin, text: str, depth: int) -> Job:
        """A ``follow_up`` turn on the origin's branch, after whatever runs there."""
        sid = origin.session_id
        lane = self.lanes.get(sid, origin.lane_key, tip=origin.anchor)
        if lane.tip is None:
            lane.tip = origin.anchor

        lane.waiting += 1

        async def body(job: Job) -> TurnResult | None:
            async with _entered(lane):
                while True:
                    tip = self.lanes.current_tip(lane) or origin.anchor
                    busy = self.lanes.busy_with(sid, tip)
                    if busy is None:
                        break
                    if busy.turn_id == origin.turn_id and self._absorb(busy, text, depth):
                        return None
                    await self._sleep()
                store = self.dispatcher.services.store
                req = TurnRequest(text=text, session_id=sid, branch_from=tip,
                                  model=origin.model or branch_model(self.dispatcher, sid, tip),
                                  source="follow_up", permission_mode=origin.permission_mode,
                                  advance_head=store.head(sid) == tip, agent_id=origin.agent_id,
                                  message_depth=depth, metadata={"messageDepth": depth})
                res = await self._turn(req, job)
                lane.tip, lane.follow = res.assistant_node_id, True
                return res

        return self.runner.submit(body, kind="reply", session_id=sid, origin_session_id=sid,
                                  parent_turn_id=origin.turn_id)

    # -- turn lifecycle hooks (called by the dispatcher) -------------------------------------

    def after_turn(self, turn: ActiveTurn, status: str, leftover: list[str]) -> None:
        """A turn ended: cancel its children if it was cancelled, re-queue unread follow-ups."""
        with self._lock:
            depth = max(turn.request.message_depth, self._depth.pop(turn.turn_id, 0))
        try:
            if status == "cancelled":
                self.runner.cancel_where(lambda j: j.parent_turn_id == turn.turn_id,
                                         cascaded=True)
            elif leftover:
                origin = self.origin_of_turn(turn, running=False)
                for text in leftover:
                    self._queue_follow_up(origin, text, depth)
        except Exception:
            log.exception("after-turn handling of %s failed", turn.turn_id)
        self._kick()

    def cancel_session(self, sid: str) -> int:
        """Cancel the jobs started from a session (cascade) and those running in it."""
        n = self.runner.cancel_where(lambda j: j.origin_session_id == sid, cascaded=True)
        return n + self.runner.cancel_where(lambda j: j.session_id == sid)

    def cancel_all(self) -> int:
        """Cancel every job (shutdown)."""
        return self.runner.cancel_where(lambda j: True, cascaded=True)

    def cancel_agent(self, agent_id: str) -> bool:
        """Cancel one child or delivery by id; its origin is told."""
        return self.runner.cancel(agent_id)

    # -- listing ------------------------------------------------------------------------------

    def list_agents(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Children and deliveries: id, sessionId, headId, label, status, kind."""
        out = []
        for job in self.runner.jobs():
            if job.kind == "reply":
                continue
            if session_id is not None and session_id not in (job.session_id,
                                                             job.origin_session_id):
                continue
            entry: dict[str, Any] = {
                "id": job.id, "sessionId": job.session_id, "headId": job.head_id,
                "status": "running" if job.status == "pending" else job.status,
                "kind": job.kind, "createdAt": job.created_at}
            if job.label:
                entry["label"] = job.label
            if job.status == "pending":
                entry["queued"] = True
            if job.origin_session_id:
                entry["parentSessionId"] = job.origin_session_id
            if job.parent_turn_id:
                entry["parentTurnId"] = job.parent_turn_id
            if job.error:
                entry["error"] = job.error
            out.append(entry)
        return out

    # -- the collaboration tools' service ----------------------------------------------------

    def _tool_turn(self, ctx: ToolContext) -> ActiveTurn:
        turn = ctx.services.get("turn")
        if turn is None:
            raise ToolError("this tool can only run inside a turn")
        return turn  # type: ignore[no-any-return]

    def spawn_from_tool(self, ctx: ToolContext, prompt: str, label: str | None,
                        branch_from: str | None) -> str:
        """The ``agent`` tool: validate, then spawn a child reporting back to this turn."""
        turn = self._tool_turn(ctx)
        store, sid = self.dispatcher.services.store, turn.session_id
        depth = self.depth_of(turn) + 1
        if depth > self.max_messages:
            raise ToolError(f"agent budget exhausted: a child here would be message {depth} of "
                            f"a chain limited to {self.max_messages} (agent.max_messages); "
                            "finish the work yourself instead")
        if label is not None:
            bad = not label or len(label) > 64 or ":" in label or label.lower() == "new"
            if bad:
                raise ToolError("label must be 1-64 characters, without ':' and not 'new'")
            taken = store.find_branch(sid, label) is not None or any(
                j.label == label and j.session_id == sid and j.kind == "agent"
                for j in self.runner.jobs())
            if taken:
                raise ToolError(f"label {label!r} is already a branch of this session; pick "
                                "another label, or talk to it with send_message(to="
                                f"{label!r})")
        fork: str | None = None
        if branch_from and branch_from.lower() not in ("root", "none", "null"):
            fork = turn.user_node_id if branch_from.lower() == "current" else branch_from
            if not store.has_node(sid, fork) or \
                    store.get_node(sid, fork).caller is not None or \
                    store.get_node(sid, fork).role not in ("user", "assistant", "system"):
                raise ToolError(f"branch_from: {branch_from!r} is not a message of this session;"
                                " omit it for a fresh branch or use \"current\"")
        job = self.spawn(sid, prompt, label=label, branch_from=fork,
                         parent=self.origin_of_turn(turn), model=self.child_model(turn),
                         depth=depth)
        where = f"branch {label!r}" if label else "a new branch"
        return (f"[spawned agent {job.id} on {where}, running async] Its result will come back "
                "to you as a follow-up message; do not poll. Message it with send_message(to="
                f"{(label or job.id)!r}).")

    def send_from_tool(self, ctx: ToolContext, message: str, to: str) -> str:
        """The ``send_message`` tool."""
        from openprogram_lsp.dispatcher.send_message import send_message

        return send_message(self, message, to, session_id=ctx.session_id, via_tool=True)

    def agents_for_tool(self, ctx: ToolContext) -> list[dict[str, Any]]:
        """The ``list_agents`` tool."""
        return self.list_agents(ctx.session_id)

    def close(self, timeout: float = 10.0) -> None:
        """Cancel every job and stop the runner."""
        self.runner.shutdown(timeout)
