"""The fast renderer equals the straightforward one: same messages, same token estimate."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprogram_lsp.context.budget import MESSAGE_OVERHEAD, estimate_json, estimate_text
from openprogram_lsp.context.render import (
    SUMMARY_HEADER,
    RenderCache,
    render_counted,
    render_plain,
    render_segments,
)
from openprogram_lsp.core.types import Message, Node, ToolCall, ToolCallRecord

SETTINGS = settings(max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def reference_node(node: Node) -> list[Message]:
    """The plain rendering the fast one replaced: one pydantic constructor per message."""
    if node.role == "user":
        return [Message(role="user", content=node.text)]
    if node.role == "summary":
        return [Message(role="user", content=f"{SUMMARY_HEADER}\n{node.text}")]
    if node.role != "assistant":
        return []
    steps: list[str] = node.metadata.get("steps") or [node.text]
    last = len(steps) - 1
    by_step: dict[int, list[ToolCallRecord]] = {}
    for c in node.tool_calls or []:
        if c.step < 0:
            raise ValueError("negative step")
        by_step.setdefault(min(c.step, last), []).append(c)
    before: dict[int, list[str]] = {}
    for item in node.metadata.get("interjections") or ():
        before.setdefault(int(item["beforeStep"]), []).append(str(item["text"]))
    out: list[Message] = []
    for i, text in enumerate(steps):
        out.extend(Message(role="user", content=said) for said in before.get(i, ()))
        step_calls = by_step.get(i)
        if not step_calls:
            if text:
                out.append(Message(role="assistant", content=text))
            continue
        out.append(Message(role="assistant", content=text,
                           tool_calls=[ToolCall(id=c.id, name=c.name, arguments=c.input)
                                       for c in step_calls]))
        out.extend(Message(role="tool", content=c.output or "(no output)", tool_call_id=c.id,
                           name=c.name, is_error=c.status == "failed") for c in step_calls)
    for i in sorted(k for k in before if k >= len(steps)):
        out.extend(Message(role="user", content=said) for said in before[i])
    if node.status in ("error", "cancelled", "interrupted") and out:
        out[-1] = out[-1].model_copy(
            update={"content": out[-1].content + f"\n[turn {node.status}]"})
    return out


def reference(node: Node) -> tuple[list[Message], int]:
    """Reference messages (plain text when rendering fails) and their estimate, JSON-encoded."""
    try:
        msgs = reference_node(node)
    except Exception:
        msgs = render_plain(node)
    tokens = 0
    for m in msgs:
        tokens += MESSAGE_OVERHEAD + estimate_text(m.content)
        for c in m.tool_calls:
            tokens += MESSAGE_OVERHEAD + estimate_text(c.name) + estimate_text(
                _ENCODER.encode(c.arguments))
    return msgs, tokens


texts = st.one_of(st.sampled_from(["", "ok", "Reading.", "say \"hi\"", "a\\b", "tab\there",
                                   "line\nbreak", "中文 text", "é", "\x7f", "\x00"]),
                  st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=14),
                  st.text(max_size=40))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), texts,
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(texts, inner, max_size=3)), max_leaves=8)
arguments = st.one_of(st.dictionaries(texts, texts, max_size=4),
                      st.dictionaries(texts, json_values, max_size=4))
def node_strategy(text: st.SearchStrategy[str],
                  args: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Node]:
    """Nodes of every role and status, steps, interjections and calls, from these texts and
    tool-call arguments."""
    call = st.builds(dict, name=st.sampled_from(["read_file", "run_command", "édit"]),
                     input=args, output=st.one_of(st.none(), text),
                     status=st.sampled_from(["completed", "failed", "pending"]),
                     step=st.integers(-1, 4))
    said = st.lists(st.builds(dict, beforeStep=st.integers(-1, 5), text=text), max_size=3)
    step_texts = st.one_of(st.none(), st.lists(text, max_size=4),
                           st.lists(st.one_of(text, st.integers()), min_size=1, max_size=2))

    @st.composite
    def draw_node(draw: st.DrawFn) -> Node:
        role = draw(st.sampled_from(["user", "assistant", "assistant", "summary", "tool"]))
        metadata: dict[str, Any] = {}
        step_list = draw(step_texts)
        if step_list is not None:
            metadata["steps"] = step_list
        if draw(st.booleans()):
            metadata["interjections"] = draw(said)
        records = [ToolCallRecord(id=f"c{i}", **c)
                   for i, c in enumerate(draw(st.lists(call, max_size=4)))]
        return Node(id=draw(st.sampled_from(["n1", "n2", "n3"])), role=role, text=draw(text),
                    status=draw(st.sampled_from(["done", "error", "cancelled", "interrupted"])),
                    tool_calls=records or None, metadata=metadata)

    return draw_node()


def nodes() -> st.SearchStrategy[Node]:
    """Nodes with any text and any JSON arguments: what the renderer's output is checked on."""
    return node_strategy(texts, arguments)


