"""The in-memory index of one session: its structure always, node bodies only when asked for.

Opening a session reads its compact node log (``node_log``: seq, id, role, predecessor,
caller, running) and the newest shard, never every node file; a node's body is read from its
file the first time it is asked for and then kept (up to ``BODY_CACHE`` per session).
``SessionIndex.scan`` rebuilds the same structure from the node files alone.
"""

from __future__ import annotations

import logging
import os
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from operator import is_
from pathlib import Path
from typing import Any

from openprogram_lsp.core.chain import BodyLog
from openprogram_lsp.core.errors import BrokenChain, NotFound
from openprogram_lsp.core.fsutil import read_file, read_rest
from openprogram_lsp.core.types import NODES, Node
from openprogram_lsp.store import meta_slots, node_log
from openprogram_lsp.store.node_log import Row

log = logging.getLogger(__name__)

CHAIN_ROLES = frozenset({"user", "assistant", "system"})
SHARD = 100
"""Nodes per leaf directory, and leaf directories per group: no tree grows with the session."""
CONTEXT_SUFFIX = ".context.json"
BODY_CACHE = 50_000
"""Node bodies one session keeps in memory at most (the oldest read are dropped first)."""
LOG_SLACK = 1024
"""Lines past twice the node count after which the node log is rewritten."""


_is_none = partial(is_, None)


def node_path(seq: int, node_id: str) -> str:
    """Where node ``seq`` lives under ``nodes/``: ``GGG/LLLLL/SSSSSSS-<id>.json``."""
    return f"{seq // (SHARD * SHARD):03d}/{seq // SHARD:05d}/{seq:07d}-{node_id}.json"


def _leaf(seq: int) -> str:
    return f"{seq // (SHARD * SHARD):03d}/{seq // SHARD:05d}"


def _node_name(name: str) -> int | None:
    if name.startswith(".") or not name.endswith(".json") or name.endswith(CONTEXT_SUFFIX):
        return None
    head = name.split("-", 1)[0]
    return int(head) if head.isdigit() and "-" in name else None


