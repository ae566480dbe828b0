"""Rendering a DAG chain into provider messages, one segment per node."""

from __future__ import annotations

import logging

from openprogram_lsp.context.budget import estimate_messages
from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.types import Message, Node, ToolCall

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
    if node.role == "user":
        return [Message(role="user", content=node.text)]
    if node.role == "summary":
        return [Message(role="user", content=f"{SUMMARY_HEADER}\n{node.text}")]
    if node.role != "assistant":
        return []
    steps: list[str] = list(node.metadata.get("steps") or [node.text])
    calls = node.tool_calls or []
    out: list[Message] = []
    placed: set[str] = set()
    last = len(steps) - 1
    for i, text in enumerate(steps):
        # calls recorded with a step beyond the last text go with the last step
        step_calls = [c for c in calls if c.step == i or (i == last and c.step > last)]
        if not text and not step_calls:
            continue
        out.append(Message(role="assistant", content=text,
                           tool_calls=[ToolCall(id=c.id, name=c.name, arguments=c.input)
                                       for c in step_calls]))
        for c in step_calls:
            placed.add(c.id)
            out.append(Message(role="tool", content=c.output or "(no output)", tool_call_id=c.id,
                               name=c.name, is_error=c.status == "failed"))
    if calls and len(placed) != len(calls):
        raise ValueError(f"tool calls of {node.id} do not match its steps")
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


def render_segments(chain: list[Node], summary: Node | None = None,
                    start: int = 0) -> list[Segment]:
    """Segments for ``chain[start:]``, preceded by the summary that replaces ``chain[:start]``."""
    out: list[Segment] = []
    if summary is not None:
        msgs = render_one(summary)
        out.append(Segment(summary, msgs, estimate_messages(msgs), -1))
    turn = -1
    for i in range(start, len(chain)):
        node = chain[i]
        if is_command_node(node):
            continue
        if node.role == "user" or turn < 0:
            turn += 1
        msgs = render_one(node)
        if msgs:
            out.append(Segment(node, msgs, estimate_messages(msgs), turn))
    return out


def render_chain(chain: list[Node]) -> list[Message]:
    """Render a chain; a node that fails to render falls back to its plain text."""
    return [m for seg in render_segments(chain) for m in seg.messages]


def flatten(segments: list[Segment]) -> list[Message]:
    """The messages of several segments, in order."""
    return [m for seg in segments for m in seg.messages]
