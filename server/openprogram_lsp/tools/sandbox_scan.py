"""Repositories and control files below the workspace root, for the sandbox.

The box binds ``.git`` and the control files at the workspace root read-only
(``tools.sandbox``). A workspace often holds more: a folder of projects, a vendored checkout,
``app/.envrc``, ``web/.vscode``. Those that exist within ``NESTED_DEPTH`` directory levels are
found here and bound read-only too. bwrap cannot keep a name from being made below the root
(a new ``sub/.git`` whose config sets ``core.fsmonitor``, a renamed project with a copied
``.git``), so what a command newly made is found by the same look after it and named in its
result and the turn's warnings. See docs/decisions/sandbox-control-files.md.

The look reads each directory once and keeps its listing while the directory's ctime stands
(a command can set a directory's mtime back; it cannot set its ctime), like the checkpoint
walk; it skips ``node_modules``, follows no symlinked directory and stops at ``MAX_DIRS``.
"""

from __future__ import annotations

import os
import time
from collections import deque
from dataclasses import dataclass

from openprogram_lsp.core.control_files import control_entry, sandbox_entries
from openprogram_lsp.core.fsutil import protected_dirs

NESTED_DEPTH = 3  # directory levels below the root looked into (Claude Code's sandbox: 3)
MAX_DIRS = 4000  # directories read per look at most
MAX_FOUND = 256  # entries bound at most (each is a mount in the box)
RACY_NS = 2_000_000_000  # a listing is kept only for a directory unchanged this long
_SKIP = frozenset({"node_modules", "__pycache__"})

_Listing = tuple[tuple[str, ...], tuple[str, ...]]  # (subdirectories to enter, names found)
_cache: dict[str, tuple[int, int, _Listing]] = {}  # directory -> (ctime, inode, listing)


def _names() -> frozenset[str]:
    return frozenset({".git", *(c.value for c in sandbox_entries())})


_NAMES = _names()


@dataclass(frozen=True, slots=True)
class Nested:
    """What one look found: full paths (as found, not resolved), each entry's identity
    (device, inode: a copy put where the original was is another entry), and whether it
    stopped short of the whole depth (too many directories)."""

    paths: tuple[str, ...] = ()
    partial: bool = False
    ids: tuple[tuple[int, int], ...] = ()

    def entries(self) -> set[tuple[str, tuple[int, int]]]:
        return set(zip(self.paths, self.ids, strict=True))


def _identified(paths: list[str], partial: bool) -> Nested:
    kept: list[str] = []
    ids: list[tuple[int, int]] = []
    for p in paths[:MAX_FOUND]:
        try:
            st = os.lstat(p)
        except OSError:
            continue
        kept.append(p)
        ids.append((st.st_dev, st.st_ino))
    return Nested(tuple(kept), partial or len(paths) > MAX_FOUND, tuple(ids))


def _listing(path: str, now: int) -> _Listing | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    hit = _cache.get(path)
    if hit is not None and hit[0] == st.st_ctime_ns and hit[1] == st.st_ino:
        return hit[2]
    subdirs: list[str] = []
    found: list[str] = []
    try:
        with os.scandir(path) as it:
            for e in it:
                if e.name.lower() in _NAMES:
                    found.append(e.name)
                elif e.name not in _SKIP and e.is_dir(follow_symlinks=False):
                    subdirs.append(e.name)
    except OSError:
        return None
    listing = (tuple(sorted(subdirs)), tuple(sorted(found)))
    if now - st.st_ctime_ns > RACY_NS:
        if len(_cache) > 4 * MAX_DIRS:
            _cache.clear()
        _cache[path] = (st.st_ctime_ns, st.st_ino, listing)
    return listing


def nested_controls(workspace: str) -> Nested:
    """``.git`` entries and sandboxed control files 1 to ``NESTED_DEPTH`` levels below the
    workspace root (the root's own are ``tools.sandbox``'s), breadth first; our own state
    (hidden in the box) is not looked into. What an earlier look found and still exists is
    kept even when this one stopped short: a command that makes thousands of directories
    cannot push a project's ``.git`` past ``MAX_DIRS`` for the next command."""
    found, partial = _walk(workspace)
    known = _known.setdefault(workspace, {})
    seen = set(found)
    found += [p for p in known if p not in seen and os.path.lexists(p)]
    known.clear()
    known.update(dict.fromkeys(found[:MAX_FOUND]))
    if len(_known) > 64:  # workspaces looked at by this process: keep the newest
        del _known[next(iter(_known))]
    return _identified(found, partial)


_known: dict[str, dict[str, None]] = {}  # workspace -> entries found so far (ordered)


def _walk(workspace: str) -> tuple[list[str], bool]:
    now = time.time_ns()
    ours = {os.path.realpath(p) for p in protected_dirs()}
    found: list[str] = []
    queue: deque[tuple[str, int]] = deque([(workspace, 0)])
    read = 0
    while queue:
        path, level = queue.popleft()
        if path in ours:
            continue
        read += 1
        if read > MAX_DIRS:
            return found, True
        listing = _listing(path, now)
        if listing is None:
            continue
        subdirs, names = listing
        if level > 0:
            found.extend(os.path.join(path, n) for n in names)
        if level < NESTED_DEPTH:
            queue.extend((os.path.join(path, s), level + 1) for s in subdirs)
    return found, False


def what_it_is(rel: str) -> str:
    """A few words on why a found entry matters."""
    if os.path.basename(rel).lower() == ".git":
        return "a git repository: its config and hooks run with git there"
    entry = control_entry(rel)
    return entry.reads if entry is not None else "it can make commands run later"


def made_note(workspace: str, before: Nested, after: Nested) -> str:
    """The line naming what a command made below the root ("" when nothing)."""
    new = sorted({p for p, _ in after.entries() - before.entries()})
    if not new:
        return ""
    shown = [f"{os.path.relpath(p, workspace)} ({what_it_is(os.path.relpath(p, workspace))})"
             for p in new[:8]]
    more = f" and {len(new) - 8} more" if len(new) > 8 else ""
    return ("[this command made or moved files that can make commands run later, outside the "
            f"sandbox and unasked: {'; '.join(shown)}{more}. Review them before using them]")
