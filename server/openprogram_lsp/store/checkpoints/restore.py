"""Restore: safety checkpoint first, then write only differing files and delete extra ones."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.store.checkpoints.objects import (
    GITLINK_MODE,
    TreeChange,
    commit_tree,
    diff_trees,
    read_blobs,
)

if TYPE_CHECKING:
    from openprogram_lsp.store.checkpoints.store import CheckpointStore

_UMASK = os.umask(0o022)
os.umask(_UMASK)


def restore_checkpoint(store: CheckpointStore, checkpoint_id: str,
                       paths: Iterable[str] | None, *, session_id: str | None = None,
                       full_scan: bool = False) -> dict[str, Any]:
    """Restore a checkpoint's files (all, or under ``paths``); returns the wire result."""
    with store.lock:
        store._open()
        target = store._entry(checkpoint_id)
        if target.checkpoint is not None:
            checkpoint_id = target.checkpoint.id  # a prefix was given
        wanted = sorted({store._checked_relative(p) for p in paths}) if paths else []
        if "." in wanted:
            wanted = []
        # Re-read every path the restore may write or delete, plus whatever was noted, so the
        # safety checkpoint holds their current bytes; walk the whole tree when the store's
        # knowledge is incomplete (first use in this process, after a shell command) or asked.
        target_tree = commit_tree(store.repo, target.commit)
        only = tuple(wanted) or None
        head = store.repo.head()
        if head is not None:
            touched = [c.path for c in diff_trees(
                store.repo, commit_tree(store.repo, head), target_tree, wanted=only)]
            if touched:
                store.note_paths(touched)
        safety = store._commit("safety", session_id, None,
                               f"Before restoring checkpoint {checkpoint_id}", full=full_scan)
        head = store.repo.head()
        if head is None:
            raise CheckpointError("checkpoint store has no head")
        safety_id = safety.id if safety else store._head_checkpoint_id(head)
        changes = diff_trees(store.repo, commit_tree(store.repo, head), target_tree, wanted=only)
        blobs = read_blobs(store.repo, [c.new_sha for c in changes
                                        if c.status != "D" and c.new_mode != GITLINK_MODE])
        applied, skipped = _apply(store.workspace, blobs, changes)
        restored = None
        if applied:
            store.note_paths([p for p, _ in applied])
            restored = store._commit("restore", session_id, None,
                                     f"Restored checkpoint {checkpoint_id}",
                                     restored_from=checkpoint_id)
        result: dict[str, Any] = {
            "restored": [p for p, _ in applied],
            "safetyCheckpointId": safety_id,
            "changes": [{"path": p, "change": c} for p, c in applied],
        }
        if restored is not None:
            result["checkpointId"] = restored.id
        if skipped:
            result["skipped"] = skipped
        return result


def _apply(workspace: Path, blobs: dict[str, bytes],
           changes: list[TreeChange]) -> tuple[list[tuple[str, str]], list[str]]:
    """Delete, then write; returns ([(path, added|modified|deleted)], [skipped paths])."""
    applied: list[tuple[str, str]] = []
    skipped: list[str] = []
    for change in changes:
        if change.status != "D":
            continue
        full = workspace / change.path
        if not os.path.lexists(full):
            continue
        if not _safe(workspace, full) or (full.is_dir() and not full.is_symlink()):
            skipped.append(change.path)
            continue
        os.unlink(full)
        _prune_dirs(workspace, full.parent)
        applied.append((change.path, "deleted"))
    for change in changes:
        if change.status == "D" or change.new_mode == GITLINK_MODE:
            continue
        full = workspace / change.path
        existed = os.path.lexists(full)
        if not _safe(workspace, full) or (change.status == "A" and existed) \
                or (existed and full.is_dir() and not full.is_symlink()):
            # a file the safety checkpoint did not record (ignored, too big, a directory):
            # overwriting it could not be undone, so it is left alone
            skipped.append(change.path)
            continue
        try:
            if change.old_sha == change.new_sha and existed and "120000" not in (
                    change.old_mode, change.new_mode):
                os.chmod(full, (0o777 if change.new_mode == "100755" else 0o666) & ~_UMASK)
            else:
                _write(full, blobs[change.new_sha], change.new_mode)
        except OSError as exc:
            raise CheckpointError(f"could not restore {change.path}: {exc}") from exc
        applied.append((change.path, "modified" if existed else "added"))
    return applied, skipped


def _safe(workspace: Path, full: Path) -> bool:
    """Whether the deepest existing ancestor of a path resolves inside the workspace."""
    parent = full.parent
    while not parent.exists() and parent != workspace and workspace in parent.parents:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        return False
    real = Path(os.path.realpath(parent))
    return (real == workspace or workspace in real.parents) and ".git" not in full.relative_to(
        workspace).parts


def _write(full: Path, data: bytes, mode: str) -> None:
    full.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000":
        if os.path.lexists(full):
            os.unlink(full)
        os.symlink(os.fsdecode(data), full)
        return
    perm = (0o777 if mode == "100755" else 0o666) & ~_UMASK
    if full.is_symlink():
        os.unlink(full)
    fd, tmp = tempfile.mkstemp(dir=full.parent, prefix=f".{full.name}.", suffix=".restore")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, perm)
        os.replace(tmp, full)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def write_restored(workspace: Path, rel: str, data: bytes) -> None:
    """Write one restored file's bytes, keeping its mode, with the same checks as a restore."""
    full = workspace / rel
    if not _safe(workspace, full) or (full.is_dir() and not full.is_symlink()):
        raise CheckpointError(f"could not restore {rel}: not a file inside the workspace")
    perm = os.stat(full).st_mode & 0o7777 if full.exists() else None
    mode = "100755" if perm is not None and perm & 0o111 else "100644"
    try:
        _write(full, data, mode)
        if perm is not None:
            os.chmod(full, perm)  # exactly the mode the file had, not git's two
    except OSError as exc:
        raise CheckpointError(f"could not restore {rel}: {exc}") from exc


def _prune_dirs(workspace: Path, directory: Path) -> None:
    """Remove directories a delete left empty, up to the workspace root."""
    while directory != workspace and workspace in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent
