"""The in-memory index of one session, rebuilt losslessly from its node files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.core.errors import BrokenChain, NotFound
from openprogram_lsp.core.types import Node

CHAIN_ROLES = frozenset({"user", "assistant", "system"})


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

    @classmethod
    def load(cls, root: Path) -> SessionIndex:
        """Rebuild the index from ``nodes/`` and ``meta.json`` under a session directory."""
        idx = cls()
        meta_path = root / "meta.json"
        if meta_path.exists():
            idx.meta = json.loads(meta_path.read_bytes())
        nodes_dir = root / "nodes"
        if nodes_dir.is_dir():
            names = sorted(n for n in _listdir(nodes_dir) if n.endswith(".json")
                           and not n.startswith("."))
            for name in names:
                node = Node.model_validate_json((nodes_dir / name).read_bytes())
                seq = int(name.split("-", 1)[0])
                idx.add(node, name, seq)
        return idx

    def add(self, node: Node, filename: str, seq: int) -> None:
        """Insert a new node or replace an existing one (same id, same file)."""
        old = self.nodes.get(node.id)
        self.nodes[node.id] = node
        self.files[node.id] = filename
        self.seq[node.id] = seq
        self.next_seq = max(self.next_seq, seq + 1)
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
        """Walk ``predecessor`` from head to the root; root first. Refuses a broken chain."""
        out: list[Node] = []
        seen: set[str] = set()
        cur: str | None = head
        nodes = self.nodes
        while cur is not None:
            node = nodes.get(cur)
            if node is None:
                if not out:
                    raise NotFound(f"unknown node id {cur!r}")
                raise BrokenChain(f"node {out[-1].id!r} points at missing predecessor {cur!r}")
            if cur in seen:
                raise BrokenChain(f"predecessor cycle at {cur!r}")
            seen.add(cur)
            out.append(node)
            cur = node.predecessor
        out.reverse()
        return out

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


def _listdir(path: Path) -> list[str]:
    import os

    return os.listdir(path)
