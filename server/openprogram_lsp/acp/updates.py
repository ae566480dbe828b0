"""Bus events and stored nodes as ACP ``session/update`` payloads (pure conversions)."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

from acp.schema import (
    ConfigOptionUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallLocation,
    UsageUpdate,
)
from pydantic.alias_generators import to_camel

from acp import helpers
from openprogram_lsp.core.images import ImageError, load_base64
from openprogram_lsp.core.types import DiffPreview, Node, ToolCallRecord
from openprogram_lsp.events.bus import Event
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.paths import resolve_in_workspace
from openprogram_lsp.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
SessionUpdate = helpers.SessionUpdate | UsageUpdate | ConfigOptionUpdate

EXT_EVENT = "openprogram/event"
"""Extension notification (sent as ``_openprogram/event``) for events ACP has no update for."""

EXT_TYPES = frozenset({"checkpoint.created", "context.compacted", "subagent.started",
                       "subagent.ended", "branch.message_sent"})
"""Bus events forwarded through the extension notification (and ``mcp.tools_added``, to
each running turn's session of its workspace)."""

MAX_SHOWN_OUTPUT = 20_000


_camel = functools.lru_cache(maxsize=4096)(to_camel)  # payload keys are a small, fixed set


def camel_keys(data: Any) -> Any:
    """A dict's top-level keys in camelCase, as ACP spells its JSON (other values as they are)."""
    if not isinstance(data, dict):
        return data
    return {_camel(k) if "_" in k else k: v for k, v in data.items()}


def ext_event(event: Event) -> dict[str, Any]:
    """An ``EXT_TYPES`` bus event as the extension's params: ``openprogram/event``'s shape
    (type, sessionId, turnId?, data), its payload's keys in camelCase (their values are flat)."""
    out: dict[str, Any] = {"type": event.type, "sessionId": event.session_id,
                           "data": camel_keys(event.payload)}
    if event.turn_id is not None:
        out["turnId"] = event.turn_id
    return out


def location(workspace: Path, raw_input: dict[str, Any]) -> list[ToolCallLocation] | None:
    """The file a call is about, as an absolute path inside the workspace (for follow-along)."""
    path = raw_input.get("path")
    if not isinstance(path, str) or not path:
        return None
    try:
        return [ToolCallLocation(path=str(resolve_in_workspace(workspace, path)))]
    except Exception:  # outside the workspace or odd bytes: show no location
        return None


def diff_content(workspace: Path, diff: DiffPreview) -> FileEditToolCallContent:
    """An edit preview as ACP ``diff`` content (absolute path; no old text for a new file)."""
    try:
        path = str(resolve_in_workspace(workspace, diff.path))
    except Exception:
        path = str(workspace / diff.path)
    return helpers.tool_diff_content(path, diff.new_text, diff.old_text or None)


def preview(tools: ToolRegistry, workspace: Path, name: str,
            raw_input: dict[str, Any]) -> DiffPreview | None:
    """The edit a call would make, computed by the tool itself (None for non-edits)."""
    tool = tools.get(name)
    if tool is None:
        return None
    try:
        return tool.preview(tool.parse(raw_input), ToolContext(workspace=workspace))
    except Exception:
        log.debug("no preview for %s", name, exc_info=True)
        return None


PLAN_STATUSES = ("pending", "in_progress", "completed")


def plan_update(entries: Any) -> SessionUpdate | None:
    """A ``plan.updated`` event's entries (or a ``todo_write`` call's ``todos``) as ACP's
    ``plan`` update: the whole list, in order (None when it is not a list)."""
    if not isinstance(entries, list):
        return None
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            continue
        status = entry.get("status")
        out.append(helpers.plan_entry(entry["content"], status=status  # type: ignore[arg-type]
                                      if status in PLAN_STATUSES else "pending"))
    return helpers.update_plan(out)


def output_content(kind: str, output: str) -> list[ToolContent]:
    """A tool's output as content: commands as terminal-like text, others as plain text."""
    if not output:
        return []
    shown = output if len(output) <= MAX_SHOWN_OUTPUT else \
        output[:MAX_SHOWN_OUTPUT] + f"\n[... {len(output) - MAX_SHOWN_OUTPUT} characters more]"
    if kind == "execute":
        fence = "````" if "```" in shown else "```"
        shown = f"{fence}console\n{shown}\n{fence}"
    return [helpers.tool_content(helpers.text_block(shown))]


def replay(node: Node, workspace: Path, tool_nodes: dict[str, Node]) -> list[SessionUpdate]:
    """The updates that show one stored branch node again (``session/load``)."""
    if node.role == "user":
        text = str(node.metadata.get("promptText", node.text))
        out: list[SessionUpdate] = [helpers.update_user_message_text(text)] if text else []
        for att in node.metadata.get("attachments") or []:
            if isinstance(att, dict) and isinstance(att.get("uri"), str) and att["uri"]:
                out.append(helpers.update_user_message(helpers.resource_link_block(
                    name=str(att.get("name") or att["uri"]), uri=att["uri"])))
        for item in node.metadata.get("context") or []:  # images: shown again from the store
            if isinstance(item, dict) and item.get("kind") == "image" and item.get("sha256"):
                try:
                    data = load_base64(str(item["sha256"]))
                except ImageError:
                    continue
                out.append(helpers.update_user_message(helpers.image_block(
                    data, str(item.get("mediaType") or ""), uri=item.get("uri") or None)))
        return out
    if node.role != "assistant":
        return []
    steps = [s for s in node.metadata.get("steps") or [] if isinstance(s, str)]
    calls = list(node.tool_calls or [])
    out = []
    if not steps:
        steps = [node.text]
    thoughts = [t for t in node.metadata.get("thoughts") or [] if isinstance(t, dict)]
    for i, step in enumerate(steps):
        thought = "".join(str(t.get("text") or "") for t in thoughts
                          if t.get("step", 0) == i and not t.get("redacted"))
        if thought:
            out.append(helpers.update_agent_thought_text(thought))
        if step:
            out.append(helpers.update_agent_message_text(step))
        for call in calls:
            if call.step == i or (i == len(steps) - 1 and call.step >= i):
                out.append(_replay_call(call, workspace, tool_nodes))
                plan = plan_update(call.input.get("todos")) \
                    if call.name == "todo_write" and call.status == "completed" else None
                if plan is not None:
                    out.append(plan)
    return out


def _replay_call(call: ToolCallRecord, workspace: Path,
                 tool_nodes: dict[str, Node]) -> SessionUpdate:
    status = call.status if call.status in ("completed", "failed") else "failed"
    output = call.output if call.output is not None else \
        (tool_nodes[call.id].text if call.id in tool_nodes else "")
    return helpers.start_tool_call(
        call.id, call.title or call.name, kind=call.kind, status=status,
        content=output_content(call.kind, output), locations=location(workspace, call.input),
        raw_input=call.input)
