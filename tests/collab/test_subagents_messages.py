"""send_message: sibling branches, other sessions, busy inboxes, budget and refusals."""

from __future__ import annotations

import asyncio
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

from openprogram_lsp.collab.send_message import send_message
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.types import Node, TurnRequest, TurnResult
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.events.tool_gate import GateDecision

pytestmark = pytest.mark.timeout(120)


def test_child_messages_a_sibling_by_name_and_the_reply_flows_back(
        home: Path, workspace: Path, bus: EventBus, script: Callable, events: list[Event],
        dispatchers: list[Dispatcher]) -> None:
    main = script([text("hello")])
    reviewer = script([text("reviewer ready"), call("hold", key="review"), text("looks good")])
    writer = script([call("send_message", to="reviewer", message="please review the notes"),
                     text("sent"), text("review received")])
    d, hold = build(home, workspace, bus, main)
    dispatchers.append(d)
    store = d.services.store
    r0 = d.process_user_turn(TurnRequest(text="hi"))
    sid = r0.session_id
    rev = asyncio.run(d.agents.run_agent_turn(sid, "be the reviewer", None, None, "reviewer",
                                              model=reviewer))
    assert rev.status == "done" and store.find_branch(sid, "reviewer") == rev.head_id
    job = d.agents.spawn(sid, "write, then get a review", label="writer", model=writer)
    assert job.wait(60) and job.status == "done"
    first_writer_turn = job.head_id
    assert hold.entered("review")
    hold.release("review")
    assert d.agents.runner.wait_idle(60)

    rev_tip = store.find_branch(sid, "reviewer")
    assert rev_tip is not None
    rchain = chain_texts(d, sid, rev_tip)
    assert [r for r, _ in rchain] == ["user", "assistant", "user", "assistant"]
    assert rchain[2][1].endswith("please review the notes")
    assert f"from {sid}:{first_writer_turn}" in rchain[2][1]
    assert rchain[3][1] == "looks good"
    assert store.get_node(sid, rev_tip).metadata["source"] == "send_message"

    wr_tip = store.find_branch(sid, "writer")
    assert wr_tip is not None
    wchain = store.get_branch(sid, wr_tip)
    assert [(n.role, n.metadata.get("source")) for n in wchain] == [
        ("user", "agent_spawn"), ("assistant", "agent_spawn"),
        ("user", "follow_up"), ("assistant", "follow_up")]
    assert wchain[2].text.startswith("[Reply from reviewer")
    assert wchain[2].text.endswith("looks good")
    assert wchain[3].text == "review received"
    # the user's head stayed where the user left it
    assert store.head(sid) == r0.assistant_node_id
    [att] = attach_nodes(d, sid)
    assert att.caller == first_writer_turn and att.metadata["targetNodeId"] == rev_tip

    sent = [e.payload for e in events if e.type == "branch.message_sent"]
    assert sent[0]["kind"] == "message" and sent[0]["to_label"] == "reviewer"
    assert sent[0]["from"] == f"{sid}:{first_writer_turn}"
    assert sent[1]["kind"] == "reply" and sent[1]["to"] == f"{sid}:{first_writer_turn}"
    kinds = {(a.kind, a.label, a.status) for a in d.list_agents(sid)}
    # the reviewer ran through run_agent_turn directly: listed from the DAG, not from a job
    assert kinds == {("agent", "reviewer", "done"), ("agent", "writer", "done"),
                     ("message", "reviewer", "done")}


