"""A session's git repository, written in process: journaled file writes, one commit per turn.

Every file write of a session goes through ``write``: the path is appended to a journal
(``.git/openprogram-journal``) under a shared ``flock``, then the file is replaced atomically.
``commit`` (under an exclusive ``flock``) hashes only the journaled paths, rewrites only the
trees on their paths and writes one commit, so a turn's store cost follows what the turn
wrote, not the size of the session. No git process runs and no git index is kept.
Loose objects are packed in the background once there are many (``maintain``).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from openprogram_lsp.core.fsutil import atomic_write
from openprogram_lsp.store.git import GitError, clear_stale_git_lock, run_git
from openprogram_lsp.store.gitobj import MissingObject, ObjectDB
from openprogram_lsp.store.gitobj.refs import read_ref
from openprogram_lsp.store.gitobj.trees import Leaf, read_commit, update_tree, write_commit

log = logging.getLogger(__name__)

JOURNAL = "openprogram-journal"
LEGACY_INDEX = "index"
"""The git index ``git add -A`` kept in sessions written before in-process commits."""
BRANCH_REF = "refs/heads/main"
PACK_THRESHOLD = 1000
"""Loose objects past which a commit starts a background pack."""
MAX_PACKS = 24
"""Packs past which the background maintenance merges them into one (with deltas)."""
REF_LOCK_WAIT = 5.0
_CONFIG = """[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
\tlogallrefupdates = false
[gc]
\tauto = 0
[maintenance]
\tauto = false
"""

_maintaining: set[str] = set()
_maintaining_lock = threading.Lock()
_threads: list[threading.Thread] = []


def init_repository(root: Path) -> None:
    """Create ``root/.git`` in process (what ``git init -b main`` makes, minus samples)."""
    git_dir = root / ".git"
    for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
        (git_dir / sub).mkdir(parents=True, exist_ok=True)
    atomic_write(git_dir / "config", _CONFIG)
    atomic_write(git_dir / "description", "openprogram-lsp session\n")
    atomic_write(git_dir / "HEAD", f"ref: {BRANCH_REF}\n")


class SessionRepo:
    """The git repository of one session directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir = root / ".git"
        self.odb = ObjectDB(self.git_dir)
        self.journal = self.git_dir / JOURNAL
        self._loose: int | None = None  # loose objects on disk, counted once per pack cycle

    # -- writing ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _journal(self, kind: int) -> Iterator[int]:
        fd = os.open(self.journal, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, kind)
            yield fd
        finally:
            os.close(fd)  # releases the flock

    def write(self, rel: str, payload: bytes | str) -> None:
        """Replace one file of the session (atomically) and journal it for the next commit."""
        line = rel.encode("utf-8", "surrogateescape") + b"\n"
        with self._journal(fcntl.LOCK_SH) as fd:
            os.write(fd, line)  # before: a crash after the write still leaves it journaled
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, payload)
            os.write(fd, line)  # after: the journal's stamp moves once the file is there

    def remove(self, rel: str) -> None:
        """Delete one file of the session and journal it."""
        with self._journal(fcntl.LOCK_SH) as fd:
            os.write(fd, rel.encode("utf-8", "surrogateescape") + b"\n")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.root / rel)

    def stamp(self) -> tuple[int, int]:
        """Identity of the journal: it changes with every write and every commit."""
        try:
            st = os.stat(self.journal)
        except FileNotFoundError:
            return 0, 0
        return st.st_mtime_ns, st.st_size

    # -- committing ---------------------------------------------------------------------------

    def head(self) -> str | None:
        """The commit the session's branch points at."""
        return read_ref(self.git_dir, BRANCH_REF)

    def commit(self, message: str, *, everything: bool = False) -> str | None:
        """Commit the journaled paths (``everything``: every file) as one commit.

        Returns the short commit id, or None when nothing changed. The caller holds the
        session's commit lock; writers of this and other processes wait on the journal.

        A session written before in-process commits (its git index, left by ``git add -A``, is
        the sign) is upgraded here, once: every file is committed, as that ``git add -A`` would
        have, the stale index is removed and its loose objects are repacked in the background
        (``docs/decisions/session-migration.md``).
        """
        legacy = (self.git_dir / LEGACY_INDEX).exists()
        with self._journal(fcntl.LOCK_EX) as fd:
            sha = self._commit_journaled(fd, message, everything=everything or legacy)
        if legacy:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.git_dir / LEGACY_INDEX)
            self._loose = None
            self.maintain_later(full=True)
            return sha[:7] if sha else None
        if sha is None:
            return None
        written = self.odb.take_written()
        self._loose = self.loose_count() if self._loose is None else self._loose + written
        if self._loose >= PACK_THRESHOLD:
            # counted again (one walk) only once a pack this instance started has finished;
            # while another one runs the count just goes on, not walked on every turn
            self.maintain_later()
        return sha[:7]

    def _commit_journaled(self, fd: int, message: str, *, everything: bool) -> str | None:
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        paths = {p.decode("utf-8", "surrogateescape")
                 for p in b"".join(chunks).split(b"\n") if p}
        head = self.head()
        base = None
        if head is not None:
            try:
                base = read_commit(self.odb, head).tree
            except (MissingObject, ValueError) as exc:
                raise GitError(["commit"], 1, f"session head unreadable: {exc}") from None
        if everything or base is None:
            paths |= set(self._files())
        leaves: dict[str, Leaf] = {}
        for rel in sorted(paths):
            try:
                data = (self.root / rel).read_bytes()
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                leaves[rel] = None
                continue
            leaves[rel] = ("100644", self.odb.write("blob", data))
        tree = update_tree(self.odb, base, leaves)
        if tree == base:
            os.ftruncate(fd, 0)
            return None
        sha = write_commit(self.odb, tree, [head] if head else [], message.rstrip("\n")
                           + "\n", int(time.time()))
        self._set_head(sha)
        os.ftruncate(fd, 0)
        return sha

    def _files(self) -> Iterator[str]:
        """Every file of the working tree that belongs to the session (temp files left out)."""
        for dirpath, dirnames, filenames in os.walk(self.root):
            if dirpath == str(self.root):
                dirnames[:] = [d for d in dirnames if d != ".git"]
            dirnames[:] = [d for d in dirnames if not d.startswith(".deleted-")]
            rel_dir = os.path.relpath(dirpath, self.root)
            for name in filenames:
                if name.endswith(".tmp"):
                    continue
                yield name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")

    def _set_head(self, sha: str) -> None:
        ref = self.git_dir / BRANCH_REF
        ref.parent.mkdir(parents=True, exist_ok=True)
        lock = ref.with_name(ref.name + ".lock")
        deadline = time.monotonic() + REF_LOCK_WAIT
        while True:
            try:
                fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                # we hold the session's commit lock: a lock file no process holds open was
                # left by a killed writer
                if clear_stale_git_lock(lock, self.git_dir):
                    continue
                if time.monotonic() >= deadline:
                    raise GitError(["update-ref"], 128,
                                   f"Unable to create '{lock}': File exists.") from None
                time.sleep(0.05)
        try:
            os.write(fd, f"{sha}\n".encode())
        finally:
            os.close(fd)
        os.replace(lock, ref)

    # -- reading ------------------------------------------------------------------------------

    def log(self, limit: int = 50) -> list[str]:
        """Subjects of the branch's commits, newest first."""
        out: list[str] = []
        cur = self.head()
        while cur is not None and len(out) < limit:
            try:
                info = read_commit(self.odb, cur)
            except (MissingObject, ValueError):
                break
            out.append(info.message.split("\n", 1)[0])
            cur = info.parents[0] if info.parents else None
        return out

    # -- maintenance --------------------------------------------------------------------------

    def loose_count(self) -> int:
        """How many loose objects the repository holds (a walk of the fan-out directories)."""
        return sum(1 for _ in self.odb.loose_ids())

    def maintain(self, *, full: bool = False) -> int:
        """Pack the loose objects; merge the packs (``git repack``) when there are many, or
        always when ``full`` (an upgraded session's loose objects, deltified once).

        Runs off the turn's path; one at a time per repository across processes. Returns how
        many loose objects were packed.
        """
        lock_path = self.git_dir / "openprogram-maintenance"  # a flock (no .lock: git owns those)
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return 0
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return 0
            moved = self.odb.pack_loose()
            packs = list((self.git_dir / "objects" / "pack").glob("pack-*.pack"))
            if full or len(packs) > MAX_PACKS:
                # gitdb writes no deltas; git's repack merges the packs with them
                run_git(["repack", "-a", "-d", "-q", "--keep-unreachable"],
                        env={"GIT_DIR": str(self.git_dir)},
                        timeout=600)
                self.odb.refresh()
            return moved
        finally:
            os.close(fd)

    def maintain_later(self, *, full: bool = False) -> bool:
        """Start ``maintain`` in a background thread (at most one per repository); False
        when one runs already."""
        key = str(self.git_dir)
        with _maintaining_lock:
            if key in _maintaining:
                return False
            _maintaining.add(key)

        def run() -> None:
            try:
                self.maintain(full=full)
            except (OSError, GitError, subprocess.SubprocessError, ValueError):
                log.exception("background packing of %s failed", self.root)
            finally:
                self._loose = None  # what was written meanwhile is counted at the next commit
                with _maintaining_lock:
                    _maintaining.discard(key)

        # not a daemon: a process that ends right after its turn finishes the pack first
        thread = threading.Thread(target=run, name=f"pack {self.root.name}")
        with _maintaining_lock:
            _threads[:] = [t for t in _threads if t.is_alive()]
            _threads.append(thread)
        thread.start()
        return True


def wait_for_maintenance(timeout: float = 30.0) -> None:
    """Wait for background packing started by this process (tests, shutdown)."""
    deadline = time.monotonic() + timeout
    with _maintaining_lock:
        threads = list(_threads)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))

