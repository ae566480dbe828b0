"""One SQLite index per state root (``sessions/.index.sqlite3``, WAL): node rows and listed metas.

The measured alternative to the derived files ``node_log`` (one per session),
``session_listing`` and ``log_tail`` (``docs/decisions/store-index.md``), chosen with ``USE``.
It is derived, never committed: the node files and each session's git record are the truth,
and the one recovery rule is *rebuild a session's rows from its node files when the index
disagrees with them*:

- the branch head the index recorded at the session's last commit is not the repository's (a
  writer killed between its commit and its record, another tool's commit, a copied home);
- the index has no row for the session (a session from before the index, a deleted database);
- a node file is newer than every row, or a seq has no row (a writer killed between a node's
  file and its row): just those files are read (``SessionIndex._fill_gaps``, as with the log).

Each write is one transaction (SQLite's own journal makes a kill at any point leave the last
committed state); every process shares the file through SQLite's locking. A row's ``ver``
moves with each write of its session, so another process reads only the rows changed since
its last read; ``epoch`` moves when a session's rows are rebuilt (readers then reload).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.store.node_log import Row
from openprogram_lsp.store.session_listing import SessionListing, listed, parsed

if TYPE_CHECKING:
    import sqlite3

USE = False
"""The switch: whether this process keeps its derived index in SQLite (set before a store is
made; the benchmarks and tests set it, no setting does)."""
DB_NAME = ".index.sqlite3"
BUSY_MS = 10_000
SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions(
  id TEXT PRIMARY KEY, listed TEXT, ver INTEGER NOT NULL, head TEXT,
  epoch INTEGER NOT NULL DEFAULT 0, nodes_ver INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS sessions_ver ON sessions(ver);
CREATE TABLE IF NOT EXISTS nodes(
  sid TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, pred TEXT,
  caller TEXT, running INTEGER NOT NULL, file TEXT, ver INTEGER NOT NULL,
  PRIMARY KEY(sid, seq)) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS nodes_id ON nodes(sid, id);
CREATE INDEX IF NOT EXISTS nodes_ver ON nodes(sid, ver);
"""
_UPSERT_NODE = (  # the newest row of an id (and of a seq) wins
    "INSERT OR REPLACE INTO nodes(sid, seq, id, role, pred, caller, running, file, ver) "
    "VALUES(?,?,?,?,?,?,?,?,?)")
_COLUMNS = "seq, id, role, pred, caller, running, file"


def enabled() -> bool:
    """Whether this process keeps its derived index in SQLite (``USE``)."""
    return USE


class StateDB:
    """The index database of one state root: one connection per process, used under a lock."""

    _open: dict[tuple[int, str], StateDB] = {}
    _open_lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        import sqlite3  # only a process that uses it pays for the import (some 2-8 ms)

        self.path = path
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None,
                                     check_same_thread=False)
        self._conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        with self._lock:
            self._conn.executescript(SCHEMA)

    @classmethod
    def of(cls, sessions_dir: Path) -> StateDB:
        """The database of the state root holding ``sessions_dir`` (opened once a process)."""
        key = (os.getpid(), str(sessions_dir))
        db = cls._open.get(key)
        if db is None:
            with cls._open_lock:
                db = cls._open.get(key)
                if db is None:
                    db = cls._open[key] = cls(sessions_dir / DB_NAME)
        return db

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (taken at once: no upgrade from a read can deadlock)."""
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        """Every row of one read."""
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    # -- node rows ----------------------------------------------------------------------------

    def _next_ver(self, conn: sqlite3.Connection, sid: str) -> int:
        conn.execute("INSERT INTO sessions(id, ver, nodes_ver) VALUES(?, 0, 1) "
                     "ON CONFLICT(id) DO UPDATE SET nodes_ver = nodes_ver + 1", (sid,))
        return int(conn.execute("SELECT nodes_ver FROM sessions WHERE id=?",
                                (sid,)).fetchone()[0])

    def put_rows(self, sid: str, rows: list[Row]) -> int:
        """Insert or replace the rows of ``rows``' ids (one transaction); their version."""
        with self.write() as conn:
            ver = self._next_ver(conn, sid)
            conn.executemany(_UPSERT_NODE, [(sid, *r[:5], int(r[5]), r[6], ver) for r in rows])
            return ver

    def replace_rows(self, sid: str, rows: list[Row], head: str | None) -> tuple[int, int]:
        """Make ``rows`` the session's only rows, recorded at branch head ``head``; a new
        epoch (returned with the version): readers holding the old rows reload."""
        with self.write() as conn:
            ver = self._next_ver(conn, sid)
            conn.execute("DELETE FROM nodes WHERE sid=?", (sid,))
            conn.executemany(_UPSERT_NODE, [(sid, *r[:5], int(r[5]), r[6], ver) for r in rows])
            conn.execute("UPDATE sessions SET epoch = epoch + 1, head = ? WHERE id = ?",
                         (head, sid))
            got = conn.execute("SELECT epoch FROM sessions WHERE id=?", (sid,)).fetchone()
            return int(got[0]), ver

    def state(self, sid: str) -> tuple[int, int, str | None] | None:
        """(epoch, rows version, recorded head) of a session with rows, or None."""
        got = self.query("SELECT epoch, nodes_ver, head FROM sessions WHERE id=? "
                         "AND nodes_ver > 0", (sid,))
        return (int(got[0][0]), int(got[0][1]), got[0][2]) if got else None

    def read_rows(self, sid: str, sink: Callable[[Row], object],
                  after: int = 0) -> tuple[int, int, str | None, int] | None:
        """Hand the rows changed since version ``after`` to ``sink`` in seq order; (epoch,
        version read up to, recorded head, rows) or None when the index has no rows of the
        session."""
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN")  # one snapshot: the version and the rows agree
            try:
                state = self.state(sid)
                if state is None:
                    return None
                count = 0
                for seq, nid, role, pred, caller, running, name in conn.execute(
                        f"SELECT {_COLUMNS} FROM nodes WHERE sid=? AND ver>? ORDER BY seq",
                        (sid, after)):
                    sink((seq, nid, role, pred, caller, running == 1, name))
                    count += 1
            finally:
                conn.execute("COMMIT")
        return state[0], state[1], state[2], count

    def rows_before(self, sid: str, below: int, limit: int) -> list[Row]:
        """Up to ``limit`` rows with a seq under ``below``, newest first."""
        return [(s, i, r, p, c, bool(run), f) for s, i, r, p, c, run, f in self.query(
            f"SELECT {_COLUMNS} FROM nodes WHERE sid=? AND seq<? ORDER BY seq DESC LIMIT ?",
            (sid, below, limit))]

    def record_head(self, sid: str, head: str | None) -> None:
        """Note the branch head the session's rows agree with (after a commit)."""
        with self.write() as conn:
            conn.execute("UPDATE sessions SET head=? WHERE id=?", (head, sid))

    # -- the session listing ------------------------------------------------------------------

    def put_listed(self, items: list[dict[str, Any]]) -> None:
        """Record listed metas, or tombstones (``{"id": ..., "deleted": true}``: the session's
        rows go with it)."""
        with self.write() as conn:
            ver = int(conn.execute("SELECT coalesce(max(ver), 0) + 1 FROM sessions").fetchone()[0])
            for item in items:
                sid = item["id"]
                if item.get("deleted"):
                    conn.execute("DELETE FROM nodes WHERE sid=?", (sid,))
                    conn.execute("UPDATE sessions SET listed=NULL, ver=?, head=NULL, nodes_ver=0,"
                                 " epoch=epoch+1 WHERE id=?", (ver, sid))
                    continue
                conn.execute(
                    "INSERT INTO sessions(id, listed, ver) VALUES(?,?,?) ON CONFLICT(id) DO "
                    "UPDATE SET listed=excluded.listed, ver=excluded.ver",
                    (sid, json.dumps(item, separators=(",", ":")), ver))

    def listed_since(self, after: int) -> tuple[int, list[tuple[str, str | None]]]:
        """(the newest listing version, (id, listed JSON or None: gone) changed since
        ``after``)."""
        with self._lock:
            rows = self._conn.execute("SELECT id, listed, ver FROM sessions WHERE ver>?",
                                      (after,)).fetchall()
        top = max((r[2] for r in rows), default=after)
        return top, [(r[0], r[1]) for r in rows]


