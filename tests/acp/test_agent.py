"""The agent in process, driven by the SDK's own client over a socket pair."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from acp import RequestError, text_block
from openprogram_lsp.approvals.rulebook import RuleBook
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.store.checkpoints.store import CheckpointStore
from tests.acp.client import RecordingClient, in_process, until


async def test_initialize_advertises_what_we_serve(dispatcher: Any) -> None:
    client = RecordingClient()
    from acp.client.connection import ClientSideConnection  # noqa: F401

    async with in_process(dispatcher, client) as (conn, _agent):
        from tests.acp.client import initialize

        resp = await initialize(conn, client)
    caps = resp.agent_capabilities
    assert resp.protocol_version == 1
    assert caps.load_session is True
    assert caps.prompt_capabilities.embedded_context is True
    assert caps.session_capabilities.list is not None
    assert [m.id for m in resp.auth_methods] == ["environment"]
    assert resp.agent_info.name == "openprogram-lsp"


async def test_relative_cwd_is_refused_and_the_agent_keeps_serving(acp: Any,
                                                                   workspace: Path) -> None:
    with pytest.raises(RequestError) as err:
        await acp.new_session(cwd="relative/dir")
    assert err.value.code == -32602
    assert "cwd" in str(err.value.data)
    session = await acp.new_session(cwd=str(workspace))
    assert session.session_id
    assert [m.id for m in session.modes.available_modes] == ["ask", "accept-edits", "plan",
                                                              "bypass"]


async def test_edit_asks_with_a_diff_then_writes_and_checkpoints(
        acp: Any, client: RecordingClient, workspace: Path) -> None:
    session = await acp.new_session(cwd=str(workspace))
    resp = await acp.prompt(session_id=session.session_id,
                            prompt=[text_block("write a.txt\nhello\n")])
    assert resp.stop_reason == "end_turn"
    assert (workspace / "a.txt").read_text() == "hello\n"
    names = client.names()
    start = names.index("update:tool_call")
    assert start < names.index("permission")  # pending tool call before the question
    assert "update:agent_message_chunk" in names[:start]
    perm = next(v for n, v in client.log if n == "permission")
    # one option per ACP kind (one line and key each in codecompanion), the narrowest
    # "always" first, each naming its scope
    assert [o.kind for o in perm["options"]] == ["allow_once", "allow_always",
                                                 "reject_once", "reject_always"]
    assert [o.name for o in perm["options"]] == [
        "Allow once", "Always, this file (this session)", "Reject",
        "Never, this file (whole workspace)"]
    diff = perm["toolCall"].content[0]
    assert diff.type == "diff" and diff.new_text == "hello\n"
    assert diff.path == str(workspace.resolve() / "a.txt")
    started = client.updates("tool_call")[0]
    assert started.status == "pending" and started.kind == "edit"
    statuses = [u.status for u in client.updates("tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    assert client.updates("tool_call_update")[-1].content[0].type == "diff"
    checkpoints = client.ext_events("checkpoint.created")
    assert checkpoints and checkpoints[0]["data"]["files"] == [{"path": "a.txt",
                                                                "status": "added"}]
    assert resp.field_meta["openprogram"]["checkpointId"] == checkpoints[0]["data"]["id"]
    assert client.updates("available_commands_update")


async def test_reject_leaves_the_file_unwritten(dispatcher: Any, workspace: Path) -> None:
    client = RecordingClient(answer="reject_once")
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        resp = await conn.prompt(session_id=session.session_id,
                                 prompt=[text_block("write a.txt\nno\n")])
    assert resp.stop_reason == "end_turn"
    assert not (workspace / "a.txt").exists()
    assert client.updates("tool_call_update")[-1].status == "failed"


async def test_always_covers_that_file_in_this_session_and_never_is_a_shared_rule(
        dispatcher: Any, home: Path, workspace: Path) -> None:
    """"Always" is the narrowest standing option: that file, this session. "Never" is a
    workspace rule the LSP server shares."""
    from openprogram_lsp.approvals.facts import call_facts

    client = RecordingClient(answer="allow_always")
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write a.txt\n1\n")])
        client.answer = "reject_always"
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write a.txt\n2\n")])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write b.txt\n2\n")])
        other = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=other.session_id, prompt=[text_block("write b.txt\n3\n")])
    assert (workspace / "a.txt").read_text() == "2\n"  # the session rule let it write again
    assert not (workspace / "b.txt").exists()  # asked (rejected always), then denied anywhere
    assert len([n for n, _ in client.log if n == "permission"]) == 2
    rules = RuleBook.for_workspace(home, workspace)  # what a fresh LSP server reads
    write = {"path": "b.txt", "content": "x"}
    assert rules.decide(call_facts(workspace, "write_file", "edit", write, "other")) == "deny"
    other_file = {"path": "a.txt", "content": "x"}
    assert rules.decide(call_facts(workspace, "write_file", "edit", other_file, "x")) is None


async def test_cancel_stops_a_running_command_within_a_second(dispatcher: Any,
                                                              workspace: Path) -> None:
    client = RecordingClient(answer="allow_once")
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        sid = session.session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid,
                                                 prompt=[text_block("run sleep 30")]))
        await until(lambda: any(u.status == "in_progress"
                                for u in client.updates("tool_call_update")), "the command")
        began = time.monotonic()
        await conn.cancel(session_id=sid)
        resp = await asyncio.wait_for(turn, 10)
        elapsed = time.monotonic() - began
    assert resp.stop_reason == "cancelled"
    assert elapsed < 1.0
    assert client.updates("tool_call_update")[-1].status == "failed"


async def test_cancel_while_asking_answers_cancelled(dispatcher: Any, workspace: Path) -> None:
    client = RecordingClient(hold=asyncio.Event())
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id,
                                                 prompt=[text_block("write a.txt\nx\n")]))
        await until(lambda: "permission" in client.names(), "the permission request")
        await conn.cancel(session_id=session.session_id)
        resp = await asyncio.wait_for(turn, 10)
        assert client.hold is not None
        client.hold.set()
    assert resp.stop_reason == "cancelled"
    assert not (workspace / "a.txt").exists()


async def test_plan_mode_refuses_edits_without_asking(acp: Any, client: RecordingClient,
                                                      workspace: Path) -> None:
    session = await acp.new_session(cwd=str(workspace))
    await acp.set_session_mode(session_id=session.session_id, mode_id="plan")
    with pytest.raises(RequestError) as err:
        await acp.set_session_mode(session_id=session.session_id, mode_id="yolo")
    assert err.value.code == -32602
    await acp.prompt(session_id=session.session_id, prompt=[text_block("write a.txt\nx\n")])
    assert not (workspace / "a.txt").exists()
    assert "permission" not in client.names()
    assert client.updates("tool_call_update")[-1].status == "failed"


async def test_load_replays_history_and_list_filters_by_cwd(
        dispatcher: Any, workspace: Path, tmp_path: Path) -> None:
    first = RecordingClient()
    async with in_process(dispatcher, first) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write a.txt\nx\n")])
    other = tmp_path / "other"
    other.mkdir()
    second = RecordingClient()
    async with in_process(dispatcher, second) as (conn, _agent):
        listed = await conn.list_sessions(cwd=str(workspace))
        assert [s.session_id for s in listed.sessions] == [session.session_id]
        assert listed.sessions[0].title == "write a.txt"
        assert (await conn.list_sessions(cwd=str(other))).sessions == []
        with pytest.raises(RequestError):
            await conn.list_sessions(cursor="zz")
        await conn.load_session(cwd=str(workspace), session_id=session.session_id)
        with pytest.raises(RequestError):
            await conn.load_session(cwd=str(workspace), session_id="nope")
    kinds = [u.session_update for u in second.updates()]
    assert kinds[:2] == ["user_message_chunk", "agent_message_chunk"]
    assert second.updates("user_message_chunk")[0].content.text == "write a.txt\nx\n"
    replayed = second.updates("tool_call")[0]
    assert replayed.status == "completed" and replayed.title == "Write a.txt"


async def test_malformed_params_answer_invalid_params_and_the_agent_keeps_serving(
        acp: Any, workspace: Path) -> None:
    raw = acp._conn  # the SDK's own connection: send what its typed API would refuse
    for method, params in (("session/prompt", {"prompt": 3}),
                           ("session/new", {"cwd": 7}),
                           ("session/load", {"cwd": str(workspace), "sessionId": "../x"}),
                           ("session/set_mode", {"sessionId": "nope", "modeId": "ask"})):
        with pytest.raises(RequestError) as err:
            await raw.send_request(method, params)
        assert err.value.code in (-32602, -32002), (method, err.value)
    session = await acp.new_session(cwd=str(workspace))
    resp = await acp.prompt(session_id=session.session_id, prompt=[text_block("list .")])
    assert resp.stop_reason == "end_turn"


async def test_a_new_session_starts_the_workspace_s_first_checkpoint_walk(
        acp: Any, dispatcher: Dispatcher, workspace: Path) -> None:
    (workspace / "old.txt").write_text("there before the agent\n")
    await acp.new_session(cwd=str(workspace))
    store = dispatcher.checkpointer(workspace.resolve())
    assert isinstance(store, CheckpointStore)
    for _ in range(3000):  # the walk runs in a thread; bounded wait
        if not store._scan_all and store.wait_prepared(0):
            break
        await asyncio.sleep(0.01)
    assert not store._scan_all and store._prepared is not None  # walked, nothing committed
    assert store.list() == []
