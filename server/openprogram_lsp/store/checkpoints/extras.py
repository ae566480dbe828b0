"""What a git tree cannot hold, kept beside it in each checkpoint's trailers: the empty
directories of the workspace, and the files the store could not record (too large, unreadable,
not a regular file or symlink) with a fingerprint, so a restore knows to leave them alone and
can say which of them it could not put back.

Both tables are carried from checkpoint to checkpoint like the mode table: a walk re-reads them
(``scan``: the directories that hold recorded files, plus directories git knows nothing of while
they hold only directories), an incremental checkpoint re-reads the noted paths (``update``).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from openprogram_lsp.core.fdfs import is_git_name

TOO_LARGE, UNREADABLE, SPECIAL = "too-large", "unreadable", "special"
REASONS = (TOO_LARGE, UNREADABLE, SPECIAL)

Ignored = Callable[[list[str]], set[str]]
"""Which of these workspace paths the checkpoint's ignore rules leave out."""


@dataclass(frozen=True, slots=True)
class Unrecorded:
    """A path the checkpoint saw but could not record, and how it looked (size, mtime)."""

    reason: str
    size: int
    mtime_ns: int

    def same_as(self, other: Unrecorded | None) -> bool:
        """Whether ``other`` is the same unrecorded file as far as a stat can tell."""
        return other is not None and (self.size, self.mtime_ns) == (other.size, other.mtime_ns) \
            and -1 not in (self.size, other.size)


@dataclass(frozen=True, slots=True)
class Extras:
    """The empty directories and unrecorded files of one checkpoint."""

    dirs: frozenset[str] = frozenset()
    files: dict[str, Unrecorded] = field(default_factory=dict)


EMPTY = Extras()


def fingerprint(workspace: str, path: str, reason: str) -> Unrecorded | None:
    """The entry of an unrecorded path as it is now; None when it is gone."""
    try:
        st = os.lstat(os.path.join(workspace, path))
    except OSError:
        return None
    return Unrecorded(reason, st.st_size, st.st_mtime_ns)


def special_kind(mode: int) -> bool:
    """Whether a file type is one git cannot record (a FIFO, socket or device)."""
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r + "/") for r in roots)


def parents(files: Iterable[str]) -> set[str]:
    """Every directory that holds one of ``files`` (at any depth); "" is the root."""
    out = {""}
    for path in files:
        head = path.rpartition("/")[0]
        while head and head not in out:
            out.add(head)
            head = head.rpartition("/")[0]
    return out


@dataclass(frozen=True, slots=True)
class Listing:
    """What a scan needs of one directory: its subdirectories, its special files, and
    whether it holds anything but directories."""

    dirs: tuple[str, ...]
    special: tuple[str, ...]
    only_dirs: bool
    empty: bool


ListingCache = dict[str, tuple[int, Listing]]
"""Directory -> (its ctime when listed, the listing): a directory whose ctime has not moved
since is not read again (an entry made, removed or renamed in it moves its mtime and ctime).
The ctime, not the mtime: a command can set a directory's mtime back (``touch -d``) after
making an empty directory or a FIFO in it, and the walk would have kept the old listing and
missed them; nobody but the kernel sets a ctime."""

RACY_NS = 2_000_000_000
"""A listing is kept only for a directory last changed this long before it was read: a change
within the same clock tick as the read would leave its ctime unchanged (git's racy rule)."""


def _listing(full: str, rel: str, cache: ListingCache | None, fresh: ListingCache,
             now: int) -> Listing | None:
    try:
        ctime = os.lstat(full).st_ctime_ns
    except OSError:
        return None
    hit = cache.get(rel) if cache is not None else None
    if hit is not None and hit[0] == ctime:
        fresh[rel] = hit
        return hit[1]
    dirs: list[str] = []
    special: list[str] = []
    only_dirs = True
    count = 0
    try:
        with os.scandir(full) as it:
            for e in it:
                count += 1
                if e.is_file(follow_symlinks=False) or e.is_symlink():
                    only_dirs = False  # git's own business (d_type: no system call)
                elif e.is_dir(follow_symlinks=False):
                    dirs.append(e.name)
                else:
                    only_dirs = False
                    special.append(e.name)
    except OSError:
        return None
    listing = Listing(tuple(dirs), tuple(special), only_dirs, count == 0)
    if now - ctime > RACY_NS:
        fresh[rel] = (ctime, listing)
    return listing


