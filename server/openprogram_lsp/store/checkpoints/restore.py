"""Restore: safety checkpoint first, then write only differing files and delete extra ones."""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.errors import CheckpointError, ToolError, WorkspaceEscape
from openprogram_lsp.core.fsutil import protected_dir_of
from openprogram_lsp.store.checkpoints import cas
from openprogram_lsp.store.checkpoints.buffers import BufferSink, buffer_bytes
from openprogram_lsp.store.checkpoints.extras import EMPTY, Extras, describe
from openprogram_lsp.store.checkpoints.modes import wanted_perm
from openprogram_lsp.store.checkpoints.objects import (
    GITLINK_MODE,
    TREE_MODE,
    TreeChange,
    blob_id,
    commit_tree,
    diff_trees,
    lookup,
    read_blobs,
)
from openprogram_lsp.store.checkpoints.results import (
    Change,
    FileChange,
    NotRestored,
    RestoreOutcome,
)

if TYPE_CHECKING:
    from openprogram_lsp.store.checkpoints.view import StoreView

UNSAVED_OPEN = "open in the editor with unsaved changes"
UNSAVED = f"{UNSAVED_OPEN}: save or revert it first"
OURS = "inside openprogram's own state: never written by a restore"
OUTSIDE = "leads outside the workspace"
A_DIRECTORY = "a directory is in its place: left as it is"
IN_THE_WAY = "something the checkpoint did not record is in its place: left as it is"

