"""Code that follows the conversation: each branch's code state, switching to it, comparing two.

A branch's code state is the checkpoint of the newest turn on its chain (root → head) that
took one; a branch whose turns changed nothing has the state of the turn it forked after, and a
session that never changed a file the baseline taken before its first edit. Switching restores
that checkpoint (a safety checkpoint first, so it is undone like any restore).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from openprogram_lsp.core.errors import CheckpointError, NotFound
from openprogram_lsp.store.branch_row import BranchRow
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.checkpoints.results import NOTHING_RESTORED, FileDiff, RestoreOutcome
from openprogram_lsp.store.session_store import SessionStore


@dataclass(frozen=True, slots=True)
class CodeState:
    """Where a branch's code is: a checkpoint id and how it was chosen."""

    checkpoint_id: str
    source: str  # "turn" (a turn on the chain) or "baseline" (before the session's edits)
    node_id: str | None = None  # the assistant node whose turn took it


def code_state(sessions: SessionStore, store: CheckpointStore, sid: str,
               head_id: str) -> CodeState | None:
    """The code state of the branch ending at ``head_id`` (None: the session has none)."""
    own = store.list(sid)
    known = {c.id for c in own}
    for node in reversed(sessions.get_branch(sid, head_id)):
        cid = node.metadata.get("checkpointId")
        if isinstance(cid, str) and cid in known:
            return CodeState(cid, "turn", node.id)
    baselines = [c for c in own if c.kind == "baseline"]
    return CodeState(baselines[-1].id, "baseline") if baselines else None


def branch_code(sessions: SessionStore, store: CheckpointStore, sid: str,
                rows: list[BranchRow]) -> list[BranchRow]:
    """Branch rows with ``code_checkpoint_id`` and ``code_differs`` (the state differs from
    the workspace as its newest checkpoint recorded it)."""
    current = store.head_tree()
    out = []
    for row in rows:
        state = code_state(sessions, store, sid, row.head_id)
        if state is not None:
            row = dataclasses.replace(
                row, code_checkpoint_id=state.checkpoint_id,
                code_differs=current is not None and store.tree_of(
                    state.checkpoint_id) != current)
        out.append(row)
    return out


def require_state(sessions: SessionStore, store: CheckpointStore, sid: str, head_id: str,
                  field: str) -> CodeState:
    """``code_state`` or NotFound naming the param."""
    state = code_state(sessions, store, sid, head_id)
    if state is None:
        raise NotFound(f"{field}: the branch ending at {head_id!r} has no code state (session "
                       f"{sid} never changed a file in this workspace)")
    return state


def switch_code(sessions: SessionStore, store: CheckpointStore, sid: str, head_id: str,
                *, wait: float = 0.0, keep: Iterable[str] = ()) -> RestoreOutcome:
    """Restore the workspace to a branch's code state, the ``keep`` files left as they are;
    the restore's outcome with ``code_checkpoint_id`` (None, and nothing written, when the
    branch has no state)."""
    state = code_state(sessions, store, sid, head_id)
    if state is None:
        return NOTHING_RESTORED
    out = store.restore(state.checkpoint_id, session_id=sid, wait=wait, keep=keep)
    return out.but(code_checkpoint_id=state.checkpoint_id)


@dataclass(frozen=True, slots=True)
class BranchDiff:
    """What the ``to`` branch's code has that the ``from`` branch's has not."""

    session_id: str
    from_head_id: str
    to_head_id: str
    from_checkpoint_id: str
    to_checkpoint_id: str
    diff: str
    files: list[FileDiff]


def branch_diff(sessions: SessionStore, store: CheckpointStore, sid: str, from_head: str,
                to_head: str, path: str | None = None) -> BranchDiff:
    """The diff from one branch's code state to another's."""
    old = require_state(sessions, store, sid, from_head, "fromHeadId")
    new = require_state(sessions, store, sid, to_head, "toHeadId")
    try:
        out = store.compare(old.checkpoint_id, new.checkpoint_id, path)
    except NotFound as exc:  # pruned between the lookup and the diff
        raise CheckpointError(exc.message) from None
    return BranchDiff(session_id=sid, from_head_id=from_head, to_head_id=to_head,
                      from_checkpoint_id=old.checkpoint_id, to_checkpoint_id=new.checkpoint_id,
                      diff=out.diff, files=out.files)
