"""Step 7 of a turn: persist the reply, checkpoint, ContextCommit, title, one store commit."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.agent.loop import LoopState
from openprogram_lsp.context.commit import context_digest
from openprogram_lsp.core.background import KeyedWorker
from openprogram_lsp.core.ids import now_iso
from openprogram_lsp.core.types import Checkpoint, NodeStatus, TurnError, TurnResult, TurnStatus
from openprogram_lsp.events.bus import Event, make_event
from openprogram_lsp.store.session_store import SessionStore

if TYPE_CHECKING:
    from openprogram_lsp.core.ports import Checkpointer
    from openprogram_lsp.dispatcher.active import ActiveTurn
    from openprogram_lsp.dispatcher.services import Services

log = logging.getLogger(__name__)


def first_line(text: str, limit: int = 60) -> str:
    """The first non-blank line of a message, cut to ``limit`` (a session's title)."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def referenced_checkpoints(store: SessionStore, workspace: Path) -> set[str]:
    """Checkpoint ids recorded on the nodes of every session of a workspace (kept by pruning)."""
    return store.checkpoint_refs(workspace)


def _prune(_key: int, request: tuple[Checkpointer, Callable[[], set[str]]]) -> None:
    checkpointer, keep = request
    dropped = checkpointer.prune_if_due(keep)
    if dropped:
        log.info("retention dropped %d checkpoint(s)", len(dropped))


_retention: KeyedWorker[int, tuple[Checkpointer, Callable[[], set[str]]]] = KeyedWorker(
    "checkpoint retention", _prune, wait_at_exit=True)
"""The process's retention worker. Requests are kept per checkpointer, the newest ``keep``
winning: one asked while that checkpointer's prune runs makes it run once more after it (the
checkpoints committed meanwhile may be what makes a prune due). The interpreter's exit waits
for the requests already made (a CLI turn's process finishes retention before it exits)."""


def prune_later(checkpointer: Checkpointer, keep: Callable[[], set[str]]) -> None:
    """Apply retention in the background (one prune at a time): never on a turn's path."""
    _retention.ask(id(checkpointer), (checkpointer, keep))


def wait_for_retention(timeout: float = 30.0) -> None:
    """Wait for the retention asked for so far (tests, shutdown)."""
    _retention.drain(timeout)


def _announce(s: Services, checkpointer: Checkpointer, workspace: Path, sid: str, tid: str,
              emit_later: Callable[[Event], None]) -> Callable[[Checkpoint | None], None]:
    """What a pending turn checkpoint does once committed (on the store's thread): its
    ``checkpoint.created`` event, and retention as after any turn's checkpoint."""
    def done(checkpoint: Checkpoint | None) -> None:
        if checkpoint is None:
            return
        emit_later(make_event("checkpoint.created", checkpoint.payload(), session_id=sid,
                              turn_id=tid, origin="dispatcher"))
        if checkpointer.retention_may_be_due():
            prune_later(checkpointer, lambda: referenced_checkpoints(s.store, workspace))
    return done


def turn_status(status: NodeStatus, state: LoopState) -> TurnStatus:
    """The status a turn reports: a reply that ended well but at the output limit is
    ``truncated``, one that ended in a refusal ``refused``."""
    if status == "done":
        if state.stop_reason == "max_tokens":
            return "truncated"
        if state.stop_reason == "refusal":
            return "refused"
        return "done"
    return "cancelled" if status in ("cancelled", "interrupted") else "error"


def finalize_turn(s: Services, checkpointer: Checkpointer | None, turn: ActiveTurn,
                  state: LoopState, status: NodeStatus, error: TurnError | None,
                  emit: Callable[[Event], None],
                  emit_later: Callable[[Event], None] | None = None) -> TurnResult:
    """Write the turn's outcome; events go to ``emit`` so the caller sends them on its loop.

    Blocking (git, files): the caller runs it off its loop, or inline on a private one, and
    never lets a cancel cut it (``dispatcher.turns``: how a turn ends). ``emit_later``: where
    an event made after the turn ended goes (from any thread); with it, a turn that ends
    while the workspace's first walk runs does not wait for it: its checkpoint is committed
    after the walk and announced then (``checkpoint_pending``)."""
    session, sid, tid = turn.session, turn.session_id, turn.turn_id
    checkpoint: Checkpoint | None = None
    pending: str | None = None
    warnings: list[str] = list(turn.warnings)
    if checkpointer is not None and (turn.touched or turn.full_scan):
        message = f"turn {tid}: {first_line(turn.request.text)}"
        try:
            if emit_later is not None and not turn.full_scan:
                pending = checkpointer.defer_turn(
                    sid, tid, message, turn.touched,
                    _announce(s, checkpointer, turn.workspace, sid, tid, emit_later))
            if pending is None:
                checkpoint = checkpointer.commit_turn(sid, tid, message,
                                                      full_scan=turn.full_scan)
        except Exception as exc:
            log.exception("checkpoint of turn %s failed", tid)
            warnings.append(f"checkpoint failed: {exc}")
        if checkpoint is not None:
            emit(make_event("checkpoint.created", checkpoint.payload(), session_id=sid,
                                turn_id=tid, origin="dispatcher"))
    text = state.text
    if status in ("cancelled", "interrupted"):
        text = (text + f"\n\n[{status}]").strip()
    elif status == "error" and error is not None:
        text = (text + f"\n\n[error: {error.message}]").strip()
    record: dict[str, Any] | None = None
    if turn.prep is not None:
        try:
            first = state.first_call_usage
            record = s.context.after_turn(
                session_id=sid, turn_id=tid, prep=turn.prep, usage=state.usage,
                first_call_input_tokens=first.input_tokens if first is not None else None)
            record.update({"status": status, "createdAt": now_iso()})
        except Exception:
            log.exception("ContextCommit of turn %s failed", tid)
    node = session.node(tid)
    metadata = {**node.metadata, "steps": list(state.steps), "usage": state.usage.wire(),
                **({"interjections": list(state.interjections)} if state.interjections else {}),
                **({"thoughts": state.stored_thoughts()} if state.thoughts else {}),
                "model": turn.model, "finishedAt": now_iso()}
    if record is not None:
        metadata["context"] = context_digest(record)
    if checkpoint is not None or pending is not None:
        metadata["checkpointId"] = checkpoint.id if checkpoint is not None else pending
    if error is not None:
        metadata["error"] = error.wire()
    ended = turn_status(status, state)
    if ended in ("truncated", "refused"):  # the model is told on the next turn (render)
        metadata["stop"] = state.stop_reason
    if warnings:
        metadata["warnings"] = warnings
    session.update_node(tid, text=text, status=status,
                      tool_calls=list(state.tool_calls) or None, metadata=metadata)
    if record is not None:
        try:
            session.write_context_commit(tid, record)
        except Exception:
            log.exception("ContextCommit of turn %s failed", tid)
    meta = session.meta()
    changes: dict[str, object] = {"lastTurnAt": now_iso()}
    if not meta.get("title"):
        changes["title"] = first_line(turn.request.text)
    session.end_turn(tid, **changes)
    label = {"done": "turn", "error": "turn (error)", "cancelled": "turn (cancelled)",
             "interrupted": "turn (interrupted)"}
    subject = f"{label.get(status, 'turn')}: {first_line(turn.request.text)}"
    session.commit(f"{subject}\n\nOpenprogram-Turn: {tid}\n")
    if checkpoint is not None and checkpointer is not None \
            and checkpointer.retention_may_be_due():
        prune_later(checkpointer, lambda: referenced_checkpoints(s.store, turn.workspace))
    result = TurnResult(
        session_id=sid, user_node_id=turn.user_node_id, assistant_node_id=tid,
        head_id=session.head() or tid,
        status=ended,
        text=text, usage=state.usage, checkpoint=checkpoint, checkpoint_pending=pending,
        error=error, warnings=warnings or None)
    emit(make_event("turn.finished", result.payload(), session_id=sid, turn_id=tid,
                        origin="dispatcher"))
    return result
