"""todo_write: the whole list each call, a plan.updated event, no approval, kept in history."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from openprogram_lsp.lsp.dumps import notification
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin.plan import TodoWrite
from tests.conftest import RecordingApprover

PLAN = [{"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}]


async def test_the_list_is_echoed_and_emitted(workspace: Path) -> None:
    sent: list[tuple[str, dict]] = []
    ctx = ToolContext(workspace=workspace, emit=lambda t, p: sent.append((t, p)))
    tool = TodoWrite()
    out = await tool.run(tool.parse({"todos": PLAN}), ctx)
    assert out.text == ("To-do list updated: 1 of 3 completed.\n[x] Read the code\n"
                        "[~] Fix the bug\n[ ] Run the tests")
    assert sent == [("plan.updated", {"entries": [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "active_form": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "active_form": "Running the tests"}]})]
    two = [{**PLAN[1], "status": "in_progress"}, {**PLAN[2], "status": "in_progress"}]
    assert "keep one in progress" in (await tool.run(tool.parse({"todos": two}), ctx)).text
    assert (await tool.run(tool.parse({"todos": []}), ctx)).text == "To-do list cleared."
    with pytest.raises(ToolError, match="status"):
        tool.parse({"todos": [{"content": "x", "status": "done"}]})
    with pytest.raises(ToolError, match="content"):
        tool.parse({"todos": [{"content": "", "status": "pending"}]})


def test_the_wire_spells_active_form_in_camel_case() -> None:
    event = Event(type="plan.updated", payload={"entries": [
        {"content": "Fix", "status": "in_progress", "active_form": "Fixing"}]},
        session_id="s", turn_id="t")
    assert notification(event)["data"] == {
        "entries": [{"content": "Fix", "status": "in_progress", "activeForm": "Fixing"}]}


def test_a_turn_updates_the_plan_without_asking(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[[list[dict]], str],
        events: list[Event]) -> None:
    later = [{**PLAN[1], "status": "completed"}, {**PLAN[2], "status": "in_progress"}]
    approver = RecordingApprover("reject_once")  # would refuse anything it was asked about
    d = make_dispatcher(script([
        {"text": "Planning.", "tool_calls": [{"name": "todo_write", "arguments": {
            "todos": PLAN}}]},
        {"tool_calls": [{"name": "todo_write", "arguments": {"todos": later}}]},
        {"text": "Done."}]), approver=approver, permission_mode="plan")
    r = d.process_user_turn(TurnRequest(text="fix it"))
    assert r.status == "done" and approver.requests == []
    plans = [e for e in events if e.type == "plan.updated"]
    assert [[(x["content"], x["status"]) for x in e.payload["entries"]] for e in plans] == [
        [("Read the code", "completed"), ("Fix the bug", "in_progress"),
         ("Run the tests", "pending")],
        [("Fix the bug", "completed"), ("Run the tests", "in_progress")]]
    assert all(e.session_id == r.session_id and e.turn_id for e in plans)
    started = [e for e in events if e.type == "tool.started"]
    assert started[0].payload["kind"] == "think"
    assert started[0].payload["title"] == "Plan: 1/3 done"
    # stored with the turn: the last completed call's input is the latest plan
    node = d.services.store.get_node(r.session_id, r.assistant_node_id)
    calls = [c for c in node.tool_calls or [] if c.name == "todo_write"]
    assert [c.status for c in calls] == ["completed", "completed"]
    assert calls[-1].input == {"todos": later}
