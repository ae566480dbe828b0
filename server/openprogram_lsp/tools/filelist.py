"""Workspace files for @-mention completion: a ``.gitignore``-aware list, fuzzy-matched fast.

The list comes from ``rg --files`` (ripgrep honours ``.gitignore``, ``.ignore`` and
``.git/info/exclude``; ``.git`` is skipped) once per workspace, and is then kept current by the
file watcher's changes (which leave ignored paths out the same way).

It is held by directory: each directory's lowercased path, and its files' lowercased names in
one ``\\n``-joined string. A query is matched as a subsequence, case-insensitively. The greedy
match of a path is the greedy match of its directory followed by that of its name, so the
query's progress through each directory is computed once per directory (from its parent's),
and only the rest of the query is matched against that directory's names, by one ``re`` scan
(C speed) over the names of all directories at the same progress. Directories lacking a
character the rest needs are skipped. Ranking looks at a bounded set of candidates: paths that
contain the query (found by ``str.find``, shallow directories first), then other matches; the
name containing the query ranks first, then a prefix of the name, the path containing it, then
shorter, shallower paths. ``docs/decisions/file-list.md`` has the figures.
"""

from __future__ import annotations

import bisect
import heapq
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from openprogram_lsp.tools.builtin.search import rg_binary

LIST_TIMEOUT = 60.0
MAX_FILES = 1_000_000
MAX_CANDIDATES = 2_000  # ranked per tier; directories are shallow-first, so these are likely


@dataclass(frozen=True, slots=True)
class Match:
    """One file found for a query (workspace-relative, ``/`` separated)."""

    path: str
    score: float


def _list(root: Path) -> list[str]:
    rg = rg_binary()
    if rg is None:
        return _walk(root)
    argv = [rg, "--no-config", "--files", "--hidden", "--no-require-git", "--glob", "!.git",
            "--null"]
    proc = subprocess.run(argv, cwd=root, capture_output=True, timeout=LIST_TIMEOUT, check=False)
    if proc.returncode not in (0, 1):  # 1: no files
        return _walk(root)
    names = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [n.removeprefix("./") for n in names if n and "\n" not in n][:MAX_FILES]


