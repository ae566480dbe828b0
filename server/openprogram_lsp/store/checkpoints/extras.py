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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

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


def scan(workspace: str, files: Iterable[str], ignored: Ignored,
         skip: Iterable[str] = (), root: str = "") -> tuple[set[str], dict[str, Unrecorded]]:
    """(empty directories, special files) of the workspace (or of the directory ``root``),
    found by reading the directories that hold recorded ``files`` and, below them,
    directories that hold only directories (a directory holding a file git did not record is
    ignored content or a nested repository)."""
    known = parents(files)
    if root:
        known.add(root)
    skipped = list(skip)
    empty: list[str] = []
    special: dict[str, Unrecorded] = {}
    todo = [root]
    while todo:
        rel = todo.pop()
        try:
            with os.scandir(os.path.join(workspace, rel) if rel else workspace) as it:
                entries = list(it)
        except OSError:
            continue
        if not entries and rel and rel not in known:
            empty.append(rel)
            continue
        only_dirs = all(e.is_dir(follow_symlinks=False) for e in entries)
        if rel not in known and not only_dirs:
            continue  # ignored content, or a nested repository (.git)
        for e in entries:
            path = f"{rel}/{e.name}" if rel else e.name
            if e.name == ".git" or _under(path, skipped):
                continue
            if e.is_dir(follow_symlinks=False):
                todo.append(path)
            elif rel in known and not e.is_file(follow_symlinks=False) \
                    and not e.is_symlink():
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if special_kind(st.st_mode):
                    special[path] = Unrecorded(SPECIAL, st.st_size, st.st_mtime_ns)
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
    if files is not None:
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
