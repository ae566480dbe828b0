"""A cancel keeps the calls it cut: the running (or waiting) one and the ones not started are
stored as cancelled, so a redraw of the turn and the model's next context still show them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from openprogram_lsp.agent import prompts
from openprogram_lsp.core.types import (
    PermissionOutcome,
    PermissionRequest,
    TurnRequest,
    TurnResult,
)
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event

SLOW = {"text": "Two things.", "tool_calls": [
    {"id": "c1", "name": "run_command", "arguments": {"command": "sleep 30"}},
    {"id": "c2", "name": "write_file", "arguments": {"path": "later.txt", "content": "x\n"}}]}


class WaitingApprover:
    """Never answers (the user walked away from the prompt); the turn is cancelled meanwhile."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel
        self.asked = False

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        self.asked = True
        self.cancel.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def _cancel_on(kind: str, cancel: threading.Event, seen: list[Event]) -> Callable[[Event], None]:
    def on_event(ev: Event) -> None:
        seen.append(ev)
        if ev.type == kind:
            cancel.set()
    return on_event


def _run(d: Dispatcher, trigger: str,
         cancel: threading.Event | None = None) -> tuple[TurnResult, list[Event]]:
    cancel = cancel or threading.Event()
    seen: list[Event] = []
    r = d.process_user_turn(TurnRequest(text="do two things"),
                            on_event=_cancel_on(trigger, cancel, seen), cancel_event=cancel)
    return r, seen


def test_a_call_cut_while_running_and_the_next_one_are_kept_as_cancelled(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[..., str]) -> None:
    d = make_dispatcher(script([SLOW]), permission_mode="bypass")
    r, seen = _run(d, "tool.started")
    assert r.status == "cancelled"
    node = d.services.store.get_node(r.session_id, r.assistant_node_id)
    # the server names the calls itself (never the model's c1, c2): they keep their order
    c1, c2 = node.tool_calls or []
    assert c1.id not in ("c1", "c2") and c1.id != c2.id
    assert c1.status == "failed" and c1.output == prompts.CANCELLED_CALL
    assert c1.title and "sleep 30" in c1.title
    assert c2.status == "failed" and c2.output == prompts.NOT_RUN_CANCELLED
    assert "later.txt" in (c2.title or "")
    [finished] = [e for e in seen if e.type == "tool.finished"]
    assert finished.payload["tool_call_id"] == c1.id and finished.payload["cancelled"] is True
    wire = {c["id"]: c for c in node.wire()["toolCalls"]}
    assert [(wire[c.id]["status"], wire[c.id]["cancelled"]) for c in (c1, c2)] == [
        ("failed", True), ("failed", True)]


def test_a_call_cut_while_its_approval_waits_is_kept_and_reported(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[..., str]) -> None:
    cancel = threading.Event()
    approver = WaitingApprover(cancel)
    d = make_dispatcher(script([SLOW]), approver=approver)
    r, seen = _run(d, "never", cancel)
    assert approver.asked and r.status == "cancelled"
    node = d.services.store.get_node(r.session_id, r.assistant_node_id)
    c1, c2 = node.tool_calls or []
    assert (c1.status, c2.status) == ("failed", "failed")
    assert "sleep 30" in (c1.title or "") and "later.txt" in (c2.title or "")
    finished = [e.payload for e in seen if e.type == "tool.finished"]
    assert finished == [{"tool_call_id": c1.id, "status": "failed",
                         "output": prompts.CANCELLED_CALL, "cancelled": True}]
