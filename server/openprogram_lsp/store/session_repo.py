"""A session's git repository, written in process: journaled file writes, one commit per turn.

Every file write of a session goes through ``write``: the path is appended to a journal
(``.git/openprogram-journal``) under a shared ``flock``, then the file is replaced atomically.
``commit`` (under an exclusive ``flock``) hashes only the journaled paths, rewrites only the
trees on their paths and writes one commit, all of it as one small pack (``gitobj.batch``), so
a turn's store cost follows what the turn wrote, not the size of the session. No git process
runs and no git index is kept. A commit ends the journal's pending part with a mark line (the
file is emptied only once it is long). Packs are merged in the background (``maintain``).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

from openprogram_lsp.core.fsutil import atomic_write, read_file, read_rest, replace_file
from openprogram_lsp.store.git import GitError, clear_stale_git_lock
from openprogram_lsp.store.gitobj import MissingObject, ObjectDB
from openprogram_lsp.store.gitobj.batch import ObjectBatch
from openprogram_lsp.store.gitobj.packwrite import PackWriter
from openprogram_lsp.store.gitobj.refs import read_ref
from openprogram_lsp.store.gitobj.trees import Leaf, read_commit, update_tree, write_commit
from openprogram_lsp.store.meta_slots import META, MetaWriter
from openprogram_lsp.store.meta_slots import read_bytes as read_meta_bytes
from openprogram_lsp.store.pack_maintenance import (
    SMALL_PACKS,
    pack_count,
    repack,
    repack_later,
    wait_for_maintenance,
)

log = logging.getLogger(__name__)

JOURNAL = "openprogram-journal"
LEGACY_INDEX = "index"
"""The git index ``git add -A`` kept in sessions written before in-process commits."""
BRANCH_REF = "refs/heads/main"
PACK_THRESHOLD = 1000
"""Loose objects (sessions written before per-commit packs) past which a commit starts a
background pack."""
JOURNAL_MARK = b"\0\n"
"""Ends the journal's committed part (a path never holds a NUL)."""
JOURNAL_MAX = 1 << 16
"""Bytes past which a commit empties the journal instead of appending a mark."""
BULK_PATHS = 2000
"""Paths past which a commit streams its objects to a pack file instead of holding them."""
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


