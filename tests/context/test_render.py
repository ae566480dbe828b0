"""Rendering nodes into messages: pairing, summaries, the plain fallback, command nodes."""

from __future__ import annotations

from tests.context.convo import Call, Turn, build_chain, check_pairing

from openprogram_lsp.context.render import RenderCache, render_chain, render_segments
from openprogram_lsp.core.types import Node, ToolCallRecord


def test_steps_and_tool_calls_render_in_order_with_results() -> None:
    chain = build_chain([Turn("read two", steps=[("Reading.", [Call("a.py", "A"),
                                                               Call("b.py", "B", failed=True)]),
                                                 ("Done.", [])]), Turn("next")])
    msgs = render_chain(chain)
    assert [m.role for m in msgs] == ["user", "assistant", "tool", "tool", "assistant", "user"]
    assert msgs[3].is_error and msgs[2].content == "A"
    check_pairing(msgs)


def test_a_node_that_cannot_render_falls_back_to_its_text() -> None:
    bad = Node(id="a1", role="assistant", text="plain reply", predecessor="u1",
               tool_calls=[ToolCallRecord(id="c1", name="x", step=-3)],
               metadata={"steps": ["step"]})
    msgs = render_chain([Node(id="u1", role="user", text="hi"), bad])
    assert [m.content for m in msgs] == ["hi", "plain reply"]
    check_pairing(msgs)


def test_summary_replaces_the_covered_prefix_and_commands_are_hidden() -> None:
    chain = build_chain([Turn("one"), Turn("two"), Turn("three")])
    summary = Node(id="sum1", role="summary", text="they said one and two")
    segs = render_segments(chain, summary, start=4)
    assert [s.node_id for s in segs] == ["sum1", "u2"]
    assert segs[0].messages[0].content.endswith("they said one and two")
    cmd = Node(id="u9", role="user", text="/compact", metadata={"command": "compact"})
    assert render_segments([*chain, cmd])[-1].node_id == "u2"


def test_render_cache_reuses_only_the_same_node_object() -> None:
    cache = RenderCache(capacity=2)
    a = Node(id="a", role="user", text="one")
    first, _ = cache.render(a)
    assert cache.render(a)[0] is first
    updated = a.model_copy(update={"text": "two"})  # the store replaces a rewritten node
    assert cache.render(updated)[0][0].content == "two"
    for i in range(3):
        cache.render(Node(id=f"n{i}", role="user", text="x"))
    assert len(cache._items) == 2
