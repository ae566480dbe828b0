"""A node's wire dict is dumped once per node object and handed out as a fresh copy."""

from __future__ import annotations

from openprogram_lsp.core.types import Node
from openprogram_lsp.lsp.node_wire import WireCache


def test_dumps_follow_the_node_object_and_stay_bounded() -> None:
    cache = WireCache(cap=4)
    node = Node(id="a", role="user", text="hi", metadata={"k": 1})
    first = cache.wire(node)
    first["attachments"] = ["added by a caller"]
    assert cache.wire(node) == node.wire() and "attachments" not in cache.wire(node)
    edited = node.model_copy(update={"text": "edited"})  # what update_node stores
    assert cache.wire(edited)["text"] == "edited" and cache.wire(node)["text"] == "hi"
    others = [Node(id=f"n{i}", role="user", text=str(i)) for i in range(10)]
    assert [cache.wire(n)["text"] for n in others] == [str(i) for i in range(10)]
    assert len(cache._dumps) <= 4