def _overwrite_ref(ref: str, line: bytes) -> bool:
    """Write a ref's new id over its old one, in place, when the file holds an id of the same
    length (the usual case); False to replace it through its lock file instead.

    The caller holds the session's commit lock (and git's ``.lock`` of the ref when one was
    found), so no writer races it, and its only other reader (``log``) reads what it can. A
    rename over the old ref would cost more: ext4 forces a replaced file's new blocks out at
    the rename (``auto_da_alloc``); an overwrite of a block already on disk does not. One
    ``pwrite`` of 41 bytes is whole or not at all when the process is killed, and one sector on
    a power cut.
    """
    try:
        fd = os.open(ref, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_size != len(line):
            return False
        return os.pwrite(fd, line, 0) == len(line)
    finally:
        os.close(fd)


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


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
        self._packs: int | None = None  # packs on disk, counted once per maintenance cycle
        self._head_tree: tuple[str, str] | None = None  # (commit, its tree) last committed
        self._dirs: set[str] = set()  # directories known to exist
        self._base = str(root)  # plain strings on the per-write path (no pathlib objects)
        self._mark_at = 0  # journal offset just past the mark this instance last wrote
        # the journal, opened once per instance and process (not once per write); its flock
        # is taken and dropped around each use
        self._jfd: int | None = None
        self._jpid = 0
        # what this instance last wrote to each path not committed yet, and the file's stamp
        # then: the commit takes those bytes instead of reading the file back, while the
        # stamp says the file is still the one written
        self._written: dict[str, tuple[bytes, tuple[int, int, int, int]]] = {}
        self._meta = MetaWriter(root)

    def __del__(self) -> None:
        self._drop_journal()

    def _drop_journal(self) -> None:
        fd, self._jfd = self._jfd, None
        if fd is not None and self._jpid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(fd)

    # -- writing ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _journal(self, kind: int) -> Iterator[int]:
        fd = self._jfd
        if fd is None or self._jpid != os.getpid():  # first use, or a forked child's
            self._jfd = None
            fd = os.open(self.journal, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
                         0o644)
            self._jfd, self._jpid = fd, os.getpid()
        fcntl.flock(fd, kind)
        gone = False
        try:
            yield fd
        except FileNotFoundError:  # the session went (deleted under us): open afresh next time
            gone = True
            raise
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            if gone:
                self._drop_journal()

    def write(self, rel: str, payload: bytes | str) -> None:
        """Replace one file of the session (atomically) and journal it for the next commit."""
        line = rel.encode("utf-8", "surrogateescape") + b"\n"
        with self._journal(fcntl.LOCK_SH) as fd:
            os.write(fd, line)  # before: a crash after the write still leaves it journaled
            path = f"{self._base}/{rel}"
            parent = os.path.dirname(rel)
            if parent not in self._dirs:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                self._dirs.add(parent)
            try:
                st = replace_file(path, payload)
            except FileNotFoundError:  # its directory went (a session deleted under us)
                self._dirs.discard(parent)
                self._written.pop(rel, None)
                raise
            os.write(fd, line)  # after: the journal's stamp moves once the file is there
            self._remember(rel, st, payload)

    def write_meta(self, payload: bytes) -> None:
        """Make ``payload`` the session's meta (``meta_slots``: in place, no rename) and
        journal ``meta.json`` for the next commit, which takes the meta's bytes as they are
        then."""
        line = META.encode() + b"\n"
        with self._journal(fcntl.LOCK_SH) as fd:
            os.write(fd, line)
            self._meta.write(payload)
            os.write(fd, line)

    def _remember(self, rel: str, st: os.stat_result, payload: bytes | str) -> None:
        """Keep what was written to ``rel`` with the new file's stamp (from its descriptor,
        after the rename: what a ``stat`` of the path says while it is still that file)."""
        if len(self._written) >= 4096:
            self._written.clear()
        data = payload.encode("utf-8") if isinstance(payload, str) else payload
        self._written[rel] = (data, _stamp(st))

    def _content(self, rel: str) -> bytes:
        """The bytes of a file to commit: those this instance wrote, while the file is still
        that one (same inode, size and times), else read from disk."""
        if rel == META:
            return read_meta_bytes(self._base)
        path = f"{self._base}/{rel}"
        held = self._written.pop(rel, None)
        if held is not None:
            try:
                if _stamp(os.stat(path)) == held[1]:
                    return held[0]
            except OSError:
                pass
        return read_file(path)

    def remove(self, rel: str) -> None:
        """Delete one file of the session and journal it."""
        self._written.pop(rel, None)
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
        legacy = os.path.exists(f"{self._base}/.git/{LEGACY_INDEX}")
        with self._journal(fcntl.LOCK_EX) as fd:
            sha = self._commit_journaled(fd, message, everything=everything or legacy)
        if legacy:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.git_dir / LEGACY_INDEX)
            self._packs = None
            self.maintain_later(full=True)
            return sha[:7] if sha else None
        if sha is None:
            return None
        added = self.odb.take_new_packs()
        loose = 0
        if self._packs is None:
            # once per instance and merge: the packs, and the loose objects a session written
            # before per-commit packs still holds
            self._packs = self.pack_count()
            loose = self.loose_count()
        else:
            self._packs += added
        if self._packs > SMALL_PACKS or loose >= PACK_THRESHOLD:
            # counted again only once a merge this instance started has finished; while
            # another one runs the count just goes on
            self.maintain_later()
        return sha[:7]

    def _pending_paths(self, fd: int) -> set[str]:
        """The paths journaled since the last commit's mark (read from that mark on when this
        instance wrote it and it is still there: a mark only ever ends a commit)."""
        start = 0
        if self._mark_at and os.fstat(fd).st_size >= self._mark_at and \
                os.pread(fd, len(JOURNAL_MARK), self._mark_at - len(JOURNAL_MARK)) == JOURNAL_MARK:
            start = self._mark_at
        os.lseek(fd, start, os.SEEK_SET)
        data = read_rest(fd)
        mark = data.rfind(b"\n" + JOURNAL_MARK)
        if mark >= 0:
            data = data[mark + 1 + len(JOURNAL_MARK):]
        elif data.startswith(JOURNAL_MARK):
            data = data[len(JOURNAL_MARK):]
        return {p.decode("utf-8", "surrogateescape") for p in data.split(b"\n") if p}

    def _settle_journal(self, fd: int) -> None:
        """Mark everything journaled so far as committed."""
        if os.fstat(fd).st_size >= JOURNAL_MAX:
            os.ftruncate(fd, 0)
            self._mark_at = 0
        else:
            os.write(fd, JOURNAL_MARK)
            self._mark_at = os.lseek(fd, 0, os.SEEK_CUR)  # O_APPEND: the end, after the mark

    def _base_tree(self, head: str) -> str:
        cached = self._head_tree
        if cached is not None and cached[0] == head:
            return cached[1]
        try:
            return read_commit(self.odb, head).tree
        except (MissingObject, ValueError) as exc:
            raise GitError(["commit"], 1, f"session head unreadable: {exc}") from None

    def _commit_journaled(self, fd: int, message: str, *, everything: bool) -> str | None:
        paths = self._pending_paths(fd)
        head = self.head()
        base = self._base_tree(head) if head is not None else None
        if everything or base is None:
            paths |= set(self._files())
        sink: ObjectBatch | PackWriter = \
            PackWriter(self.odb) if len(paths) > BULK_PATHS else ObjectBatch(self.odb)
        try:
            leaves: dict[str, Leaf] = {}
            for rel in sorted(paths):
                try:
                    data = self._content(rel)
                except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                    leaves[rel] = None
                    continue
                leaves[rel] = ("100644", sink.write("blob", data))
            tree = update_tree(sink, base, leaves)
            if tree == base:
                if isinstance(sink, PackWriter):
                    sink.abort()
                self._settle_journal(fd)
                return None
            sha = write_commit(sink, tree, [head] if head else [], message.rstrip("\n")
                               + "\n", int(time.time()))
            if isinstance(sink, PackWriter):
                sink.finish()
                self.odb.note_pack()
            else:
                sink.flush()
        except BaseException:
            if isinstance(sink, PackWriter):
                sink.abort()
            raise
        self._set_head(sha)
        self._head_tree = (sha, tree)
        self._settle_journal(fd)
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
        ref = f"{self._base}/.git/{BRANCH_REF}"
        if "\0refs" not in self._dirs:  # (a key no journaled path can be)
            os.makedirs(os.path.dirname(ref), exist_ok=True)
            self._dirs.add("\0refs")
        lock = ref + ".lock"
        line = f"{sha}\n".encode()
        # Only this method writes the ref, under the session's commit lock, which every writer
        # of the session holds: git's lock file would exclude no other writer, and creating and
        # removing it is two of a turn's file operations. One found (left by a killed writer
        # of an older version, or a git run by hand in the store) is honoured as before.
        if not os.path.lexists(lock) and _overwrite_ref(ref, line):
            return
        deadline = time.monotonic() + REF_LOCK_WAIT
        while True:
            try:
                fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                # we hold the session's commit lock: a lock file no process holds open was
                # left by a killed writer
                if clear_stale_git_lock(Path(lock), self.git_dir):
                    continue
                if time.monotonic() >= deadline:
                    raise GitError(["update-ref"], 128,
                                   f"Unable to create '{lock}': File exists.") from None
                time.sleep(0.05)
        try:
            if _overwrite_ref(ref, line):
                os.unlink(lock)  # the ref took the new id in place; the lock was only a lock
                return
            os.write(fd, line)
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

    def pack_count(self) -> int:
        """How many packs the repository holds (one listing)."""
        return pack_count(self.odb)

    def maintain(self, *, full: bool = False) -> int:
        """Merge the small packs and loose objects (``pack_maintenance.repack``; everything
        into one pack, with deltas, when ``full``: an upgraded session's loose objects).

        Runs off the turn's path; one at a time per repository across processes. Returns how
        many packs and loose objects it merged.
        """
        return repack(self.odb, full=full)

    def maintain_later(self, *, full: bool = False) -> bool:
        """Start ``maintain`` in a background thread (at most one per repository); False
        when one runs already."""
        def recount() -> None:
            self._packs = None  # what was written meanwhile is counted at the next commit

        return repack_later(self.odb, full=full, done=recount)


__all__ = ["SMALL_PACKS", "SessionRepo", "init_repository", "wait_for_maintenance"]
