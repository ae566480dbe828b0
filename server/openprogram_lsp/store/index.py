"""The in-memory index of one session, rebuilt losslessly from its node files."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.core.errors import BrokenChain, NotFound
from openprogram_lsp.core.types import Node

CHAIN_ROLES = frozenset({"user", "assistant", "system"})
SHARD = 100
"""Nodes per leaf directory, and leaf directories per group: no tree grows with the session."""
CONTEXT_SUFFIX = ".context.json"


def node_path(seq: int, node_id: str) -> str:
    """Where node ``seq`` lives under ``nodes/``: ``GGG/LLLLL/SSSSSSS-<id>.json``."""
    return f"{seq // (SHARD * SHARD):03d}/{seq // SHARD:05d}/{seq:07d}-{node_id}.json"


def _node_name(name: str) -> int | None:
    if name.startswith(".") or not name.endswith(".json") or name.endswith(CONTEXT_SUFFIX):
        return None
    head = name.split("-", 1)[0]
    return int(head) if head.isdigit() and "-" in name else None


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


def top_seq(nodes_dir: Path) -> int:
    """The highest sequence number on disk, reading only the newest shard (and flat files)."""
    def listing(path: Path) -> list[str]:
        try:
            return os.listdir(path)
        except (FileNotFoundError, NotADirectoryError):
            return []

    top = 0
    names = listing(nodes_dir)
    top = max((s for s in map(_node_name, names) if s is not None), default=0)
    groups = sorted((n for n in names if n.isdigit()), reverse=True)
    for group in groups:
        leaves = sorted((n for n in listing(nodes_dir / group) if n.isdigit()), reverse=True)
        for leaf in leaves:
            seqs = [s for s in map(_node_name, listing(nodes_dir / group / leaf)) if s is not None]
            if seqs:
                return max(top, *seqs)
    return top


@dataclass(slots=True)
class SessionIndex:
    """Nodes by id and seq, children by predecessor and caller, and the session meta."""

    nodes: dict[str, Node] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    seq: dict[str, int] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    callees: dict[str, list[str]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    next_seq: int = 1
    running: set[str] = field(default_factory=set)  # ids of nodes whose status is "running"
    summaries: set[str] = field(default_factory=set)  # summary nodes hanging off a caller
    # the last chain walked (ids root first) and each id's place in it: predecessors never
    # change, so a later head that continues it walks only its own new part
    _chain_ids: list[str] = field(default_factory=list, compare=False, repr=False)
    _chain_pos: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def load(cls, root: Path) -> SessionIndex:
        """Rebuild the index from ``nodes/`` and ``meta.json`` under a session directory."""
        idx = cls()
        meta_path = root / "meta.json"
        if meta_path.exists():
            idx.meta = json.loads(meta_path.read_bytes())
        nodes_dir = root / "nodes"
        for seq, rel in sorted(node_files(nodes_dir)):
            node = Node.model_validate_json((nodes_dir / rel).read_bytes())
            idx.add(node, rel, seq)
        return idx

    def add(self, node: Node, filename: str, seq: int) -> None:
        """Insert a new node or replace an existing one (same id, same file)."""
        old = self.nodes.get(node.id)
        self.nodes[node.id] = node
        self.files[node.id] = filename
        self.seq[node.id] = seq
        self.next_seq = max(self.next_seq, seq + 1)
        if node.status == "running":
            self.running.add(node.id)
        else:
            self.running.discard(node.id)
        if node.role == "summary" and node.caller is not None:
            self.summaries.add(node.id)
        if old is None:
            if node.predecessor is not None:
                self.children.setdefault(node.predecessor, []).append(node.id)
            if node.caller is not None:
                self.callees.setdefault(node.caller, []).append(node.id)

    def get(self, node_id: str) -> Node:
        """Return a node or raise NotFound."""
        try:
            return self.nodes[node_id]
        except KeyError:
            raise NotFound(f"unknown node id {node_id!r}") from None

    def chain(self, head: str) -> list[Node]:
        """Walk ``predecessor`` from head to the root; root first. Refuses a broken chain.

        Only the part not already known from the previous walk is walked: a turn's chain costs
        what the turn added, plus one list of the nodes.
        """
        nodes = self.nodes
        return [nodes[i] for i in self.chain_ids(head)]

    def position(self, head: str, node_id: str) -> int | None:
        """Where ``node_id`` sits on the chain ending at ``head`` (0: the root), or None."""
        ids = self.chain_ids(head)
        at = self._chain_pos.get(node_id)
        if at is not None and at < len(ids) and ids[at] == node_id:
            return at
        return None

    def chain_ids(self, head: str) -> list[str]:
        """The ids of ``chain(head)`` (do not modify the list)."""
        nodes = self.nodes
        pos = self._chain_pos
        walked: list[str] = []
        seen: set[str] = set()
        cur: str | None = head
        while cur is not None and cur not in pos:
            node = nodes.get(cur)
            if node is None:
                if not walked:
                    raise NotFound(f"unknown node id {cur!r}")
                raise BrokenChain(f"node {walked[-1]!r} points at missing predecessor {cur!r}")
            if cur in seen:
                raise BrokenChain(f"predecessor cycle at {cur!r}")
            seen.add(cur)
            walked.append(cur)
            cur = node.predecessor
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

    def is_chain_node(self, node: Node) -> bool:
        """Whether a node is part of a conversation chain (not a tool or summary node)."""
        return node.role in CHAIN_ROLES and node.caller is None

    def tips(self) -> list[str]:
        """Chain nodes with no chain child, in creation order."""
        out = []
        for nid, node in self.nodes.items():
            if not self.is_chain_node(node):
                continue
            kids = self.children.get(nid, ())
            if not any(self.is_chain_node(self.nodes[k]) for k in kids):
                out.append(nid)
        out.sort(key=lambda n: self.seq[n])
        return out

    def snapshot(self) -> dict[str, Any]:
        """A comparable picture of the whole index (for tests and consistency checks)."""
        return {
            "nodes": {k: v.model_dump() for k, v in self.nodes.items()},
            "seq": dict(self.seq),
            "children": {k: list(v) for k, v in self.children.items()},
            "callees": {k: list(v) for k, v in self.callees.items()},
            "meta": self.meta,
        }

