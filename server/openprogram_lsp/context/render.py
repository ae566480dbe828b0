"""Rendering a DAG chain into provider messages, one segment per node."""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable

from openprogram_lsp.context.budget import estimate_messages
from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.types import Message, Node, ToolCall, ToolCallRecord

log = logging.getLogger(__name__)

COMPACT_COMMAND = "/compact"
SUMMARY_HEADER = "[Summary of the earlier conversation, written when the context was compacted]"


def is_compact_command(text: str) -> bool:
    """Whether a chat message is the manual compaction command."""
    return text.strip().lower() == COMPACT_COMMAND


def is_command_node(node: Node) -> bool:
    """Nodes of a ``/compact`` exchange: recorded in history, never shown to the model."""
    return node.metadata.get("command") == "compact"


def render_node(node: Node) -> list[Message]:
    """Messages for one chain node; an assistant's tool calls are paired with their results."""
    role = node.role
    if role == "user":
        return [Message(role="user", content=node.text)]
    if role == "summary":
        return [Message(role="user", content=f"{SUMMARY_HEADER}\n{node.text}")]
    if role != "assistant":
        return []
    steps: list[str] = node.metadata.get("steps") or [node.text]
    calls = node.tool_calls or []
    last = len(steps) - 1
    by_step: dict[int, list[ToolCallRecord]] = {}
    for c in calls:
        if c.step < 0:
            raise ValueError(f"tool call {c.id} of {node.id} has step {c.step}")
        by_step.setdefault(min(c.step, last), []).append(c)  # late calls go with the last step
    out: list[Message] = []
    before: dict[int, list[str]] = {}
    for item in node.metadata.get("interjections") or ():
        before.setdefault(int(item["beforeStep"]), []).append(str(item["text"]))
    for i, text in enumerate(steps):
        for said in before.get(i, ()):
            out.append(Message(role="user", content=said))  # steering / follow-up, as sent
        step_calls = by_step.get(i)
        if not step_calls:
            if text:
                out.append(Message(role="assistant", content=text))
            continue
        out.append(Message(role="assistant", content=text,
                           tool_calls=[ToolCall(id=c.id, name=c.name, arguments=c.input)
                                       for c in step_calls]))
        for c in step_calls:
            out.append(Message(role="tool", content=c.output or "(no output)", tool_call_id=c.id,
                               name=c.name, is_error=c.status == "failed"))
    for i in sorted(k for k in before if k >= len(steps)):  # fed in just before a cancel
        out.extend(Message(role="user", content=said) for said in before[i])
    if node.status in ("error", "cancelled", "interrupted") and out:
        out[-1] = out[-1].model_copy(
            update={"content": out[-1].content + f"\n[turn {node.status}]"})
    return out


def render_plain(node: Node) -> list[Message]:
    """A fallback rendering that cannot fail: the node's text only."""
    role = "user" if node.role in ("user", "summary") else "assistant"
    return [Message(role=role, content=node.text or f"[{node.role} message]")] if node.text \
        or node.role == "user" else []


def render_one(node: Node) -> list[Message]:
    """Render a node; one that fails falls back to its plain text (logged), never raising."""
    try:
        return render_node(node)
    except Exception:
        log.exception("rendering node %s failed; using its plain text", node.id)
        return render_plain(node)


class RenderCache:
    """Rendered messages and token counts by node, reused while the node object is the same.

    The session index keeps node objects until a node is rewritten (a new object), so an
    identity check is enough to know a cached rendering is current.
    """

    def __init__(self, capacity: int = 50_000) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, tuple[Node, list[Message], int]] = OrderedDict()
        self._lock = threading.Lock()

    def render(self, node: Node) -> tuple[list[Message], int]:
        """The node's messages and their estimate, from the cache when still valid."""
        hit = self._items.get(node.id)
        if hit is not None and hit[0] is node:
            with contextlib.suppress(KeyError):  # least recently used goes first
                self._items.move_to_end(node.id)
            return hit[1], hit[2]
        msgs = render_one(node)
        tokens = estimate_messages(msgs)
        with self._lock:
            self._items[node.id] = (node, msgs, tokens)
            if len(self._items) > self.capacity:
                for _ in range(len(self._items) - self.capacity):
                    self._items.popitem(last=False)
        return msgs, tokens


def _uncached(node: Node) -> tuple[list[Message], int]:
    msgs = render_one(node)
    return msgs, estimate_messages(msgs)


def render_segments(chain: list[Node], summary: Node | None = None, start: int = 0,
                    cache: RenderCache | None = None) -> list[Segment]:
    """Segments for ``chain[start:]``, preceded by the summary that replaces ``chain[:start]``."""
    render = cache.render if cache is not None else _uncached
    # Rendering a long chain allocates tens of thousands of small objects, none of them
    # cyclic garbage; pausing the cyclic collector for the loop saves ~40% on a cold render.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _segments(chain, summary, start, render)
    finally:
        if paused:
            gc.enable()


def _segments(chain: list[Node], summary: Node | None, start: int,
              render: Callable[[Node], tuple[list[Message], int]]) -> list[Segment]:
    out: list[Segment] = []
    if summary is not None:
        msgs, tokens = render(summary)
        out.append(Segment(summary, msgs, tokens, -1))
    turn = -1
    for i in range(start, len(chain)):
        node = chain[i]
        if node.role == "user" or turn < 0:
            if node.metadata and node.metadata.get("command") == "compact":
                continue
            turn += 1
        elif node.metadata.get("command") == "compact":
            continue
        msgs, tokens = render(node)
        if msgs:
            out.append(Segment(node, msgs, tokens, turn))
    return out


def render_chain(chain: list[Node]) -> list[Message]:
    """Render a chain; a node that fails to render falls back to its plain text."""
    return [m for seg in render_segments(chain) for m in seg.messages]


def flatten(segments: list[Segment]) -> list[Message]:
    """The messages of several segments, in order."""
    return [m for seg in segments for m in seg.messages]
