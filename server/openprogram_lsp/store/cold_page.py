"""A history page of a session this process has not opened, from the tail of its node log.

Opening a session reads its whole node log (``SessionIndex.load``); the last page of a
10,000-node branch needs the rows of that page and of the nodes written after it, which are the
log's last lines. ``ColdView`` reads the log backwards until it has them and parses only the
page's node files, so the first screen of a long session costs what the screen shows.

It answers only when it is sure to give what the full index would: every seq from the page's
oldest node to the newest file on disk has a row (no node file a crashed writer left without
its line), no row of them says running and the meta lists no running turn (those need the
recovery that opening does), and every line read is a row. Otherwise, and for anything it does
not find, it returns None and the caller opens the session the ordinary way (which repairs the
log, recovers dead turns and raises the right error).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.core.types import Node
from openprogram_lsp.store import meta_slots
from openprogram_lsp.store.index import PENDING, node_path, read_bodies, top_seq
from openprogram_lsp.store.log_tail import LogTail
from openprogram_lsp.store.meta_slots import SLOTS
from openprogram_lsp.store.node_log import NODE_LOG, Row
from openprogram_lsp.store.session_repo import JOURNAL

BODIES_KEPT = 512
"""Node bodies a view keeps for the next page (the ones read last)."""


@dataclass(slots=True)
class HistoryPage:
    """One page of a branch: its head, the nodes (root first), whether older ones remain,
    and each page node's callees of the asked role (only nodes that have some)."""

    head: str | None
    nodes: list[Node]
    more: bool
    replies: dict[str, list[Node]] = field(default_factory=dict)


def _stamp(root: Path) -> tuple[int, ...] | None:
    try:
        meta = os.stat(root / "meta.json")
        log = os.stat(root / ".git" / NODE_LOG)
    except FileNotFoundError:
        return None
    # the meta is written in place (``meta_slots``): every write also appends to the journal,
    # whose stamp then moves even when the slot file's times do not (same clock tick)
    out = [meta.st_ino, meta.st_mtime_ns, meta.st_size, log.st_dev, log.st_ino, log.st_size,
           log.st_mtime_ns]
    for rel in (f".git/{SLOTS}", f".git/{JOURNAL}"):
        try:
            st = os.stat(f"{root}/{rel}")
        except FileNotFoundError:
            out += (0, 0, 0)
        else:
            out += (st.st_ino, st.st_size, st.st_mtime_ns)
    return tuple(out)


class ColdView:
    """What the tail of one session's node log has shown so far (rows and bodies).

    Valid while the meta file and the log are unchanged (``fresh``); a page further back reads
    on from where the last one stopped.
    """

    __slots__ = ("_bodies", "meta", "root", "stamp", "tail")

    def __init__(self, root: Path, stamp: tuple[int, ...], meta: dict[str, Any],
                 tail: LogTail) -> None:
        self.root = root
        self.stamp = stamp
        self.meta = meta
        self.tail = tail
        self._bodies: OrderedDict[str, Node] = OrderedDict()

    @classmethod
    def open(cls, root: Path) -> ColdView | None:
        """A view of a session directory, or None when it cannot serve one (no node log,
        unreadable meta, turns recorded as running, a node file newer than the log)."""
        stamp = _stamp(root)
        if stamp is None:
            return None
        try:
            meta = meta_slots.read(root)
            tail = LogTail(root / ".git" / NODE_LOG)
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("running") or meta.get(PENDING):
            return None
        if not _tail_covers(tail, top_seq(root / "nodes")):
            return None  # a node file newer than every line: a writer died in between
        return cls(root, stamp, meta, tail)

    def fresh(self) -> bool:
        """Whether nothing was written since the view was opened."""
        return _stamp(self.root) == self.stamp

    def page(self, head_id: str | None, *, limit: int, before: str | None,
             reply_role: str) -> HistoryPage | None:
        """Up to ``limit`` nodes of the branch ending at ``head_id`` (default: the meta's head)
        just before ``before`` (default: the last ones), or None: ask the full index."""
        head = head_id if head_id is not None else self.meta.get("headId")
        if head is None:
            return None if before is not None else HistoryPage(None, [], False)
        if not isinstance(head, str):
            return None
        tail = self.tail
        ids: list[str] = []
        seen: set[str] = set()
        passed = before is None
        cur: str | None = head
        more = False
        while cur is not None:
            row = tail.row(cur)
            if row is None or cur in seen:
                return None  # unknown (or reading had to stop), or a cycle
            seen.add(cur)
            if passed:
                if len(ids) == limit:
                    more = True
                    break
                ids.append(cur)
            elif cur == before:
                passed = True
            cur = row[3]
        if not passed:
            return None  # ``before`` is not on the branch
        ids.reverse()
        if not ids:
            return HistoryPage(head, [], more)
        rows = [tail.rows[i] for i in ids]
        first = min(r[0] for r in rows)
        if not tail.cover(first, tail.top) or any(
                r[5] for r in tail.rows.values() if r[0] >= first):
            return None  # a hole (a file without its line), or a node that may be running
        replies: dict[str, list[Row]] = {}
        wanted = set(ids)
        for row in sorted((r for r in tail.rows.values() if r[0] >= first), key=_seq):
            if row[4] in wanted and row[2] == reply_role:
                replies.setdefault(row[4], []).append(row)
        nodes = self._bodies_of(rows)
        out: dict[str, list[Node]] = {}
        for caller, kids in replies.items():
            got = self._bodies_of(kids)
            if got is None:
                return None
            out[caller] = got
        return None if nodes is None else HistoryPage(head, nodes, more, out)

    def _bodies_of(self, rows: list[Row]) -> list[Node] | None:
        cache = self._bodies
        got: dict[str, Node] = {}
        missing: list[tuple[str, str]] = []
        for seq, nid, *_rest, name in rows:
            node = cache.get(nid)
            if node is None:
                missing.append((nid, name or node_path(seq, nid)))
            else:
                got[nid] = node
                cache.move_to_end(nid)
        if missing:
            nodes_dir = f"{self.root}/nodes/"
            try:
                read = read_bodies([nodes_dir + name for _nid, name in missing])
            except (OSError, ValueError):
                return None
            for (nid, _name), node in zip(missing, read, strict=True):
                if node.id != nid:
                    return None
            for node in read:
                got[node.id] = cache[node.id] = node
            while len(cache) > BODIES_KEPT:  # the newest pages' bodies, a few at most
                cache.popitem(last=False)
        return [got[row[1]] for row in rows]

def _seq(row: Row) -> int:
    return row[0]


def _tail_covers(tail: LogTail, top: int) -> bool:
    """Read back until the log's rows reach ``top`` (the newest file on disk)."""
    tail.more()
    while tail.top < top:
        if not tail.more():
            return False
    return True
