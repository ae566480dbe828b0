"""What a turn tells its workspace's checkpointer while its tools edit (step 6).

The paths each tool changed (the turn's checkpoint records them at finalize); before the
turn's first change, the workspace guard and the session's baseline; before the first edit of
an unsaved editor buffer, that buffer's text, so the turn's checkpoint holds only the agent's
change and an undo gives the user's unsaved text back.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.core.localfs import small_write_inline
from openprogram_lsp.core.ports import Buffers, Checkpointer
from openprogram_lsp.core.turn_root import real_path

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher.active import ActiveTurn

log = logging.getLogger(__name__)
GUARD_TIMEOUT = 120.0
"""Seconds a turn's first edit waits for the workspace another session's turn is editing."""


def small_reads(workspace: Path, paths: list[str]) -> bool:
    """Whether recording the before-states of these workspace paths reads little from a local
    disk: each absent, a symlink, or a regular file a file tool would write on the loop too
    (``core.localfs``). Then ``record_before`` runs on the loop: the thread hop costs more than
    the read, and while the edit awaited it the loop ran other work inside the edit (on a
    fresh server, the warm-up's steps: a first edit took several ms more than the next)."""
    root = real_path(workspace)
    for rel in paths:
        try:
            st = os.lstat(os.path.join(root, rel))
        except FileNotFoundError:
            size = 0
        except OSError:
            return False
        else:
            if stat.S_ISLNK(st.st_mode):
                size = 0
            elif stat.S_ISREG(st.st_mode):
                size = st.st_size
            else:
                return False
        if not small_write_inline(root, rel, size):
            return False
    return True


class TurnCheckpoints:
    """One turn's edits as its checkpointer needs them (no-ops without a checkpointer)."""

    def __init__(self, turn: ActiveTurn, checkpointer: Checkpointer | None,
                 buffers: Buffers | None) -> None:
        self.turn = turn
        self.checkpointer = checkpointer
        self.buffers = buffers
        self.deferred = False  # the baseline waits for the first walk; writes are recorded

    def paths_changed(self, paths: Iterable[str]) -> None:
        """A tool changed ``paths`` (none named: it may have changed anything)."""
        paths = list(paths)
        turn = self.turn
        if not paths:
            turn.full_scan = True
        turn.touched.update(paths)
        if self.checkpointer is not None:
            self.checkpointer.note_paths(paths)

    async def before_mutation(self, paths: list[str] | None = None) -> None:
        """Before each change (``paths``: what it writes, when known): hold the workspace,
        then make sure of a baseline.

        From the first edit to the checkpoint the workspace belongs to this turn, so another
        session's edits are never credited to it. A turn that cannot get it in time goes on
        (logged): attribution is then shared, never an edit lost. While the first walk of the
        workspace runs, a change with known paths does not wait for it: those files are
        recorded as they are, and the baseline is taken after the walk (``defer_baseline``);
        any other change takes it now.
        """
        turn, checkpointer = self.turn, self.checkpointer
        if checkpointer is None:
            return
        if not turn.baseline_done:
            turn.baseline_done = True
            try:
                await turn.resources.enter_async_context(
                    checkpointer.turn_guard(timeout=GUARD_TIMEOUT))
            except CheckpointError:
                log.warning("workspace %s busy for %ss; turn %s goes on unguarded",
                            turn.workspace, GUARD_TIMEOUT, turn.turn_id)
            if checkpointer.baseline_ready(turn.session_id):  # nothing to do
                return
            self.deferred = paths is not None and checkpointer.defer_baseline(turn.session_id)
            if not self.deferred:
                await asyncio.to_thread(checkpointer.ensure_baseline, turn.session_id)
                return
        if not self.deferred:
            return
        if paths is None:
            recorded = False
        elif small_reads(turn.workspace, paths):  # no thread hop: the edit goes on at once
            recorded = checkpointer.record_before(turn.session_id, paths)
        else:
            recorded = await asyncio.to_thread(checkpointer.record_before, turn.session_id,
                                               paths)
        if not recorded:
            self.deferred = False  # anything may change now: the baseline first
            await asyncio.to_thread(checkpointer.ensure_baseline, turn.session_id)

    async def buffer_edit(self, rel: str) -> None:
        """The turn's first edit into the unsaved buffer of ``rel``: from now on checkpoints
        record that buffer, and its text before the edit (the user's unsaved changes) is
        checkpointed first. A failure is a warning on the turn; the edit goes on."""
        turn, checkpointer, buffers = self.turn, self.checkpointer, self.buffers
        if checkpointer is None or buffers is None or rel in turn.buffers_recorded:
            return
        await self.before_mutation()
        turn.buffers_recorded.add(rel)
        path = turn.workspace.resolve() / rel
        sid = turn.session_id
        try:
            await asyncio.to_thread(checkpointer.record_buffer, sid, rel,
                                    lambda: buffers.unsaved(sid, path))
        except CheckpointError as exc:  # its undo may then be partial
            log.warning("could not checkpoint the buffer of %s: %s", rel, exc.message)
            turn.warnings.append(f"checkpoint of the unsaved buffer of {rel} failed: "
                                 f"{exc.message}")
