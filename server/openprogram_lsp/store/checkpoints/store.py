"""CheckpointStore: per-turn snapshots of a workspace in a private git dir (the Checkpointer)."""

from __future__ import annotations

import _thread
import logging
import os
import posixpath
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openprogram_lsp.core.errors import CheckpointError, NotFound, SessionBusy
from openprogram_lsp.core.fsutil import protect_dir
from openprogram_lsp.core.ids import new_id, now_iso
from openprogram_lsp.core.types import Checkpoint
from openprogram_lsp.store.checkpoints import extras as extras_mod
from openprogram_lsp.store.checkpoints import stage as stage_mod
from openprogram_lsp.store.checkpoints.buffers import (
    BufferOverlay,
    BufferSink,
    Current,
    buffer_bytes,
    git_mode,
)
from openprogram_lsp.store.checkpoints.bulk import Progress, bulk_stage
from openprogram_lsp.store.checkpoints.chain import Entry, load_chain, marked, undone_turns
from openprogram_lsp.store.checkpoints.config import CheckpointConfig
from openprogram_lsp.store.checkpoints.deferred import DeferredBaseline, Leaf, Unrecordable
from openprogram_lsp.store.checkpoints.disk_check import modified_files
from openprogram_lsp.store.checkpoints.extras import EMPTY as EMPTY_EXTRAS
from openprogram_lsp.store.checkpoints.extras import (
    Extras,
    Unrecorded,
    changed_unrecorded,
    dir_changes,
)
from openprogram_lsp.store.checkpoints.fast import fast_stage
from openprogram_lsp.store.checkpoints.lock import TurnGuard, WorkspaceLock
from openprogram_lsp.store.checkpoints.meta import (
    CommitMeta,
    build_message,
    parse_message,
    to_checkpoint,
)
from openprogram_lsp.store.checkpoints.modes import default_perm, update_modes
from openprogram_lsp.store.checkpoints.objects import (
    TreeChange,
    commit_tree,
    diff_trees,
    read_object,
    write_commit,
    write_object,
)
from openprogram_lsp.store.checkpoints.pending import DIR as PENDING_DIR
from openprogram_lsp.store.checkpoints.pending import (
    Capture,
    Done,
    PendingTurn,
    capture,
    load,
)
from openprogram_lsp.store.checkpoints.results import CheckpointDiff, RestoreOutcome
from openprogram_lsp.store.checkpoints.shadow import ShadowRepo, workspace_key
from openprogram_lsp.store.checkpoints.stage import Stager, TooManyFiles
from openprogram_lsp.store.gitobj.batch import batched
from openprogram_lsp.store.gitobj.packwrite import PackWriter
from openprogram_lsp.store.gitobj.trees import EMPTY_TREE, TreeConflict, update_tree
from openprogram_lsp.store.owner import pid_alive
from openprogram_lsp.store.pack_maintenance import SMALL_PACKS, pack_count, repack_later

log = logging.getLogger(__name__)
Entries = list[Entry]
Checkpoints = list[Checkpoint]
Ids = list[str]
Changes = list[TreeChange]

# Past this many noted paths one status walk is cheaper than naming them all.
MAX_NOTED_PATHS = 5000
GC_INTERVAL = 600.0
"""Seconds between the garbage collections that follow background prunes."""
WALK_AFTER_EDIT = 0.01
"""Seconds the walk a turn's edit starts (``defer_baseline``) waits before it begins: that
edit's write runs first, not against the walk's first git processes (each spawned holding the
interpreter's lock) and its Python (the first edit of a server's first seconds took 3-4 ms
against 1 ms for the next one)."""
MAX_PACKS = 16
"""Packs (one per background prune, one per big walk) past which they are merged."""
DEFER_TURN_ENTRIES = stage_mod.BULK_ADD
"""Entries a workspace must hold for a turn's end not to wait for the first walk: a walk of
fewer is over in a moment, and the turn's checkpoint then comes with its result."""


@dataclass(slots=True, frozen=True)
class Prepared:
    """A walk staged ahead of the first checkpoint of a process (``prepare``): the head it was
    staged on, the tree it found and that tree's mode table."""

    head: str | None
    tree: str
    modes: dict[str, int]
    extras: Extras


def _ancestors(path: str) -> Iterator[str]:
    """``a/b/c`` -> ``a/b``, ``a``."""
    while path:
        path = posixpath.dirname(path)
        if path:
            yield path


def _with_perms(modes: dict[str, int], paths: Iterable[str],
                states: Mapping[str, tuple[str, Any] | None],
                perms: Mapping[str, int]) -> dict[str, int]:
    """``modes`` with each path's permission bits as ``states`` (git mode first, or None:
    absent) and ``perms`` give them: kept only where they differ from the mode's default."""
    out = dict(modes)
    for rel in paths:
        state, perm = states[rel], perms.get(rel)
        if state is None or perm is None or perm == default_perm(state[0]):
            out.pop(rel, None)
        else:
            out[rel] = perm
    return out


def epoch(iso: str) -> int:
    """Seconds since the epoch of an ISO-8601 UTC timestamp."""
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp())


class _Cancelled(Exception):
    """A ``prepare`` told to stop."""