def _listing(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except (FileNotFoundError, NotADirectoryError):
        return []


def node_files(nodes_dir: Path) -> list[tuple[int, str]]:
    """(seq, path under ``nodes/``) of every node file: sharded, and flat ones of old sessions."""
    out: list[tuple[int, str]] = []
    for dirpath, dirnames, filenames in os.walk(nodes_dir):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel = os.path.relpath(dirpath, nodes_dir).replace(os.sep, "/")
        for name in filenames:
            seq = _node_name(name)
            if seq is not None:
                out.append((seq, name if rel == "." else f"{rel}/{name}"))
    return out


_NODE_NAMES = re.compile(r"(?:^|\0)(\d+)-[^\0]*?(?<!\.context)\.json(?=\0|$)")
"""The seq of each node file name in a NUL-joined listing (what ``_node_name`` accepts; a file
name holds any byte but NUL)."""


def _max_seq(names: list[str]) -> int | None:
    """The highest seq among node file names (one regex pass, not a call per name: this runs
    at the start of every turn)."""
    return max(map(int, _NODE_NAMES.findall("\0".join(names))), default=None)


def top_seq(nodes_dir: Path) -> int:
    """The highest sequence number on disk, reading only the newest shard (and flat files)."""
    names = _listing(nodes_dir)
    top = _max_seq(names) or 0
    groups = sorted((n for n in names if n.isdigit()), reverse=True)
    for group in groups:
        leaves = sorted((n for n in _listing(nodes_dir / group) if n.isdigit()), reverse=True)
        for leaf in leaves:
            seq = _max_seq(_listing(nodes_dir / group / leaf))
            if seq is not None:
                return max(top, seq)
    return top


PENDING = "pendingReplies"
"""The meta's record of the replies of running turns whose file is not written yet:
``{id: {"seq": int, "node": the reply as stored}}`` (``SessionStore.start_turn``)."""


def pending_reply(meta: object, nid: str) -> Node | None:
    """The reply ``nid`` as the meta records it while its file is not written, or None."""
    pending = meta.get(PENDING) if isinstance(meta, dict) else None
    entry = pending.get(nid) if isinstance(pending, dict) else None
    body = entry.get("node") if isinstance(entry, dict) else None
    if not isinstance(body, dict):
        return None
    try:
        node = Node.model_validate(body)
    except ValueError:
        return None
    if node.id != nid or node.role != "assistant" or node.caller is not None:
        return None
    return node


def read_body(path: str | Path) -> Node:
    """Parse one node file."""
    return Node.model_validate_json(read_file(path))


def read_bodies(paths: list[str]) -> list[Node]:
    """Parse node files, in order, in one validation; ValueError when any is not one node
    (``read_body`` of each says which), OSError when one cannot be read.

    Each file is read with one ``read``: a node file is a JSON object, and any prefix of one
    short of its closing brace is not valid JSON, so a short read cannot pass for a node.
    The files are joined into one JSON array: a file holding two objects or part of one
    changes the count or an id, which the caller checks against what it asked for.
    """
    datas = []
    for path in paths:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            data = os.read(fd, 1 << 16)
            if len(data) == 1 << 16:  # a big node: the rest of it
                data += read_rest(fd)
        finally:
            os.close(fd)
        datas.append(data)
    if len(datas) < 2:
        return [Node.model_validate_json(d) for d in datas]
    nodes = NODES.validate_json(b"[" + b",".join(datas) + b"]")
    if len(nodes) != len(datas):
        raise ValueError(f"{len(datas)} node files held {len(nodes)} nodes")
    return nodes


class NodeBodies(Mapping[str, Node]):
    """Node bodies by id: read from the node's file on first use, then kept.

    Membership, iteration and length come from the structure and read nothing. ``log``
    names every body written or dropped (not those merely read), so what a reader kept from
    an earlier turn is checked against what changed since, not body by body.
    """

    __slots__ = ("_cache", "_index", "cap", "log", "reads")

    def __init__(self, index: SessionIndex, cap: int = BODY_CACHE) -> None:
        self._index = index
        self._cache: dict[str, Node] = {}
        self.cap = cap
        self.reads = 0  # node files read so far
        self.log = BodyLog()

    def __getitem__(self, nid: str) -> Node:
        node = self._cache.get(nid)
        return node if node is not None else self._read(nid)

    def __contains__(self, nid: object) -> bool:
        return nid in self._index.seq

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.seq)

    def __len__(self) -> int:
        return len(self._index.seq)

    def many(self, ids: list[str], *, keep: bool = True) -> list[Node]:
        """The bodies of ``ids`` in order (reading only those not in memory); ``keep=False``:
        the ones read are not kept (a history page: what it shows is not held after it)."""
        out = list(map(self._cache.get, ids))
        # not ``None in out``: that compares every node with None through pydantic's __eq__
        if any(map(_is_none, out)):
            out = [n if n is not None else self._read(i, keep=keep)
                   for n, i in zip(out, ids, strict=True)]
        return out  # type: ignore[return-value]

    def cached(self) -> int:
        """How many bodies are in memory."""
        return len(self._cache)

    def _read(self, nid: str, *, keep: bool = True) -> Node:
        idx = self._index
        name = idx.files[nid]
        if idx.root is None:
            raise KeyError(nid)
        try:
            node = read_body(idx.root / "nodes" / name)
        except FileNotFoundError:
            pending = pending_reply(idx.meta, nid)  # a running turn's reply not written yet
            if pending is None:
                raise BrokenChain(f"node {nid!r}: its file is missing") from None
            node = pending
        except ValueError as exc:
            raise BrokenChain(f"node {nid!r}: its file is unreadable ({exc})") from None
        if node.id != nid:
            raise BrokenChain(f"node file {name!r} holds {node.id!r}, not {nid!r}")
        self.reads += 1
        if keep:
            self.put(node)
        return node

    def put(self, node: Node) -> None:
        """Keep a body (a node just written or read)."""
        cache = self._cache
        cache[node.id] = node
        if len(cache) > self.cap and self._index.root is not None:
            for old in list(islice(cache, len(cache) - self.cap * 3 // 4)):
                del cache[old]

    def write(self, node: Node) -> None:
        """Keep a body just written (a new node or a new version of one); logged."""
        self.put(node)
        self.log.note(node.id)

    def drop(self, nid: str) -> None:
        """Forget a body (another process rewrote the node); logged."""
        self._cache.pop(nid, None)
        self.log.note(nid)


class _Files(Mapping[str, str]):
    """Each node's file under ``nodes/`` (the sharded name unless an old session's)."""

    __slots__ = ("_index",)

    def __init__(self, index: SessionIndex) -> None:
        self._index = index

    def __getitem__(self, nid: str) -> str:
        idx = self._index
        name = idx._file.get(nid)
        return name if name is not None else node_path(idx.seq[nid], nid)

    def __contains__(self, nid: object) -> bool:
        return nid in self._index.seq

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.seq)

    def __len__(self) -> int:
        return len(self._index.seq)


class _Links(Mapping[str, list[str]]):
    """Children of a node (by predecessor or by caller): the only one in a flat dict of
    strings, several in a list; so the structure holds few containers for the collector."""

    __slots__ = ("_many", "_one")

    def __init__(self) -> None:
        self._one: dict[str, str] = {}
        self._many: dict[str, list[str]] = {}

    def add(self, parent: str, child: str) -> None:
        many = self._many.get(parent)
        if many is not None:
            many.append(child)
            return
        first = self._one.get(parent)
        if first is None:
            self._one[parent] = child
        else:  # the list first: a reader in between still sees the first child
            self._many[parent] = [first, child]
            del self._one[parent]

    def __getitem__(self, parent: str) -> list[str]:
        one = self._one.get(parent)
        if one is not None:
            return [one]
        return self._many[parent]

    def __contains__(self, parent: object) -> bool:
        return parent in self._one or parent in self._many

    def __iter__(self) -> Iterator[str]:
        yield from self._one
        yield from self._many

    def __len__(self) -> int:
        return len(self._one) + len(self._many)


@dataclass(slots=True)
class _SummaryMemo:
    """``summaries_on``'s last answer: the chain it was for and the summaries found on it."""

    head: str = ""
    length: int = 0
    scanned: int = 0  # how many of ``_summary_order`` were looked at
    keys: list[tuple[int, int]] = field(default_factory=list)  # (chain position, callee index)
    ids: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # looked at, not on that chain


class SessionIndex:
    """Nodes by id and seq, children by predecessor and caller, and the session meta.

    The structure is kept in flat dicts of strings and ints (seq, predecessor, role, caller):
    small, and nothing the garbage collector has to walk.
    """

    __slots__ = ("_caller", "_chain_ids", "_chain_pos", "_file", "_first", "_log_at", "_log_ident",
                 "_log_offset", "_log_rows", "_pred", "_role", "_summary_memo", "_summary_order",
                 "callees", "children", "files", "meta", "next_seq", "nodes", "root", "running",
                 "seq", "summaries")

    def __init__(self, root: Path | None = None) -> None:
        self.root = root  # the session directory; None: an index kept in memory only
        self._log_at: tuple[Path, Path] | None = None  # (root, its node log's path)
        self.seq: dict[str, int] = {}
        self._pred: dict[str, str | None] = {}
        self._role: dict[str, str] = {}
        self._caller: dict[str, str] = {}  # only nodes that have one
        self._file: dict[str, str] = {}  # only files not at ``node_path`` (older sessions)
        self.nodes = NodeBodies(self)
        self.files: Mapping[str, str] = _Files(self)
        self.children = _Links()
        self.callees = _Links()
        self.meta: dict[str, Any] = {}
        self.next_seq = 1
        self._first = 1
        # ids that may be running: every running node is in it (a node's line is written
        # after its file, and a new node's file is found in the newest shard)
        self.running: set[str] = set()
        self.summaries: set[str] = set()  # summary nodes hanging off a caller
        self._summary_order: list[str] = []  # the same, in the order they were registered
        self._summary_memo: _SummaryMemo | None = None
        # the last chain walked (ids root first) and each id's place in it: predecessors never
        # change, so a later head that continues it walks only its own new part
        self._chain_ids: list[str] = []
        self._chain_pos: dict[str, int] = {}
        self._log_ident: tuple[int, int] | None = None
        self._log_offset = 0
        self._log_rows = 0

    # -- building -----------------------------------------------------------------------------

    @classmethod
    def load(cls, root: Path) -> SessionIndex:
        """The index of a session directory: its node log, then what the log lacks."""
        idx = cls(root)
        idx._read_meta()
        read = node_log.read(idx._log_path, idx._register)
        if read is None or read.damaged:
            idx = cls(root)
            idx._read_meta()
            idx._scan()
            idx.rewrite_log()
            return idx
        idx._log_ident, idx._log_offset, idx._log_rows = read.ident, read.offset, read.rows
        idx._fill_gaps()
        return idx

    @classmethod
    def scan(cls, root: Path) -> SessionIndex:
        """The index rebuilt from the node files alone (every file parsed, no body kept)."""
        idx = cls(root)
        idx._read_meta()
        idx._scan()
        return idx

    def refresh(self) -> bool:
        """Catch up with what other processes wrote: the meta, the log lines added since the
        last read, new files in the newest shard. False when the log was replaced (reload)."""
        if self.root is None:
            return False
        if self._log_ident is None:
            return False
        read = node_log.read(self._log_path, self._catch_up, self._log_offset, self._log_ident)
        if read is None or read.damaged:
            return False
        self._read_meta()
        self._log_offset = read.offset
        self._log_rows += read.rows
        self._fill_gaps()
        return True

    @property
    def _log_path(self) -> Path:
        """The node log's path, built once per root (a turn appends some ten lines)."""
        root = self.root
        assert root is not None
        at = self._log_at
        if at is None or at[0] is not root:
            at = self._log_at = (root, root / ".git" / node_log.NODE_LOG)
        return at[1]

    def _read_meta(self) -> None:
        assert self.root is not None
        try:
            self.meta = meta_slots.read(self.root)
        except FileNotFoundError:
            self.meta = {}
        self._register_pending()

    def _register_pending(self) -> None:
        """Add the replies the meta lists as started but not yet written (``PENDING``) that
        no line or file named: their structure is in the meta until their file exists."""
        pending = self.meta.get(PENDING) if isinstance(self.meta, dict) else None
        if not isinstance(pending, dict):
            return
        for nid, entry in pending.items():
            if nid in self.seq or not isinstance(entry, dict):
                continue
            node = pending_reply(self.meta, nid)
            seq = entry.get("seq")
            if node is None or type(seq) is not int or seq < 1:
                continue
            self._register((seq, nid, node.role, node.predecessor, node.caller, True, None))

    def _scan(self) -> None:
        assert self.root is not None
        nodes_dir = self.root / "nodes"
        for seq, rel in sorted(node_files(nodes_dir)):
            node = read_body(nodes_dir / rel)
            self._register((seq, node.id, node.role, node.predecessor, node.caller,
                            node.status == "running", rel))

    def _catch_up(self, row: Row) -> None:
        if not self._register(row):
            self.nodes.drop(row[1])  # rewritten elsewhere: read it again when asked

    def _fill_gaps(self) -> None:
        """Add nodes whose files exist but whose log lines are missing (a writer died between
        the two): past the log's last seq in the newest shard, or holes below it."""
        assert self.root is not None
        nodes_dir = self.root / "nodes"
        last = self.next_seq - 1
        top = top_seq(nodes_dir)
        if top <= last and len(self.seq) == last - self._first + 1:
            return
        missing = set(range(min(self._first, 1), max(top, last) + 1)) - set(self.seq.values())
        if not missing:
            return
        names: dict[int, str] = {}
        for leaf in sorted({_leaf(s) for s in missing}):
            for name in _listing(nodes_dir / leaf):
                seq = _node_name(name)
                if seq in missing:
                    names[seq] = f"{leaf}/{name}"
        if any("/" not in f for f in self._file.values()):
            for name in _listing(nodes_dir):  # a session from before sharding
                seq = _node_name(name)
                if seq in missing and seq not in names:
                    names[seq] = name
        repaired: list[Row] = []
        for seq in sorted(names):
            node = read_body(nodes_dir / names[seq])
            self._register((seq, node.id, node.role, node.predecessor, node.caller,
                            node.status == "running", names[seq]))
            repaired.append(self._row(node.id))
        if repaired:
            log.info("session %s: %d node line(s) restored to its log", self.root.name,
                     len(repaired))
            self.append_log(repaired)

    def _register(self, row: Row) -> bool:
        """Insert or update one node's structure; True when the node is new."""
        seq, nid, role, pred, caller, running, name = row
        seqs = self.seq
        new = nid not in seqs
        seqs[nid] = seq
        self._role[nid] = role
        if name is not None and name != node_path(seq, nid):
            self._file[nid] = name
        if seq >= self.next_seq:
            self.next_seq = seq + 1
        if seq < self._first or len(seqs) == 1:
            self._first = seq
        if running:
            self.running.add(nid)
        elif self.running:
            self.running.discard(nid)
        if not new:
            return False
        if pred is not None:
            self.children.add(pred, nid)
        self._pred[nid] = pred
        if caller is not None:
            self._caller[nid] = caller
            self.callees.add(caller, nid)
            if role == "summary":
                self.summaries.add(nid)
                self._summary_order.append(nid)
        return True

    def add(self, node: Node, filename: str, seq: int) -> None:
        """Insert a new node or replace an existing one (same id, same file); keeps its body."""
        self._register((seq, node.id, node.role, node.predecessor, node.caller,
                        node.status == "running", filename))
        self.nodes.write(node)

    # -- the log ------------------------------------------------------------------------------

    def _row(self, nid: str) -> Row:
        return (self.seq[nid], nid, self._role[nid], self._pred[nid], self._caller.get(nid),
                nid in self.running, self._file.get(nid))

    def log_node(self, nid: str) -> None:
        """Append a node's line to the log (after its file was written)."""
        self.append_log([self._row(nid)])

    def append_log(self, rows: list[Row]) -> None:
        """Append lines; the read offset follows when no other process wrote meanwhile."""
        if self.root is None:
            return
        size, written = node_log.append(self._log_path, rows)
        self._log_rows += len(rows)
        if self._log_ident is None:
            st = os.stat(self._log_path)
            self._log_ident = (st.st_dev, st.st_ino)
        if size == self._log_offset + written:
            self._log_offset = size

    def rewrite_log(self) -> None:
        """Replace the log by one line per node (a new log, or a compaction)."""
        if self.root is None:
            return
        rows = [self._row(nid) for nid in sorted(self.seq, key=self.seq.__getitem__)]
        try:
            node_log.rewrite(self._log_path, rows)
            st = os.stat(self._log_path)
        except OSError:
            log.warning("could not write the node log of %s", self.root, exc_info=True)
            return
        self._log_ident, self._log_offset, self._log_rows = (st.st_dev, st.st_ino), \
            st.st_size, len(rows)

    def log_is_long(self) -> bool:
        """Whether the log holds many more lines than nodes (time to rewrite it)."""
        return self._log_rows > 2 * len(self.seq) + LOG_SLACK

    # -- reading ------------------------------------------------------------------------------

    def role_of(self, nid: str) -> str:
        """A node's role (from the structure)."""
        return self._role[nid]

    def predecessor_of(self, nid: str) -> str | None:
        """A node's predecessor (from the structure)."""
        return self._pred[nid]

    def caller_of(self, nid: str) -> str | None:
        """A node's caller (from the structure)."""
        return self._caller.get(nid)

    def get(self, node_id: str) -> Node:
        """Return a node or raise NotFound."""
        if node_id not in self.seq:
            raise NotFound(f"unknown node id {node_id!r}")
        return self.nodes[node_id]

    def chain(self, head: str) -> list[Node]:
        """Walk ``predecessor`` from head to the root; root first. Refuses a broken chain.

        Only the part not already known from the previous walk is walked: a turn's chain costs
        what the turn added, plus one list of the nodes (bodies read once, then kept).
        """
        return self.nodes.many(self.chain_ids(head))

    def position(self, head: str, node_id: str) -> int | None:
        """Where ``node_id`` sits on the chain ending at ``head`` (0: the root), or None."""
        ids = self.chain_ids(head)
        at = self._chain_pos.get(node_id)
        if at is not None and at < len(ids) and ids[at] == node_id:
            return at
        return None

    def chain_positions(self) -> Mapping[str, int]:
        """Each id's place on the chain ``chain_ids`` returned last (check ``ids[at] == id``:
        the map goes on growing with that chain; another line gets a new map)."""
        return self._chain_pos

    def chain_ids(self, head: str) -> list[str]:
        """The ids of ``chain(head)`` (do not modify the list)."""
        preds = self._pred
        pos = self._chain_pos
        walked: list[str] = []
        seen: set[str] = set()
        cur: str | None = head
        while cur is not None and cur not in pos:
            if cur not in preds:
                if not walked:
                    raise NotFound(f"unknown node id {cur!r}")
                raise BrokenChain(f"node {walked[-1]!r} points at missing predecessor {cur!r}")
            if cur in seen:
                raise BrokenChain(f"predecessor cycle at {cur!r}")
            seen.add(cur)
            walked.append(cur)
            cur = preds[cur]
        walked.reverse()
        known = self._chain_ids
        if cur is not None and pos[cur] == len(known) - 1:
            base = len(known)  # the known chain continues: extend it in place
            known.extend(walked)
            ids = known
        elif cur is not None and not walked:  # an earlier node of the known chain
            return known[:pos[cur] + 1]
        else:  # another line: remember it instead
            ids = walked if cur is None else known[:pos[cur] + 1] + walked
            self._chain_ids, self._chain_pos, base = ids, {}, 0
        for n, nid in enumerate(ids[base:], base):
            self._chain_pos[nid] = n
        return ids

    def summaries_on(self, head: str) -> list[str]:
        """Summaries whose caller is on the chain ending at ``head``, in chain order (several
        on one caller: in the order they hang off it).

        Carried from the previous call when that call's head is on this chain (a later turn
        of the same line): only summaries registered since, and those not on the chain then,
        are looked at. Any other head is worked out from every summary.
        """
        ids = self.chain_ids(head)
        pos = self._chain_pos
        memo = self._summary_memo
        if memo is not None and memo.length <= len(ids) and ids[memo.length - 1] == memo.head:
            candidates = memo.pending + self._summary_order[memo.scanned:]
        else:
            memo = _SummaryMemo()
            candidates = self._summary_order
        pending: list[str] = []
        for sid in candidates:
            caller = self._caller[sid]
            at = pos.get(caller)
            if at is None or at >= len(ids) or ids[at] != caller:
                pending.append(sid)
                continue
            key = (at, self.callees[caller].index(sid))
            where = bisect_right(memo.keys, key)
            memo.keys.insert(where, key)
            memo.ids.insert(where, sid)
        memo.head, memo.length = head, len(ids)
        memo.scanned, memo.pending = len(self._summary_order), pending
        self._summary_memo = memo
        return list(memo.ids)

    def is_chain_node(self, node: Node) -> bool:
        """Whether a node is part of a conversation chain (not a tool or summary node)."""
        return node.role in CHAIN_ROLES and node.caller is None

    def is_chain_id(self, nid: str) -> bool:
        """``is_chain_node`` by id, from the structure (reads no body)."""
        return self._role.get(nid) in CHAIN_ROLES and nid not in self._caller

    def tips(self) -> list[str]:
        """Chain nodes with no chain child, in creation order."""
        is_chain = self.is_chain_id
        kids = self.children
        out = [nid for nid in self.seq
               if is_chain(nid) and not (nid in kids and any(is_chain(k) for k in kids[nid]))]
        out.sort(key=self.seq.__getitem__)
        return out

    def snapshot(self) -> dict[str, Any]:
        """A comparable picture of the whole index, bodies read (tests, consistency checks)."""
        return {
            "nodes": {k: self.nodes[k].model_dump() for k in self.seq},
            "seq": dict(self.seq),
            "children": {k: list(v) for k, v in self.children.items()},
            "callees": {k: list(v) for k, v in self.callees.items()},
            "meta": self.meta,
        }
