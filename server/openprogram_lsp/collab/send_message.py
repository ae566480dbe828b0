"""send_message: deliver a message to another branch or session, and bring the reply back.

``to`` is ``SID:NODE`` (NODE: a node id, ``HEAD`` or a branch name of that session) or a branch
name / agent id of the sender's session. Delivery is always asynchronous: the message waits in
the target branch's inbox while the branch is busy, then runs one more turn there; the reply
comes back to the sender as a follow-up. Refusals are ToolErrors the model can act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from openprogram_lsp.collab import jobs
from openprogram_lsp.collab.lanes import Lane, LaneKey
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.ids import is_safe_id, new_id
from openprogram_lsp.core.turn_context import current_session_id, current_turn_id
from openprogram_lsp.events.bus import Event, make_event
from openprogram_lsp.store.session_store import SessionStore

if TYPE_CHECKING:
    from openprogram_lsp.collab.hub import Hub
    from openprogram_lsp.collab.types import Origin

NEW_REDIRECT = ("send_message only reaches branches that exist; to='new' creates nothing. "
                "Use the agent tool to start a child branch (agent{prompt, label}), then message "
                "it by its label.")


@dataclass(slots=True)
class Target:
    """A resolved recipient: a session, the tip to continue now, and its lane."""

    session_id: str
    tip: str | None
    key: LaneKey
    follow: bool = True


def _branch_names(subagents: Hub, sid: str) -> list[str]:
    names = (subagents.dispatcher.services.store.meta(sid).get("branches") or {}).values()
    return sorted(str(v["name"]) for v in names if isinstance(v, dict) and v.get("name"))


def _agent_job_label(subagents: Hub, sid: str, ref: str) -> LaneKey | None:
    """A child of this session addressed by id or label (even before its branch exists)."""
    for job in subagents.runner.jobs():
        if job.kind != "agent" or job.session_id != sid:
            continue
        if ref == job.id:
            return ("name", job.label) if job.label else ("agent", job.id)
        if job.label and ref == job.label:
            return ("name", job.label)
    return None


def _resolve_ref(subagents: Hub, sid: str, ref: str, *, to: str) -> Target:
    """A reference inside one session: HEAD, a branch name, an agent, or a node id."""
    store = subagents.dispatcher.services.store
    if ref.lower() == "new":
        raise ToolError(NEW_REDIRECT)
    if ref == "HEAD":
        head = store.head(sid)
        if head is None:
            raise ToolError(f"session {sid} has no messages yet; nothing to continue")
        return Target(sid, head, subagents.lane_key_of(sid, head, None))
    named = store.find_branch(sid, ref)
    if named is not None:
        return Target(sid, named, ("name", ref))
    key = _agent_job_label(subagents, sid, ref)
    if key is not None:
        lane = subagents.lanes.find(sid, key)
        tip = subagents.lanes.current_tip(lane) if lane is not None else None
        return Target(sid, tip, key)
    if is_safe_id(ref) and store.has_node(sid, ref):
        node = store.get_node(sid, ref)
        if node.caller is not None or node.role not in ("user", "assistant", "system"):
            raise ToolError(f"{to!r} names a {node.role} node, not a conversation message")
        idx = store.index(sid)
        is_tip = not any(idx.is_chain_id(k) for k in idx.children.get(ref, ()))
        return Target(sid, ref, subagents.lane_key_of(sid, ref, None) if is_tip
                      else ("node", ref), follow=is_tip)
    names = ", ".join(_branch_names(subagents, sid)) or "none"
    raise ToolError(f"unknown target {to!r}: no branch, agent or message of that name in "
                    f"session {sid} (named branches: {names}). Use SESSION_ID:NODE_ID for "
                    "another session, or the agent tool to create a branch.")


def _workspace(store: SessionStore, sid: str) -> str | None:
    ws = store.meta(sid).get("workspace")
    return str(Path(ws).resolve()) if isinstance(ws, str) and ws else None


def resolve_target(subagents: Hub, from_sid: str, to: str) -> Target:
    """Parse ``to`` against the store; the target session must already exist."""
    to = to.strip()
    if not to:
        raise ToolError("`to` is empty: give a branch name, an agent id or SESSION_ID:NODE_ID")
    if to.lower() == "new":
        raise ToolError(NEW_REDIRECT)
    store = subagents.dispatcher.services.store
    if ":" in to:
        sid, _, ref = to.partition(":")
        sid, ref = sid.strip(), ref.strip()
        if not store.exists(sid):
            raise ToolError(f"unknown session {sid!r}: send_message never creates sessions. "
                            "Check the id, or use the agent tool to start new work.")
        if sid != from_sid and _workspace(store, sid) != _workspace(store, from_sid):
            # delivered turns run without asking: they must stay in the sender's project
            raise ToolError(f"session {sid!r} belongs to another workspace; send_message only "
                            "reaches sessions of this workspace")
        return _resolve_ref(subagents, sid, ref or "HEAD", to=to)
    return _resolve_ref(subagents, from_sid, to, to=to)


def resolve_parent(subagents: Hub, session_id: str | None) -> Origin:
    """The sender: the running turn from the ContextVars, else the session head."""
    sid = current_session_id.get() or session_id
    if not sid:
        raise ToolError("send_message needs a sending session (none is running a turn here)")
    if not subagents.dispatcher.services.store.exists(sid):
        raise ToolError(f"unknown session {sid!r}")
    tid = current_turn_id.get()
    turn = next((t for t in subagents.dispatcher.active_turns(sid) if t.turn_id == tid), None) \
        if tid else None
    if turn is not None:
        return subagents.origin_of_turn(turn)
    return subagents.origin_of_head(sid)


def _gate(subagents: Hub, origin: Origin, message: str, to: str) -> None:
    """Consult the tool gate for calls that did not come through the tool runner."""
    event = Event(type="tool.before", session_id=origin.session_id, turn_id=origin.turn_id,
                  origin="send_message",
                  payload={"tool_call_id": new_id("call_"), "name": "send_message",
                           "kind": "other", "input": {"message": message, "to": to},
                           "mode": "api"})
    subagents.dispatcher.services.bus.emit(event)
    decision = subagents.dispatcher.services.gates.decide(event)
    if decision.verdict == "deny":
        raise ToolError("Denied by a tool gate: " + ("; ".join(decision.reasons) or
                                                     "no reason given"))


def send_message(subagents: Hub, message: str, to: str, agent_id: str = "", *,
                 session_id: str | None = None, via_tool: bool = False) -> str:
    """Queue a message for ``to`` and return the receipt text; refusals raise ToolError."""
    if not message.strip():
        raise ToolError("message is empty")
    origin = resolve_parent(subagents, session_id)
    if not via_tool:
        _gate(subagents, origin, message, to)
    target = resolve_target(subagents, origin.session_id, to)
    same_session = target.session_id == origin.session_id
    if same_session and (target.tip in (origin.anchor, origin.turn_id)
                         or (origin.turn_id is not None and target.key == origin.lane_key)):
        raise ToolError(f"{to!r} is your own current branch: a message to yourself is refused. "
                        "Continue the work here, or message another branch.")
    depth = origin.depth + 1
    limit = subagents.max_messages(origin.session_id)
    if depth > limit:
        raise ToolError(f"message budget exhausted: this would be message {depth} of a chain "
                        f"limited to {limit} (agent.max_messages). Stop messaging and answer "
                        "with what you have.")
    lane: Lane = subagents.lanes.get(target.session_id, target.key, tip=target.tip,
                                     follow=target.follow)
    queued = lane.waiting + int(lane.lock.locked())
    if not queued and target.tip is not None:
        queued = int(subagents.lanes.busy_with(target.session_id, target.tip) is not None)
    delivery_id = new_id("msg")
    sender = f"{origin.session_id}:{origin.anchor}"
    text = (f"[Message {delivery_id} from {sender}; your reply is delivered back to the "
            f"sender automatically]\n\n{message}")
    subagents.dispatcher.services.bus.emit(make_event(
        "branch.message_sent",
        {"from": sender, "to": f"{target.session_id}:{target.tip or lane.display}",
         "to_label": lane.display, "delivery_id": delivery_id, "kind": "message",
         "queued": bool(queued), "preview": message[:200]},
        session_id=origin.session_id, turn_id=origin.turn_id or origin.anchor,
        origin="send_message"))
    jobs.enqueue_message(subagents, origin, lane, text, delivery_id=delivery_id,
                         agent_id=agent_id or None, depth=depth)
    state = f"queued behind {queued} in its inbox" if queued else "running async"
    return (f"[delivered, {state}] delivery_id={delivery_id} to={lane.display}. The reply will "
            "come back to you as a follow-up message; do not poll.")