class DbTail:
    """A session's rows read newest seq first, a block at a time (``log_tail.LogTail``'s
    reader for a history page of a session this process has not opened)."""

    __slots__ = ("_below", "_block", "_db", "_sid", "changed", "damaged", "rows", "seqs", "top")

    def __init__(self, db: StateDB, sid: str) -> None:
        self._db, self._sid = db, sid
        self.rows: dict[str, Row] = {}
        self.seqs: set[int] = set()
        self.top = 0
        self.damaged = self.changed = False
        self._below: int | None = 1 << 62  # None: every row read
        self._block = 256

    def more(self) -> bool:
        """Read one more block; False when every row was read."""
        if self._below is None:
            return False
        got = self._db.rows_before(self._sid, self._below, self._block)
        self._block = min(16_384, self._block * 4)
        if not got:
            self._below = None
            return False
        for row in got:
            self.rows.setdefault(row[1], row)
            self.seqs.add(row[0])
        self.top = max(self.top, got[0][0])
        self._below = got[-1][0]
        return True

    def row(self, nid: str) -> Row | None:
        """The row of ``nid``, reading further back as needed."""
        while nid not in self.rows:
            if not self.more():
                return None
        return self.rows[nid]

    def cover(self, first: int, last: int) -> bool:
        """Read back until every seq from ``first`` to ``last`` has a row."""
        while self._below is not None and self._below > first:
            self.more()
        return all(s in self.seqs for s in range(first, last + 1))


class DbListing(SessionListing):
    """``SessionListing`` kept in the state root's SQLite index instead of ``.listing``."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._db = StateDB.of(root)
        self._seen = 0  # the listing version read up to

    def _append(self, items: list[dict[str, Any]]) -> None:
        self._db.put_listed(items)
        self._catch_up()

    def record(self, meta: dict[str, Any]) -> None:
        """Note a session's new meta (after its ``meta.json`` was written)."""
        self._append([listed(meta)])

    def current(self) -> dict[str, dict[str, Any]]:
        """Every listed session by id, after reading what changed since the last call."""
        self._catch_up()
        self._reconcile()
        return self.rows

    def _catch_up(self) -> None:
        top, changed = self._db.listed_since(self._seen)
        self._seen = top
        gone = [sid for sid, text in changed if text is None]
        for sid in gone:
            if self.rows.pop(sid, None) is not None:
                self.version += 1
        texts = [text.encode() for _sid, text in changed if text is not None]
        for item in parsed(texts):
            if isinstance(item, dict):
                self._set(item)

    def _rewrite(self) -> None:
        return  # one row per session already
