"""A node's wire dict is dumped once per node object and handed out as a fresh copy."""

from __future__ import annotations

from openprogram_lsp.core.types import Node, ToolCallRecord
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


def test_many_dumps_at_once_equal_each_node_s_wire() -> None:
    class Marked(Node):  # a subclass is dumped as itself, one by one
        mark: str = "m"

    nodes = [Node(id="a", role="user", text="hi", caller="c0", metadata={"k": [1, None]}),
             Node(id="b", role="assistant", status="done", tool_calls=[ToolCallRecord(
                 id="t1", name="read_file", input={"path": "x"}, status="completed")]),
             Marked(id="c", role="system"), Node(id="d", role="tool", text="")]
    cache = WireCache(cap=3)
    kept = cache.wire(nodes[3])
    got = cache.wire_many(nodes)
    assert got == [n.wire() for n in nodes] and got[2]["mark"] == "m"
    assert got[3] == kept and got[3] is not kept  # a fresh copy each time
    assert len(cache._dumps) <= 3
    assert cache.wire_many(nodes) == got


def test_a_page_longer_than_the_cache_is_dumped_whole_and_keeps_the_newest() -> None:
    cache = WireCache(cap=8)
    nodes = [Node(id=f"n{i}", role="user", text=str(i)) for i in range(50)]
    kept_before = cache.wire(nodes[10])
    got = cache.wire_many(nodes)
    assert got == [n.wire() for n in nodes] and got[10] == kept_before
    assert len(cache._dumps) <= 8
    assert {id(n) for n, _ in cache._dumps.values()} <= {id(n) for n in nodes[-8:]} | {
        id(nodes[10])}
