"""Wire dicts of nodes, kept by node object: a history page dumps only nodes it has not sent.

A node body the store hands out is never changed in place (an update makes a new object), so
the object's identity says whether its dump is still right.
"""

from __future__ import annotations

from typing import Any

from openprogram_lsp.core.types import NODES, Node

CAP = 512
"""Dumps kept per connection (the older half is dropped past it): a page or two of nodes.
A longer page is dumped without keeping more than this."""


class WireCache:
    """``node.wire()`` by node object, bounded."""

    def __init__(self, cap: int = CAP) -> None:
        self.cap = cap
        self._dumps: dict[int, tuple[Node, dict[str, Any]]] = {}

    def wire(self, node: Node) -> dict[str, Any]:
        """A fresh top-level copy of the node's wire dict (the caller may add keys to it;
        nested values are shared and must not be changed)."""
        hit = self._dumps.get(id(node))
        if hit is None or hit[0] is not node:
            self._make_room(1)
            hit = self._dumps[id(node)] = (node, node.wire())
        return dict(hit[1])

    def wire_many(self, nodes: list[Node]) -> list[dict[str, Any]]:
        """``wire`` of each node, the ones not kept dumped in one call (a cold page's 200)."""
        dumps = self._dumps
        new = [n for n in nodes if type(n) is Node and (
            (hit := dumps.get(id(n))) is None or hit[0] is not n)]
        if len(new) > 1:
            made = NODES.dump_python(new, mode="json", by_alias=True, exclude_none=True)
            if len(nodes) > self.cap:  # more than is kept: the newest ``cap`` only
                fresh = dict(zip(map(id, new), made, strict=True))
                out = [dict(fresh[id(n)]) if id(n) in fresh else self.wire(n) for n in nodes]
                self._make_room(self.cap)
                for node, dump in zip(new[-self.cap:], made[-self.cap:], strict=True):
                    dumps[id(node)] = (node, dump)
                return out
            self._make_room(len(new))
            for node, dump in zip(new, made, strict=True):
                dumps[id(node)] = (node, dump)
        return [self.wire(n) for n in nodes]

    def _make_room(self, count: int) -> None:
        """Drop the oldest dumps (half of them at least) when ``count`` more would pass the cap."""
        dumps = self._dumps
        if len(dumps) + count > self.cap:
            for key in list(dumps)[: max(self.cap // 2, len(dumps) + count - self.cap)]:
                del dumps[key]
