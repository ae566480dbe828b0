"""``branches``, ``checkout`` and ``branch-diff``: a session's branches with their code."""

from __future__ import annotations

import json
import shlex
import sys

from openprogram_lsp.lsp import dumps
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.store import branch_code
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.checkpoints.results import RestoreOutcome
from openprogram_lsp.store.session_store import SessionStore
from openprogram_lsp.terminal.errors import CliError


def resolve_head(sessions: SessionStore, sid: str, ref: str) -> str:
    """A branch's head from a node id, a unique node id prefix of 6+ or a branch name."""
    if not sessions.exists(sid):
        raise CliError(f"unknown session id {sid!r}", "'openprogram-lsp sessions' lists them")
    if sessions.has_node(sid, ref):
        return ref
    named = sessions.find_branch(sid, ref)
    if named is not None:
        return named
    tips = [b.head_id for b in sessions.list_branches(sid)]
    hits = [t for t in tips if len(ref) >= 6 and str(t).startswith(ref)]
    if len(hits) == 1:
        return str(hits[0])
    raise CliError(f"no branch {ref!r} in session {sid}",
                   f"'openprogram-lsp branches {shlex.quote(sid)}' lists them")


def list_branches(sessions: SessionStore, store: CheckpointStore | None, sid: str,
                  as_json: bool) -> int:
    """Print each branch tip, marking the active one and those whose code differs."""
    if not sessions.exists(sid):
        raise CliError(f"unknown session id {sid!r}", "'openprogram-lsp sessions' lists them")
    rows = sessions.list_branches(sid)
    if store is not None:
        rows = branch_code.branch_code(sessions, store, sid, rows)
    if as_json:
        print(json.dumps([dumps.dump(w.BranchInfo, r) for r in rows]))
        return 0
    for row in rows:
        mark = "*" if row.active else " "
        code = "  code differs" if row.code_differs else ""
        name = f" [{row.name}]" if row.name else ""
        print(f"{mark} {row.head_id}{name} ({row.length} messages){code}  {row.preview}")
    return 0


def checkout(sessions: SessionStore, store: CheckpointStore | None, sid: str, ref: str,
             code: bool) -> int:
    """Move the session head; with ``code`` also restore the branch's code (undoable)."""
    head = resolve_head(sessions, sid, ref)
    previous = sessions.head(sid)
    out: RestoreOutcome | None = None
    if code:
        if store is None:
            raise CliError("checkpoints are not available for this session's workspace")
        out = branch_code.switch_code(sessions, store, sid, head)
    sessions.set_head(sid, head)
    print(f"head {head}")
    if out is not None:
        for path in out.restored:
            print(f"  restored {path}")
        for path in out.conflicts or []:
            print(f"  kept {path} (changed by another process during the switch)")
        safety = out.safety_checkpoint_id
        if safety:
            back = f"openprogram-lsp restore {safety[:12]}"
            if previous:
                back += f" && openprogram-lsp checkout {shlex.quote(sid)} {previous}"
            print(f"undo: {back}")
    return 0


def branch_diff(sessions: SessionStore, store: CheckpointStore | None, sid: str, old: str,
                new: str, path: str | None, as_json: bool) -> int:
    """Print the diff from one branch's code state to another's."""
    if store is None:
        raise CliError("checkpoints are not available for this session's workspace")
    out = branch_code.branch_diff(sessions, store, sid, resolve_head(sessions, sid, old),
                                  resolve_head(sessions, sid, new), path)
    if as_json:
        print(json.dumps(dumps.dump(w.BranchDiffResult, out)))  # the branchDiff result's shape
    else:
        sys.stdout.write(out.diff)
    return 0
