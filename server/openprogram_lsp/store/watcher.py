"""The workspace watcher: watchfiles events, minus ignored paths, as ``file.changed`` on the bus.

Ignored: ``.gitignore`` files (root and nested), ``.git/info/exclude`` and the usual directories
(``.git``, ``node_modules``, virtualenvs, caches), and paths more than ``MAX_DEPTH`` directories
deep (deciding one costs time in its depth squared: a removed tree 2,100 deep held the server
for minutes). Paths are workspace-relative, '/'-separated.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# awatch asks anyio for its asyncio backend when it first runs, and anyio imports it then
# (25 modules, 40-70 ms of the event loop right after ``initialized``, ahead of the editor's
# first request); the server imports it at start-up, before it answers ``initialize``
import anyio._backends._asyncio  # noqa: F401
from watchfiles import Change, awatch

from openprogram_lsp.events.bus import EventBus, make_event

log = logging.getLogger(__name__)

STEP_MS = 10
"""Quiet time before a batch is delivered: 10 ms gives ~16 ms median write-to-event latency."""

ALWAYS_IGNORED: frozenset[str] = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".idea", ".hypothesis", ".direnv",
})
"""Directory names ignored everywhere, whatever .gitignore says."""

MAX_DEPTH = 256
"""Components a reported path may have; deeper ones are ignored (no real tree comes near)."""


@dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _glob_to_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1:end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        elif c == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_gitignore(text: str) -> list[_Pattern]:
    """Compile the patterns of one ignore file."""
    patterns = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _glob_to_regex(line)
        regex = f"^{body}$" if anchored else f"^(?:.*/)?{body}$"
        patterns.append(_Pattern(re.compile(regex), negate, dir_only))
    return patterns


class IgnoreRules:
    """Decides whether a workspace path is ignored; ignore files are re-read when they change."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[Path, tuple[float, list[_Pattern]]] = {}

    def _patterns(self, file: Path) -> list[_Pattern]:
        try:
            mtime = file.stat().st_mtime
        except OSError:
            self._cache.pop(file, None)
            return []
        hit = self._cache.get(file)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        try:
            patterns = parse_gitignore(file.read_text("utf-8", "replace"))
        except OSError:
            patterns = []
        self._cache[file] = (mtime, patterns)
        return patterns

    def _decide(self, rel: str, is_dir: bool, base: str, patterns: list[_Pattern],
                current: bool) -> bool:
        sub = rel[len(base) + 1:] if base else rel
        for p in patterns:
            if p.dir_only and not is_dir:
                continue
            if p.regex.match(sub):
                current = not p.negate
        return current

    def is_ignored(self, rel: str, *, is_dir: bool = False) -> bool:
        """Whether a '/'-separated relative path is ignored (or lies in an ignored dir)."""
        if rel.count("/") >= MAX_DEPTH:
            return True
        parts = rel.split("/")
        if any(part in ALWAYS_IGNORED for part in parts):
            return True
        sources: list[tuple[str, list[_Pattern]]] = [
            ("", self._patterns(self.root / ".git" / "info" / "exclude")),
        ]
        for depth in range(len(parts)):
            prefix = "/".join(parts[:depth])
            sources.append((prefix, self._patterns(self.root / prefix / ".gitignore")))
            target = "/".join(parts[: depth + 1])
            target_is_dir = is_dir or depth + 1 < len(parts)
            ignored = False
            for base, patterns in sources:
                if patterns:
                    ignored = self._decide(target, target_is_dir, base, patterns, ignored)
            if ignored:
                return True
        return False


def relative(root: Path, path: str) -> str | None:
    """A path relative to root, '/'-separated; None when outside."""
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return None
    if rel.startswith(".."):
        return None
    return rel.replace(os.sep, "/")


NEW_DIR_SCAN_LIMIT = 2000
BURST = 1000
"""A batch with more raw events than this may have lost some (the kernel queue overflows
under bursts): the checkpoint store is told to walk instead of trusting the list."""
RESTART_LIMIT = 20
"""Watcher restarts within a minute before the next one waits a second."""
_UNDECODABLE = re.compile(r'Unable to decode path "((?:[^"\\]|\\.)*)"')
_RUST_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f]+\}|.)")


def undecodable_path(message: str) -> str | None:
    """The path named in watchfiles' "Unable to decode path" error, surrogate-escaped."""
    hit = _UNDECODABLE.search(message)
    if hit is None:
        return None
    out = bytearray()
    pos = 0
    raw = hit.group(1)
    for esc in _RUST_ESCAPE.finditer(raw):
        out += raw[pos:esc.start()].encode("utf-8", "surrogateescape")
        code = esc.group(1)
        if code.startswith("x") and len(code) == 3:
            out.append(int(code[1:], 16))
        elif code.startswith("u{"):
            out += chr(int(code[2:-1], 16)).encode("utf-8", "surrogatepass")
        else:
            out += {"n": b"\n", "t": b"\t", "r": b"\r", "0": b"\0"}.get(
                code, code.encode("utf-8", "surrogateescape"))
        pos = esc.end()
    out += raw[pos:].encode("utf-8", "surrogateescape")
    return os.fsdecode(bytes(out))
