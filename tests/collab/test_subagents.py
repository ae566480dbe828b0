"""Subagents: children on named branches, edits checkpointed, outcomes back to the parent."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.collab.subagent_helpers import (
    PickingApprover,
    attach_nodes,
    build,
    call,
    chain_texts,
    text,
    tool_nodes,
)
from tests.conftest import RecordingApprover

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.events.tool_gate import GateDecision

pytestmark = pytest.mark.timeout(120)


def test_child_edits_file_on_named_branch_and_reports_back(
        home: Path, workspace: Path, bus: EventBus, script: Callable, events: list[Event],
        dispatchers: list[Dispatcher]) -> None:
    parent = script([call("agent", prompt="write notes.txt", label="writer"),
                     text("Spawned the writer."),
                     call("list_agents"),
                     text("The writer is done.")])
    child = script([call("hold", key="child"),
                    call("write_file", path="notes.txt", content="from the child\n"),
                    text("Wrote notes.txt.")])
    approver = RecordingApprover("allow_once")
    d, hold = build(home, workspace, bus, parent, child=child, mode="ask", approver=approver)
    dispatchers.append(d)
    store = d.services.store

    r = d.process_user_turn(TurnRequest(text="delegate the notes"))
    sid = r.session_id
    assert r.status == "done" and "Spawned the writer." in r.text
    # the spawn prompt showed the child's task and offered bypass only as its own option
    [spawn] = approver.requests
    assert spawn.tool_call.name == "agent" and spawn.tool_call.input["prompt"] == "write notes.txt"
    assert [o.option_id for o in spawn.options] == ["allow_once", "allow_unattended",
                                                    "reject_once"]
    assert "running async" in (tool_nodes(d, sid, "agent")[0].text)
    assert hold.entered("child")
    head_while_child_ran = store.head(sid)
    hold.release("child")
    assert d.agents.runner.wait_idle(60)
    # the child of an ask-mode parent asked before its edit, labelled as the child's
    asked = [q.tool_call.name for q in approver.requests]
    assert asked == ["agent", "write_file"]
    edit = approver.requests[1]
    assert edit.label == "writer" and edit.tool_call.title == "[writer] Write notes.txt"
    assert edit.session_id == sid and edit.turn_id != r.assistant_node_id

    # the child's edit landed, on its own branch, named by its label
    assert (workspace / "notes.txt").read_text() == "from the child\n"
    [agent] = [a for a in d.list_agents(sid) if a.kind == "agent"]
    assert agent.label == "writer" and agent.status == "done"
    assert agent.session_id == sid
    tip = agent.head_id
    assert store.find_branch(sid, "writer") == tip
    named = {b.name: b for b in store.list_branches(sid)}
    assert named["writer"].head_id == tip and not named["writer"].active
    child_user, child_reply = store.get_branch(sid, tip)
    assert child_user.predecessor is None and child_user.metadata["source"] == "agent_spawn"
    assert child_user.metadata["parentNodeId"] == r.assistant_node_id
    assert child_reply.status == "done" and "Wrote notes.txt." in child_reply.text

    # checkpointed and attributed to the child's turn
    ckpt_id = child_reply.metadata.get("checkpointId")
    assert ckpt_id and agent.id == d.agents.runner.jobs()[0].id
    ckpt = d.checkpointer(workspace).get(ckpt_id)  # type: ignore[union-attr]
    assert ckpt.turn_id == tip and ckpt.session_id == sid
    assert [f.path for f in ckpt.files] == ["notes.txt"]

    # the user's head never moved onto the child's branch
    assert head_while_child_ran == r.assistant_node_id
    head = store.head(sid)
    assert head is not None
    main_chain = store.get_branch(sid, head)
    assert tip not in {n.id for n in main_chain}

    # the outcome came back: an attach pointer and a follow-up turn on the parent's branch
    [att] = attach_nodes(d, sid)
    assert att.caller == r.assistant_node_id and att.metadata["targetNodeId"] == tip
    assert att.metadata["sourceId"] == agent.id
    roles = [(n.role, n.metadata.get("source")) for n in main_chain]
    assert roles == [("user", "user"), ("assistant", "user"),
                     ("user", "follow_up"), ("assistant", "follow_up")]
    assert "[Agent writer finished (done)" in main_chain[2].text
    assert "Wrote notes.txt." in main_chain[2].text
    assert main_chain[3].text.endswith("The writer is done.")
    listing = tool_nodes(d, sid, "list_agents")[0].text
    assert '"label": "writer"' in listing and '"status": "done"' in listing

    # events carry the session explicitly
    started = [e for e in events if e.type == "subagent.started"]
    ended = [e for e in events if e.type == "subagent.ended"]
    assert [e.session_id for e in started] == [sid] and [e.session_id for e in ended] == [sid]
    assert ended[0].payload["head_id"] == tip and ended[0].payload["status"] == "done"
    assert ended[0].payload["label"] == "writer"
    replies = [e for e in events if e.type == "branch.message_sent"]
    assert replies and replies[0].payload["kind"] == "reply"
    assert replies[0].payload["in_turn"] is False


@pytest.mark.parametrize(("pick", "written", "asked"), [
    ("reject_once", False, ["agent", "write_file"]),
    ("allow_unattended", True, ["agent"]),
])
def test_a_child_escalates_only_when_the_user_lets_it_run_without_asking(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher], pick: str, written: bool, asked: list[str]) -> None:
    parent = script([call("agent", prompt="write w.txt", label="w"), text("spawned"),
                     text("noted")])
    child = script([call("write_file", path="w.txt", content="x\n"), text("child done")])
    approver = PickingApprover({"agent": "allow_once" if pick == "reject_once" else pick,
                                "write_file": "reject_once"})
    d, _ = build(home, workspace, bus, parent, child=child, mode="ask", approver=approver)
    dispatchers.append(d)
    d.process_user_turn(TurnRequest(text="go"))
    assert d.agents.runner.wait_idle(60)
    assert [q.tool_call.name for q in approver.requests] == asked
    assert (workspace / "w.txt").exists() is written


def test_child_outcome_is_absorbed_by_a_running_parent(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    parent = script([call("agent", prompt="say hi", label="greeter"),
                     call("hold", key="parent"),
                     text("Waiting."),
                     text("Got the greeting.")])
    child = script([text("hi from the child")])
    d, hold = build(home, workspace, bus, parent, child=child)
    dispatchers.append(d)

    def release(ev: Event) -> None:
        if ev.type == "branch.message_sent" and ev.payload.get("in_turn"):
            hold.release("parent")

    bus.subscribe(release)
    r = d.process_user_turn(TurnRequest(text="spawn and wait"))
    assert d.agents.runner.wait_idle(60)
    assert r.status == "done"
    assert r.text.endswith("Waiting.\n\nGot the greeting.")
    store = d.services.store
    # no extra turn: the reply was handled inside the parent's turn
    assert [n.metadata.get("source") for n in store.get_branch(r.session_id)] == ["user", "user"]
    assert store.head(r.session_id) == r.assistant_node_id
    [att] = attach_nodes(d, r.session_id)
    assert "hi from the child" in att.text


def test_gate_denies_a_tool_inside_a_bypass_child(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    parent = script([call("agent", prompt="write it", label="w"), text("ok"),
                     text("noted")])
    child = script([call("write_file", path="blocked.txt", content="x"), text("could not")])
    seen_modes: list[str] = []

    def gate(ev: Event) -> GateDecision | None:
        if ev.payload.get("name") == "write_file":
            seen_modes.append(str(ev.payload.get("mode")))
            return GateDecision("deny", ("writes are frozen",))
        return None

    d, _ = build(home, workspace, bus, parent, child=child)
    dispatchers.append(d)
    undo = d.services.gates.register(gate, name="freeze-writes")
    try:
        r = d.process_user_turn(TurnRequest(text="go"))
        assert d.agents.runner.wait_idle(60)
    finally:
        undo()
    assert seen_modes == ["bypass"]
    assert not (workspace / "blocked.txt").exists()
    [denied] = tool_nodes(d, r.session_id, "write_file")
    assert denied.status == "error" and "writes are frozen" in denied.text
    [agent] = d.list_agents(r.session_id)
    assert agent.status == "done"


def test_cancelling_the_parent_cancels_its_children(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    parent = script([call("agent", prompt="slow work", label="slow"),
                     call("agent", prompt="more slow work", label="slower"),
                     call("hold", key="parent")])
    child = script([call("hold", key="child"), call("hold", key="child")])
    d, hold = build(home, workspace, bus, parent, child=child)
    dispatchers.append(d)
    cancel = threading.Event()
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(d.process_user_turn(
        TurnRequest(text="start"), cancel_event=cancel)))
    worker.start()
    assert hold.entered("parent") and hold.entered("child")
    assert {a.status for a in d.list_agents()} == {"running"}
    cancel.set()
    worker.join(60)
    assert d.agents.runner.wait_idle(60)
    [r] = out
    assert r.status == "cancelled"  # type: ignore[attr-defined]
    agents = d.list_agents(r.session_id)  # type: ignore[attr-defined]
    assert sorted(a.label for a in agents) == ["slow", "slower"]
    assert {a.status for a in agents} == {"cancelled"}
    store = d.services.store
    sid = r.session_id  # type: ignore[attr-defined]
    for a in agents:
        if a.head_id is not None:
            assert store.get_node(sid, a.head_id).status == "cancelled"
    # nothing was reported back to a parent the user cancelled
    assert attach_nodes(d, sid) == []
    assert all(n.metadata.get("source") != "follow_up" for n in store.nodes(sid))


def test_cancelling_one_child_tells_the_parent(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    parent = script([call("agent", prompt="slow", label="slow"), text("spawned"),
                     text("ok, it was cancelled")])
    child = script([call("hold", key="child")])
    d, hold = build(home, workspace, bus, parent, child=child)
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="start"))
    assert hold.entered("child")
    [agent] = d.list_agents(r.session_id)
    assert d.agents.cancel_agent(agent.id)
    assert d.agents.runner.wait_idle(60)
    [agent] = d.list_agents(r.session_id)
    assert agent.status == "cancelled"
    head = d.services.store.head(r.session_id)
    assert head is not None
    texts = chain_texts(d, r.session_id, head)
    assert "[Agent slow finished (cancelled)" in texts[2][1]
    assert texts[3][1].endswith("ok, it was cancelled")


def test_agent_tool_refusals(home: Path, workspace: Path, bus: EventBus, script: Callable,
                             dispatchers: list[Dispatcher]) -> None:
    parent = script([call("agent", prompt="a", label="dup"), call("agent", prompt="b",
                                                                   label="dup"),
                     call("agent", prompt="c", branch_from="nope"),
                     call("agent", prompt="d", label="new"), text("done"), text("ack")])
    child = script([text("child done")])
    d, _ = build(home, workspace, bus, parent, child=child)
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="go"))
    assert d.agents.runner.wait_idle(60)
    outs = [n.text for n in tool_nodes(d, r.session_id, "agent")]
    assert "running async" in outs[0]
    assert "already a branch" in outs[1]
    assert "branch_from" in outs[2]
    assert "label must be" in outs[3]
    assert len(d.list_agents(r.session_id)) == 1


def test_children_are_listed_from_the_dag_after_a_restart(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    parent = script([call("agent", prompt="do it", label="helper"), text("spawned"),
                     text("thanks")])
    child = script([text("done it")])
    d, _ = build(home, workspace, bus, parent, child=child)
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="go"))
    assert d.agents.runner.wait_idle(60)
    [before] = d.list_agents(r.session_id)
    d2, _ = build(home, workspace, bus, parent, child=child)  # a fresh process, same state
    dispatchers.append(d2)
    [after] = d2.list_agents(r.session_id)
    for key in ("id", "session_id", "head_id", "label", "status", "kind"):
        assert getattr(after, key) == getattr(before, key), key
    assert after.status == "done" and after.label == "helper"
    assert after.parent_session_id == r.session_id


def test_children_inherit_the_count_and_the_budget_stops_them(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    parent = script([call("agent", prompt="go deeper", label="kid"), text("spawned"),
                     text("ack")])
    child = script([call("agent", prompt="deeper still", label="grandkid"),
                    call("send_message", to="main", message="hello parent"),
                    text("stopped")])
    d, _ = build(home, workspace, bus, parent, child=child, max_messages=1)
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="go", label="main"))
    assert d.agents.runner.wait_idle(60)
    sid = r.session_id
    [spawned, refused] = tool_nodes(d, sid, "agent")
    assert "running async" in spawned.text
    assert refused.status == "error" and "agent budget exhausted" in refused.text
    assert "message 2 of a chain limited to 1" in refused.text
    [msg] = tool_nodes(d, sid, "send_message")
    assert msg.status == "error" and "message budget exhausted" in msg.text
    assert [a.label for a in d.list_agents(sid)] == ["kid"]
    kid_tip = d.services.store.find_branch(sid, "kid")
    assert kid_tip is not None
    assert d.services.store.get_node(sid, kid_tip).text.endswith("stopped")


def test_a_child_cut_by_the_output_limit_is_listed_truncated(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    from openprogram_lsp.lsp import dumps
    from openprogram_lsp.lsp import wire as w

    parent = script([call("agent", prompt="explain it all", label="talker"), text("spawned"),
                     text("noted")])
    child = script([{"text": "It begins wi", "stop": "max_tokens"}])
    d, _ = build(home, workspace, bus, parent, child=child)
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="go"))
    assert d.agents.runner.wait_idle(60)
    [run] = d.list_agents(r.session_id)
    assert run.status == "truncated"
    assert dumps.model(w.AgentInfo, run).status == "truncated"  # the wire takes it
    d2, _ = build(home, workspace, bus, parent, child=child)  # a fresh process, same state
    dispatchers.append(d2)
    assert [a.status for a in d2.list_agents(r.session_id)] == ["truncated"]