def scan(workspace: str, files: Iterable[str], ignored: Ignored,
         skip: Iterable[str] = (), root: str = "",
         cache: ListingCache | None = None) -> tuple[set[str], dict[str, Unrecorded]]:
    """(empty directories, special files) of the workspace (or of the directory ``root``),
    found by reading the directories that hold recorded ``files`` and, below them,
    directories that hold only directories (a directory holding a file git did not record is
    ignored content or a nested repository). ``cache``: the listings of the last scan, replaced
    by this one's (directories unchanged since are not read again)."""
    known = parents(files)
    if root:
        known.add(root)
    skipped = list(skip)
    empty: list[str] = []
    special: dict[str, Unrecorded] = {}
    fresh: ListingCache = {}
    now = time.time_ns()
    todo = [root]
    while todo:
        rel = todo.pop()
        full = os.path.join(workspace, rel) if rel else workspace
        listing = _listing(full, rel, cache, fresh, now)
        if listing is None:
            continue
        inside = rel in known
        if not inside:
            if listing.empty:
                empty.append(rel)
                continue
            if not listing.only_dirs:
                continue  # ignored content, or a nested repository (.git)
        prefix = rel + "/" if rel else ""
        for name in listing.dirs:
            path = prefix + name
            if not is_git_name(name) and not (skipped and _under(path, skipped)):
                todo.append(path)
        if inside:
            for name in listing.special:
                path = prefix + name
                try:
                    st = os.lstat(os.path.join(workspace, path))
                except OSError:
                    continue
                if special_kind(st.st_mode) and not (skipped and _under(path, skipped)):
                    special[path] = Unrecorded(SPECIAL, st.st_size, st.st_mtime_ns)
    if cache is not None and not root:
        cache.clear()
        cache.update(fresh)
    candidates = empty + list(special)
    out = ignored(candidates) if candidates else set()
    return ({d for d in empty if d not in out},
            {p: u for p, u in special.items() if p not in out})


def update(workspace: str, parent: Extras, noted: Iterable[str], ignored: Ignored,
           skip: Iterable[str] = (), files: Callable[[], Iterable[str]] = tuple,
           ) -> tuple[set[str], dict[str, Unrecorded]]:
    """(empty directories, special files) of ``parent`` with the noted paths re-read: each
    path, what was recorded under it, and its parent directories (left empty by a removal, or
    no longer empty); a noted directory is scanned (``files``: the recorded files, asked for
    only then)."""
    dirs = set(parent.dirs)
    special = {p: u for p, u in parent.files.items() if u.reason == SPECIAL}
    skipped = list(skip)
    candidates: dict[str, Unrecorded | None] = {}  # None: an empty directory
    for path in sorted(set(noted)):
        if _under(path, skipped):
            continue
        full = os.path.join(workspace, path)
        for d in [d for d in dirs if d.startswith(path + "/")]:
            if not os.path.isdir(os.path.join(workspace, d)) or os.listdir(
                    os.path.join(workspace, d)):
                dirs.discard(d)
        for p in [p for p in special if p.startswith(path + "/")]:
            if not _is_special(os.path.join(workspace, p)):
                del special[p]
        try:
            st = os.lstat(full)
        except OSError:
            st = None
        dirs.discard(path)
        special.pop(path, None)
        if st is None:
            head = path.rpartition("/")[0]
            if head and _empty_dir(os.path.join(workspace, head)):
                candidates[head] = None
            continue
        head = path.rpartition("/")[0]
        while head:  # it exists, so its directories are not empty
            dirs.discard(head)
            head = head.rpartition("/")[0]
        if stat.S_ISDIR(st.st_mode):
            if _empty_dir(full):
                candidates[path] = None
            else:
                inner = [f for f in files() if f.startswith(path + "/")]
                found, odd = scan(workspace, inner, ignored, skipped, root=path)
                dirs |= found
                special.update(odd)
        elif special_kind(st.st_mode):
            candidates[path] = Unrecorded(SPECIAL, st.st_size, st.st_mtime_ns)
    if candidates:
        out = ignored(list(candidates))
        for path, entry in candidates.items():
            if path in out:
                continue
            if entry is None:
                dirs.add(path)
            else:
                special[path] = entry
    return dirs, special


def _empty_dir(full: str) -> bool:
    try:
        return os.path.isdir(full) and not os.path.islink(full) and not os.listdir(full)
    except OSError:
        return False


def _is_special(full: str) -> bool:
    try:
        return special_kind(os.lstat(full).st_mode)
    except OSError:
        return False


def changed_unrecorded(old: Extras, new: Extras) -> list[str]:
    """Unrecorded paths that appeared, went or changed between two checkpoints."""
    a, b = old.files, new.files
    return sorted(p for p in a.keys() | b.keys() if not (p in a and a[p].same_as(b.get(p))))


def dir_changes(old: Extras, new: Extras,
                files: Iterable[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """(status letter, ``dir/``) for empty directories that appeared or went. With the
    commit's file ``changes`` (status letter, path), only directories made or removed: one
    left empty by deleting its files (or filled by adding some) is not listed again."""
    added = [d for d in new.dirs - old.dirs]
    gone = [d for d in old.dirs - new.dirs]
    if files is not None:  # (a leaf that moved down or up a level is not a change of its own)
        added, gone = ([d for d in added if not any(g.startswith(d + "/") for g in gone)],
                       [d for d in gone if not any(a.startswith(d + "/") for a in added)])
        listed = list(files)
        added = [d for d in added if not any(s == "D" and p.startswith(d + "/")
                                             for s, p in listed)]
        gone = [d for d in gone if not any(s == "A" and p.startswith(d + "/")
                                           for s, p in listed)]
    return sorted([("A", d + "/") for d in added] + [("D", d + "/") for d in gone],
                  key=lambda c: c[1])


def describe(reason: str, limit: int | None = None) -> str:
    """Why a path was not restored, for people."""
    if reason == TOO_LARGE:
        size = f" ({limit / 1048576:g} MiB)" if limit else ""
        return f"larger than checkpoints.max_file_bytes{size}: never recorded"
    if reason == UNREADABLE:
        return "could not be read: never recorded"
    if reason == SPECIAL:
        return "not a regular file or symlink: never recorded"
    return reason
