"""Bringing outcomes back: attach pointers, follow-ups into a running turn, follow-up turns."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from openprogram_lsp.collab.lanes import Lane
from openprogram_lsp.collab.task_runner import Job
from openprogram_lsp.collab.types import AgentTurnResult, Origin, branch_model, entered
from openprogram_lsp.core.ids import new_id
from openprogram_lsp.core.types import Node, TurnRequest, TurnResult

if TYPE_CHECKING:
    from openprogram_lsp.collab.hub import Hub
    from openprogram_lsp.dispatcher.active import ActiveTurn

log = logging.getLogger(__name__)

ATTACH_PREVIEW = 4000


def attach(sub: Hub, origin: Origin, text: str, meta: dict[str, Any]) -> None:
    """Write the attach pointer: a node hanging off the origin's anchor (never a chain node)."""
    try:
        sub.dispatcher.services.store.append(origin.session_id, Node(
            id=new_id("att"), role="system", caller=origin.anchor, status="done",
            text=text[:ATTACH_PREVIEW], metadata={"kind": "attach", **meta}))
    except Exception:
        log.exception("attach pointer in %s failed", origin.session_id)


def absorb(sub: Hub, turn: ActiveTurn, text: str, depth: int) -> bool:
    """Hand a reply to a running turn as a follow-up (False once it stopped taking them)."""
    if not turn.control.follow_up(text):
        return False
    sub.raise_depth(turn.turn_id, depth)
    return True


def deliver_reply(sub: Hub, origin: Origin, text: str, depth: int, *, kind: str,
                  source_id: str, sender: str, meta: dict[str, Any]) -> None:
    """Bring an outcome back to its origin: into the running turn, else a follow-up turn."""
    attach(sub, origin, text, {"sourceKind": kind, "sourceId": source_id, **meta})
    data = {"from": sender, "to": f"{origin.session_id}:{origin.anchor}", "kind": "reply",
            "delivery_id": source_id}
    turn = next((t for t in sub.dispatcher.active_turns(origin.session_id)
                 if t.turn_id == origin.turn_id), None) if origin.turn_id else None
    in_turn = turn is not None and absorb(sub, turn, text, depth)
    if not in_turn:
        queue_follow_up(sub, origin, text, depth)
    sub.emit("branch.message_sent", {**data, "in_turn": in_turn},
             session_id=origin.session_id, turn_id=origin.anchor)


def queue_follow_up(sub: Hub, origin: Origin, text: str, depth: int) -> Job:
    """A ``follow_up`` turn on the origin's branch, after whatever runs there."""
    sid = origin.session_id
    lane = sub.lanes.get(sid, origin.lane_key, tip=origin.anchor)
    if lane.tip is None:
        lane.tip = origin.anchor
    lane.waiting += 1

    async def body(job: Job) -> TurnResult | None:
        async with entered(lane):
            while True:
                tip = sub.lanes.current_tip(lane) or origin.anchor
                busy = sub.lanes.busy_with(sid, tip)
                if busy is None:
                    break
                if busy.turn_id == origin.turn_id and absorb(sub, busy, text, depth):
                    return None
                await sub.sleep()
            store = sub.dispatcher.services.store
            req = TurnRequest(text=text, session_id=sid, branch_from=tip,
                              model=origin.model or branch_model(sub.dispatcher, sid, tip),
                              source="follow_up", permission_mode=origin.permission_mode,
                              advance_head=store.head(sid) == tip, agent_id=origin.agent_id,
                              message_depth=depth, metadata={"messageDepth": depth},
                              rules=list(origin.rules))
            res = await sub.turn(req, job)
            lane.tip, lane.follow = res.assistant_node_id, True
            return res

    return sub.runner.submit(body, kind="reply", session_id=sid, origin_session_id=sid,
                             parent_turn_id=origin.turn_id)


def report_agent(sub: Hub, parent: Origin, job: Job, res: AgentTurnResult | None,
                 depth: int) -> None:
    """Tell the parent how a child ended (its text, status and branch tip)."""
    name = job.label or job.id
    if res is None:
        status = "cancelled" if job.cancel_requested else "error"
        text = f"[Agent {name} finished ({status}) before replying]"
        if job.error:
            text += f"\n[error: {job.error}]"
        meta: dict[str, Any] = {"status": status}
    else:
        where = f"{res.session_id}:{res.head_id}"
        head = f"[Agent {name} finished ({res.status}); its branch tip is {where}]"
        if res.error:
            head += f"\n[error: {res.error}]"
        text = f"{head}\n\n{res.text}".rstrip()
        meta = {"status": res.status, "targetSessionId": res.session_id,
                "targetNodeId": res.head_id}
    deliver_reply(sub, parent, text, depth, kind="agent", source_id=job.id, sender=name,
                  meta=meta)


def report_message(sub: Hub, origin: Origin, lane: Lane, job: Job,
                   res: AgentTurnResult | None, depth: int, problem: str) -> None:
    """Bring a delivered message's reply (or why there is none) back to its sender."""
    if res is None:
        status = "cancelled" if job.cancel_requested else "error"
        why = problem or job.error or status
        text = f"[Message {job.id} to {lane.display} was not answered: {why}]"
        meta: dict[str, Any] = {"status": status}
    else:
        where = f"{res.session_id}:{res.head_id}"
        head = f"[Reply from {lane.display} ({where}) to your message {job.id}]"
        if res.status != "done":
            head += f"\n[the run ended: {res.status}{': ' + res.error if res.error else ''}]"
        text = f"{head}\n\n{res.text}".rstrip()
        meta = {"status": res.status, "targetSessionId": res.session_id,
                "targetNodeId": res.head_id}
    deliver_reply(sub, origin, text, depth, kind="message", source_id=job.id,
                  sender=lane.display, meta=meta)
