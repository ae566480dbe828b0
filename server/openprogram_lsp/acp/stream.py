"""One prompt turn's bus events as ``session/update`` notifications."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from acp.schema import UsageUpdate

from acp import helpers
from openprogram_lsp.acp.updates import (
    EXT_TYPES,
    SessionUpdate,
    ToolContent,
    diff_content,
    ext_event,
    location,
    output_content,
    plan_update,
    preview,
)
from openprogram_lsp.approvals.facts import call_facts
from openprogram_lsp.approvals.modes import EDIT_KINDS, mode_decision
from openprogram_lsp.approvals.rulebook import RuleBook
from openprogram_lsp.core.types import PermissionMode
from openprogram_lsp.events.bus import Event
from openprogram_lsp.tools.registry import ToolRegistry


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


@dataclass(slots=True)
class TurnStream:
    """Converts the events of one session's turn; ``send``/``ext`` queue what goes out."""

    session_id: str
    workspace: Path
    tools: ToolRegistry
    mode: PermissionMode
    rules: RuleBook
    send: Callable[[SessionUpdate], None]
    ext: Callable[[dict[str, Any]], None]
    text: Callable[[str], None] | None = None
    thought: Callable[[str], None] | None = None
    turn_id: str | None = None
    diffs: dict[str, list[ToolContent]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    open_calls: dict[str, None] = field(default_factory=dict)  # in start order

    def on_event(self, ev: Event) -> None:
        """Handle one bus event (any thread; only ``send``/``ext`` are called)."""
        if ev.session_id != self.session_id:
            return
        if ev.type in EXT_TYPES:
            self.ext(_jsonable(ext_event(ev)))
            return
        if self.turn_id is None or ev.turn_id != self.turn_id:
            return  # subagent turns of the session reach the client as ext events only
        data = ev.payload
        if ev.type == "text.delta" and data.get("text"):
            if self.text is not None:
                self.text(str(data["text"]))
            else:
                self.send(helpers.update_agent_message_text(str(data["text"])))
        elif ev.type == "thought.delta" and data.get("text"):
            if self.thought is not None:
                self.thought(str(data["text"]))
            else:
                self.send(helpers.update_agent_thought_text(str(data["text"])))
        elif ev.type == "plan.updated":
            plan = plan_update(data.get("entries"))
            if plan is not None:
                self.send(plan)
        elif ev.type == "context.usage":
            used, size = data.get("used_tokens"), data.get("window_tokens")
            if isinstance(used, int) and isinstance(size, int) and used >= 0 and size > 0:
                self.send(UsageUpdate(session_update="usage_update", used=used, size=size))
        elif ev.type == "tool.started":
            self._started(data)
        elif ev.type == "tool.finished":
            self._finished(data)

    def _started(self, data: dict[str, Any]) -> None:
        call_id = str(data.get("tool_call_id"))
        kind = str(data.get("kind") or "other")
        name = str(data.get("name") or "")
        given = data.get("input")
        raw_input: dict[str, Any] = given if isinstance(given, dict) else {}
        self.kinds[call_id] = kind
        self.open_calls[call_id] = None
        content: list[ToolContent] = []
        if kind in EDIT_KINDS:
            diff = preview(self.tools, self.workspace, name, raw_input)
            if diff is not None:
                content = [diff_content(self.workspace, diff)]
                self.diffs[call_id] = content
        self.send(helpers.start_tool_call(
            call_id, str(data.get("title") or name), kind=kind,  # type: ignore[arg-type]
            status="pending", content=content or None,
            locations=location(self.workspace, raw_input), raw_input=_jsonable(raw_input)))
        source = data.get("mcp")
        mcp = (str(source.get("server")), str(source.get("tool"))) \
            if isinstance(source, dict) else None
        asks = mode_decision(self.mode, kind, mcp=mcp is not None) == "ask"  # type: ignore[arg-type]
        tool = self.tools.get(name)
        facts = call_facts(self.workspace, name, kind, raw_input, self.session_id, mcp=mcp,
                           destructive=tool is not None and tool.destructive())
        if not asks or self.rules.decide(facts) == "allow":
            self.running(call_id)

    def knows(self, call_id: str) -> bool:
        """Whether this call was announced (``tool_call``) and is not finished."""
        return call_id in self.open_calls

    def running(self, call_id: str) -> None:
        """The call passed its approval and runs now (only a call the client was shown)."""
        if call_id in self.open_calls:
            self.send(helpers.update_tool_call(call_id, status="in_progress"))

    def terminal(self, terminal_id: str) -> None:
        """The newest open command runs in a client terminal: show it, now and when done."""
        running = [c for c in self.open_calls if self.kinds.get(c) == "execute"]
        if not running:
            return
        call_id = running[-1]
        content: list[ToolContent] = [helpers.tool_terminal_ref(terminal_id)]
        self.diffs[call_id] = content
        self.send(helpers.update_tool_call(call_id, content=content))

    def _finished(self, data: dict[str, Any]) -> None:
        call_id = str(data.get("tool_call_id"))
        if call_id not in self.open_calls:
            return
        del self.open_calls[call_id]
        status: Literal["completed", "failed"] = \
            "completed" if data.get("status") == "completed" else "failed"
        output = str(data.get("output") or "")
        kind = self.kinds.get(call_id, "other")
        kept = self.diffs.get(call_id, [])
        content = list(kept) if status == "completed" or kind == "execute" else []
        content.extend(output_content(kind, output))
        self.send(helpers.update_tool_call(call_id, status=status, content=content or None,
                                           raw_output={"output": output}))

    def close(self, status: str) -> None:
        """End the turn: calls still open (a cancel cut them) are reported failed."""
        for call_id in list(self.open_calls):
            self.send(helpers.update_tool_call(
                call_id, status="failed", content=output_content("other", status),
                raw_output={"output": status}))
        self.open_calls.clear()
        self.turn_id = None


def tools_added(ev: Event, session_id: str) -> tuple[dict[str, Any], str]:
    """What a session of the workspace is sent when one of its MCP servers added tools after it
    was trusted (``mcp.tools_added``): the extension event and a note for the reply. Each new
    tool asks before its first call."""
    names = ", ".join(str(t.get("tool")) for t in ev.payload.get("tools") or [])
    note = (f"\n\n> MCP server {ev.payload.get('server')} added tools after it was "
            f"trusted: {names}. Each asks before its first use.\n\n")
    return {**_jsonable(ext_event(ev)), "sessionId": session_id}, note
