"""The small index sessions are listed from: ``sessions/.listing``, one line per meta write.

Each line is the listed part of one session's meta (``LISTED``) as JSON, or a tombstone
``{"id": ..., "deleted": true}``; the last line of an id wins. A listing reads only the lines
added since its last read, and looks at the sessions directory itself (one ``scandir``, no
``stat`` per session) only when its mtime says a session directory came or went: sessions it
does not know (written before the listing, or by a writer killed between its meta and its line)
are read from their ``meta.json`` once and added. Appenders hold a shared ``flock`` of
``.listing-writers``; the rewrite that drops superseded lines holds it exclusively.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openprogram_lsp.core.fsutil import atomic_write, write_all
from openprogram_lsp.store import meta_slots

LISTING = ".listing"
WRITERS = ".listing-writers"
"""The appenders' shared ``flock`` (no ".lock": git owns those names)."""
LISTED = ("id", "title", "headId", "status", "createdAt", "updatedAt", "workspace", "running",
          "acpForks")
SLACK = 256
"""Lines past twice the session count after which the listing is rewritten."""


def listed(meta: dict[str, Any]) -> dict[str, Any]:
    """The part of a meta the listing keeps."""
    return {k: meta[k] for k in LISTED if k in meta}


class SessionListing:
    """Listed metas by session id, kept up to date from ``sessions/.listing``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / LISTING
        self.lock_path = root / WRITERS
        self.rows: dict[str, dict[str, Any]] = {}
        self.version = 0  # moves whenever ``rows`` changes
        self._ident: tuple[int, int] | None = None
        self._offset = 0
        self._lines = 0  # lines in the file, as far as this process knows
        self._dir_mtime: int | None = None
        self._pending: set[str] = set()  # directories seen without a meta yet
        self._lock_fd: tuple[int, int] | None = None  # (pid, the writers' flock, kept open)

    def __del__(self) -> None:
        held = self._lock_fd
        if held is not None and held[0] == os.getpid():
            with contextlib.suppress(OSError):
                os.close(held[1])

    # -- writing ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, kind: int) -> Iterator[None]:
        held = self._lock_fd
        if held is None or held[0] != os.getpid():  # first use, or a forked child's
            held = self._lock_fd = (os.getpid(), os.open(
                self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644))
        fd = held[1]
        fcntl.flock(fd, kind)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _append(self, items: list[dict[str, Any]]) -> None:
        data = b"".join(json.dumps(i, separators=(",", ":")).encode() + b"\n" for i in items)
        with self._locked(fcntl.LOCK_SH):
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                write_all(fd, data)
                st = os.fstat(fd)
            finally:
                os.close(fd)
        if (st.st_dev, st.st_ino) == self._ident and st.st_size == self._offset + len(data):
            # nothing but these lines came since the last read: no need to read them back
            self._offset = st.st_size
            for line in data.splitlines():
                self._lines += 1
                self._set(json.loads(line))
            return
        self._catch_up()  # reads these lines back (and any another process added)

    def record(self, meta: dict[str, Any]) -> None:
        """Note a session's new meta (after its ``meta.json`` was written)."""
        self._append([listed(meta)])
        if self._lines > 2 * len(self.rows) + SLACK:
            self._rewrite()

    def forget(self, sid: str) -> None:
        """Note that a session is gone."""
        self._append([{"id": sid, "deleted": True}])

    def _set(self, item: dict[str, Any]) -> None:
        sid = item.get("id")
        if not isinstance(sid, str):
            return
        if item.get("deleted"):
            if self.rows.pop(sid, None) is not None:
                self.version += 1
        elif self.rows.get(sid) != item:
            self.rows[sid] = item
            self.version += 1

    # -- reading ------------------------------------------------------------------------------

    def current(self) -> dict[str, dict[str, Any]]:
        """Every listed session by id, after reading what changed since the last call."""
        self._catch_up()
        self._reconcile()
        if self._lines > 2 * len(self.rows) + SLACK:
            self._rewrite()
        return self.rows

    def _catch_up(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                ident = (st.st_dev, st.st_ino)
                if ident != self._ident or st.st_size < self._offset:
                    self.rows, self._offset, self._lines = {}, 0, 0
                    self._ident = ident
                    self.version += 1
                if st.st_size == self._offset:
                    return
                fh.seek(self._offset)
                data = fh.read()
        except FileNotFoundError:
            if self._ident is not None:
                self.rows, self._offset, self._lines, self._ident = {}, 0, 0, None
                self.version += 1
                self._dir_mtime = None
            return
        end = data.rfind(b"\n") + 1
        self._offset += end
        lines = data[:end].splitlines()
        for item in _parsed(lines):
            self._lines += 1
            if isinstance(item, dict):
                self._set(item)

    def _reconcile(self) -> None:
        """Add sessions the listing lacks and drop those whose directory is gone."""
        try:
            mtime = os.stat(self.root).st_mtime_ns
        except FileNotFoundError:
            return
        if mtime == self._dir_mtime and not self._pending:
            return
        if mtime != self._dir_mtime:
            self._dir_mtime = mtime
            names = {e.name for e in os.scandir(self.root)
                     if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)}
            gone = [sid for sid in self.rows if sid not in names]
            if gone:
                self._append([{"id": sid, "deleted": True} for sid in gone])
            self._pending = {n for n in names if n not in self.rows}
        found = []
        for name in sorted(self._pending):
            try:
                meta = meta_slots.read(self.root / name)
            except FileNotFoundError:
                continue  # being created: its writer records it
            except (OSError, ValueError):
                self._pending.discard(name)
                continue
            self._pending.discard(name)
            if isinstance(meta, dict) and meta.get("id") == name:
                found.append(listed(meta))
        if found:
            self._append(found)

    def _rewrite(self) -> None:
        """Replace the listing by one line per live session."""
        with self._locked(fcntl.LOCK_EX):
            self._catch_up()
            data = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n"
                            for r in self.rows.values())
            atomic_write(self.path, data)
            st = os.stat(self.path)
            self._ident, self._offset, self._lines = (st.st_dev, st.st_ino), st.st_size, \
                len(self.rows)


def _parsed(lines: list[bytes]) -> list[Any]:
    """The JSON value of each line that holds one, in order: all of them in one parse (a cold
    listing of 1,000 sessions is one call, not 1,000), line by line when any line is not one
    whole value (a torn or damaged line is skipped, as before)."""
    if not lines:
        return []
    try:
        items = json.loads(b"[" + b",".join(lines) + b"]")
    except ValueError:
        items = None
    if isinstance(items, list) and len(items) == len(lines):
        return items
    out: list[Any] = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