def _walk(root: Path) -> list[str]:
    """Without ripgrep: every file but ``.git``, ``node_modules`` and virtualenvs."""
    out: list[str] = []
    skip = {".git", "node_modules", ".venv", "venv", "__pycache__"}
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        rel = os.path.relpath(base, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        out.extend(prefix + f for f in files if "\n" not in f)
        if len(out) >= MAX_FILES:
            break
    return out


def fold(text: str) -> str:
    """Lowercase, one character for one (so offsets stay those of the original text)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _score(path: str, q: str) -> float:
    low = fold(path)
    name = low.rsplit("/", 1)[-1]
    score = 0.0
    if q in name:
        score += 1000 + (500 if name.startswith(q) else 0)
    elif q in low:
        score += 400
    return score - len(path) * 0.5 - low.count("/") * 2


def _rest_pattern(rest: str) -> re.Pattern[str]:
    """A line of the names holding ``rest``'s characters in order, from its ``\\n`` on.

    Each step consumes up to the first occurrence of the next character (possessive), so a line
    is matched in one pass with no backtracking; the leading ``\\n`` lets the scan jump from
    line to line. The empty group makes ``findall`` return shared empty strings (a cheap count).
    """
    steps = "".join(f"[^\n{re.escape(c)}]*+{re.escape(c)}" for c in rest)
    return re.compile(f"\n{steps}[^\n]*()")


_ALL_BYTES = frozenset(range(256))


class _Scan:
    """The names of some directories, matched against the rest of an ASCII query.

    The names are first cut down to the characters the rest needs (``bytes.translate`` with a
    delete set, in C), which keeps each line's subsequence match and makes the ``re`` scan short.
    Hits are counted as lines (``\\n``), so they map back to the names without offsets.
    """

    def __init__(self, rest: str, segments: list[bytes]) -> None:
        keep = {ord(c) for c in rest} | {10}
        self.text = b"".join(segments).translate(None, bytes(sorted(_ALL_BYTES - keep)))
        steps = b"".join(b"[^\n" + re.escape(c).encode() + b"]*+" + re.escape(c).encode()
                         for c in rest)
        self.pattern = re.compile(b"\n" + steps + b"[^\n]*()")

    def count(self) -> int:
        return len(self.pattern.findall(self.text))

    def lines(self) -> Iterator[int]:
        """The indices of the matching lines, in order."""
        line, last = -1, 0
        for hit in self.pattern.finditer(self.text):
            line += self.text.count(b"\n", last, hit.start() + 1)
            last = hit.start() + 1
            yield line


class _StrScan:
    """``_Scan`` for a query with non-ASCII characters: the lowercased names as they are."""

    def __init__(self, rest: str, segments: list[str]) -> None:
        self.text = "".join(segments)
        self.pattern = _rest_pattern(rest)

    def count(self) -> int:
        return len(self.pattern.findall(self.text))

    def lines(self) -> Iterator[int]:
        line, last = -1, 0
        for hit in self.pattern.finditer(self.text):
            line += self.text.count("\n", last, hit.start() + 1)
            last = hit.start() + 1
            yield line


class _Dir:
    """One directory: its path (with a trailing ``/``; ``""`` for the root) and its files."""

    __slots__ = ("chars", "comp", "flat", "flat_low", "low", "low_bytes", "names", "parent",
                 "path", "seg_low")

    def __init__(self, path: str, parent: int) -> None:
        self.path = path
        self.low = fold(path)
        self.parent = parent
        base = path[:-1].rsplit("/", 1)[-1] + "/" if path else ""
        self.comp = fold(base)  # the last component, to continue the parent's match
        self.names: list[str] = []
        self.seg_low = ""  # "\nname\nname...", lowercased
        self.low_bytes = b""  # the same in UTF-8
        self.chars: frozenset[str] = frozenset()
        self.flat = self.flat_low = ""  # "\npath\npath...": the whole paths, for find()

    def rebuild(self) -> None:
        self.names.sort(key=lambda n: (len(n), n))
        self.seg_low = fold("".join("\n" + n for n in self.names))
        self.low_bytes = self.seg_low.encode("utf-8", "surrogateescape")
        self.chars = frozenset(self.seg_low)
        self.flat = "".join("\n" + self.path + n for n in self.names)
        self.flat_low = fold(self.flat)


class FileList:
    """The files of one workspace root, updated by watcher changes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirs: list[_Dir] = []
        self._index: dict[str, int] = {}  # directory path -> position in _dirs
        self._built = False
        self._stale: set[int] = set()  # directories whose names changed
        self._count = 0
        self._flat = self._flat_low = ""  # every path, directory by directory
        self._flat_stale = True
        self._pending: list[list[dict[str, str]]] = []  # watcher changes not applied yet
        self._relist = False  # the watcher lost events: list the tree again
        self._lock = threading.Lock()  # one query at a time (queries run in worker threads)

    @property
    def count(self) -> int:
        """How many files are listed (after the first query)."""
        return self._count

    # building ------------------------------------------------------------------------------

    def _dir(self, path: str) -> int:
        """The position of directory ``path`` (``a/b/`` or ``""``), made with its parents."""
        found = self._index.get(path)
        if found is not None:
            return found
        parent = self._dir(path[:-1].rsplit("/", 1)[0] + "/" if "/" in path[:-1] else "") \
            if path else -1
        self._dirs.append(_Dir(path, parent))
        self._index[path] = len(self._dirs) - 1
        return len(self._dirs) - 1

    def _build(self, paths: list[str]) -> None:
        by_dir: dict[str, list[str]] = {}
        for p in paths:
            head, _, name = p.rpartition("/")
            by_dir.setdefault(head + "/" if head else "", []).append(name)
        for d in sorted(by_dir, key=lambda d: (d.count("/"), len(d), d)):
            self._dir(d)
        for d, names in by_dir.items():
            entry = self._dirs[self._index[d]]
            entry.names = names
            entry.rebuild()
        self._count = len(paths)
        self._flat_stale = True

    def _ensure(self) -> None:
        """Apply pending changes; bring changed directories and the flat text up to date."""
        while self._pending:
            self._apply(self._pending.pop(0))
        for j in self._stale:
            self._dirs[j].rebuild()
        self._stale.clear()
        if self._flat_stale:
            self._flat = "".join(d.flat for d in self._dirs)
            self._flat_low = "".join(d.flat_low for d in self._dirs)
            self._flat_stale = False

    def note_changes(self, changes: list[dict[str, str]]) -> None:
        """Take the watcher's ``{path, change}`` records, applied by the next query (never
        waits for a running query; a no-op before the first query)."""
        if not self._built:
            return
        if not changes:  # the watcher lost events: anything may have changed
            self._relist = True
        else:
            self._pending.append(list(changes))

    def _apply(self, changes: list[dict[str, str]]) -> None:
        for c in changes:
            path = c.get("path", "")
            if not path or "\n" in path:
                continue
            head, _, name = path.rpartition("/")
            d = head + "/" if head else ""
            j = self._index.get(d)
            has = j is not None and name in self._dirs[j].names
            if c.get("change") == "deleted":
                if has:
                    assert j is not None
                    self._dirs[j].names.remove(name)
                    self._mark(j, -1)
                else:  # a deleted directory: drop everything under it
                    self._drop_under(path.rstrip("/") + "/")
            elif not has and (self.root / path).is_file():
                j = self._dir(d)
                self._dirs[j].names.append(name)
                self._mark(j, 1)

    def _mark(self, j: int, delta: int) -> None:
        self._stale.add(j)
        self._count += delta
        self._flat_stale = True

    def _drop_under(self, prefix: str) -> None:
        for j, d in enumerate(self._dirs):
            if d.path.startswith(prefix) and d.names:
                self._count -= len(d.names)
                d.names = []
                self._stale.add(j)
                self._flat_stale = True

    # querying ------------------------------------------------------------------------------

    def query(self, query: str, limit: int = 50) -> tuple[list[Match], int]:
        """The best ``limit`` files for a fuzzy query, and how many matched in all."""
        if not self._built or self._relist:
            self._relist = False
            listed = _list(self.root)  # outside the lock: it may take a while
            with self._lock:
                self._dirs, self._index, self._stale = [], {}, set()
                self._pending.clear()
                self._build(listed)
                self._built = True
        with self._lock:
            self._ensure()
            q = fold("".join(c for c in query if not c.isspace()))
            if not q:
                return self._first(limit), self._count
            return self._query(q, limit)

    def _first(self, limit: int) -> list[Match]:
        out: list[Match] = []
        for d in self._dirs:
            for n in d.names[:limit - len(out)]:
                out.append(Match(d.path + n, 0.0))
            if len(out) >= limit:
                break
        return out

    def _progress(self, q: str) -> list[int]:
        """How many of the query's characters each directory's path matches, greedily."""
        m = len(q)
        done = [0] * len(self._dirs)
        for j, d in enumerate(self._dirs):
            k = done[d.parent] if d.parent >= 0 else 0
            pos = 0
            comp = d.comp
            while k < m:
                pos = comp.find(q[k], pos) + 1
                if not pos:
                    break
                k += 1
            done[j] = k
        return done

    def _query(self, q: str, limit: int) -> tuple[list[Match], int]:
        m = len(q)
        done = self._progress(q)
        total = 0
        whole: list[int] = []  # directories whose path alone matches: all their files do
        partial: dict[int, list[int]] = {}
        for j, k in enumerate(done):
            d = self._dirs[j]
            if not d.names:
                continue
            if k == m:
                whole.append(j)
                total += len(d.names)
            elif d.chars.issuperset(q[k:]):
                partial.setdefault(k, []).append(j)
        for k, group in partial.items():
            total += self._scan(q[k:], group)[0].count()
        pool = self._containing(q)
        if len(pool) < limit:
            pool.update(self._fuzzy(q, whole, partial, limit))
        scores = {p: _score(p, q) for p in pool}
        best = heapq.nlargest(limit, scores, key=lambda p: (scores[p], p))
        best.sort(key=lambda p: (-scores[p], p))
        return [Match(p, scores[p]) for p in best], total

    def _scan(self, rest: str, group: list[int]) -> tuple[_Scan | _StrScan, list[int]]:
        """A scan of the names of ``group`` for ``rest``, and where each directory's lines end."""
        ends: list[int] = []
        n = 0
        for j in group:
            n += len(self._dirs[j].names)
            ends.append(n)
        if rest.isascii():
            return _Scan(rest, [self._dirs[j].low_bytes for j in group]), ends
        return _StrScan(rest, [self._dirs[j].seg_low for j in group]), ends

    def _containing(self, q: str) -> set[str]:
        """Paths containing the query as a substring, at most ``MAX_CANDIDATES`` of them, the
        shallowest directories first."""
        found: set[str] = set()
        flat, low = self._flat, self._flat_low
        at = low.find(q)
        while at >= 0 and len(found) < MAX_CANDIDATES:
            start = low.rfind("\n", 0, at) + 1
            end = low.find("\n", at)
            end = len(low) if end < 0 else end
            found.add(flat[start:end])
            at = low.find(q, end)
        return found

    def _fuzzy(self, q: str, whole: list[int], partial: dict[int, list[int]],
               limit: int) -> set[str]:
        """Up to ``MAX_CANDIDATES`` subsequence matches, shallow directories first."""
        out: set[str] = set()
        for j in whole:
            d = self._dirs[j]
            out.update(d.path + n for n in d.names[:MAX_CANDIDATES - len(out)])
            if len(out) >= MAX_CANDIDATES:
                return out
        for k in sorted(partial, reverse=True):  # the most of the query in the directory first
            group = partial[k]
            scan, ends = self._scan(q[k:], group)
            for line in scan.lines():
                at = bisect.bisect_right(ends, line)
                d = self._dirs[group[at]]
                out.add(d.path + d.names[line - (ends[at - 1] if at else 0)])
                if len(out) >= MAX_CANDIDATES:
                    return out
        return out
        return out
