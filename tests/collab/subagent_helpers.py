"""Helpers for the subagent tests: a dispatcher with collaboration settings and a hold tool."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.core.types import Node, PermissionOutcome, PermissionRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import EventBus
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput

HOLD_STEPS = 4000  # x 5 ms: a held tool gives up after 20 s so a broken test cannot hang


class HoldInput(BaseModel):
    key: str


class Hold(Tool):
    """A test tool that waits until the test releases its key (bounded)."""

    name = "hold"
    description = "Wait until released (tests only)."
    kind = "read"
    Input = HoldInput

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._released: dict[str, threading.Event] = {}
        self._entered: dict[str, threading.Event] = {}

    def _ev(self, table: dict[str, threading.Event], key: str) -> threading.Event:
        with self._lock:
            return table.setdefault(key, threading.Event())

    def release(self, key: str) -> None:
        self._ev(self._released, key).set()

    def entered(self, key: str, timeout: float = 20.0) -> bool:
        return self._ev(self._entered, key).wait(timeout)

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, HoldInput)
        self._ev(self._entered, args.key).set()
        released = self._ev(self._released, args.key)
        for _ in range(HOLD_STEPS):
            if released.is_set():
                return ToolOutput(f"released {args.key}")
            await asyncio.sleep(0.005)
        return ToolOutput(f"hold {args.key} gave up", is_error=True)


def build(home: Path, workspace: Path, bus: EventBus, model: str | None, *,
          child: str | None = None, mode: str = "bypass", approver: Any = None,
          max_messages: int | None = None) -> tuple[Dispatcher, Hold]:
    """A dispatcher with a hold tool and, optionally, a model for children."""
    extra: dict[str, Any] = {}
    if child:
        extra["agent.model"] = child
    if max_messages is not None:
        extra["agent.max_messages"] = max_messages
    cfg = AppConfig(workspace=workspace, home=home, model=model,
                    permission_mode=mode, extra=extra)  # type: ignore[arg-type]
    d = build_dispatcher(cfg, bus=bus, approver=approver)
    hold = Hold()
    d.services.tools.register(hold)
    return d, hold


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A scripted response that makes one tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def text(t: str) -> dict[str, Any]:
    """A scripted response with text only."""
    return {"text": t}


def chain_texts(d: Dispatcher, sid: str, head: str) -> list[tuple[str, str]]:
    """(role, text) of a chain, root first."""
    return [(n.role, n.text) for n in d.services.store.get_branch(sid, head)]


def tool_nodes(d: Dispatcher, sid: str, name: str) -> list[Node]:
    """Tool result nodes of one tool in a session, in creation order."""
    return [n for n in d.services.store.nodes(sid)
            if n.role == "tool" and n.metadata.get("name") == name]


def attach_nodes(d: Dispatcher, sid: str) -> list[Node]:
    """Attach pointers written in a session."""
    return [n for n in d.services.store.nodes(sid) if n.metadata.get("kind") == "attach"]


class PickingApprover:
    """Answers each prompt with the option id given for its tool, recording the requests."""

    def __init__(self, picks: dict[str, str]) -> None:
        self.picks = picks
        self.requests: list[PermissionRequest] = []

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        self.requests.append(request)
        option = next(o for o in request.options
                      if o.option_id == self.picks[request.tool_call.name])
        return PermissionOutcome(outcome="selected", option_id=option.option_id,
                                 kind=option.kind)
