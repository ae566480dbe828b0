"""Workspace files for @-mention completion: a ``.gitignore``-aware list, fuzzy-matched fast.

The list comes from ``rg --files`` (ripgrep honours ``.gitignore``, ``.ignore`` and
``.git/info/exclude``; ``.git`` is skipped) once per workspace, and is then kept current by the
file watcher's changes. A query is a subsequence match run by ``re`` over all paths joined in
one string (C speed over 100,000 paths), then the candidates are ranked: the name containing
the query, a prefix of the name, the path containing it, then shorter paths.
"""

from __future__ import annotations

import heapq
import os
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from openprogram_lsp.tools.builtin.search import rg_binary

LIST_TIMEOUT = 60.0
MAX_FILES = 1_000_000
MAX_CANDIDATES = 2_000  # ranked; the list is sorted shallow-first, so these are the likely ones


@dataclass(frozen=True, slots=True)
class Match:
    """One file found for a query (workspace-relative, ``/`` separated)."""

    path: str
    score: float


def _list(root: Path) -> list[str]:
    rg = rg_binary()
    if rg is None:
        return _walk(root)
    proc = subprocess.run([rg, "--no-config", "--files", "--hidden", "--glob", "!.git",
                           "--null"], cwd=root, capture_output=True, timeout=LIST_TIMEOUT,
                          check=False)
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


def _pattern(query: str) -> re.Pattern[str] | None:
    """Lines holding the query's characters in order: ``[^\\nA]*A[^\\nB]*B...``.

    Each step consumes up to the first occurrence of the next character, so a line is matched
    in one pass with no backtracking (a lazy ``.*?`` form is exponential on near misses).
    """
    chars = [c for c in query if not c.isspace()]
    if not chars:
        return None
    parts = []
    for c in chars:
        alts = "".join(sorted({re.escape(c.lower()), re.escape(c.upper())}))
        parts.append(f"[^\n{alts}]*+[{alts}]")
    return re.compile("^" + "".join(parts) + "[^\n]*", re.M)


def _score(path: str, q: str) -> float:
    low = path.lower()
    name = low.rsplit("/", 1)[-1]
    score = 0.0
    if q in name:
        score += 1000 + (500 if name.startswith(q) else 0)
    elif q in low:
        score += 400
    return score - len(path) * 0.5 - low.count("/") * 2


class FileList:
    """The files of one workspace root, updated by watcher changes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._paths: set[str] | None = None
        self._blob = ""
        self._sorted: list[str] = []
        self._stale = True
        self._last: tuple[str, str] | None = None  # the previous query and its matches
        self._lock = threading.Lock()

    def _ensure(self) -> None:
        if self._paths is None:
            listed = _list(self.root)
            with self._lock:
                if self._paths is None:
                    self._paths = set(listed)
                    self._stale = True
        with self._lock:
            if self._stale and self._paths is not None:
                self._sorted = sorted(self._paths, key=lambda p: (p.count("/"), len(p), p))
                self._blob = "\n".join(self._sorted)
                self._last = None
                self._stale = False

    def note_changes(self, changes: list[dict[str, str]]) -> None:
        """Apply the watcher's ``{path, change}`` records (a no-op before the first query)."""
        with self._lock:
            if self._paths is None:
                return
            for c in changes:
                path = c.get("path", "")
                if not path or "\n" in path:
                    continue
                if c.get("change") == "deleted":
                    if path in self._paths:
                        self._paths.discard(path)
                        self._stale = True
                    else:  # a deleted directory: drop everything under it
                        prefix = path.rstrip("/") + "/"
                        gone = [p for p in self._paths if p.startswith(prefix)]
                        if gone:
                            self._paths.difference_update(gone)
                            self._stale = True
                elif path not in self._paths and (self.root / path).is_file():
                    self._paths.add(path)
                    self._stale = True

    def query(self, query: str, limit: int = 50) -> tuple[list[Match], int]:
        """The best ``limit`` files for a fuzzy query, and how many matched in all."""
        self._ensure()
        pattern = _pattern(query)
        if pattern is None:
            return [Match(p, 0.0) for p in self._sorted[:limit]], len(self._sorted)
        q = "".join(c for c in query.lower() if not c.isspace())
        with self._lock:
            last = self._last
        # typing narrows: a query that extends the previous one only searches its matches
        blob = last[1] if last is not None and q.startswith(last[0]) else self._blob
        found = pattern.findall(blob)
        with self._lock:
            if not self._stale:
                self._last = (q, "\n".join(found))
        # the list is sorted shallow and short first, so the first candidates are the likely
        # ones; paths holding the query as a substring are all ranked (up to a cap)
        exact = [p for p in found if q in p.lower()][:MAX_CANDIDATES]
        pool = exact if len(exact) >= limit else [*exact, *found[:MAX_CANDIDATES]]
        best = heapq.nlargest(limit, set(pool), key=lambda p: (_score(p, q), p))
        best.sort(key=lambda p: (-_score(p, q), p))
        return [Match(p, _score(p, q)) for p in best], len(found)
