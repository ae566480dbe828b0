"""Hunks of a checkpoint's file change, and reverting one of them in the current file.

A hunk is one run of changed lines between a file's text before a checkpoint and after it: a
hunk of git's zero-context patch of the two commits (``diff-tree -U0``). Git's diff is bounded
in time on any input (``difflib`` is quadratic where one line repeats: 38 s for a 1,400-line
file of blank lines and ``x``), and it is deterministic, so the index an editor took from
``files[].hunks`` names the same lines when it asks the server to put that hunk's ``before``
lines back into the file as it is now, with a safety checkpoint first like every restore.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.errors import (
    CheckpointError,
    NotFound,
    SessionBusy,
    ToolError,
    WorkspaceEscape,
)
from openprogram_lsp.core.fsutil import current_umask
from openprogram_lsp.core.text_hunks import split_lines
from openprogram_lsp.store.checkpoints.buffers import BufferSink
from openprogram_lsp.store.checkpoints.results import FileChange, Hunk, RestoreOutcome

_MAX_HUNK_FILE = 64 * 1024 * 1024
_INDEX = re.compile(rb"^index ([0-9a-f]{40,64})\.\.([0-9a-f]{40,64})", re.M)
_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)

if TYPE_CHECKING:
    from openprogram_lsp.store.checkpoints.shadow import ShadowRepo
    from openprogram_lsp.store.checkpoints.view import StoreView


def zero_context_hunks(patch: bytes) -> dict[tuple[str, str], list[Hunk]]:
    """The hunks of each file of a ``-U0 --full-index`` patch, keyed by (old blob, new blob).

    Files are told apart by their ``index`` lines, never by their quoted names; a file with
    no ``index`` line (a mode change only) has no hunks."""
    out: dict[tuple[str, str], list[Hunk]] = {}
    for part in re.split(rb"^diff --git ", patch, flags=re.M)[1:]:
        head, _, body = part.partition(b"\n@@")
        found = _INDEX.search(head)
        if found is None:
            continue
        key = (found.group(1).decode(), found.group(2).decode())
        out[key] = [Hunk(old_start=int(m.group(1)), old_lines=int(m.group(2) or 1),
                         new_start=int(m.group(3)), new_lines=int(m.group(4) or 1))
                    for m in _HEADER.finditer(b"@@" + body if body else b"")]
    return out


def blob_hunks(repo: ShadowRepo, old: str, new: str) -> list[Hunk]:
    """The changed runs from blob ``old`` to blob ``new`` of the private repository."""
    patch = repo.git(["diff", "-U0", "--inter-hunk-context=0", "--text", "--no-color",
                      "--no-ext-diff", "--no-textconv", "--full-index", old, new])
    return zero_context_hunks(patch).get((old, new), [])


def unchanged_runs(hunks: list[Hunk], old_lines: int) -> list[tuple[int, int, int]]:
    """``(old index, new index, length)`` of each run of lines the hunks leave as they were
    (0-based; ``difflib``'s matching blocks without the closing empty one)."""
    out: list[tuple[int, int, int]] = []
    at_old = at_new = 0
    for hunk in hunks:
        i1 = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        j1 = hunk.new_start - 1 if hunk.new_lines else hunk.new_start
        if i1 > at_old:
            out.append((at_old, at_new, i1 - at_old))
        at_old, at_new = i1 + hunk.old_lines, j1 + hunk.new_lines
    if old_lines > at_old:
        out.append((at_old, at_new, old_lines - at_old))
    return out


def revert_hunk(current: str, before: str, after: str, hunk: Hunk) -> str:
    """``current`` with ``hunk`` of before→after undone.

    The hunk's ``after`` lines must still be in the file: where the checkpoint left them, or
    else at exactly one other place (the user edited above them). Otherwise the hunk no longer
    applies and nothing is guessed.
    """
    old, new, cur = split_lines(before), split_lines(after), split_lines(current)
    i1 = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
    j1 = hunk.new_start - 1 if hunk.new_lines else hunk.new_start
    i2, j2 = i1 + hunk.old_lines, j1 + hunk.new_lines
    if not (0 <= i1 <= i2 <= len(old) and 0 <= j1 <= j2 <= len(new)):
        raise NotFound("hunk: the hunk does not fit the checkpoint's texts")
    # Anchor on the changed lines plus one unchanged line either side, so a pure insertion or
    # deletion is placed exactly.
    lo, hi = max(0, j1 - 1), min(len(new), j2 + 1)
    block = new[lo:hi]
    start = lo if cur[lo:lo + len(block)] == block else _only_place(cur, block)
    if start is None:
        raise SessionBusy("hunk: the file changed since the checkpoint and the hunk no longer "
                          "applies; restore the whole file or edit it by hand")
    head = start + (j1 - lo)
    return "".join(cur[:head] + old[i1:i2] + cur[head + (j2 - j1):])


def _only_place(lines: list[str], block: list[str]) -> int | None:
    """Where ``block`` occurs in ``lines`` if it occurs exactly once."""
    if not block:
        return None
    first, size, found = block[0], len(block), None
    for s in range(len(lines) - size + 1):
        if lines[s] == first and lines[s:s + size] == block:
            if found is not None:
                return None
            found = s
    return found


def restore_hunk(store: StoreView, checkpoint_id: str, path: str, index: int, *,
                 session_id: str | None = None,
                 buffers: BufferSink | None = None) -> RestoreOutcome:
    """Undo one hunk of a checkpoint's change to ``path``; what was written, how to undo it.

    ``buffers``: the editors' open documents; a file open there with unsaved changes is
    reverted in that buffer (``workspace/applyEdit``), never under it on disk."""
    with store.lock:
        store._open()
        entry = store._entry(checkpoint_id)
        full_id = entry.checkpoint.id if entry.checkpoint is not None else checkpoint_id
        rel = store._checked_relative(path)
        diff = store.diff(full_id, rel)
        files = [f for f in diff.files if f.path == rel]
        if not files:
            raise NotFound(f"path: checkpoint {full_id} did not change {rel!r}")
        item = files[0]
        if item.binary or item.truncated:
            raise CheckpointError(f"path: {rel} is binary or too large to restore by hunk")
        if not 0 <= index < len(item.hunks or []):
            raise NotFound(f"hunk: no hunk {index} (the change has {len(item.hunks or [])})")
        hunk = (item.hunks or [])[index]
        target = store.workspace / rel
        unsaved = buffers.unsaved(rel) if buffers is not None else None
        if buffers is not None and unsaved is not None:
            return _restore_in_buffer(store, buffers, rel, unsaved, item.before or "",
                                      item.after or "", hunk, index, full_id, session_id)
        try:  # walked from the workspace's descriptor; a FIFO or a swapped link is refused
            data = fdfs.read_bytes(store.workspace, rel, _MAX_HUNK_FILE + 1)[0] \
                if fdfs.lstat(store.workspace, rel) is not None else b""
            if len(data) > _MAX_HUNK_FILE:
                raise CheckpointError(f"path: {rel} is too large to restore by hunk")
            current = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CheckpointError(f"path: {rel} is no longer UTF-8 text") from exc
        except (WorkspaceEscape, ToolError) as exc:
            raise CheckpointError(f"path: {exc.message}") from exc
        text = revert_hunk(current, item.before or "", item.after or "", hunk)
        store.note_paths([rel])
        safety = store._commit("safety", session_id, None,
                               f"Before restoring hunk {index} of {rel} from {full_id}")
        head = store.repo.head()
        safety_id = safety.id if safety else (store._head_checkpoint_id(head) if head else None)
        existed = target.exists()
        _swap_text(store, rel, data, existed, text.encode("utf-8"))
        store.note_paths([rel])
        restored = store._commit("restore", session_id, None,
                                 f"Restored hunk {index} of {rel} from checkpoint {full_id}",
                                 restored_from=full_id)
        return RestoreOutcome(
            restored=[rel], safety_checkpoint_id=safety_id,
            changes=[FileChange(rel, "modified" if existed else "added")],
            checkpoint_id=restored.id if restored is not None else None)


def _restore_in_buffer(store: StoreView, sink: BufferSink, rel: str, current: str,
                       before: str, after: str, hunk: Hunk, index: int, full_id: str,
                       session_id: str | None) -> RestoreOutcome:
    """``restore_hunk`` for a file whose editor buffer has unsaved changes: the buffer is
    recorded (so the safety checkpoint holds it), then reverted through the editor."""
    text = revert_hunk(current, before, after, hunk)
    if not store.buffers.tracked(rel):
        store.buffers.track(rel, functools.partial(sink.unsaved, rel))
    store.note_paths([rel])
    safety = store._commit("safety", session_id, None,
                           f"Before restoring hunk {index} of {rel} from {full_id}")
    head = store.repo.head()
    safety_id = safety.id if safety else (store._head_checkpoint_id(head) if head else None)
    why = sink.apply(rel, current, text)
    if why:
        raise SessionBusy(f"hunk: {rel} is open in the editor with unsaved changes, and {why}; "
                          "nothing was changed")
    restored = store._commit("restore", session_id, None,
                             f"Restored hunk {index} of {rel} from checkpoint {full_id}",
                             restored_from=full_id)
    return RestoreOutcome(restored=[rel], safety_checkpoint_id=safety_id,
                          changes=[FileChange(rel, "modified")],
                          checkpoint_id=restored.id if restored is not None else None)


def _swap_text(store: StoreView, rel: str, before: bytes, existed: bool,
               after: bytes) -> None:
    """Write the reverted text only if the file still holds what was read (``cas``): an edit
    another process made meanwhile is kept and the hunk restore refused."""
    import stat

    from openprogram_lsp.store.checkpoints import cas
    from openprogram_lsp.store.checkpoints.objects import blob_id

    try:
        st = fdfs.lstat(store.workspace, rel)
        mode = "100755" if st is not None and st.st_mode & 0o100 else "100644"
        perm = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~current_umask()
        cas.swap(store.workspace, rel, (mode, blob_id(before)) if existed else None,
                 (mode, after), perm)
    except cas.Conflict:
        raise SessionBusy(f"hunk: {rel} changed while the hunk was being restored; nothing was "
                          "written (try again)") from None
    except (WorkspaceEscape, ToolError) as exc:
        raise CheckpointError(f"could not restore {rel}: {exc.message}") from exc
    except OSError as exc:
        raise CheckpointError(f"could not restore {rel}: {exc}") from exc