def restore_checkpoint(store: StoreView, checkpoint_id: str,
                       paths: Iterable[str] | None, *, session_id: str | None = None,
                       full_scan: bool = False, undoes: str | None = None,
                       buffers: BufferSink | None = None,
                       keep: Iterable[str] = ()) -> RestoreOutcome:
    """Restore a checkpoint's files (all, or under ``paths``); what was written, how to undo.

    ``undoes``: the restore undoes that turn checkpoint; its restore checkpoint says so (made
    even when no file needed writing), so every client sees the turn as undone.
    ``buffers``: the editor's open documents; a file whose buffer has unsaved changes is
    recorded as that buffer and restored into it (``workspace/applyEdit``), never on disk.
    ``keep``: files the restore leaves as they are (the user's own changes a branch switch
    keeps), named in ``skipped``.
    """
    with store.lock:
        store._open()
        target = store._entry(checkpoint_id)
        if target.checkpoint is not None:
            checkpoint_id = target.checkpoint.id  # a prefix was given
        wanted = sorted({store._checked_relative(p) for p in paths}) if paths else []
        if "." in wanted:
            wanted = []
        own = {store._checked_relative(p) for p in keep}  # refused before anything is written
        # Re-read every path the restore may write or delete, plus whatever was noted, so the
        # safety checkpoint holds their current bytes; walk the whole tree when the store's
        # knowledge is incomplete (first use in this process, after a shell command) or asked.
        target_tree = commit_tree(store.repo, target.commit)
        only = tuple(wanted) or None
        head = store.repo.head()
        touched: list[str] = []
        if head is not None:
            touched = [c.path for c in diff_trees(
                store.repo, commit_tree(store.repo, head), target_tree, wanted=only)]
            if touched:
                store.note_paths(touched)
        # A recorded file edited or deleted a moment ago, before the watcher said so, is read
        # too: else restoring the newest checkpoint would see nothing to undo.
        stale = store.modified_on_disk(only, touched)
        if stale:
            store.note_paths(stale)
        if buffers is not None:  # unsaved buffers the restore writes: the safety holds them
            for path in {*touched, *stale}:
                if not store.buffers.tracked(path) and buffers.unsaved(path) is not None:
                    store.buffers.track(path, functools.partial(buffers.unsaved, path))
        safety = store._commit("safety", session_id, None,
                               f"Before restoring checkpoint {checkpoint_id}", full=full_scan)
        head = store.repo.head()
        if head is None:
            raise CheckpointError("checkpoint store has no head")
        safety_id = safety.id if safety else store._head_checkpoint_id(head)
        changes = diff_trees(store.repo, commit_tree(store.repo, head), target_tree, wanted=only)
        was = target.meta.extras_or_skipped() if target.meta is not None else EMPTY
        now = store._extras_of(head)
        # files either side could not record are left as they are, and named
        left = _unrecorded(was, now or EMPTY, only, {c.path for c in changes},
                           store.repo.config.max_file_bytes)
        for c in changes:
            if c.path in own:
                left[c.path] = "kept: your own change"
        changes = [c for c in changes if c.path not in left]
        blobs = read_blobs(store.repo, [c.new_sha for c in changes
                                        if c.status != "D" and c.new_mode != GITLINK_MODE])
        into_buffers: list[tuple[str, Change]] = []
        buffer_conflicts: list[str] = []
        if buffers is not None:
            changes, into_buffers, buffer_conflicts = _into_buffers(store, buffers, changes,
                                                                    blobs, left)
        perms = target.meta.modes if target.meta is not None else {}
        # empty directories: only between two checkpoints that both kept them
        dirs = (was.dirs, now.dirs) if target.meta is not None and \
            target.meta.extras is not None and now is not None else None

        def kept(rel: str) -> bool:  # whether the target had this directory
            if rel in was.dirs or any(d.startswith(rel + "/") for d in was.dirs):
                return True
            entry = lookup(store.repo, target_tree, rel)
            return entry is not None and entry[0] == TREE_MODE

        applied, skipped, conflicts = _apply(store.workspace, blobs, changes, perms, dirs, only,
                                             kept)
        applied += _fix_modes(store, target_tree, perms, store._modes_of(head), only,
                              {c.path for c in changes} | {p for p, _ in into_buffers} | own)
        applied += into_buffers
        conflicts += buffer_conflicts
        left.update(skipped)
        restored = None
        if conflicts:  # what another process wrote meanwhile is recorded, never lost
            store.note_paths(conflicts)
        if applied or conflicts or undoes:
            store.note_paths([p.rstrip("/") for p, _ in applied])
            what = f"Undid turn checkpoint {undoes}" if undoes else (
                f"Restored checkpoint {checkpoint_id}")
            restored = store._commit("restore", session_id, None, what,
                                     allow_empty=undoes is not None,
                                     restored_from=checkpoint_id, undo=safety_id, undoes=undoes)
        return RestoreOutcome(
            restored=[p for p, _ in applied], safety_checkpoint_id=safety_id,
            changes=[FileChange(p, c) for p, c in applied if not p.endswith("/")],
            checkpoint_id=restored.id if restored is not None else None,
            skipped=sorted(left) or None, conflicts=conflicts or None,
            not_restored=[NotRestored(p, why) for p, why in sorted(left.items())] or None)


def _into_buffers(store: StoreView, sink: BufferSink, changes: list[TreeChange],
                  blobs: dict[str, bytes], left: dict[str, str]
                  ) -> tuple[list[TreeChange], list[tuple[str, Change]], list[str]]:
    """Apply the changes of paths whose editor buffer has unsaved changes to the buffer
    (compare-and-swap against what the safety checkpoint recorded of it); returns the changes
    left for the disk, the buffers changed and the conflicts. What a buffer cannot take (a
    deletion, a symlink, bytes that are not text) is left and named in ``left``."""
    rest: list[TreeChange] = []
    done: list[tuple[str, Change]] = []
    conflicts: list[str] = []
    for change in changes:
        current = sink.unsaved(change.path) if store.buffers.tracked(change.path) else None
        if current is None:
            rest.append(change)
            continue
        if change.status == "D" or change.new_mode in (GITLINK_MODE, cas.LINK):
            left[change.path] = UNSAVED
            continue
        try:
            text = blobs[change.new_sha].decode("utf-8")
        except UnicodeDecodeError:
            left[change.path] = UNSAVED
            continue
        if blob_id(buffer_bytes(current)) != change.old_sha:
            conflicts.append(change.path)  # typed into since the safety checkpoint
            continue
        why = sink.apply(change.path, current, text)
        if why:
            left[change.path] = f"{UNSAVED_OPEN}, and {why}"
            continue
        done.append((change.path, "modified"))
    return rest, done, conflicts


