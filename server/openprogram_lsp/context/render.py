"""Rendering a DAG chain into provider messages, one segment per node."""

from __future__ import annotations

import gc
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from openprogram_lsp.context.attachments import image_parts, with_context
from openprogram_lsp.context.budget import (
    MESSAGE_OVERHEAD,
    estimate_json,
    estimate_messages,
    estimate_text,
    thought_tokens,
)
from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.images import image_rule, image_tokens
from openprogram_lsp.core.transcript import with_environment
from openprogram_lsp.core.types import Message, Node, ToolCallRecord

log = logging.getLogger(__name__)

COMPACT_COMMAND = "/compact"
SUMMARY_HEADER = "[Summary of the earlier conversation, written when the context was compacted]"

Rendered = tuple[list[Message], int]
_STOP_NOTES = {"max_tokens": "[reply cut: the output limit was reached]",
               "refusal": "[reply ended in a refusal]"}
"""What the model is told of its own reply that ended badly (``metadata.stop``)."""


def is_compact_command(text: str) -> bool:
    """Whether a chat message is the manual compaction command."""
    return text.strip().lower() == COMPACT_COMMAND


def is_command_node(node: Node) -> bool:
    """Nodes of a ``/compact`` exchange: recorded in history, never shown to the model."""
    return node.metadata.get("command") == "compact"


# The validation ``Message(**fields)`` runs (BaseModel.__init__ calls this validator), without
# the keyword packing and the __init__ frame: a third cheaper per message, the same instances.
_new_message = Message.__pydantic_validator__.validate_python


def _tokens(text: str) -> int:
    """``estimate_text`` plus the per-message overhead, the ASCII case without a call."""
    return MESSAGE_OVERHEAD + ((len(text) + 3) // 4 if text.isascii() else estimate_text(text))


def _attach(fields: dict[str, Any], thoughts: dict[int, list[dict[str, Any]]],
            step: int) -> int:
    """Put a step's stored reasoning on its assistant message; the tokens it adds."""
    mine = thoughts.get(step)
    if not mine:
        return 0
    fields["thoughts"] = mine
    return sum(thought_tokens(t) for t in mine)


def _render_assistant(node: Node) -> Rendered:
    """An assistant node's messages (steps, tool calls and their results) and their estimate."""
    meta = node.metadata
    steps: list[str] = meta.get("steps") or [node.text]
    by_step: dict[int, list[ToolCallRecord]] = {}
    if node.tool_calls:
        last = len(steps) - 1
        for c in node.tool_calls:
            step = c.step
            if step < 0:
                raise ValueError(f"tool call {c.id} of {node.id} has step {step}")
            if step > last:  # late calls go with the last step
                step = last
            group = by_step.get(step)
            if group is None:
                by_step[step] = [c]
            else:
                group.append(c)
    before: dict[int, list[str]] = {}
    interjections = meta.get("interjections")
    if interjections:
        for item in interjections:
            before.setdefault(int(item["beforeStep"]), []).append(str(item["text"]))
    thoughts: dict[int, list[dict[str, Any]]] = {}
    for item in meta.get("thoughts") or ():  # reasoning, kept to be sent back unchanged
        fields = {k: v for k, v in item.items() if k != "step"}
        thoughts.setdefault(int(item.get("step", 0)), []).append(fields)
    out: list[dict[str, Any]] = []  # each message's fields, validated at the end
    tokens = 0
    if not by_step and not before:
        for i, text in enumerate(steps):
            if text:
                out.append({"role": "assistant", "content": text})
                tokens += _tokens(text)
                if thoughts:
                    tokens += _attach(out[-1], thoughts, i)
    else:
        for i, text in enumerate(steps):
            if before and i in before:
                for said in before[i]:  # steering / follow-up, as sent
                    out.append({"role": "user", "content": said})
                    tokens += _tokens(said)
            step_calls = by_step.get(i)
            if not step_calls:
                if text:
                    out.append({"role": "assistant", "content": text})
                    tokens += _tokens(text)
                    if thoughts:
                        tokens += _attach(out[-1], thoughts, i)
                continue
            out.append({"role": "assistant", "content": text,
                        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.input}
                                       for c in step_calls]})
            tokens += _tokens(text)
            if thoughts:
                tokens += _attach(out[-1], thoughts, i)
            for c in step_calls:
                content = c.output or "(no output)"
                tokens += _tokens(content) + _tokens(c.name) + estimate_json(c.input)
                result: dict[str, Any] = {"role": "tool", "content": content,
                                          "tool_call_id": c.id, "name": c.name}
                if c.status == "failed":  # otherwise is_error keeps its default, False
                    result["is_error"] = True
                if c.images:  # what the tool showed: read_file of an image, MCP images
                    result["images"] = c.images
                    tokens += sum(image_tokens(i.width, i.height) for i in c.images)
                out.append(result)
        if before:
            for i in sorted(k for k in before if k >= len(steps)):  # fed in just before a cancel
                for said in before[i]:
                    out.append({"role": "user", "content": said})
                    tokens += _tokens(said)
    note = (f"[turn {node.status}]" if node.status in ("error", "cancelled", "interrupted")
            else _STOP_NOTES.get(meta.get("stop") or "") if meta else None)
    if note and out:
        fields = out[-1]
        tokens -= _tokens(fields["content"])
        fields["content"] += f"\n{note}"
        tokens += _tokens(fields["content"])
    return list(map(_new_message, out)), tokens


