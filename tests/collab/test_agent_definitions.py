"""The agent tool's ``agent: NAME``: the child's tools pass admission, its prompt and mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.collab.subagent_helpers import build, call, text, tool_nodes
from tests.conftest import RecordingApprover

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import EventBus

pytestmark = pytest.mark.timeout(120)

REVIEWER = """---
name: reviewer
description: Reads and reports; never runs commands
disallowedTools: run_command
---
You are a careful reviewer.
"""


def define(workspace: Path, name: str, body: str, where: str = ".openprogram/agents") -> None:
    d = workspace / where
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.md").write_text(body)


def test_a_definition_disallowing_run_command_refuses_the_childs_call_by_admission(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    define(workspace, "reviewer", REVIEWER)
    parent = script([call("agent", prompt="review it", label="rev", agent="reviewer"),
                     text("Spawned."), call("list_agents"), text("Done.")])
    child = script([call("run_command", command="touch child-ran"),
                    call("read_file", path="notes.txt"), text("Reviewed.")])
    (workspace / "notes.txt").write_text("notes\n")
    approver = RecordingApprover("allow_always")  # trusts the workspace's definition
    d, _ = build(home, workspace, bus, parent, child=child, approver=approver)
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="get a review"))
    assert r.status == "done"
    assert d.agents.runner.wait_idle(60)
    assert [q.tool_call.name for q in approver.requests] == ["trust_workspace_definitions"]
    assert not (workspace / "child-ran").exists()
    [agent] = [a for a in d.list_agents(r.session_id) if a.kind == "agent"]
    store = d.services.store
    user, reply = store.get_branch(r.session_id, agent.head_id)
    assert user.metadata["agentType"] == "reviewer"
    refused, read = reply.tool_calls or []
    assert refused.status == "failed"
    assert refused.output is not None and refused.output.startswith(
        "Refused by admission: agent definition 'reviewer' may not use run_command")
    assert read.status == "completed"
    # list_agents shows the definition next to the runs
    [listing] = tool_nodes(d, r.session_id, "list_agents")
    assert '"name": "reviewer"' in listing.text and '"trust": "trusted"' in listing.text


def test_unknown_and_unapproved_definitions_are_refused(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    define(workspace, "reviewer", REVIEWER, where=".claude/agents")
    parent = script([call("agent", prompt="x", agent="nobody"),
                     call("agent", prompt="x", agent="reviewer"), text("ok")])
    d, _ = build(home, workspace, bus, parent, approver=RecordingApprover("reject_once"))
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="go"))
    unknown, unapproved = tool_nodes(d, r.session_id, "agent")
    assert "no agent definition named 'nobody' (reviewer)" in unknown.text
    assert "not approved yet" in unapproved.text
    assert d.list_agents(r.session_id) == []


def test_a_definitions_permission_mode_and_model_apply_to_the_child(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    child = script([call("write_file", path="x.txt", content="x"), text("Could not write.")])
    define(workspace, "planner", f"---\npermissionMode: plan\nmodel: {child}\n---\nPlan only.\n")
    parent = script([call("agent", prompt="plan it", agent="planner"), text("Spawned.")])
    d, _ = build(home, workspace, bus, parent, approver=RecordingApprover("allow_always"))
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="plan"))
    assert d.agents.runner.wait_idle(60)
    [agent] = [a for a in d.list_agents(r.session_id) if a.kind == "agent"]
    _, reply = d.services.store.get_branch(r.session_id, agent.head_id)
    [write] = reply.tool_calls or []
    assert write.status == "failed"
    assert write.blocked_reason == "permission mode 'plan' is read-only"
    assert not (workspace / "x.txt").exists()
    assert reply.metadata["model"].startswith("scripted:")