def _in(path: str, only: tuple[str, ...] | None) -> bool:
    return not only or any(path == w or path.startswith(w + "/") for w in only)


def _unrecorded(was: Extras, now: Extras, only: tuple[str, ...] | None,
                changed: set[str], limit: int) -> dict[str, str]:
    """Path -> why, for the files (in scope) that the target or the current state could not
    record and that a restore would have to touch: a tree change at their path, or an
    unrecorded file that is not as the target saw it. Restoring them could not be undone (or
    is impossible), so they are left as they are."""
    out: dict[str, str] = {}
    for path in was.files.keys() | now.files.keys():
        if not _in(path, only):
            continue
        entry = now.files.get(path) or was.files[path]
        before = was.files.get(path)
        if path in changed or before is None or not before.same_as(now.files.get(path)):
            out[path] = describe(entry.reason, limit)
    return out


def _fix_modes(store: StoreView, tree: str, perms: dict[str, int],
               current: dict[str, int], only: tuple[str, ...] | None,
               written: set[str]) -> list[tuple[str, Change]]:
    """chmod files whose content matches the checkpoint but whose exact mode does not."""
    fixed: list[tuple[str, Change]] = []
    for path in sorted(perms.keys() | current.keys()):
        if path in written or (only and not any(path == w or path.startswith(w + "/")
                                                for w in only)):
            continue
        entry = lookup(store.repo, tree, path)
        try:
            st = fdfs.lstat(store.workspace, path)
            if entry is None or st is None or not stat.S_ISREG(st.st_mode):
                continue
            want = wanted_perm(perms, path, entry[0])
            if stat.S_IMODE(st.st_mode) != want:
                fdfs.chmod(store.workspace, path, want)
                fixed.append((path, "modified"))
        except (WorkspaceEscape, ToolError):
            continue
        except OSError as exc:
            raise CheckpointError(f"could not restore the mode of {path}: {exc}") from exc
    return fixed


def _apply(workspace: Path, blobs: dict[str, bytes], changes: list[TreeChange],
           perms: dict[str, int], dirs: tuple[frozenset[str], frozenset[str]] | None = None,
           only: tuple[str, ...] | None = None, kept: Callable[[str], bool] = bool,
           ) -> tuple[list[tuple[str, Change]], dict[str, str], list[str]]:
    """Delete, remove empty directories the target lacks, write, then make the empty
    directories it had; returns ([(path, added|modified|deleted)] (a directory as ``dir/``),
    {path: why it was left alone}, [conflicts]). ``dirs``: (the target's empty directories,
    the current ones), or None to leave directories be.

    Every path is walked from the workspace's descriptor (``core.fdfs``): a directory swapped
    for a symlink during the restore fails that path instead of writing outside. Each file is
    swapped only while it still holds what the safety checkpoint recorded (``cas``): a file
    another process changed meanwhile is left as it is and reported as a conflict.
    """
    applied: list[tuple[str, Change]] = []
    skipped: dict[str, str] = {}
    conflicts: list[str] = []
    ours = [c.path for c in changes if _ours(workspace, c.path)]
    # restore never writes into our own state, whatever the workspace is
    skipped.update((p, OURS) for p in ours)
    changes = [c for c in changes if c.path not in set(ours)]
    for change in changes:
        if change.status != "D":
            continue
        try:
            st = fdfs.lstat(workspace, change.path)
            if st is None:
                continue
            if stat.S_ISDIR(st.st_mode):
                skipped[change.path] = A_DIRECTORY
                continue
            cas.swap(workspace, change.path, (change.old_mode, change.old_sha), None, 0)
        except cas.Conflict:
            conflicts.append(change.path)
            continue
        except (WorkspaceEscape, ToolError):
            skipped[change.path] = OUTSIDE
            continue
        except OSError as exc:
            raise CheckpointError(f"could not remove {change.path}: {exc}") from exc
        fdfs.prune_empty_dirs(workspace, change.path.rpartition("/")[0])
        applied.append((change.path, "deleted"))
    if dirs is not None:
        applied += _remove_dirs(workspace, sorted((d for d in dirs[1] - dirs[0] if _in(d, only)),
                                                  reverse=True), kept)
    for change in changes:
        if change.status == "D" or change.new_mode == GITLINK_MODE:
            continue
        try:
            st = fdfs.lstat(workspace, change.path)
        except (WorkspaceEscape, ToolError):
            skipped[change.path] = OUTSIDE
            continue
        existed = st is not None
        if (change.status == "A" and existed) or (st is not None and stat.S_ISDIR(st.st_mode)):
            # a file the safety checkpoint did not record (ignored, too big, a directory):
            # overwriting it could not be undone, so it is left alone
            skipped[change.path] = A_DIRECTORY if st is not None and stat.S_ISDIR(st.st_mode) \
                else IN_THE_WAY
            continue
        perm = wanted_perm(perms, change.path, change.new_mode)
        try:
            if change.old_sha == change.new_sha and existed and "120000" not in (
                    change.old_mode, change.new_mode):
                fdfs.chmod(workspace, change.path, perm)
            else:
                expect = None if change.status == "A" else (change.old_mode, change.old_sha)
                cas.swap(workspace, change.path, expect,
                         (change.new_mode, blobs[change.new_sha]), perm)
        except cas.Conflict:
            conflicts.append(change.path)
            continue
        except (WorkspaceEscape, ToolError):
            skipped[change.path] = OUTSIDE
            continue
        except OSError as exc:
            raise CheckpointError(f"could not restore {change.path}: {exc}") from exc
        applied.append((change.path, "modified" if existed else "added"))
    if dirs is not None:
        made, blocked = _make_dirs(workspace, sorted(d for d in dirs[0] - dirs[1] if _in(d, only)))
        applied += made
        skipped.update(blocked)
    return applied, skipped, conflicts