# The cache test checks what the cache keeps and hands back, for chains of every kind of node;
# the contents of texts and arguments do not reach the cache (it keys on the node's id and
# object), and the renderings themselves are checked on any contents above. Drawing full
# Unicode texts and JSON arguments for up to eight nodes made that test a minute of data
# generation under load; a few sampled ones (empty, ASCII, wide, control) reach the same code.
few_texts = st.sampled_from(["", "ok", "line\nbreak", "中文 text", "\x00"])
few_arguments = st.sampled_from([{}, {"path": "a.txt"}, {"k": [1, {"x": None}], "é": "\"q\""}])
cache_nodes = node_strategy(few_texts, few_arguments)


@SETTINGS
@given(nodes())
def test_fast_rendering_equals_the_reference(node: Node) -> None:
    msgs, tokens = render_counted(node)
    want, want_tokens = reference(node)
    assert msgs == want
    assert [m.model_dump() for m in msgs] == [m.model_dump() for m in want]
    assert [m.wire() for m in msgs] == [m.wire() for m in want]
    assert all(type(m) is Message for m in msgs)
    assert all(type(c) is ToolCall for m in msgs for c in m.tool_calls)
    assert tokens == want_tokens


@SETTINGS
@given(arguments)
def test_json_estimate_equals_estimating_the_encoding(value: dict[str, Any]) -> None:
    assert estimate_json(value) == estimate_text(_ENCODER.encode(value))


def test_json_estimate_of_plain_strings_counts_every_character() -> None:
    for keys in range(1, 4):
        for size in range(12):
            value = {f"k{i}" + "x" * size: "v" * (size + i) for i in range(keys)}
            assert estimate_json(value) == estimate_text(_ENCODER.encode(value)), value
    assert estimate_json({}) == estimate_text("{}")


@SETTINGS
@given(st.lists(cache_nodes, min_size=1, max_size=8))
def test_cached_segments_equal_uncached_ones_and_own_their_lists(drawn: list[Node]) -> None:
    chain = [n.model_copy(update={"id": f"n{i}"}) for i, n in enumerate(drawn)]
    cache = RenderCache()
    plain = render_segments(chain)
    cold = render_segments(chain, cache=cache)
    warm = render_segments(chain, cache=cache)
    for a, b, c in zip(plain, cold, warm, strict=True):
        assert a.messages == b.messages == c.messages and a.tokens == b.tokens == c.tokens
        assert b.messages is c.messages  # the second prepare reuses the rendering
    lists = [m.tool_calls for s in plain for m in s.messages]
    assert len({id(x) for x in lists}) == len(lists)  # no message shares its tool_calls list


def test_cache_drops_the_least_recently_used_node() -> None:
    cache = RenderCache(capacity=3)
    a, b, c, d = (Node(id=x, role="user", text=x) for x in "abcd")
    render_segments([a, b, c], cache=cache)
    render_segments([a], cache=cache)  # a is now the most recent
    render_segments([d], cache=cache)
    assert list(cache._items) == ["c", "a", "d"]
    b2 = Node(id="c", role="user", text="rewritten")
    assert render_segments([b2], cache=cache)[0].messages[0].content == "rewritten"
    assert list(cache._items) == ["a", "d", "c"] and cache._items["c"].node is b2


def test_cached_rendering_moves_to_a_new_turn_index_after_a_summary() -> None:
    chain = [Node(id="u0", role="user", text="a"), Node(id="a0", role="assistant", text="b"),
             Node(id="u1", role="user", text="c")]
    cache = RenderCache()
    full = render_segments(chain, cache=cache)
    summary = Node(id="s", role="summary", text="a and b")
    tail = render_segments(chain, summary, start=2, cache=cache)
    assert [(s.node_id, s.turn) for s in full] == [("u0", 0), ("a0", 0), ("u1", 1)]
    assert [(s.node_id, s.turn) for s in tail] == [("s", -1), ("u1", 0)]
    assert tail[1].messages is full[2].messages  # same rendering, new turn index
    assert render_segments(chain, summary, start=2, cache=cache)[1] is tail[1]