class CheckpointStore:
    """All checkpoints of one workspace; thread-safe, and safe across processes."""

    def __init__(self, workspace: Path, *, home: Path,
                 config: CheckpointConfig | None = None) -> None:
        self.workspace = Path(workspace).resolve()
        if not self.workspace.is_dir():
            raise CheckpointError(f"workspace {workspace} is not a directory")
        self.config = config or CheckpointConfig()
        root = home / "checkpoints" / workspace_key(self.workspace)
        root.mkdir(parents=True, exist_ok=True)
        protect_dir(root.parent)
        self.repo = ShadowRepo(self.workspace, root, self.config)
        self.stager = Stager(self.repo)
        self.lock = WorkspaceLock.for_path(root / "lock", self.config.lock_timeout)
        self.guard = TurnGuard.for_path(root / "turn.lock")
        self.guard.prepare()
        self._noted: set[str] = set()
        self._scan_all = True  # the first checkpoint of a process always walks the tree
        self._all_noted = False  # a note said "anything may have changed" since the last walk
        self._noted_lock = threading.Lock()
        self._opened = False
        self._open_lock = threading.Lock()
        self._chain: Entries | None = None
        self._checked_head: str | None = None  # the last head ``head`` found whole
        self._counted: tuple[Entries, int, int] | None = None  # (chain list, its length, count)
        self._chain_head: str | None = None
        self._head_id: tuple[str, str] | None = None
        self._head_tree: tuple[str, str] | None = None
        self._head_modes: tuple[str, dict[str, int]] | None = None
        self._head_extras: tuple[str, Extras | None] | None = None
        self._seen_head: str | None = None
        self._stamp: tuple[int, int, int] | None = None
        self._disabled: str | None = None
        self._files: tuple[str, Ids] | None = None  # (tree, its file paths)
        self._last_gc: float | None = None
        self._packs: int | None = None  # packs on disk, counted once per merge
        self.progress: Progress | None = None
        """Called with (files done, files in all) while a big walk hashes files into a pack."""
        self._prepared: Prepared | None = None
        self._idle = threading.Event()  # cleared while ``prepare`` runs
        self._idle.set()
        self._listings: extras_mod.ListingCache = {}  # directories as the last walk read them
        self.buffers = BufferOverlay()
        """Paths recorded as an editor buffer's unsaved text (``record_buffer``)."""
        self._deferred: DeferredBaseline | None = None  # a baseline still to take (deferred.py)
        self._queue: list[PendingTurn] = []  # turn checkpoints still to commit (pending.py)
        self._queued = 0  # records written by this process (their order)
        self._settling = False
        self._stopped = False  # a ``prepare`` was cancelled (the server stops)
        self._many: bool | None = None  # more entries than DEFER_TURN_ENTRIES (counted once)
        self._recovered = False  # records of ended processes taken up (``_settle_pending``)
        self._settler: threading.Thread | None = None

    @property
    def root(self) -> Path:
        """The store's directory under ``<home>/checkpoints``."""
        return self.repo.root

    # -- Checkpointer port ---------------------------------------------------------------

    def note_paths(self, paths: Iterable[str]) -> None:
        """Record paths that may have changed; nothing (or the root) means "anything may have"."""
        items = list(paths)
        with self._noted_lock:
            if not items:
                self._scan_all = True
                self._all_noted = True
                return
            for item in items:
                rel = self._relative(item)
                if rel is None:
                    continue
                if rel == ".":
                    self._scan_all = True
                    self._all_noted = True
                    continue
                parts = rel.split("/")
                if ".git" in parts:
                    at = parts.index(".git")
                    if at > 0:  # inside a nested repository: note its root, which stays excluded
                        self._noted.add("/".join(parts[:at]))
                    continue
                self._noted.add(rel)
            if len(self._noted) > MAX_NOTED_PATHS:
                self._scan_all = True
                self._all_noted = True
                self._noted.clear()

    def modified_on_disk(self, paths: tuple[str, ...] | None,
                         known: Iterable[str] = ()) -> list[str]:
        """Recorded files (under ``paths``) that differ on disk from what the store last read
        (``known``: paths the caller re-reads anyway). A few files are compared with the head
        tree in process (``disk_check``), anything else by ``git diff-files``."""
        with self.lock:
            head = self.repo.head()
            if head != self._seen_head or self.repo.index_stamp() != self._stamp:
                return []  # another process moved on: the commit that follows walks the tree
            if paths and head is not None:
                skip = set(known)
                quick = modified_files(self.workspace, self.repo.odb, commit_tree(self.repo, head),
                                       [p for p in paths if p not in skip])
                if quick is not None:
                    return quick
            out = self.stager.modified(paths)
            # the index changed by our own refresh (stat data only), not by another process:
            # the commit that follows need not walk the tree for it
            self._stamp = self.repo.index_stamp()
            return out

    def note_all(self) -> None:
        """Make the next checkpoint walk the whole tree (after shell commands)."""
        self.note_paths(())

    def prepare(self, progress: Progress | None = None,
                cancel: threading.Event | None = None) -> bool:
        """Do the walk the first checkpoint of this process needs, ahead of it (the server
        starts it in the background when it learns the workspace): for a new store the whole
        tree is hashed into one pack. The checkpoint that follows then stages only what was
        noted since, on top of what this found; a checkpoint asked for meanwhile waits for it
        (``wait_prepared``). ``progress`` gets (files done, files in all) while files are
        hashed. ``cancel``, once set, stops it at its next report of hashed files (a server
        shutting down): nothing is kept and the next checkpoint walks as if it never ran.
        Returns whether it walked (False: this process walked already, or it was cancelled)."""

        def watched(done: int, total: int) -> None:
            if cancel is not None and cancel.is_set():
                raise _Cancelled
            if progress is not None:
                progress(done, total)

        if cancel is not None and cancel.is_set():
            return False
        self._idle.clear()
        try:
            with self.lock:
                self._open()
                with self._noted_lock:
                    if self._disabled is not None or not self._scan_all:
                        return False
                    noted, self._noted = self._noted, set()
                    self._scan_all = False
                    self._all_noted = False
                head = self.repo.head()
                if head != self._seen_head or self.repo.index_stamp() != self._stamp:
                    self.stager.forget()
                self.progress, before = watched, self.progress
                try:
                    parent_tree = self._tree_of_head(head)
                    tree, changes, modes = self._stage(parent_tree, noted, True)
                    parent_modes = self._modes_of(head)
                    if modes is None:
                        modes = update_modes(str(self.workspace), parent_modes,
                                             self._files_of(tree, parent_tree, changes))
                    extras = self._scan_extras(tree, parent_tree, changes)
                except BaseException as exc:
                    self._staging_failed(noted, exc)
                    raise
                finally:
                    self.progress = before
                self._seen_head = head
                self._stamp = self.repo.index_stamp()
                if head is None or tree != parent_tree or modes != parent_modes \
                        or extras != self._extras_of(head):
                    self._prepared = Prepared(head, tree, modes, extras)
                return True
        except _Cancelled:
            self._stopped = True  # (a server shutting down: pending checkpoints stay recorded)
            return False
        finally:
            self._idle.set()

    def _staging_failed(self, noted: set[str], exc: BaseException) -> None:
        """A walk that did not finish: what it took is noted again, the next one scans all
        (and too many files turns checkpoints off for the workspace)."""
        with self._noted_lock:
            self._noted |= noted
            self._scan_all = True
        self.stager.forget()
        if isinstance(exc, TooManyFiles):
            self._disabled = f"checkpoints are off for this workspace: {exc.message}"

    def wait_prepared(self, timeout: float | None = None) -> bool:
        """Wait for a running ``prepare`` of this process; False on timeout."""
        return self._idle.wait(timeout)

    def _wait_idle(self) -> None:
        if not self.lock.held_here():  # (the thread running ``prepare`` holds the lock)
            self._idle.wait()

    def ensure_baseline(self, session_id: str) -> Checkpoint | None:
        """Take a session's baseline before its first edit (None if it has a checkpoint).

        Called before each turn's first edit, it also records changes made outside the agent
        since the last checkpoint (noted by the file watcher, or found by the walk after a
        restart) as a baseline of their own, so they are not attributed to the coming turn.
        A ``prepare`` still running is waited for (however long the first walk of a big tree
        takes), then built on.
        """
        self._wait_idle()
        with self.lock:
            self._open()
            if self._deferred is not None and self._deferred.session_id == session_id:
                return self._settle_deferred()
            for entry in self._entries():
                cp = entry.checkpoint
                # any checkpoint of the session: its baseline may have been pruned since, and
                # a second, empty one would take a slot retention has to free again
                if cp is not None and cp.session_id == session_id:
                    if not self._pending():
                        return None
                    return self._commit("baseline", session_id, None,
                                        "Changes made outside the agent before this turn")
            return self._commit("baseline", session_id, None,
                                "Baseline before the session's first edit", allow_empty=True)

    def defer_baseline(self, session_id: str) -> bool:
        """Take the session's baseline later, with the turn's checkpoint, instead of before
        the turn's first edit: the edit neither waits for the first walk (one runs, or is
        still to run: it is started in the background then) nor makes a commit on its way.
        True when deferred: each write of the turn must then be announced first
        (``record_before``); the next checkpoint (the turn's, or ``ensure_baseline``) takes
        the baseline first, built from the walk (or the index) with the recorded paths as they
        were (``deferred.py``). False for another session's while one is deferred, and when
        checkpoints are off."""
        with self._noted_lock:
            if self._deferred is not None:
                return self._deferred.session_id == session_id
            if self._disabled is not None or self.lock.held_here():
                return False
            walking = not self._idle.is_set()
            due = self._scan_all and self._prepared is None
            self._deferred = DeferredBaseline(session_id)
        if due and not walking:  # nobody walks yet (the edit came before the server's warm-up)
            self._idle.clear()  # the turn's checkpoint waits for it from now on
            # (``Thread.start`` would wait until the new thread runs: on a busy machine the
            # edit waited milliseconds for the kernel to schedule it; a daemon either way)
            _thread.start_new_thread(self._walk_in_background, ())
        return True

    def _walk_in_background(self) -> None:
        try:
            time.sleep(WALK_AFTER_EDIT)
            self.prepare(self.progress)
        except Exception:  # the checkpoint that settles the baseline walks instead
            log.warning("the first checkpoint walk of %s failed", self.workspace, exc_info=True)
        finally:
            self._idle.set()

    def record_before(self, session_id: str, paths: Iterable[str]) -> bool:
        """Record ``paths`` as they are now, before the session's turn writes them, while its
        baseline is deferred (True also when it is not, or no longer, deferred). False when a
        path cannot be recorded: the caller takes the baseline now (``ensure_baseline``)."""
        with self._noted_lock:
            deferred = self._deferred
            if deferred is None or deferred.session_id != session_id:
                return True
            try:
                for path in paths:
                    rel = self._relative(path)
                    if rel is None or rel == "." or ".git" in rel.split("/"):
                        return False
                    deferred.record(str(self.workspace), rel, self.config.max_file_bytes)
            except (Unrecordable, OSError) as exc:
                log.info("baseline of %s taken now: %s", self.workspace, exc)
                return False
            return True

    def _settle_deferred(self) -> Checkpoint | None:
        """Commit a deferred baseline (under the lock, the walk done): the walk's tree with
        the noted paths staged and the recorded paths as they were before the turn."""
        self._settle_pending()
        with self._noted_lock:
            deferred, self._deferred = self._deferred, None
        if deferred is None:
            return None
        try:
            return self._commit_baseline(deferred)
        finally:  # the turn's writes: its own checkpoint stages them from disk
            self.note_paths(deferred.before)

    def _with_before(self, tree: str, deferred: DeferredBaseline) -> tuple[str, set[str]]:
        """``tree`` with each recorded path as it was before the turn, and the index told the
        same; the paths set (nested repositories, paths beyond a symlink and ignored files are
        not recorded in checkpoints, so not set back either)."""
        return self._overlay(tree, deferred.leaves(self._blob_writer()), "baseline")

    def _overlay(self, tree: str, recorded: dict[str, Leaf | None],
                 what: str) -> tuple[str, set[str]]:
        """``tree`` with each path set to its leaf (None: absent), and the index told the
        same; the paths set."""
        leaves = {rel: leaf for rel, leaf in recorded.items()
                  if not self.stager.in_nested(rel) and not self.stager.beyond_symlink(rel)}
        tracked = self.stager.tracked
        # only a content set back can bring an ignored file in: a path the turn made (None
        # before) is removed, which changes nothing where git ignores it (no git run for it)
        untracked = sorted(r for r, leaf in leaves.items()
                           if leaf is not None and (tracked is None or r not in tracked))
        for rel in self.stager.ignored(untracked) if untracked else ():
            leaves.pop(rel, None)
        try:
            tree = update_tree(self.repo.odb, tree, leaves)
        except TreeConflict:  # a directory where a file was, or the reverse: path by path
            for rel in list(leaves):
                try:
                    tree = update_tree(self.repo.odb, tree, {rel: leaves[rel]})
                except TreeConflict:
                    log.warning("%s of %s: %s left as the walk found it", what,
                                self.workspace, rel)
                    del leaves[rel]
        self.stager.defer(leaves)
        if self.stager.tracked is not None:
            for rel, leaf in leaves.items():
                if leaf is None:
                    self.stager.tracked.discard(rel)
                else:
                    self.stager.tracked.add(rel)
        return tree, set(leaves)

    def _captured_extras(self, extras: Extras, captured: Capture) -> Extras:
        """``extras`` with the captured paths as they were: a present path's directories are
        not empty and it is recorded; an absent one may have left its directory empty."""
        dirs, files = set(extras.dirs), dict(extras.files)
        for rel, leaf in captured.leaves.items():
            dirs.discard(rel)
            files.pop(rel, None)
            if leaf is not None:
                dirs.difference_update(_ancestors(rel))
        empty = [d for d in captured.empty_dirs
                 if not self.stager.in_nested(d) and not self.stager.beyond_symlink(d)]
        if empty:
            dirs |= set(empty) - self.stager.ignored(sorted(empty))
        return Extras(frozenset(dirs), files)

    def baseline_ready(self, session_id: str) -> bool:
        """True when ``ensure_baseline`` would return None: no ``prepare`` runs, no change
        made outside the agent waits, and the chain this process knows holds a checkpoint of
        the session. Reads only what this process holds (no lock, no file), so a turn's
        first edit does not hand a no-op to a thread; anything else says False."""
        entries = self._chain  # one reference read
        if entries is None or not self._idle.is_set() or self._deferred is not None \
                or self._queue or self._pending():
            return False
        return any(e.checkpoint is not None and e.checkpoint.session_id == session_id
                   for e in entries)

    def commit_turn(self, session_id: str, turn_id: str, message: str,
                    *, full_scan: bool = False) -> Checkpoint | None:
        """Checkpoint a turn's changes; None when the workspace did not change."""
        self._wait_idle()
        with self.lock:
            self._open()
            return self._commit("turn", session_id, turn_id, message, full=full_scan)

    def defer_turn(self, session_id: str, turn_id: str, message: str, paths: Iterable[str],
                   done: Done | None = None) -> str | None:
        """End a turn without waiting for the first walk of the workspace, when one runs: the
        turn's paths and every path noted so far are captured as they are now (their blobs
        written, a record of the pending checkpoint kept under ``pending/``), and the turn's
        baseline and checkpoint are committed from that capture once the walk is done
        (``pending.py``). Returns the id the checkpoint will have (``done`` gets it then, or
        None if it could not be committed), or None when nothing was deferred: no walk runs,
        the turn may have changed anything, or one of its paths cannot be captured (a
        directory, a file over ``max_file_bytes``); the caller then commits it now
        (``commit_turn``)."""
        if self._idle.is_set() or self.lock.held_here() or self._disabled is not None \
                or not self._many_entries():
            return None
        own: set[str] = set()
        for path in paths:
            rel = self._relative(path)
            if rel is None or rel == "." or ".git" in rel.split("/"):
                return None
            own.add(rel)
        with self._noted_lock:  # held while capturing: a commit never sees half of it
            deferred = self._deferred
            if self._all_noted or (deferred is not None and deferred.session_id != session_id):
                return None
            try:
                self._open()

                def write(data: bytes) -> str:
                    return write_object(self.repo, "blob", data)

                with batched(self.repo.odb):  # one pack, kept whatever a prune does later
                    got, left = capture(str(self.workspace), own, self._noted - own,
                                        self.config.max_file_bytes, write)
                    if deferred is not None:
                        deferred.leaves(write)
            except (Unrecordable, OSError, CheckpointError) as exc:
                log.info("turn %s waits for the walk of %s: %s", turn_id, self.workspace, exc)
                return None
            item = PendingTurn(new_id("c"), session_id, turn_id, message, now_iso(), got,
                               deferred, done=done)
            self._queued += 1
            try:
                item.save(self.root / PENDING_DIR, self._queued)
            except OSError as exc:  # kept in memory: lost if the process ends before the walk
                log.warning("pending checkpoint of turn %s not recorded on disk: %s", turn_id,
                            exc)
            self._noted = left
            self._deferred = None
            self._queue.append(item)
        self._start_settler()
        return item.checkpoint_id

    def _many_entries(self) -> bool:
        """Whether the workspace holds more than ``DEFER_TURN_ENTRIES`` files and directories
        (counted once, and only that far: a few milliseconds)."""
        if self._many is None:
            count, stack = 0, [str(self.workspace)]
            while stack and count <= DEFER_TURN_ENTRIES:
                try:
                    with os.scandir(stack.pop()) as entries:
                        for entry in entries:
                            if entry.name == ".git":
                                continue
                            count += 1
                            if entry.is_dir(follow_symlinks=False):
                                stack.append(entry.path)
                except OSError:
                    continue
            self._many = count > DEFER_TURN_ENTRIES
        return self._many

    def _start_settler(self) -> None:
        """A thread that commits the pending turn checkpoints once the walk is done."""
        with self._open_lock:
            if self._settler is not None and self._settler.is_alive():
                return
            self._settler = threading.Thread(target=self._settle_when_idle, daemon=True,
                                             name="openprogram-pending-checkpoints")
            self._settler.start()

    def _settle_when_idle(self) -> None:
        for attempt in range(3):  # (the lock's timeout: another process held it that long)
            self._idle.wait()
            if not self._queue or self._stopped:
                return  # stopped: no walk at shutdown, the next process commits the records
            try:
                with self.lock:
                    self._settle_pending()
            except Exception:
                log.warning("pending checkpoints of %s not committed yet (attempt %d)",
                            self.workspace, attempt + 1, exc_info=True)

    def wait_pending(self, timeout: float | None = None) -> bool:
        """Wait until the pending turn checkpoints are committed; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._idle.wait(timeout):
            return False
        settler = self._settler
        if settler is not None:
            settler.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not self._queue

    def _settle_pending(self) -> None:
        """Commit the pending turn checkpoints in order (under the lock, the walk done): each
        turn's deferred baseline, then its checkpoint, from the states captured at its end on
        top of the walk's tree. A path a later turn recorded before writing it gets that
        before-state in the earlier checkpoints (the walk may have read it after the write)."""
        if self._settling:
            return
        if not self._recovered:
            self._recovered = True
            self._recover_pending()
        if not self._queue:
            return
        self._settling = True
        try:
            with self._noted_lock:
                items = list(self._queue)
                current = self._deferred
            write = self._blob_writer()
            earliest: dict[str, Leaf | None] = {}
            earliest_perms: dict[str, int] = {}
            for base in [i.baseline for i in items] + [current]:
                if base is None:
                    continue
                for rel, leaf in base.leaves(write).items():
                    if rel not in earliest:
                        earliest[rel] = leaf
                        if rel in base.perms:
                            earliest_perms[rel] = base.perms[rel]
            seen: set[str] = set()
            done_ids = {e.checkpoint.id for e in self._entries() if e.checkpoint is not None}
            for item in items:
                cap = item.capture
                leaves = {p: v for p, v in earliest.items() if p not in seen}
                perms = {p: v for p, v in earliest_perms.items() if p not in seen}
                leaves.update(cap.leaves)
                perms.update(cap.perms)
                checkpoint: Checkpoint | None = None
                try:
                    # (one a process killed between its commit and its record's removal
                    # committed already)
                    if item.checkpoint_id not in done_ids:
                        checkpoint = self._commit_pending(
                            item, Capture(leaves, perms, cap.empty_dirs))
                except Exception:
                    log.warning("pending checkpoint %s of turn %s not committed: its changes "
                                "go to the next checkpoint", item.checkpoint_id, item.turn_id,
                                exc_info=True)
                    self.note_paths(cap.leaves)
                seen |= cap.leaves.keys()
                with self._noted_lock:
                    self._queue.remove(item)
                item.drop()
                if item.done is not None:
                    try:
                        item.done(checkpoint)
                    except Exception:
                        log.exception("announcing checkpoint %s failed", item.checkpoint_id)
            # a captured path may have changed since its capture, and the walk may have taken
            # that note: the next checkpoint reads them again (unchanged ones cost a hash)
            self.note_paths(seen)
        finally:
            self._settling = False

    def _commit_pending(self, item: PendingTurn, at: Capture) -> Checkpoint | None:
        """A pending turn's baseline (when deferred) and checkpoint, from ``at``."""
        if item.baseline is not None:
            self._commit_baseline(item.baseline, captured=at, created=item.created_at)
        return self._commit("turn", item.session_id, item.turn_id, item.message,
                            allow_empty=True, captured=at, checkpoint_id=item.checkpoint_id,
                            created=item.created_at)

    def _blob_writer(self) -> Callable[[bytes], str]:
        def write(data: bytes) -> str:
            return write_object(self.repo, "blob", data)
        return write

    def _commit_baseline(self, deferred: DeferredBaseline, *, captured: Capture | None = None,
                         created: str | None = None) -> Checkpoint | None:
        """Commit a deferred baseline: "before the session's first edit" for a session with no
        checkpoint yet, else "changes made outside the agent" (None when there were none)."""
        sid = deferred.session_id
        seen = any(e.checkpoint is not None and e.checkpoint.session_id == sid
                   for e in self._entries())
        if seen:
            return self._commit("baseline", sid, None,
                                "Changes made outside the agent before this turn",
                                deferred=deferred, captured=captured, created=created)
        return self._commit("baseline", sid, None, "Baseline before the session's first edit",
                            allow_empty=True, deferred=deferred, captured=captured,
                            created=created)

    def _recover_pending(self) -> None:
        """Take up the pending checkpoints of processes that are gone (committed after this
        process's first walk, before anything else)."""
        found = load(self.root / PENDING_DIR, pid_alive)
        if found:
            log.info("%d pending checkpoint(s) of an ended process to commit in %s", len(found),
                     self.workspace)
            with self._noted_lock:
                self._queue[:0] = found

    @contextmanager
    def turn_lock(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the workspace for a whole turn so another session's edits cannot interleave
        (threads and processes; not re-entrant)."""
        self.guard.acquire(timeout)
        try:
            yield
        finally:
            self.guard.release()

    @asynccontextmanager
    async def turn_guard(self, timeout: float | None = None) -> AsyncIterator[None]:
        """``turn_lock`` for coroutines: turns sharing one event loop wait without blocking it."""
        await self.guard.acquire_async(timeout)
        try:
            yield
        finally:
            self.guard.release()

    def head(self) -> str | None:
        """The newest checkpoint commit, for a reader that does not hold the store's lock.

        The ref is written in place (``ShadowRepo.set_head``), so a read racing the write
        could see a mix of the old and the new id; such a value names no object of the
        repository, and is read again under the lock (no writer then)."""
        head = self.repo.head()
        if head is None or head == self._checked_head:  # (a torn id never equals a whole one)
            return head
        if not self.repo.odb.has(head):
            with self.lock:
                head = self.repo.head()
        self._checked_head = head
        return head

    # -- review --------------------------------------------------------------------------

    def list(self, session_id: str | None = None) -> Checkpoints:
        """Checkpoints newest first, optionally only one session's; a turn whose undo stands
        carries ``undone_by``."""
        self._wait_idle()
        with self.lock:
            self._open()
            self._settle_deferred()
            entries = self._entries()
            undone = undone_turns(entries)
            return [marked(e.checkpoint, undone) for e in entries if e.checkpoint is not None
                    and (session_id is None or e.checkpoint.session_id == session_id)]

    def get(self, checkpoint_id: str) -> Checkpoint:
        """One checkpoint by id; raises NotFound."""
        checkpoint = self._entry(checkpoint_id).checkpoint
        assert checkpoint is not None
        return checkpoint

    def diff(self, checkpoint_id: str, path: str | None = None) -> CheckpointDiff:
        """A checkpoint against its parent: the unified diff and each file's change."""
        from openprogram_lsp.store.checkpoints.diff import checkpoint_diff

        self._wait_idle()
        with self.lock:
            self._settle_deferred()
            entry = self._entry(checkpoint_id)
            rel = self._checked_relative(path) if path else None
            full_id = entry.checkpoint.id if entry.checkpoint is not None else checkpoint_id
            return checkpoint_diff(self.repo, full_id, entry.commit, entry.parent, rel)

    def compare(self, from_id: str, to_id: str, path: str | None = None) -> CheckpointDiff:
        """From one checkpoint's files to another's (any two of the chain)."""
        from openprogram_lsp.store.checkpoints.diff import checkpoint_diff

        self._wait_idle()
        with self.lock:
            self._settle_deferred()
            old, new = self._entry(from_id), self._entry(to_id)
            rel = self._checked_relative(path) if path else None
            return checkpoint_diff(self.repo, to_id, new.commit, old.commit, rel)

    def tree_of(self, checkpoint_id: str) -> str:
        """The tree id of a checkpoint (equal trees: equal files)."""
        return commit_tree(self.repo, self._entry(checkpoint_id).commit)

    def head_tree(self) -> str | None:
        """The tree of the newest checkpoint: the workspace as last recorded."""
        self._wait_idle()
        with self.lock:
            self._open()
            self._settle_pending()
            head = self.repo.head()
            return self._tree_of_head(head) if head is not None else None

    # -- restore and retention -----------------------------------------------------------

    def restore(self, checkpoint_id: str, paths: Iterable[str] | None = None,
                *, session_id: str | None = None, full_scan: bool = False,
                wait: float = 0.0, undoes: str | None = None,
                buffers: BufferSink | None = None, keep: Iterable[str] = ()) -> RestoreOutcome:
        """Put files back as a checkpoint had them; undo by restoring ``safety_checkpoint_id``.

        Holds the workspace's turn guard (this process's turns and every other process's), so
        it never reverts a running turn's edits: SessionBusy when a turn still holds it after
        ``wait`` seconds.

        ``changes`` (each file written and how) is ready for a ``file.changed`` event.
        ``buffers``: the editor's open documents; files with unsaved changes there are
        recorded and restored as those buffers (``buffers.py``). ``keep``: files left as they
        are (named in ``skipped``).
        """
        from openprogram_lsp.store.checkpoints.restore import restore_checkpoint

        self._wait_idle()
        try:
            self.guard.acquire(wait)
        except CheckpointError:
            raise SessionBusy(f"a turn of {self.guard.holder()} is running in this workspace; "
                              "cancel it or wait for it before restoring") from None
        try:
            return restore_checkpoint(self, checkpoint_id, paths, session_id=session_id,
                                      full_scan=full_scan, undoes=undoes, buffers=buffers,
                                      keep=keep)
        finally:
            self.guard.release()

    def undo(self, checkpoint_id: str, *, session_id: str | None = None,
             buffers: BufferSink | None = None) -> RestoreOutcome:
        """Put the files a turn's checkpoint changed back as they were before that turn.

        One restore (so one safety checkpoint: undoable) of the checkpoint before it, limited
        to the turn's files; later changes to other files stay. Returns the restore's outcome
        with ``undone_checkpoint_id`` and ``restored_from_checkpoint_id``; the turn is listed
        with ``undone_by`` until that restore is itself undone (see ``undone_turns``).
        """
        self._wait_idle()
        with self.lock:
            self._open()
            entry = self._entry(checkpoint_id)
            cp = entry.checkpoint
            if cp is None or cp.kind != "turn":
                kind = cp.kind if cp is not None else "unknown"
                raise CheckpointError(f"checkpoint {checkpoint_id} is a {kind} checkpoint, not "
                                      "a turn's; undo takes the checkpoint a turn created")
            if entry.parent is None or cp.parent_id is None:
                raise CheckpointError(f"checkpoint {cp.id} has no earlier state to go back to")
            paths = [c.path for c in diff_trees(self.repo, commit_tree(self.repo, entry.parent),
                                                commit_tree(self.repo, entry.commit))]
            # and what the tree cannot show: exact modes, empty directories, unrecorded files
            was, now = self._modes_of(entry.parent), self._modes_of(entry.commit)
            paths += [p for p in was.keys() | now.keys() if was.get(p) != now.get(p)]
            before, after = self._extras_of(entry.parent), self._extras_of(entry.commit)
            if before is not None and after is not None:
                paths += [p.rstrip("/") for _s, p in dir_changes(before, after)]
                paths += changed_unrecorded(before, after)
        if not paths:
            raise CheckpointError(f"turn checkpoint {cp.id} changed no files; nothing to undo")
        out = self.restore(cp.parent_id, paths, session_id=session_id, undoes=cp.id,
                           buffers=buffers)
        return out.but(undone_checkpoint_id=cp.id, restored_from_checkpoint_id=cp.parent_id)

    def restore_hunk(self, checkpoint_id: str, path: str, hunk: int,
                     *, session_id: str | None = None,
                     buffers: BufferSink | None = None) -> RestoreOutcome:
        """Undo one hunk (``files[].hunks[hunk]`` of the diff) in the file as it is now (in
        its editor buffer while that has unsaved changes, with ``buffers``)."""
        from openprogram_lsp.store.checkpoints.hunks import restore_hunk

        self._wait_idle()
        return restore_hunk(self, checkpoint_id, path, hunk, session_id=session_id,
                            buffers=buffers)

    def prune(self, max_count: int | None = None, max_age_days: float | None = None,
              keep_ids: Iterable[str] = (), *, force: bool = False,
              gc: bool = True) -> Ids:
        """Drop old checkpoints (never ``keep_ids`` unless ``force``); returns dropped ids."""
        from openprogram_lsp.store.checkpoints.retention import prune_chain

        self._wait_idle()
        with self.lock:
            self._open()
            count = self.config.max_count if max_count is None else max_count
            age = self.config.max_age_days if max_age_days is None else max_age_days
            dropped = prune_chain(self.repo, self._entries(), count, age, set(keep_ids),
                                  force=force, gc=gc)
            self._chain = None
            self._head_id = None
            if self._seen_head == self._chain_head:  # the rewrite is ours: nothing is stale
                self._seen_head = self.repo.head()
            return dropped

    def retention_may_be_due(self) -> bool:
        """False when the chain this process last saw holds fewer checkpoints past the count
        limit than a prune waits for (a tenth of the limit) and its oldest is younger than the
        age limit: nothing would be dropped, so a turn asks for no prune (a chain not cached,
        or grown by another process since, says True; the prune itself then decides)."""
        from openprogram_lsp.store.checkpoints.retention import created_at

        entries = self._chain  # one reference read: no lock
        if entries is None or self._chain_head != self._seen_head:
            return True
        count, age = self.config.max_count, self.config.max_age_days
        if count is not None:
            margin = max(1, count // 10)  # what prune_if_due waits for, as below
            if self._checkpoint_count(entries) - max(count, 1) >= margin:
                return True
        if age is None:
            return False
        oldest = next((e.checkpoint for e in reversed(entries) if e.checkpoint is not None),
                      None)
        if oldest is None:
            return False
        created = created_at(oldest.created_at)
        return created is None or created < datetime.now(UTC) - timedelta(days=age)

    def _checkpoint_count(self, entries: Entries) -> int:
        """How many entries of the cached chain are checkpoints, counted once per chain list:
        the list only grows at its front by ``_commit``, one checkpoint per entry."""
        held = self._counted
        if held is not None and held[0] is entries and held[1] <= len(entries):
            count = held[2] + len(entries) - held[1]
        else:
            count = sum(1 for e in entries if e.checkpoint is not None)
        self._counted = (entries, len(entries), count)
        return count

    def prune_if_due(self, keep_ids: Iterable[str] | Callable[[], Iterable[str]] = ()) -> Ids:
        """``prune()`` with the configured limits once a margin (a tenth of the count) of
        checkpoints can go, down to the limits: the chain is rewritten once per many turns,
        not on every one.

        Meant for a background thread: the store's lock is held only to read the chain and to
        move the head. The rewritten chain (and its listing) is built without it; checkpoints
        committed meanwhile are re-committed on top before the head moves. Leftover loose
        objects are removed afterwards, also without the lock.

        ``keep_ids`` may be a function, called only when something is due (collecting the ids
        that sessions reference can be costly).
        """
        from openprogram_lsp.store.checkpoints.retention import (
            choose_drops,
            commits_since,
            dropped_ids,
            replay,
            rewrite_chain,
        )

        count, age = self.config.max_count, self.config.max_age_days
        margin = 1 if count is None else max(1, count // 10)

        def drops_due(entries: Entries, keep: set[str]) -> set[str]:
            drops = choose_drops(entries, count, age, keep, force=False)
            if len(drops) >= margin or choose_drops(entries, None, age, keep, force=False):
                return drops
            return set()

        self._wait_idle()
        with self.lock:
            self._open()
            self._settle_pending()
            head = self.repo.head()
            cached = self._chain if self._chain_head == head else None
        # a chain not cached is listed without the lock (its commits never change; the head
        # is compared and swapped at the end)
        entries = list(cached) if cached is not None else \
            load_chain(self.repo, head) if head is not None else []
        if not entries or not drops_due(entries, set()):
            return []
        drops = drops_due(entries, set(keep_ids() if callable(keep_ids) else keep_ids))
        if not drops:
            return []
        old_head = entries[0].commit
        pack = PackWriter(self.repo.odb)  # one pack instead of a loose file per re-commit
        try:
            new_head = rewrite_chain(self.repo, entries, drops, pack)
            pack.finish()
        except BaseException:
            pack.abort()
            raise
        chain = load_chain(self.repo, new_head)
        with self.lock:
            head = self.repo.head()
            if head is None:
                return []
            if head != old_head:  # checkpoints committed meanwhile go on top
                added = commits_since(self.repo, head, old_head)
                if added is None:  # another process rewrote the chain: leave it be
                    return []
                new_head = replay(self.repo, added, new_head)
            self.repo.set_head(new_head, head)
            ours = self._seen_head == head
            self._chain, self._chain_head = (chain, new_head) if head == old_head else (None, None)
            # the new head re-commits the old one (same tree, message and modes): what the
            # next turn's commit reads of its parent stays cached, so it lists no chain
            self._head_id = (new_head, self._head_id[1]) \
                if self._head_id is not None and self._head_id[0] == head else None
            if self._head_tree is not None and self._head_tree[0] == head:
                self._head_tree = (new_head, self._head_tree[1])
            if self._head_modes is not None and self._head_modes[0] == head:
                self._head_modes = (new_head, self._head_modes[1])
            if self._head_extras is not None and self._head_extras[0] == head:
                self._head_extras = (new_head, self._head_extras[1])
            if ours:  # the rewrite is ours: nothing is stale
                self._seen_head = new_head
        self._collect_garbage()
        return dropped_ids(entries, drops)

    def _collect_garbage(self) -> None:
        """After a background prune, at most every ``GC_INTERVAL`` seconds: remove unreachable
        loose objects older than an hour (never one a running checkpoint is about to
        reference: writes freshen an object they find, so no lock is needed) and merge the
        packs once there are many (loose objects a checkpoint is writing stay loose)."""
        now = time.monotonic()
        if self._last_gc is not None and now - self._last_gc < GC_INTERVAL:
            return
        self._last_gc = now
        # the head read here is named too: git reads the ref without the store's lock, and a
        # read racing its in-place write (a mix of two ids) would count as no ref at all
        head = self.head()
        self.repo.git_rc(["prune", "--expire=1.hour.ago", *([head] if head else [])])
        if len(list((self.repo.git_dir / "objects" / "pack").glob("pack-*.pack"))) > MAX_PACKS:
            self.repo.git_rc(["repack", "-a", "-d", "-q", "--keep-unreachable"])
            self.repo.odb.refresh()

    # -- internals used by restore / retention ------------------------------------------

    def _pending(self) -> bool:
        with self._noted_lock:
            if self._scan_all or bool(self._noted) or self._prepared is not None \
                    or bool(self._queue):
                return True
        return self.buffers.changed()

    def _open(self) -> None:
        """Make the private repository if missing (once; callable from any thread: a
        deferred baseline's blobs are written while the walk holds the store's lock)."""
        if self._opened:
            return
        with self._open_lock:
            if not self._opened:
                self.repo.ensure()
                self._opened = True

    def _entries(self) -> Entries:
        self._settle_pending()  # (nothing to do, or the walk is done: the lock is ours)
        head = self.repo.head()
        if self._chain is None or self._chain_head != head:
            self._chain = load_chain(self.repo)
            self._chain_head = head
        return self._chain

    def _entry(self, checkpoint_id: str) -> Entry:
        self._wait_idle()  # a pending checkpoint is committed after the walk
        with self.lock:
            self._open()
            entries = [e for e in self._entries() if e.checkpoint is not None]
            for entry in entries:
                if entry.checkpoint is not None and entry.checkpoint.id == checkpoint_id:
                    return entry
            if len(checkpoint_id) >= 6:  # a unique prefix, as shown by `checkpoints`
                hits = [e for e in entries
                        if e.checkpoint is not None and e.checkpoint.id.startswith(checkpoint_id)]
                if len(hits) == 1:
                    return hits[0]
                if len(hits) > 1:
                    raise NotFound(f"checkpoint id prefix {checkpoint_id!r} is ambiguous "
                                   f"({len(hits)} checkpoints)")
        raise NotFound(f"unknown checkpoint id {checkpoint_id!r}")

    def _head_checkpoint_id(self, head: str) -> str | None:
        if self._chain is not None and self._chain_head == head:
            return self._chain[0].checkpoint.id if self._chain[0].checkpoint else None
        if self._head_id is not None and self._head_id[0] == head:
            return self._head_id[1]
        for entry in self._entries():
            return entry.meta.id if entry.meta else None
        return None

    def _commit(self, kind: str, session_id: str | None, turn_id: str | None, message: str,
                *, full: bool = False, allow_empty: bool = False,
                restored_from: str | None = None, undo: str | None = None,
                undoes: str | None = None, buffer_only: str | None = None,
                deferred: DeferredBaseline | None = None, captured: Capture | None = None,
                checkpoint_id: str | None = None, created: str | None = None
                ) -> Checkpoint | None:
        """Stage, and if anything changed (or ``allow_empty``) commit one checkpoint.

        ``buffer_only``: record only that path's unsaved buffer text, leaving everything else
        noted for the next checkpoint (so a turn's earlier edits stay the turn's).
        ``deferred``: a deferred baseline's recorded paths, set back to their before-states
        (a deferred baseline still to take is taken before any other checkpoint).
        ``captured``: paths as a pending turn captured them, set in the tree instead of read
        from disk (what was noted stays noted); ``checkpoint_id`` and ``created`` then the
        ones the pending turn announced (pending checkpoints are committed first)."""
        if self._disabled is not None:
            raise CheckpointError(self._disabled)
        if captured is None:
            self._settle_pending()
        if deferred is None and captured is None and self._deferred is not None:
            self._settle_deferred()
        head = self.repo.head()
        stamp = self.repo.index_stamp()
        # Another process committed or touched the index: what this one knows is stale.
        foreign = head != self._seen_head or stamp != self._stamp
        if foreign:
            self.stager.forget()
        prepared, self._prepared = self._prepared, None
        texts, dropped = self.buffers.take() if captured is None else ({}, [])
        if captured is not None:  # the noted paths are what changed after the capture
            with self._noted_lock:
                if prepared is not None and (full or self._scan_all or foreign
                                             or prepared.head != head):
                    prepared = None
                walk = prepared is None and (full or self._scan_all or foreign or head is None)
                self._scan_all = False
                self._all_noted = False
            noted: set[str] = set()
        elif buffer_only is not None and head is not None:
            texts = {p: t for p, t in texts.items() if p == buffer_only}
            self._prepared, prepared = prepared, None  # kept for the next checkpoint
            with self._noted_lock:
                self._noted |= set(dropped)
                self._scan_all |= foreign
            noted, walk = set(), False
        else:
            with self._noted_lock:
                noted, self._noted = self._noted | set(dropped), set()
                if prepared is not None and (full or self._scan_all or foreign
                                             or prepared.head != head):
                    prepared = None  # stale: walk as if there had been none
                walk = prepared is None and (full or self._scan_all or foreign or head is None)
                self._scan_all = False
                self._all_noted = False
        # the checkpoint's new objects (blobs, trees, commit) go out as one small pack; if
        # anything fails before it is written, the index must not name its blobs
        with self._forget_on_error(), batched(self.repo.odb):
            try:
                parent_tree = self._tree_of_head(head)
                if prepared is None and buffer_only is not None and head is not None:
                    changes: Changes = []
                    tree, read_modes = parent_tree or EMPTY_TREE, None
                    extras = self._extras_of(head) or EMPTY_EXTRAS
                elif prepared is None:
                    # a deferred baseline sets the turn's paths back to their before-states:
                    # reading them from disk first would be work thrown away
                    staged = noted - deferred.before.keys() if deferred is not None else noted
                    tree, changes, read_modes = self._stage(parent_tree, staged, walk)
                    extras = self._scan_extras(tree, parent_tree, changes) if walk else \
                        self._update_extras(self._extras_of(head) or EMPTY_EXTRAS,
                                            noted | {c.path for c in changes}, tree)
                else:  # what ``prepare`` staged, plus what was noted since
                    tree, later, _modes = self._stage(prepared.tree, noted, False)
                    # (a first checkpoint lists no files, as a walk's does)
                    changes = diff_trees(self.repo, parent_tree, tree) if parent_tree else []
                    read_modes = update_modes(str(self.workspace), prepared.modes,
                                              noted | {c.path for c in later})
                    extras = self._update_extras(prepared.extras,
                                                 noted | {c.path for c in later}, tree)
                if captured is not None:
                    tree, set_paths = self._overlay(tree, captured.leaves, "pending checkpoint")
                    changes = diff_trees(self.repo, parent_tree, tree) if parent_tree else []
                    extras = self._captured_extras(extras, captured)
                before: set[str] = set()
                if deferred is not None:
                    tree, before = self._with_before(tree, deferred)
                    changes = diff_trees(self.repo, parent_tree, tree) if parent_tree else []
                    # directories the turn made, or emptied, were not empty dirs before it
                    holding = {posixpath.dirname(p) for p in before
                               if deferred.before[p] is not None}
                    holding |= {a for d in holding for a in _ancestors(d)}
                    extras = Extras(frozenset(d for d in extras.dirs
                                              if d not in deferred.new_dirs
                                              and d not in holding),
                                    {p: u for p, u in extras.files.items() if p not in before})
                if texts:
                    tree, texts = self._with_buffers(tree, texts)
                    changes = diff_trees(self.repo, parent_tree, tree) if parent_tree else []
            except BaseException as exc:
                self._staging_failed(noted, exc)
                raise
            self._seen_head = head
            self._stamp = self.repo.index_stamp()
            parent_modes = self._modes_of(head)
            if read_modes is not None:
                modes = read_modes
            else:
                modes = update_modes(str(self.workspace), parent_modes,
                                     self._files_of(tree, parent_tree, changes) if walk
                                     else noted | {c.path for c in changes})
            if captured is not None:  # the captured files' permission bits
                modes = _with_perms(modes, set_paths, captured.leaves, captured.perms)
            if deferred is not None:  # the recorded files' permission bits, as they were
                modes = _with_perms(modes, before, deferred.before, deferred.perms)
            mode_only = sorted(p for p in modes.keys() | parent_modes.keys()
                               if modes.get(p) != parent_modes.get(p)
                               and p not in {c.path for c in changes})
            parent_extras = self._extras_of(head)
            extra_changes = [] if parent_extras is None else \
                dir_changes(parent_extras, extras) + \
                [("M", p) for p in changed_unrecorded(parent_extras, extras)]
            if not allow_empty and tree == (parent_tree or EMPTY_TREE) and not mode_only \
                    and not extra_changes:
                return None
            created = created or now_iso()
            meta = CommitMeta(id=checkpoint_id or new_id("c"), kind=kind, created_at=created,
                              session_id=session_id, turn_id=turn_id, message=message,
                              skipped=sorted(self.repo.large), restored_from=restored_from,
                              undo=undo, undoes=undoes, modes=modes, extras=extras,
                              buffers=sorted(texts))
            sha = write_commit(self.repo, tree, head, build_message(meta), epoch(created))
        parent_id = self._head_checkpoint_id(head) if head else None
        self.repo.set_head(sha, head)
        self._note_packs()
        self._seen_head = sha
        self._head_tree = (sha, tree)
        self._head_modes = (sha, modes)
        self._head_extras = (sha, extras)
        self.buffers.recorded(texts)
        listed = [(c.status, c.path) for c in changes] + [("M", p) for p in mode_only]
        parent_meta = CommitMeta(id="", kind="", created_at="", extras=parent_extras) \
            if head is not None else None
        checkpoint = to_checkpoint(meta, parent_id, sorted(listed, key=lambda c: c[1]),
                                   parent_meta)
        if self._chain is not None and self._chain_head == head:
            self._chain.insert(0, Entry(sha, head, meta, checkpoint))
            self._chain_head = sha
        self._head_id = (sha, meta.id)
        return checkpoint

    @contextmanager
    def _forget_on_error(self) -> Iterator[None]:
        """A commit that fails drops its staging; the next one walks the tree."""
        try:
            yield
        except BaseException:
            self.stager.forget()
            with self._noted_lock:
                self._scan_all = True
            raise

    def _note_packs(self) -> None:
        """Count the pack a commit wrote; past ``SMALL_PACKS`` merge them in the background."""
        odb = self.repo.odb
        added = odb.take_new_packs()
        self._packs = pack_count(odb) if self._packs is None else self._packs + added
        if self._packs > SMALL_PACKS:
            def recount() -> None:
                self._packs = None

            repack_later(odb, done=recount)

    def _stage(self, parent_tree: str | None, noted: set[str],
               walk: bool) -> tuple[str, Changes, dict[str, int] | None]:
        """Stage the noted paths (or walk); the new tree, its changes, and the mode table when
        the staging read every file's mode already (a bulk first checkpoint)."""
        if not walk and parent_tree is not None:
            if not noted:  # the index (with deferred entries) still equals the head tree
                return parent_tree, [], None
            try:
                quick = fast_stage(self.stager, parent_tree, noted)
                if quick is not None:
                    return *quick, None
                self.stager.paths(noted)
                return *self.stager.write_tree(parent_tree), None
            except (CheckpointError, OSError):  # a path changed under our feet: walk instead
                self.stager.forget()
        scanned = self.stager.scan()
        if parent_tree is not None and not scanned:
            return parent_tree, [], None
        if len(scanned) > stage_mod.BULK_ADD:
            bulk = bulk_stage(self.stager, parent_tree, scanned, self.progress)
            if bulk is not None:
                if bulk.files is not None:  # (listing them from the new trees takes seconds)
                    self._files = (bulk.tree, bulk.files)
                return bulk.tree, bulk.changes, bulk.modes
        elif parent_tree is not None:
            quick = fast_stage(self.stager, parent_tree, set(scanned), scanned=True)
            if quick is not None:
                return *quick, None
        if scanned:
            self.stager.paths(scanned, scanned=True)
        return *self.stager.write_tree(parent_tree), None

    def _with_buffers(self, tree: str, texts: dict[str, str]) -> tuple[str, dict[str, str]]:
        """The staged tree with each unsaved buffer's text in place of its file's, and the
        index told the same (so index plus deferred entries still equal the head tree)."""
        leaves: dict[str, tuple[str, str] | None] = {}
        kept: dict[str, str] = {}
        for rel, text in texts.items():
            if self.stager.in_nested(rel) or self.stager.beyond_symlink(rel):
                continue
            sha = write_object(self.repo, "blob", buffer_bytes(text))
            leaves[rel] = (git_mode(str(self.workspace), rel), sha)
            kept[rel] = text
        if not leaves:
            return tree, {}
        try:
            new = update_tree(self.repo.odb, tree, leaves)
        except TreeConflict:  # a directory where the buffer's file was: the disk wins
            return tree, {}
        self.stager.defer(leaves)
        if self.stager.tracked is not None:
            self.stager.tracked.update(leaves)
        return new, kept

    def record_buffer(self, session_id: str, rel: str, current: Current) -> Checkpoint | None:
        """Record ``rel`` as its editor buffer's unsaved text from now on, and checkpoint that
        text as it is now (the user's unsaved changes, before the agent edits the buffer) when
        it differs from what the store holds: the turn's own checkpoint then holds exactly the
        agent's change to the buffer. None when nothing needed recording."""
        rel = self._checked_relative(rel)
        self._wait_idle()
        with self.lock:
            self._open()
            self.buffers.track(rel, current)
            return self._commit("baseline", session_id, None,
                                f"Unsaved changes in the editor's buffer of {rel}, before the "
                                "agent's edit", buffer_only=rel)

    def _scan_extras(self, tree: str, parent_tree: str | None, changes: Changes) -> Extras:
        """Empty directories and unrecorded files after a walk: the tree's directories read."""
        dirs, special = extras_mod.scan(str(self.workspace),
                                        self._files_of(tree, parent_tree, changes),
                                        self.stager.ignored, self.repo.nested,
                                        cache=self._listings)
        return self._with_large(dirs, special)

    def _update_extras(self, parent: Extras, paths: set[str], tree: str) -> Extras:
        """The parent's empty directories and unrecorded files, the noted paths re-read."""
        if not paths:
            return self._with_large(set(parent.dirs), {
                p: u for p, u in parent.files.items() if u.reason == extras_mod.SPECIAL})
        dirs, special = extras_mod.update(str(self.workspace), parent, paths,
                                          self.stager.ignored, self.repo.nested,
                                          lambda: self._files_of(tree))
        return self._with_large(dirs, special)

    def _with_large(self, dirs: set[str], special: dict[str, Unrecorded]) -> Extras:
        files = dict(special)
        ws = str(self.workspace)
        for path in self.repo.large:
            entry = extras_mod.fingerprint(ws, path, self.repo.why.get(path, extras_mod.TOO_LARGE))
            if entry is not None:
                files[path] = entry
        return Extras(frozenset(dirs), files)

    def _extras_of(self, commit: str | None) -> Extras | None:
        """The empty directories and unrecorded files recorded with a checkpoint commit
        (None for a commit made before they were kept)."""
        if commit is None:
            return EMPTY_EXTRAS
        if self._head_extras is not None and self._head_extras[0] == commit:
            return self._head_extras[1]
        _kind, body = read_object(self.repo, commit)
        meta = parse_message(body.partition(b"\n\n")[2].decode("utf-8", "replace"))
        extras = meta.extras if meta is not None else None
        self._head_extras = (commit, extras)
        return extras

    def _modes_of(self, commit: str | None) -> dict[str, int]:
        """The mode table recorded with a checkpoint commit (cached for the head)."""
        if commit is None:
            return {}
        if self._head_modes is not None and self._head_modes[0] == commit:
            return self._head_modes[1]
        _kind, body = read_object(self.repo, commit)
        meta = parse_message(body.partition(b"\n\n")[2].decode("utf-8", "replace"))
        modes = meta.modes if meta is not None else {}
        self._head_modes = (commit, modes)
        return modes

    def _files_of(self, tree: str, parent: str | None = None,
                  changes: Changes | None = None) -> Ids:
        """Every file path of a tree (after a walk, to re-read all modes); kept for the last
        tree and carried forward by a commit's changes, so a walk lists no trees again."""
        cached = self._files
        if cached is not None and cached[0] == tree:
            return cached[1]
        if cached is not None and parent is not None and changes is not None \
                and cached[0] == parent:
            gone = {c.path for c in changes if c.status == "D"}
            files = [p for p in cached[1] if p not in gone] if gone else list(cached[1])
            files += [c.path for c in changes if c.status == "A"]
        else:
            files = [c.path for c in diff_trees(self.repo, None, tree)]
        self._files = (tree, files)
        return files

    def _tree_of_head(self, head: str | None) -> str | None:
        if head is None:
            return None
        if self._head_tree is None or self._head_tree[0] != head:
            self._head_tree = (head, commit_tree(self.repo, head))
        return self._head_tree[1]

    def _relative(self, path: str) -> str | None:
        """A workspace-relative posix path, or None when it lies outside the workspace."""
        if not path:
            return None
        if os.path.isabs(path):
            rel = os.path.relpath(path, self.workspace)
            if rel == ".." or rel.startswith("../"):
                real = os.path.realpath(path)
                rel = os.path.relpath(real, self.workspace)
                if rel == ".." or rel.startswith("../"):
                    return None
        else:
            rel = path
        rel = posixpath.normpath(rel.replace(os.sep, "/"))
        if rel == ".." or rel.startswith("../") or rel.startswith("/"):
            return None
        return rel

    def _checked_relative(self, path: str) -> str:
        """Like ``_relative`` but raising WorkspaceEscape for paths outside the workspace."""
        from openprogram_lsp.core.errors import WorkspaceEscape

        if "\x00" in path:
            raise WorkspaceEscape(f"path {path!r} contains a NUL byte")
        rel = self._relative(path)
        if rel is None:
            raise WorkspaceEscape(f"path {path!r} leads outside the workspace")
        if ".git" in rel.split("/"):
            raise WorkspaceEscape(f"path {path!r} is inside a .git directory")
        return rel