def _remove_dirs(workspace: Path, dirs: list[str],
                 kept: Callable[[str], bool]) -> list[tuple[str, Change]]:
    """Remove directories (deepest first) that are still empty, then their parents that are
    empty now and that the target did not have (``kept``); a directory that holds anything is
    left as it is (what it holds was recorded, or is kept unrecorded)."""
    out: list[tuple[str, Change]] = []
    for rel in dirs:
        if kept(rel):  # the target has files in it: they are written into it
            continue
        while rel:
            parts = fdfs.split(rel)
            try:
                with fdfs.open_dir(workspace, parts[:-1], rel=rel) as dfd:
                    os.rmdir(parts[-1], dir_fd=dfd)
            except (OSError, WorkspaceEscape, ToolError):
                break
            out.append((rel + "/", "deleted"))
            rel = rel.rpartition("/")[0]
            if kept(rel):
                break
    return out


def _make_dirs(workspace: Path, dirs: list[str]
               ) -> tuple[list[tuple[str, Change]], dict[str, str]]:
    """Make the target's empty directories (and their parents); one with something else in
    its place is left as it is and named."""
    made: list[tuple[str, Change]] = []
    blocked: dict[str, str] = {}
    for rel in dirs:
        try:
            if fdfs.lstat(workspace, rel) is not None:
                st = fdfs.lstat(workspace, rel)
                if st is not None and not stat.S_ISDIR(st.st_mode):
                    blocked[rel + "/"] = IN_THE_WAY
                continue
            with fdfs.open_dir(workspace, fdfs.split(rel), create=True, rel=rel):
                pass
        except (WorkspaceEscape, ToolError, NotADirectoryError):
            blocked[rel + "/"] = IN_THE_WAY
            continue
        except OSError as exc:
            raise CheckpointError(f"could not make the directory {rel}: {exc}") from exc
        made.append((rel + "/", "added"))
    return made, blocked


def _ours(workspace: Path, path: str) -> bool:
    """Whether a restored path lies in our own state; one that cannot be resolved (a
    component swapped while it was read) is skipped too, never written through."""
    try:
        return protected_dir_of(workspace / path, workspace) is not None
    except OSError:
        return True
