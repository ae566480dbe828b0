"""The domain's snake_case values become the wire's camelCase only here (lsp/dumps.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openprogram_lsp.core.types import Checkpoint, TurnRequest, TurnResult, Usage
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.dumps import camel_keys, event_data, notification


def test_a_flat_payload_is_dumped_through_its_wire_model_keeping_nulls_and_extra_keys() -> None:
    data = {"agent_id": "a1", "kind": "agent", "label": None, "permission_mode": "ask",
            "parent_session_id": None, "parent_turn_id": None, "branch_from": None}
    assert event_data("subagent.started", data) == {
        "agentId": "a1", "kind": "agent", "label": None, "parentSessionId": None,
        "parentTurnId": None, "branchFrom": None, "permissionMode": "ask"}


def test_tool_input_is_data_and_keeps_its_keys() -> None:
    data = {"tool_call_id": "c1", "name": "write_file", "kind": "edit", "title": "Write a",
            "input": {"file_path": "a", "oldText": "x"}, "mcp": {"server": "s", "tool": "t"}}
    out = event_data("tool.started", data)
    assert out == {"toolCallId": "c1", "name": "write_file", "kind": "edit", "title": "Write a",
                   "input": {"file_path": "a", "oldText": "x"},
                   "mcp": {"server": "s", "tool": "t"}}


def test_a_model_payload_is_the_same_json_as_its_wire_dump() -> None:
    cp = Checkpoint(id="c", session_id="s", turn_id="t", kind="turn", created_at="now",
                    message="m", files=[])
    result = TurnResult(session_id="s", user_node_id="u", assistant_node_id="u_reply",
                        head_id="u_reply", status="done", text="hi", usage=Usage(input_tokens=3),
                        checkpoint=cp)
    assert event_data("turn.finished", result.payload()) == result.wire()
    bare = result.model_copy(update={"checkpoint": None})
    assert event_data("turn.finished", bare.payload()) == bare.wire()
    assert bare.wire()["checkpoint"] is None
    assert event_data("checkpoint.created", cp.payload()) == cp.wire()


def test_an_event_without_a_wire_model_has_its_keys_camelcased() -> None:
    ev = Event(type="model.response_completed", payload={"model": "m", "tool_calls": 2},
               session_id="s", turn_id="t")
    assert notification(ev) == {"type": "model.response_completed", "sessionId": "s",
                                "turnId": "t", "data": {"model": "m", "toolCalls": 2}}
    workspace = Event(type="file.changed", payload={"changes": [], "root": "/w"})
    assert notification(workspace) == {"type": "file.changed", "sessionId": None,
                                       "data": {"changes": [], "root": "/w"}}


def test_every_payload_of_a_real_turn_fits_its_wire_model(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[[list[dict[str, Any]]], str],
        events: list[Event]) -> None:
    d = make_dispatcher(script([
        {"text": "Writing.", "tool_calls": [{"id": "c1", "name": "write_file", "arguments": {
            "path": "a.txt", "content": "one\n"}}]},
        {"text": "Done."}]), permission_mode="bypass")
    assert d.process_user_turn(TurnRequest(text="write a.txt")).status == "done"
    seen = {e.type for e in events}
    assert {"turn.started", "tool.started", "tool.finished", "checkpoint.created",
            "turn.finished", "context.usage"} <= seen
    for ev in events:
        kind = w.EVENT_DATA.get(ev.type)
        if kind is None:
            continue
        kind.model_validate(ev.payload)  # no fallback: the model takes the payload as it is
        assert set(event_data(ev.type, ev.payload)) == set(camel_keys(ev.payload)), ev.type


def test_blame_runs_are_typed_and_camelcased_only_on_the_wire() -> None:
    from openprogram_lsp.lsp.dumps import blame
    from openprogram_lsp.store.blame.agent import BlameInfo, EditCall, Hunk

    info = BlameInfo(checkpoint_id="c1", created_at="now", checkpoint_kind="turn",
                     session_id="s", turn_id="t", turn=2, prompt="go", branch_head_id="h",
                     branch="retry", tool_call=EditCall("k", "write_file"),
                     approval={"by": "rule", "decidedAt": "then"})
    out = blame("file:///f", "f", [Hunk(0, 2, "agent", "abc", 0, info),
                                   Hunk(2, 1, "unrecorded")])
    assert out == {"uri": "file:///f", "path": "f", "hunks": [
        {"startLine": 0, "lineCount": 2, "kind": "agent", "checkpointId": "c1",
         "checkpointKind": "turn", "createdAt": "now", "sessionId": "s", "turnId": "t",
         "turn": 2, "prompt": "go", "branch": "retry", "branchHeadId": "h",
         "toolCall": {"id": "k", "name": "write_file"},
         "approval": {"by": "rule", "decidedAt": "then"}},
        {"startLine": 2, "lineCount": 1, "kind": "unrecorded"}]}


def test_hook_and_agent_definition_listings_are_typed_and_camelcased_only_on_the_wire() -> None:
    from openprogram_lsp.core.ports import AgentDefinitionRow
    from openprogram_lsp.hooks.listing import HookListing, HookRunSummary
    from openprogram_lsp.lsp.dumps import agent_definitions, hooks

    ran = HookRunSummary(exit_code=2, duration_ms=1.5, timed_out=False, at=7.0,
                         outcome="deny", stderr="no")
    listed = [HookListing(id="h1", event="PreToolUse", matcher="Write", command="exit 2",
                          timeout=5.0, critical=False, source="s.json", scope="workspace",
                          trust="trusted", active=True, last_result=ran)]
    assert hooks(listed, ["w"]) == {"hooks": [
        {"id": "h1", "event": "PreToolUse", "matcher": "Write", "command": "exit 2",
         "timeout": 5.0, "critical": False, "source": "s.json", "scope": "workspace",
         "trust": "trusted", "active": True,
         "lastResult": {"exitCode": 2, "durationMs": 1.5, "timedOut": False, "at": 7.0,
                        "outcome": "deny", "stderr": "no"},
         "type": "command", "background": False}], "warnings": ["w"]}
    row = AgentDefinitionRow(id="a1", name="reader", description="", source="r.md",
                             scope="user", tools=None, disallowed_tools=("run_command",),
                             trust="trusted", permission_mode="plan")
    assert agent_definitions([row]) == [
        {"id": "a1", "name": "reader", "description": "", "source": "r.md", "scope": "user",
         "disallowedTools": ["run_command"], "permissionMode": "plan", "trust": "trusted"}]
