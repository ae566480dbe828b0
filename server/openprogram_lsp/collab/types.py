"""Shared pieces of subagents and send_message: results, origins, branch models, lane entry."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openprogram_lsp.collab.lanes import Lane, LaneKey
from openprogram_lsp.core.types import PermissionMode, TurnStatus, Wire

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher import Dispatcher


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
    rules: tuple[Any, ...] = ()  # the editor's own rules (sources) the parent turn ran under


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
async def entered(lane: Lane) -> AsyncIterator[None]:
    """Hold a lane (its FIFO lock), counting the job as waiting in the inbox until then."""
    try:
        await lane.lock.acquire()
    finally:
        lane.waiting -= 1
    try:
        yield
    finally:
        lane.lock.release()