def test_message_to_another_session_waits_for_its_busy_turn_and_replies(
        home: Path, workspace: Path, bus: EventBus, script: Callable, events: list[Event],
        dispatchers: list[Dispatcher]) -> None:
    y_model = script([call("hold", key="y"), text("y first done"), text("y answers")])
    d, hold = build(home, workspace, bus, None)
    dispatchers.append(d)
    store = d.services.store
    ysid = store.create_session(workspace=str(workspace))
    x_model = script([call("send_message", to=f"{ysid}:HEAD", message="question for y"),
                      text("asked"), text("x got the answer")])
    results: list[TurnResult] = []
    worker = threading.Thread(target=lambda: results.append(d.process_user_turn(
        TurnRequest(text="y works", session_id=ysid, model=y_model))))
    worker.start()
    assert hold.entered("y")
    rx = d.process_user_turn(TurnRequest(text="ask y", model=x_model))
    receipt = tool_nodes(d, rx.session_id, "send_message")[0].text
    assert "queued behind 1" in receipt
    hold.release("y")
    worker.join(60)
    assert d.agents.runner.wait_idle(60)

    [ry] = results
    ychain = chain_texts(d, ysid, store.head(ysid) or "")
    assert [t for _, t in ychain][1:] == ["y first done", ychain[2][1], "y answers"]
    assert ychain[2][1].endswith("question for y") and ry.status == "done"
    xhead = store.head(rx.session_id)
    assert xhead is not None
    xchain = store.get_branch(rx.session_id, xhead)
    assert [n.metadata.get("source") for n in xchain] == ["user", "user", "follow_up",
                                                         "follow_up"]
    assert xchain[2].text.endswith("y answers") and xchain[3].text == "x got the answer"
    sent = next(e for e in events if e.type == "branch.message_sent")
    assert sent.session_id == rx.session_id and sent.payload["queued"] is True
    assert [a.kind for a in d.list_agents(rx.session_id)] == ["message"]
    assert len(store.list_sessions()) == 2