_CHANGE_NAMES = {Change.added: "added", Change.modified: "modified", Change.deleted: "deleted"}


def _never_ignored(change: Change, path: str) -> bool:
    return True


class WorkspaceWatcher:
    """Watches one workspace folder and emits ``file.changed`` batches on the bus."""

    def __init__(self, root: Path, bus: EventBus, *, step_ms: int = STEP_MS,
                 on_changes: Callable[[Path, list[dict[str, str]]], None] | None = None,
                 exclude: list[Path] | None = None) -> None:
        self.root = root.resolve()
        self.exclude = [str(p.resolve()) + os.sep for p in exclude or []]
        self.bus = bus
        self.step_ms = step_ms
        self.on_changes = on_changes
        self.rules = IgnoreRules(self.root)
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    def start(self) -> asyncio.Task[None]:
        """Start watching on the running loop."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        return self._task

    async def stop(self) -> None:
        """Stop watching and wait for the watcher to finish."""
        self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 2)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()

    def changes_of(self, raw: set[tuple[Change, str]]) -> list[dict[str, str]]:
        """The batch's non-ignored changes, one per path (the last change wins)."""
        by_path: dict[str, str] = {}
        for change, path in sorted(raw, key=lambda c: c[1]):
            if any(path.startswith(prefix) for prefix in self.exclude):
                continue
            rel = relative(self.root, path)
            if rel is None or rel == "." or self.rules.is_ignored(rel):
                continue
            if os.path.isdir(path):
                if change == Change.added:
                    # inotify watches a new directory only once it exists, so files written
                    # into it right away can go unreported: report what it holds now
                    for inner in self._files_in(path):
                        by_path.setdefault(inner, "added")
                continue
            by_path[rel] = _CHANGE_NAMES.get(change, "modified")
        return [{"path": p, "change": c} for p, c in sorted(by_path.items())]

    def _files_in(self, directory: str, limit: int = NEW_DIR_SCAN_LIMIT) -> list[str]:
        """Non-ignored files under a new directory (bounded)."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(directory):
            rel_dir = relative(self.root, dirpath)
            if rel_dir is None:
                break
            dirnames[:] = [d for d in dirnames if not self.rules.is_ignored(
                f"{rel_dir}/{d}" if rel_dir != "." else d, is_dir=True)]
            for name in filenames:
                rel = f"{rel_dir}/{name}" if rel_dir != "." else name
                if not self.rules.is_ignored(rel):
                    out.append(rel)
                    if len(out) >= limit:
                        return out
        return out

    def emit(self, changes: list[dict[str, str]]) -> None:
        """Publish a batch as ``file.changed``."""
        if not changes:
            return
        self.bus.emit(make_event("file.changed", {"changes": changes, "root": str(self.root)},
                                 session_id=None, turn_id=None, origin="watcher"))
        if self.on_changes is not None:
            try:
                self.on_changes(self.root, changes)
            except Exception:
                log.exception("file change listener failed")

    def lost_events(self) -> None:
        """Events may have been lost: the next checkpoint walks the whole tree."""
        if self.on_changes is not None:
            try:
                self.on_changes(self.root, [])  # no paths: "anything may have changed"
            except Exception:
                log.exception("file change listener failed")

    async def _run(self) -> None:
        if not self.root.is_dir():
            log.warning("not watching %s: not a directory", self.root)
            return
        restarts: list[float] = []
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            try:
                self.ready.set()
                async for raw in awatch(self.root, watch_filter=_never_ignored,
                                        step=self.step_ms, stop_event=self._stop,
                                        rust_timeout=500, ignore_permission_denied=True):
                    if len(raw) > BURST:
                        self.lost_events()
                    self.emit(self.changes_of(raw))
                return
            except Exception as exc:
                if not self.root.is_dir():
                    log.warning("stopped watching %s: it is gone", self.root)
                    return
                message = " ".join(str(e) for e in _leaves(exc))
                path = undecodable_path(message)
                if path is not None:
                    log.warning("watcher of %s: a file name that is not UTF-8 (%r); "
                                "watching goes on", self.root, path)
                    self.emit(self.changes_of({(Change.modified, path)}))
                else:
                    log.warning("watcher of %s failed (%s); restarting", self.root, message)
                self.lost_events()  # the batch that failed is gone
            now = loop.time()
            restarts = [t for t in restarts if now - t < 60] + [now]
            if len(restarts) > RESTART_LIMIT:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), 1.0)


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (possibly nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]
