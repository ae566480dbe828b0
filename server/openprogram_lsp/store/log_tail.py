"""A session's node log read from its end, one block at a time.

The newest line of an id is the one that counts, and reading backwards meets it first, so a
reader that wants only the recent nodes (a history page) reads what they need and stops. Bytes
after the last newline (a line still being written, or torn by a crash) are left out, as
``node_log.read`` leaves them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from openprogram_lsp.store import node_log
from openprogram_lsp.store.node_log import Row

FIRST_BLOCK = 8 * 1024
"""Bytes of the first step (about 200 lines); each further step reads twice as many, up to
``MAX_BLOCK``."""
MAX_BLOCK = 256 * 1024


class LogTail:
    """The rows of one node log seen so far, newest line of each id, read backwards.

    ``damaged`` turns true at a line that is not a row and ``changed`` when the file is no
    longer the one first opened (replaced or shortened): the caller then reads the whole log
    the ordinary way. The file is opened for each block, never held.
    """

    __slots__ = ("_block", "_carry", "_pos", "changed", "damaged", "ident", "path", "rows", "seqs",
                 "size", "top")

    def __init__(self, path: Path) -> None:
        """Open ``path`` (FileNotFoundError when there is no log) and read nothing yet."""
        self.path = path
        st = os.stat(path)
        self.ident = (st.st_dev, st.st_ino)
        self.size = st.st_size
        self.rows: dict[str, Row] = {}
        self.seqs: set[int] = set()
        self.top = 0  # the highest seq seen
        self.damaged = False
        self.changed = False
        self._pos = self.size  # bytes before it are still to read
        self._block = FIRST_BLOCK
        self._carry: bytes | None = None  # None: the torn tail is not yet cut off

    @property
    def exhausted(self) -> bool:
        """Whether every line has been read (or reading had to stop)."""
        return self._pos == 0 or self.damaged or self.changed

    def more(self) -> bool:
        """Read one more block; False when nothing is left to read (or reading must stop)."""
        if self.exhausted:
            return False
        start = max(0, self._pos - self._block)
        self._block = min(MAX_BLOCK, self._block * 2)
        data = self._read(start, self._pos)
        if data is None:
            self.changed = True
            return False
        self._pos = start
        if self._carry is None:  # the first block read: drop what follows the last newline
            cut = data.rfind(b"\n") + 1
            if not cut and start:
                return True  # a torn tail longer than a block: keep cutting
            data, self._carry = data[:cut], b""
        data += self._carry
        if start:
            nl = data.find(b"\n") + 1
            self._carry, data = data[:nl] if nl else data, data[nl:] if nl else b""
        else:
            self._carry = b""
        try:  # one decode for the block; a byte that is not ASCII: line by line
            self._take(data.decode("ascii").split("\n")[:-1] if data else [])
        except UnicodeDecodeError:
            self._take(data.split(b"\n")[:-1])
        return True

    def _read(self, start: int, end: int) -> bytes | None:
        try:
            with open(self.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                if (st.st_dev, st.st_ino) != self.ident or st.st_size < self.size:
                    return None
                fh.seek(start)
                data = fh.read(end - start)
        except FileNotFoundError:
            return None
        return data if len(data) == end - start else None

    def _take(self, lines: Sequence[bytes | str]) -> None:
        rows, seqs = self.rows, self.seqs
        parse = node_log.parse
        for raw in reversed(lines):
            try:
                row = parse(raw if isinstance(raw, str) else raw.decode("ascii"))
            except (ValueError, UnicodeDecodeError):
                self.damaged = True
                return
            if row[1] not in rows:
                rows[row[1]] = row
                seqs.add(row[0])
                if row[0] > self.top:
                    self.top = row[0]

    def row(self, nid: str) -> Row | None:
        """The newest row of ``nid``, reading further back as needed; None when the log has
        none (or reading had to stop)."""
        rows = self.rows
        while nid not in rows:
            if not self.more():
                return None
        return rows[nid]

    def cover(self, first: int, last: int) -> bool:
        """Read back until every seq from ``first`` to ``last`` has a row; False when some
        never turn up (a hole, or reading had to stop)."""
        seqs = self.seqs
        want = range(first, last + 1)
        while not all(s in seqs for s in want):
            if not self.more():
                return False
            want = range(next(s for s in want if s not in seqs), last + 1)
        return True
