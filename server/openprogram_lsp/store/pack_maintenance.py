"""Merging a git directory's small packs in the background (``git repack --geometric=2``).

Each session commit and each checkpoint writes its objects as one small pack
(``gitobj.batch``). Past ``SMALL_PACKS`` of them a background thread rolls the small packs (and
any loose objects) into one with ``git repack -d --geometric=2``: the packs left form a
geometric progression, so each object is rewritten about log2(commits) times in all, with
deltas, and a reader never looks through more than a few dozen indexes. One merge at a time per
directory across processes (a ``flock``); never on a turn's path. Objects a concurrent writer
adds meanwhile are in packs or loose files the merge did not list, so they stay.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from openprogram_lsp.store.git import GitError, run_git
from openprogram_lsp.store.gitobj import ObjectDB
from openprogram_lsp.store.gitobj.batch import remove_orphans

log = logging.getLogger(__name__)

SMALL_PACKS = 48
"""Packs past which a writer starts the background merge (git's own ``gc.autoPackLimit`` is
50). A merge costs git 15-20 ms of CPU; every 48 commits that is well under a millisecond a
turn, and the turn's own reads come from caches, not from a search through the packs."""
MAX_PACKS = 200
"""Packs past which the merge puts everything into one pack."""
LOCK = "openprogram-maintenance"
"""The merge's ``flock`` in the git directory (no ``.lock`` suffix: git owns those)."""

_running: set[str] = set()
_running_lock = threading.Lock()
_threads: list[threading.Thread] = []


def pack_count(odb: ObjectDB) -> int:
    """How many packs the database holds (one listing)."""
    try:
        return sum(1 for n in os.listdir(odb.objects / "pack") if n.endswith(".idx"))
    except OSError:
        return 0


def repack(odb: ObjectDB, *, full: bool = False) -> int:
    """Merge the small packs and loose objects of ``odb`` (all of them into one when ``full``
    or past ``MAX_PACKS``); returns how many packs and loose objects went. Removes what killed
    writers left first; 0 when another process is merging."""
    git_dir = odb.git_dir
    try:
        fd = os.open(git_dir / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return 0
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0
        remove_orphans(odb)
        packs = pack_count(odb)
        before = packs + _loose(odb)
        if before <= 1:
            return 0
        args = ["repack", "-d", "-q"]
        # --geometric rolls loose objects up too, reachable or not; -a keeps the unreachable
        args += ["-a", "--keep-unreachable"] if full or packs > MAX_PACKS else ["--geometric=2"]
        run_git(args, env={"GIT_DIR": str(git_dir)}, timeout=600)
        odb.refresh()
        return before - pack_count(odb) - _loose(odb)
    finally:
        os.close(fd)


def _loose(odb: ObjectDB) -> int:
    return sum(1 for _ in odb.loose_ids())


def repack_later(odb: ObjectDB, *, full: bool = False,
                 done: Callable[[], None] | None = None) -> bool:
    """Start ``repack`` in a background thread (at most one per directory in this process);
    False when one runs already. ``done`` runs after it, whatever happened."""
    key = str(odb.git_dir)
    with _running_lock:
        if key in _running:
            return False
        _running.add(key)

    def run() -> None:
        try:
            repack(odb, full=full)
        except (OSError, GitError, subprocess.SubprocessError, ValueError):
            log.exception("background packing of %s failed", odb.git_dir)
        finally:
            if done is not None:
                with contextlib.suppress(Exception):
                    done()
            with _running_lock:
                _running.discard(key)

    # not a daemon: a process that ends right after its turn finishes the merge first
    thread = threading.Thread(target=run, name=f"pack {Path(key).parent.name}")
    with _running_lock:
        _threads[:] = [t for t in _threads if t.is_alive()]
        _threads.append(thread)
    thread.start()
    return True


def wait_for_maintenance(timeout: float = 30.0) -> None:
    """Wait for the merges started by this process (tests, benchmarks, shutdown)."""
    deadline = time.monotonic() + timeout
    with _running_lock:
        threads = list(_threads)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
