"""Listing subagent runs: the jobs of this process, plus children found in a session's DAG."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, cast

from openprogram_lsp.collab.task_runner import Job
from openprogram_lsp.collab.types import AgentTurnResult
from openprogram_lsp.core.ports import AgentRun

if TYPE_CHECKING:
    from openprogram_lsp.collab.hub import Hub

RunStatus = Literal["running", "done", "error", "cancelled", "truncated", "refused"]
_STORED_STATUS = {"done": "done", "error": "error", "cancelled": "cancelled",
                  "interrupted": "error"}
_STOPPED = {"max_tokens": "truncated", "refusal": "refused"}  # a reply node's metadata.stop


def _job_tip(sub: Hub, job: Job) -> str | None:
    """The child's branch tip now (its label's tip, else its lane's), else its first turn."""
    store = sub.dispatcher.services.store
    if job.kind == "agent":
        if job.label and store.exists(job.session_id):
            named = store.find_branch(job.session_id, job.label)
            if named is not None:
                return named
        lane = sub.lanes.find(job.session_id, ("agent", job.id))
        if lane is not None and lane.tip is not None:
            return lane.tip
    return job.head_id


def _job_entry(sub: Hub, job: Job) -> AgentRun:
    status: str = "running" if job.status == "pending" else job.status
    if job.status == "done" and isinstance(job.result, AgentTurnResult):
        status = job.result.status
    return AgentRun(id=job.id, session_id=job.session_id, head_id=_job_tip(sub, job),
                    status=cast(RunStatus, status), kind=job.kind,
                    created_at=job.created_at, label=job.label or None,
                    queued=True if job.status == "pending" else None,
                    parent_session_id=job.origin_session_id or None,
                    parent_turn_id=job.parent_turn_id or None, error=job.error or None)


def _stored(sub: Hub, sid: str, known: set[str]) -> list[AgentRun]:
    """Children recorded in a session's DAG that this process did not run (before a restart)."""
    store = sub.dispatcher.services.store
    if not store.exists(sid):
        return []
    active = {t.turn_id for t in sub.dispatcher.active_turns(sid)}
    out = []
    for node in store.nodes(sid):
        kind = node.metadata.get("agentKind")
        if node.role != "user" or kind not in ("agent", "message"):
            continue
        rid = node.metadata.get("deliveryId" if kind == "message" else "agentId")
        turn_id = f"{node.id}_reply"
        if not isinstance(rid, str) or rid in known or not store.has_node(sid, turn_id):
            continue
        turn = store.get_node(sid, turn_id)
        status = "running" if turn_id in active else _STORED_STATUS.get(turn.status or "",
                                                                          "error")
        if status == "done":  # a reply cut by the output limit or refused says so
            status = _STOPPED.get(str(turn.metadata.get("stop") or ""), status)
        label = node.metadata.get("label")
        label = label if isinstance(label, str) and label else None
        tip = store.find_branch(sid, label) if label else None
        parent = node.metadata.get("parentSessionId")
        out.append(AgentRun(id=rid, session_id=sid, head_id=tip or turn_id,
                            status=cast(RunStatus, status), kind=kind,
                            created_at=node.created_at, label=label,
                            parent_session_id=parent if isinstance(parent, str) else None))
    return out


def list_agents(sub: Hub, session_id: str | None = None) -> list[AgentRun]:
    """Children and deliveries of a session (of every session when None), oldest first."""
    out = [_job_entry(sub, job) for job in sub.runner.jobs()
           if job.kind != "reply" and (session_id is None or session_id in (
               job.session_id, job.origin_session_id))]
    if session_id is not None:
        out.extend(_stored(sub, session_id, {e.id for e in out}))
        out.sort(key=lambda e: e.created_at or "")
    return out
