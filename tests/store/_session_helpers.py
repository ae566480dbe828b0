"""Checks on a session's repository made with real git (the store itself runs none)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from openprogram_lsp.core.types import Node
from openprogram_lsp.store import meta_slots
from openprogram_lsp.store.git import GitError, run_git
from openprogram_lsp.store.session_store import SessionStore


def uncommitted(root: Path) -> bytes:
    """``git status --porcelain`` of a session against its head commit (empty: all committed).

    The store keeps no git index, so git's view of the head is read into a throwaway one.
    The meta is written in place in ``.git/`` (``meta_slots``), not to ``meta.json``: its
    current bytes are compared with the committed ``meta.json`` instead of the file.
    """
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        run_git(["read-tree", "HEAD"], cwd=root, env=env)
        status = run_git(["status", "--porcelain", "--untracked-files=all"], cwd=root, env=env)
    lines = [line for line in status.splitlines(keepends=True) if line != b" M meta.json\n"]
    try:
        committed = run_git(["show", "HEAD:meta.json"], cwd=root)
    except GitError:
        committed = None
    if committed is not None and committed != meta_slots.read_bytes(root):
        lines.append(b" M meta.json (the meta slots)\n")
    return b"".join(lines)


def running_turn(home: Path, owner: dict[str, object], text: str = "hi"
                 ) -> tuple[SessionStore, str]:
    """A new session with one turn started (``u1``, its reply ``u1_reply`` running) and
    ``owner`` recorded as the process running it."""
    store = SessionStore(home)
    sid = store.create_session()
    store.start_turn(sid, Node(id="u1", role="user", text=text),
                     Node(id="u1_reply", role="assistant", predecessor="u1", status="running",
                          metadata={"owner": owner}))
    store.update_meta(sid, running={"u1_reply": owner}, status="running")  # the owner's
    return store, sid
