"""A session's compact node index on disk: one line per node write, bodies left out.

``.git/openprogram-nodes`` (derived, never committed) holds one JSON array a line,
``[seq, id, role, predecessor, caller, running]`` (plus the file name when it is not the sharded
one of ``node_path``). A node's line is appended each time the node is written, so another
process reads only the lines added since it last looked; the last line of an id wins. Opening
a session reads this file instead of every node file; ``SessionIndex`` checks it against the
newest shard and repairs lines a crashed writer never wrote.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from openprogram_lsp.core.fsutil import atomic_write

NODE_LOG = "openprogram-nodes"

Row = tuple[int, str, str, str | None, str | None, bool, str | None]
"""(seq, id, role, predecessor, caller, running, file name or None for the sharded one)."""


@dataclass(slots=True)
class LogRead:
    """Rows read from the log, where reading stopped, and the file's identity."""

    rows: list[Row]
    offset: int
    ident: tuple[int, int]  # (st_dev, st_ino)
    damaged: bool = False


def encode(row: Row) -> bytes:
    """One line of the log."""
    seq, nid, role, pred, caller, running, name = row
    fields: list[object] = [seq, nid, role, pred, caller, 1 if running else 0]
    if name is not None:
        fields.append(name)
    return json.dumps(fields, separators=(",", ":")).encode() + b"\n"


def _row(item: object) -> Row | None:
    if not isinstance(item, list) or len(item) not in (6, 7):
        return None
    seq, nid, role, pred, caller, running = item[:6]
    name = item[6] if len(item) == 7 else None
    if not (isinstance(seq, int) and isinstance(nid, str) and nid and isinstance(role, str)
            and (pred is None or isinstance(pred, str))
            and (caller is None or isinstance(caller, str))
            and running in (0, 1) and (name is None or isinstance(name, str))):
        return None
    return seq, nid, role, pred, caller, bool(running), name


def read(path: Path, offset: int = 0) -> LogRead | None:
    """The complete lines from ``offset`` on (a line still being written is left for later);
    None when there is no log."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_size < offset:  # cut short in place: the caller reads it all again
                return LogRead([], 0, (st.st_dev, st.st_ino), damaged=True)
            fh.seek(offset)
            data = fh.read()
    except FileNotFoundError:
        return None
    ident = (st.st_dev, st.st_ino)
    end = data.rfind(b"\n") + 1
    body = data[:end]
    out = LogRead([], offset + end, ident)
    if not body:
        return out
    try:
        # JSON escapes newlines inside strings: every raw newline ends a line
        items = json.loads(b"[" + body[:-1].replace(b"\n", b",") + b"]")
    except ValueError:
        items = []
        for line in body.splitlines():
            try:
                items.append(json.loads(line))
            except ValueError:
                out.damaged = True
    for item in items:
        row = _row(item)
        if row is None:
            out.damaged = True
        else:
            out.rows.append(row)
    return out


def append(path: Path, rows: list[Row]) -> tuple[int, int]:
    """Append lines (one ``write``, ``O_APPEND``); returns (the file's size after, bytes
    written)."""
    data = b"".join(encode(r) for r in rows)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        return os.fstat(fd).st_size, written
    finally:
        os.close(fd)


def rewrite(path: Path, rows: list[Row]) -> None:
    """Replace the log with exactly these lines (atomically)."""
    atomic_write(path, b"".join(encode(r) for r in rows))