def render_fields(node: Node) -> Rendered:
    """Messages for one chain node and their token estimate (``estimate_messages`` of them).

    An assistant's tool calls are paired with their results. The estimate is counted from the
    node's own strings while the messages are built, not by walking the messages again.
    """
    role = node.role
    if role == "user":  # modelText: the message with MCP prompts and resources expanded
        meta = node.metadata
        text = meta.get("modelText") or node.text
        images: list[dict[str, Any]] = []
        if meta.get("context"):  # editor attachments: what the user pointed at
            text = with_context(text, meta["context"])
            images = image_parts(meta["context"])
        if meta.get("environment"):  # the workspace's state when it changed (environment.py)
            text = with_environment(text, meta["environment"])
        if images:
            return ([_new_message({"role": "user", "content": text, "images": images})],
                    _tokens(text) + sum(image_tokens(int(i["width"]), int(i["height"]))
                                        for i in images))
        return [_new_message({"role": "user", "content": text})], _tokens(text)
    if role == "summary":
        text = f"{SUMMARY_HEADER}\n{node.text}"
        return [_new_message({"role": "user", "content": text})], _tokens(text)
    if role == "assistant":
        return _render_assistant(node)
    return [], 0


def render_node(node: Node) -> list[Message]:
    """Messages for one chain node; an assistant's tool calls are paired with their results."""
    return render_fields(node)[0]


def render_plain(node: Node) -> list[Message]:
    """A fallback rendering that cannot fail: the node's text only."""
    role = "user" if node.role in ("user", "summary") else "assistant"
    return [Message(role=role, content=node.text or f"[{node.role} message]")] if node.text \
        or node.role == "user" else []


def render_counted(node: Node) -> Rendered:
    """Render a node with its estimate; one that fails falls back to its plain text (logged)."""
    try:
        return render_fields(node)
    except Exception:
        log.exception("rendering node %s failed; using its plain text", node.id)
        msgs = render_plain(node)
        return msgs, estimate_messages(msgs)


def render_one(node: Node) -> list[Message]:
    """Render a node; one that fails falls back to its plain text (logged), never raising."""
    return render_counted(node)[0]


def reuse_or_render(seg: Segment | None, node: Node, turn: int, used: list[str],
                    added: list[Segment]) -> Segment:
    """``node``'s segment at ``turn``: the cached ``seg`` when it renders this very node object
    (its id goes to ``used``; placed at another turn, e.g. after a summary, it is a new segment
    in ``added``), else a fresh rendering (in ``added``)."""
    if seg is not None and seg.node is node and current(seg):
        if seg.turn == turn:
            used.append(node.id)
            return seg
        seg = Segment(node, seg.messages, seg.tokens, turn, seg.rule)
    else:
        msgs, tokens = render_counted(node)
        seg = Segment(node, msgs, tokens, turn, _rule_of(msgs))
    added.append(seg)
    return seg