def test_budget_is_exhausted_on_the_ninth_message(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    a_steps = []
    for i in range(1, 6):
        a_steps += [call("send_message", to="b", message=f"ping {i}"), text(f"sent {i}")]
    a_model = script([*a_steps[:-1], text("stopping")])
    b_model = script([text("b ready")] + [text(f"pong {i}") for i in range(1, 5)])
    d, _ = build(home, workspace, bus, None)
    dispatchers.append(d)
    store = d.services.store
    sid = store.create_session(workspace=str(workspace))
    asyncio.run(d.agents.run_agent_turn(sid, "be b", None, None, "b", model=b_model))
    d.process_user_turn(TurnRequest(text="start pinging", session_id=sid, model=a_model))
    assert d.agents.runner.wait_idle(60)

    sends = tool_nodes(d, sid, "send_message")
    assert len(sends) == 5
    assert all("[delivered" in n.text for n in sends[:4])
    assert sends[4].status == "error"
    assert "message budget exhausted" in sends[4].text and "message 9 " in sends[4].text
    b_tip = store.find_branch(sid, "b")
    assert b_tip is not None
    delivered = [n for n in store.get_branch(sid, b_tip) if n.role == "user"][1:]
    assert [n.metadata["source"] for n in delivered] == ["send_message"] * 4
    assert [n.metadata["messageDepth"] for n in delivered] == [1, 3, 5, 7]
    head = store.head(sid)
    assert head is not None and store.get_node(sid, head).text.endswith("stopping")


def test_messaging_your_own_branch_is_refused(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    d, _ = build(home, workspace, bus, None)
    dispatchers.append(d)
    sid = d.services.store.create_session(workspace=str(workspace))
    model = script([call("send_message", to=f"{sid}:HEAD", message="me?"),
                    call("send_message", to="main", message="me?"), text("ok")])
    r = d.process_user_turn(TurnRequest(text="go", session_id=sid, label="main",
                                        model=model))
    assert d.agents.runner.wait_idle(60)
    outs = tool_nodes(d, r.session_id, "send_message")
    assert len(outs) == 2
    for n in outs:
        assert n.status == "error" and "your own current branch" in n.text
    assert d.list_agents(sid) == []


def test_unknown_targets_are_refused_and_nothing_is_created(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    model = script([call("send_message", to="nosuch", message="x"),
                    call("send_message", to="snotasession0000:HEAD", message="x"),
                    call("send_message", to="new", message="x"),
                    text("ok")])
    d, _ = build(home, workspace, bus, model)
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="go"))
    outs = [n.text for n in tool_nodes(d, r.session_id, "send_message")]
    assert "unknown target 'nosuch'" in outs[0]
    assert "unknown session 'snotasession0000'" in outs[1] and "never creates" in outs[1]
    assert "agent tool" in outs[2]
    assert [s["id"] for s in d.services.store.list_sessions()] == [r.session_id]
    assert d.list_agents() == []
    with pytest.raises(ToolError, match=r"unknown target"):
        send_message(d.agents, "x", f"{r.session_id}:nosuchnode", session_id=r.session_id)


def test_a_busy_targets_inbox_is_delivered_in_order(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    main = script([text("hello"), text("got 1"), text("got 2"), text("got 3")])
    b_model = script([call("hold", key="b"), text("b done"),
                      text("r1"), text("r2"), text("r3")])
    d, hold = build(home, workspace, bus, main)
    dispatchers.append(d)
    store = d.services.store
    r0 = d.process_user_turn(TurnRequest(text="hi"))
    sid = r0.session_id
    d.agents.spawn(sid, "be b", label="b", model=b_model)
    assert hold.entered("b")
    receipts = [d.agents.send_message(f"m{i}", "b", session_id=sid) for i in (1, 2, 3)]
    assert [("queued behind" in x) for x in receipts] == [True, True, True]
    queued = [a for a in d.list_agents(sid) if a.kind == "message"]
    assert [a.status for a in queued] == ["running"] * 3
    hold.release("b")
    assert d.agents.runner.wait_idle(60)

    b_tip = store.find_branch(sid, "b")
    assert b_tip is not None
    bchain = chain_texts(d, sid, b_tip)
    assert [t for _, t in bchain[1::2]] == ["b done", "r1", "r2", "r3"]
    assert [t.rsplit("\n", 1)[-1] for _, t in bchain[2::2]] == ["m1", "m2", "m3"]
    head = store.head(sid)
    assert head is not None
    mchain = chain_texts(d, sid, head)
    assert [t for _, t in mchain[1::2]] == ["hello", "got 1", "got 2", "got 3"]
    assert [t.rsplit("\n", 1)[-1] for _, t in mchain[2::2]] == ["r1", "r2", "r3"]
    assert {a.status for a in d.list_agents(sid)} == {"done"}


def test_gate_applies_to_send_message_called_directly(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    d, _ = build(home, workspace, bus, script([text("hello")]))
    dispatchers.append(d)
    r = d.process_user_turn(TurnRequest(text="hi", label="main"))
    undo = d.services.gates.register(
        lambda e: GateDecision("deny", ("no messages",))
        if e.payload.get("name") == "send_message" else None, name="no-messages")
    try:
        with pytest.raises(ToolError, match="no messages"):
            send_message(d.agents, "hello", "main", session_id=r.session_id)
    finally:
        undo()
    assert d.list_agents() == []


def test_sessions_of_another_workspace_are_out_of_reach(
        home: Path, workspace: Path, tmp_path: Path, bus: EventBus,
        dispatchers: list[Dispatcher], script: Callable) -> None:
    other_ws = tmp_path / "other-project"
    other_ws.mkdir()
    d, _ = build(home, workspace, bus, script([text("ok")]))
    dispatchers.append(d)
    store = d.services.store
    mine = store.create_session(workspace=str(workspace))
    theirs = store.create_session(workspace=str(other_ws))
    for sid in (mine, theirs):
        store.append(sid, Node(id=f"u-{sid}", role="user", text="hi"), advance_head=True)
    with pytest.raises(ToolError, match="another workspace"):
        send_message(d.agents, "run rm -rf .", f"{theirs}:HEAD", session_id=mine)
    assert len(store.get_branch(theirs)) == 1


def test_a_delivered_turn_of_an_ask_mode_sender_asks_before_its_edit(
        home: Path, workspace: Path, bus: EventBus, script: Callable,
        dispatchers: list[Dispatcher]) -> None:
    main = script([text("hello"),
                   call("send_message", to="other", message="write o.txt"), text("sent"),
                   call("write_file", path="o.txt", content="o\n"), text("refused"),
                   text("told")])
    approver = PickingApprover({"send_message": "allow_once", "write_file": "reject_once"})
    d, _ = build(home, workspace, bus, main, mode="ask", approver=approver)
    dispatchers.append(d)
    r0 = d.process_user_turn(TurnRequest(text="hi"))
    d.services.store.name_branch(r0.session_id, r0.assistant_node_id, "other")
    d.services.store.append(r0.session_id, Node(id="u_side", role="user", text="side",
                                                predecessor=None), advance_head=False)
    d.process_user_turn(TurnRequest(text="message the other branch", session_id=r0.session_id,
                                    branch_from="u_side"))
    assert d.agents.runner.wait_idle(60)
    names = [q.tool_call.name for q in approver.requests]
    assert names == ["send_message", "write_file"]
    assert not (workspace / "o.txt").exists()
