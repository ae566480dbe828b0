"""Rendering a DAG chain into provider messages."""

from __future__ import annotations

import logging

from openprogram_lsp.core.types import Message, Node, ToolCall

log = logging.getLogger(__name__)


def render_node(node: Node) -> list[Message]:
    """Messages for one chain node; an assistant's tool calls are paired with their results."""
    if node.role == "user":
        return [Message(role="user", content=node.text)]
    if node.role == "summary":
        return [Message(role="user", content=f"[Summary of earlier conversation]\n{node.text}")]
    if node.role != "assistant":
        return []
    steps: list[str] = list(node.metadata.get("steps") or [node.text])
    calls = node.tool_calls or []
    out: list[Message] = []
    for i, text in enumerate(steps):
        step_calls = [c for c in calls if c.step == i]
        if not text and not step_calls:
            continue
        out.append(Message(role="assistant", content=text,
                           tool_calls=[ToolCall(id=c.id, name=c.name, arguments=c.input)
                                       for c in step_calls]))
        for c in step_calls:
            out.append(Message(role="tool", content=c.output or "(no output)", tool_call_id=c.id,
                               name=c.name, is_error=c.status == "failed"))
    if node.status in ("error", "cancelled", "interrupted") and out:
        out[-1] = out[-1].model_copy(
            update={"content": out[-1].content + f"\n[turn {node.status}]"})
    return out


def render_plain(node: Node) -> list[Message]:
    """A fallback rendering that cannot fail: the node's text only."""
    role = "user" if node.role in ("user", "summary") else "assistant"
    return [Message(role=role, content=node.text or f"[{node.role} message]")] if node.text \
        or node.role == "user" else []


def render_chain(chain: list[Node]) -> list[Message]:
    """Render a chain; a node that fails to render falls back to its plain text."""
    out: list[Message] = []
    for node in chain:
        try:
            out.extend(render_node(node))
        except Exception:
            log.exception("rendering node %s failed; using its plain text", node.id)
            out.extend(render_plain(node))
    return out
