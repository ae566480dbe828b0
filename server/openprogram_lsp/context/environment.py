"""The workspace's state as the model is told it with a user message: the date, the git branch
and whether the working tree changed, the top-level entries.

It changes between turns, so it never goes in the system prompt (the head of every request's
cached prefix): a turn's note is stored on its user node (``metadata.environment``) and
rendered after the message, so later turns send the very same bytes; a note equal to the last
one on the chain is not repeated.

Nothing here runs git: a workspace's own git config can name programs to run (an fsmonitor, a
clean filter), so the branch is read from ``HEAD`` and the index is parsed and compared by size
and modification time, as ``git status`` does before it looks closer.
"""

from __future__ import annotations

import datetime
import os
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from openprogram_lsp.context.git_index import Entry, Unreadable, read_index
from openprogram_lsp.core.transcript import ENVIRONMENT_OPEN
from openprogram_lsp.core.types import Node

MAX_ENTRIES = 40  # top-level entries listed; the rest are counted
MAX_INDEX = 50_000  # index entries compared; a bigger index is not checked
TIME_BUDGET = 0.25  # seconds the comparison may take before it gives up ("unknown")
MAX_PARENTS = 32  # directories searched upwards for a repository
GITLINK = 0o160000


def environment_note(workspace: Path, today: datetime.date | None = None) -> str:
    """The ``<environment>`` note of a workspace as it is now."""
    day = (today or datetime.date.today()).isoformat()
    lines = [f"Date: {day}", f"Git: {_git_state(workspace)}",
             f"Top level of the workspace: {_top_level(workspace)}"]
    return f"{ENVIRONMENT_OPEN}\n" + "\n".join(lines) + "\n</environment>"


def last_note(history: Sequence[Node]) -> str | None:
    """The environment note the model last saw on this chain (None: never)."""
    for node in reversed(history):
        if node.role == "user":
            note = node.metadata.get("environment")
            if isinstance(note, str):
                return note
    return None


_listed: dict[str, tuple[tuple[int, int, int], str]] = {}
_listed_lock = threading.Lock()
SETTLED_NS = 100_000_000
"""A directory modified this recently (ns) is listed again next time: file systems keep coarse
times, so a second change within the same tick would leave its time as it was."""


def _top_level(workspace: Path) -> str:
    """The top level as the note names it; kept while the directory's modification time stays
    the same (adding, removing or renaming an entry changes it): a workspace with a thousand
    top-level entries is not listed again on every turn."""
    try:
        st = os.stat(workspace)
    except OSError:
        return "(cannot be listed)"
    stamp, key = (st.st_dev, st.st_ino, st.st_mtime_ns), str(workspace)
    hit = _listed.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    text = _list_top_level(workspace)
    if time.time_ns() - st.st_mtime_ns > SETTLED_NS:
        with _listed_lock:
            if len(_listed) >= 64:
                _listed.clear()
            _listed[key] = (stamp, text)
    return text


def _list_top_level(workspace: Path) -> str:
    try:
        with os.scandir(workspace) as it:
            entries = sorted((e.name + ("/" if e.is_dir(follow_symlinks=False) else ""))
                             for e in it if e.name != ".git")
    except OSError:
        return "(cannot be listed)"
    if not entries:
        return "(empty)"
    shown = ", ".join(entries[:MAX_ENTRIES])
    more = len(entries) - MAX_ENTRIES
    return f"{shown} (and {more} more)" if more > 0 else shown


def _git_dir(workspace: Path) -> tuple[Path, Path] | None:
    """The repository's git directory and work-tree root holding the workspace, if any."""
    here = workspace
    for _ in range(MAX_PARENTS):
        dot = here / ".git"
        try:
            if dot.is_dir():
                return dot, here
            if dot.is_file():  # a linked worktree or submodule: "gitdir: PATH"
                text = dot.read_text("utf-8", "replace").strip()
                if text.startswith("gitdir:"):
                    target = Path(text[len("gitdir:"):].strip())
                    return (target if target.is_absolute() else here / target), here
                return None
        except OSError:
            return None
        if here.parent == here:
            return None
        here = here.parent
    return None


def _git_state(workspace: Path) -> str:
    found = _git_dir(workspace)
    if found is None:
        return "not a git repository"
    gitdir, root = found
    try:
        head = (gitdir / "HEAD").read_text("utf-8", "replace").strip()
    except OSError:
        return "a git repository whose HEAD cannot be read"
    if head.startswith("ref:"):
        ref = head[4:].strip()
        where = f"branch {ref.removeprefix('refs/heads/')}"
    else:
        where = f"detached HEAD at {head[:12]}"
    changed = _changed(gitdir, root)
    if changed is None:
        state = "working tree state unknown"
    elif changed:
        state = (f"{changed} tracked file{'s' if changed != 1 else ''} changed since the index "
                 f"(uncommitted work)")
    else:
        state = "no tracked file changed"
    return f"{where}; {state}"


_index_cache: dict[str, tuple[tuple[int, int, int], list[Entry]]] = {}
_cache_lock = threading.Lock()


def _sha256(gitdir: Path) -> bool:
    """Whether the repository's objects are named by SHA-256 (its index entries are longer;
    a linked worktree's setting is in the common directory's config)."""
    try:
        common = (gitdir / "commondir").read_text("utf-8", "replace").strip()
    except OSError:
        common = ""
    for config in (gitdir / "config", gitdir / common / "config" if common else None):
        try:
            text = config.read_text("utf-8", "replace") if config is not None else ""
        except OSError:
            continue
        if re.search(r"(?im)^\s*objectformat\s*=\s*sha256\b", text):
            return True
    return False


def _index(gitdir: Path) -> list[Entry] | None:
    """The index's entries as (path, mode, size, mtime seconds, nanoseconds), parsed once per
    version of the file (a turn's cost is then the comparison alone)."""
    path = gitdir / "index"
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    with _cache_lock:
        hit = _index_cache.get(str(path))
    if hit is not None and hit[0] == key:
        return hit[1]
    if _sha256(gitdir):
        return None
    try:
        with open(path, "rb") as fh:
            rows = read_index(fh.read(), MAX_INDEX)
    except (OSError, Unreadable):  # absent, truncated, a format the reader does not follow
        return None
    if rows is None:  # too many entries
        return None
    with _cache_lock:
        if len(_index_cache) >= 8:
            _index_cache.pop(next(iter(_index_cache)))
        _index_cache[str(path)] = (key, rows)
    return rows


def _changed(gitdir: Path, root: Path) -> int | None:
    """Tracked files whose size or modification time differ from the index, or that are
    gone; None when the index cannot be read (absent, too big, a format not understood)."""
    entries = _index(gitdir)
    if entries is None:
        return None
    changed = 0
    top = f"{root}{os.sep}"
    deadline = time.monotonic() + TIME_BUDGET
    for n, (path, mode, size, sec, nsec) in enumerate(entries):
        if n % 512 == 511 and time.monotonic() > deadline:
            return None  # a slow disk or a huge tree: not worth a turn's wait
        if mode == GITLINK:  # a submodule: its own repository
            continue
        if path.startswith("/") or ".." in path.split("/"):
            continue
        try:
            st = os.lstat(top + path)
        except OSError:
            changed += 1
            continue
        if st.st_size != size or (int(st.st_mtime), st.st_mtime_ns % 1_000_000_000) \
                != (sec, nsec):
            changed += 1
    return changed
