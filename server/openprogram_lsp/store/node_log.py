"""A session's compact node index on disk: one line per node write, bodies left out.

``.git/openprogram-nodes`` (derived, never committed) holds one tab-separated line per write,
``seq id role predecessor caller running`` (plus the file name when it is not the sharded one
of ``node_path``); an empty field is None, a value with odd characters a JSON string. A node's
line is appended each time the node is written, so another process reads only the lines added
since it last looked; the last line of an id wins. Opening a session reads this file instead of
every node file; ``SessionIndex`` checks it against the newest shard and repairs lines a
crashed writer never wrote.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from openprogram_lsp.core.fsutil import atomic_write

NODE_LOG = "openprogram-nodes"

Row = tuple[int, str, str, str | None, str | None, bool, str | None]
"""(seq, id, role, predecessor, caller, running, file name or None for the sharded one)."""


@dataclass(slots=True)
class LogRead:
    """How many rows were read, where reading stopped, and the file's identity."""

    rows: int
    offset: int
    ident: tuple[int, int]  # (st_dev, st_ino)
    damaged: bool = False


def _field(value: str | None) -> str:
    if value is None:
        return ""
    if value and value.isascii() and value.isprintable() and value[0] != '"':
        return value
    return json.dumps(value)  # ASCII, no tab or newline; a node id is never empty


def _value(field: str) -> str | None:
    if not field:
        return None
    if field[0] == '"':
        value = json.loads(field)
        if type(value) is not str:
            raise ValueError("not a string")
        return value
    return field


def encode(row: Row) -> bytes:
    """One line of the log: tab-separated, odd values as JSON strings."""
    seq, nid, role, pred, caller, running, name = row
    fields = [str(seq), _field(nid), _field(role), _field(pred), _field(caller),
              "1" if running else "0"]
    if name is not None:
        fields.append(_field(name))
    return ("\t".join(fields) + "\n").encode("ascii")


def read(path: Path, sink: Callable[[Row], object], offset: int = 0,
         expect: tuple[int, int] | None = None) -> LogRead | None:
    """Hand each complete line from ``offset`` on to ``sink`` (a line still being written is
    left for later). None when there is no log; ``damaged`` when a line is not a row, or the
    file is not ``expect`` (replaced) or shorter than ``offset``: then read it all again.

    Lines are parsed one at a time, so no row outlives its ``sink`` call: opening a big
    session allocates nothing the garbage collector has to walk again and again.
    """
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            ident = (st.st_dev, st.st_ino)
            if st.st_size < offset or (expect is not None and ident != expect):
                return LogRead(0, 0, ident, damaged=True)
            fh.seek(offset)
            data = fh.read()
    except FileNotFoundError:
        return None
    end = data.rfind(b"\n") + 1
    out = LogRead(0, offset + end, ident)
    if not end:
        return out
    count = 0
    for line in data[:end - 1].decode("ascii", "replace").split("\n"):
        try:
            row = parse(line)
        except ValueError:
            out.damaged = True
            continue
        sink(row)
        count += 1
    out.rows = count
    return out


def parse(line: str) -> Row:
    """One line of the log (without its newline) as a row; ValueError when it is not one."""
    f = line.split("\t")
    if not 6 <= len(f) <= 7 or f[5] not in ("0", "1") or not f[0].isdigit():
        raise ValueError(line)
    if '"' not in line:  # no field is a JSON string: each is itself, or None when empty
        if not f[1] or not f[2]:
            raise ValueError(line)
        return (int(f[0]), f[1], f[2], f[3] or None, f[4] or None, f[5] == "1",
                (f[6] or None) if len(f) == 7 else None)
    nid, role = _value(f[1]), _value(f[2])
    if nid is None or role is None:
        raise ValueError(line)
    return (int(f[0]), nid, role, _value(f[3]), _value(f[4]), f[5] == "1",
            _value(f[6]) if len(f) == 7 else None)


_open_logs: OrderedDict[str, tuple[int, int]] = OrderedDict()  # path -> (pid, descriptor)
_open_logs_lock = threading.Lock()  # held around each append: no descriptor closed in use
OPEN_LOGS = 128
"""Node logs kept open for appending (the least recently used closed past it)."""


def _descriptor(path: str) -> int:
    """An ``O_APPEND`` descriptor of the log at ``path`` (the caller holds the lock): the one
    kept open, unless the file it names was replaced (``rewrite``: its old inode has no link
    left) or this is a forked child; then a new one."""
    pid = os.getpid()
    held = _open_logs.get(path)
    if held is not None and held[0] == pid:
        _open_logs.move_to_end(path)
        try:
            if os.fstat(held[1]).st_nlink > 0:
                return held[1]
        except OSError:
            pass
        with contextlib.suppress(OSError):
            os.close(held[1])
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    _open_logs[path] = (pid, fd)
    while len(_open_logs) > OPEN_LOGS:
        _, (owner, old) = _open_logs.popitem(last=False)
        if owner == pid:
            with contextlib.suppress(OSError):
                os.close(old)
    return fd


def forget(path: Path) -> None:
    """Close the kept descriptor of a log (its session is going away)."""
    with _open_logs_lock:
        held = _open_logs.pop(str(path), None)
        if held is not None and held[0] == os.getpid():
            with contextlib.suppress(OSError):
                os.close(held[1])


def append(path: Path, rows: list[Row]) -> tuple[int, int]:
    """Append lines (one ``write``, ``O_APPEND``, through a descriptor kept open between
    appends: a turn appends a line per node write); returns (the file's size after, bytes
    written)."""
    data = b"".join(encode(r) for r in rows)
    with _open_logs_lock:
        fd = _descriptor(str(path))
        written = os.write(fd, data)
        return os.fstat(fd).st_size, written


def rewrite(path: Path, rows: list[Row]) -> None:
    """Replace the log with exactly these lines (atomically)."""
    atomic_write(path, b"".join(encode(r) for r in rows))
