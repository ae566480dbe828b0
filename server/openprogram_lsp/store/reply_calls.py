"""A running reply's tool calls as its tool nodes tell them.

A turn writes its reply when a call starts (the call listed ``in_progress``, so a crash leaves
it on record) and when the turn ends; the end of each call is written once, as the call's
tool node (``toolCallId``, its status, output and approval). Until the reply is written again
its record of a finished call still says ``in_progress``: readers of a running reply, and the
recovery that marks a dead turn interrupted, take the call's end from its tool node.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from openprogram_lsp.core.types import ImagePart, Node, ToolCallRecord

OPEN = frozenset({"pending", "in_progress"})


def ended_call(record: ToolCallRecord) -> dict[str, Any]:
    """What a tool node's metadata keeps of a finished call beyond its output and status."""
    out: dict[str, Any] = {}
    if record.approval:
        out["approval"] = record.approval
    if record.blocked_reason:
        out["blockedReason"] = record.blocked_reason
    if record.title:
        out["title"] = record.title
    return out


def has_open_calls(node: Node) -> bool:
    """Whether a reply lists a call that has not ended (a running turn's, or a dead one's)."""
    return node.role == "assistant" and any(c.status in OPEN for c in node.tool_calls or ())


def settle(reply: Node, tools: Iterable[Node]) -> Node:
    """``reply`` with each call it lists as not ended taken from the tool node that records
    its end (the same node object when there is none)."""
    calls = reply.tool_calls
    if not calls:
        return reply
    ended = {t.metadata.get("toolCallId"): t for t in tools if t.role == "tool"}
    out: list[ToolCallRecord] = []
    changed = False
    for call in calls:
        node = ended.get(call.id) if call.status in OPEN else None
        if node is not None:
            meta = node.metadata
            update: dict[str, Any] = {
                "status": "completed" if node.status == "done" else "failed",
                "output": node.text}
            if isinstance(meta.get("approval"), dict):
                update["approval"] = meta["approval"]
            if isinstance(meta.get("blockedReason"), str):
                update["blocked_reason"] = meta["blockedReason"]
            if isinstance(meta.get("attachments"), list):
                update["attachments"] = meta["attachments"]
            if isinstance(meta.get("images"), list):
                update["images"] = [ImagePart.model_validate(i) for i in meta["images"]]
            call = call.model_copy(update=update)
            changed = True
        out.append(call)
    return reply.model_copy(update={"tool_calls": out}) if changed else reply