def current(seg: Segment) -> bool:
    """Whether a segment's estimate holds under this turn's image token rule (one without
    images holds under any)."""
    return not seg.rule or seg.rule == image_rule.get()


def _rule_of(msgs: list[Message]) -> str:
    """The image rule an estimate of ``msgs`` was made under ("" when they have no images)."""
    return image_rule.get() if any(m.images for m in msgs) else ""


class RenderCache:
    """Rendered segments by node, reused while the node object is the same.

    The session index keeps node objects until a node is rewritten (a new object), so an
    identity check is enough to know a cached rendering is current. Lookups are plain dict
    reads; a whole prepare's new entries and recency updates are applied at once, under one
    lock, by ``settle``. Segments are shared between preps and never changed in place.
    """

    def __init__(self, capacity: int = 50_000) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, Segment] = OrderedDict()
        self._lock = threading.Lock()

    def lookup(self, node: Node) -> Segment | None:
        """The cached segment of this very node object, or None."""
        hit = self._items.get(node.id)
        return hit if hit is not None and hit.node is node and current(hit) else None

    def settle(self, added: list[Segment], used: list[str]) -> None:
        """Store new segments, mark reused ones most recent, drop the least recent over capacity."""
        items = self._items
        with self._lock:
            for key in used:  # least recently used goes first
                if key in items:
                    items.move_to_end(key)
            for seg in added:
                key = seg.node.id
                if key in items:  # a rewritten node: its new rendering is the most recent
                    del items[key]
                items[key] = seg
            for _ in range(len(items) - self.capacity):
                items.popitem(last=False)

    def render(self, node: Node) -> Rendered:
        """The node's messages and their estimate, from the cache when still valid."""
        hit = self.lookup(node)
        if hit is not None:
            self.settle([], [node.id])
            return hit.messages, hit.tokens
        msgs, tokens = render_counted(node)
        self.settle([Segment(node, msgs, tokens, 0, _rule_of(msgs))], [])
        return msgs, tokens


def render_segments(chain: Sequence[Node], summary: Node | None = None, start: int = 0,
                    cache: RenderCache | None = None) -> list[Segment]:
    """Segments for ``chain[start:]``, preceded by the summary that replaces ``chain[:start]``."""
    # Rendering a long chain allocates tens of thousands of small objects, none of them
    # cyclic garbage; pausing the cyclic collector for the loop saves ~40% on a cold render.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _segments(chain, summary, start, cache)
    finally:
        if paused:
            gc.enable()


def _segments(chain: Sequence[Node], summary: Node | None, start: int,
              cache: RenderCache | None) -> list[Segment]:
    out: list[Segment] = []
    added: list[Segment] = []
    used: list[str] = []
    cached = cache._items.get if cache is not None else None  # lookup(), minus a call per node
    nodes = chain[start:] if summary is None else [summary, *chain[start:]]
    turn = -1
    for node in nodes:
        if node is summary:
            seg_turn = -1
        else:
            meta = node.metadata
            if node.role == "user" or turn < 0:
                if meta and meta.get("command") == "compact":
                    continue
                turn += 1
            elif meta and meta.get("command") == "compact":
                continue
            seg_turn = turn
        seg = cached(node.id) if cached is not None else None
        seg = reuse_or_render(seg, node, seg_turn, used, added)
        if seg.messages:
            out.append(seg)
    if cache is not None:
        cache.settle(added, used)
    return out


def render_chain(chain: list[Node]) -> list[Message]:
    """Render a chain; a node that fails to render falls back to its plain text."""
    return [m for seg in render_segments(chain) for m in seg.messages]


def flatten(segments: Sequence[Segment]) -> list[Message]:
    """The messages of several segments, in order."""
    return [m for seg in segments for m in seg.messages]
