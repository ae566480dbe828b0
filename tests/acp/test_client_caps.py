"""Client capabilities: fs and terminal when offered, elicitation for questions, attachments."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from acp import embedded_text_resource, resource_block, resource_link_block, text_block
from tests.acp.client import RecordingClient, in_process, until
from tests.acp.test_mcp import assert_calls_announced_and_closed


async def test_reads_see_the_editor_buffer_and_writes_go_through_it(
        dispatcher: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("on disk\n")
    client = RecordingClient(fs=True, answer="allow_once")
    client.buffers[str(workspace.resolve() / "a.txt")] = "unsaved buffer\n"
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("read a.txt")])
        assert "unsaved buffer" in client.updates("tool_call_update")[-1].raw_output["output"]
        await conn.prompt(session_id=session.session_id,
                          prompt=[text_block("write b.txt\nvia editor\n")])
    assert ("fs/write_text_file", str(workspace.resolve() / "b.txt")) in client.log
    assert (workspace / "b.txt").read_text() == "via editor\n"
    created = client.ext_events("checkpoint.created")
    assert created and {"path": "b.txt", "status": "added"} in created[-1]["data"]["files"]


async def test_commands_run_in_the_editor_terminal(dispatcher: Any, workspace: Path) -> None:
    client = RecordingClient(terminal=True)
    async with in_process(dispatcher, client, mode="bypass") as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("run echo hi there")])
    [argv] = [a for n, a in client.log if n == "terminal/create"]
    # the editor's terminal runs it inside the sandbox, with our scrubbed environment
    assert argv[0].endswith("bwrap") and "--clearenv" in argv
    assert argv[-3:] == ["/bin/sh", "-c", "echo hi there"]
    done = client.updates("tool_call_update")[-1]
    assert done.status == "completed"
    assert [c.type for c in done.content][:1] == ["terminal"]
    assert "hi there" in done.raw_output["output"]
    assert [n for n, _ in client.log if n == "terminal/release"]


async def test_cancel_kills_the_editor_terminal_within_a_second(dispatcher: Any,
                                                               workspace: Path) -> None:
    client = RecordingClient(terminal=True)
    async with in_process(dispatcher, client, mode="bypass") as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id,
                                                 prompt=[text_block("run sleep 30")]))
        await until(lambda: "terminal/wait_for_exit" in client.names(), "the terminal")
        began = time.monotonic()
        await conn.cancel(session_id=session.session_id)
        resp = await asyncio.wait_for(turn, 10)
        elapsed = time.monotonic() - began
    assert resp.stop_reason == "cancelled" and elapsed < 1.0
    assert "terminal/kill" in client.names()


async def test_a_client_offering_nothing_gets_no_fs_or_terminal_calls(
        dispatcher: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("disk\n")
    client = RecordingClient(answer="allow_once")
    async with in_process(dispatcher, client, mode="bypass") as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        for text in ("read a.txt", "write b.txt\nx\n", "run echo ok"):
            await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
    assert not [n for n in client.names() if n.startswith(("fs/", "terminal/"))]
    assert (workspace / "b.txt").read_text() == "x\n"


async def test_questions_use_elicitation_when_offered(dispatcher: Any, workspace: Path) -> None:
    client = RecordingClient(elicitation=True, elicit_answer="green")
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id,
                          prompt=[text_block("ask your favourite colour?")])
    asked = next(v for n, v in client.log if n == "elicitation/create")
    assert asked["message"] == "your favourite colour?"
    assert client.updates("tool_call_update")[-1].raw_output["output"] == "green"


async def test_questions_with_choices_fall_back_to_a_permission_choice(
        home: Path, workspace: Path, script: Any) -> None:
    from openprogram_lsp.app import AppConfig, build_dispatcher
    from openprogram_lsp.events.bus import EventBus

    model = script([{"tool_calls": [{"name": "ask_user", "arguments": {
        "question": "Which?", "options": ["left", "right"]}}]}, {"text": "ok"}])
    dispatcher = build_dispatcher(AppConfig(home=home, workspace=workspace, model=model),
                                  bus=EventBus())
    client = RecordingClient(answer=lambda options: options[1].option_id)
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    perm = next(v for n, v in client.log if n == "permission")
    assert [o.name for o in perm["options"]] == ["left", "right", "Dismiss"]
    assert client.updates("tool_call_update")[-1].raw_output["output"] == "right"
    assert_calls_announced_and_closed(client)  # the question is a call of its own


async def test_a_client_that_draws_options_by_kind_gets_the_choices_in_the_chat(
        home: Path, workspace: Path, script: Any) -> None:
    """codecompanion labels and keys a permission option by its kind: three "Accept" lines
    would hide the choices, so the question is asked in the chat instead."""
    from openprogram_lsp.app import AppConfig, build_dispatcher
    from openprogram_lsp.events.bus import EventBus

    model = script([{"tool_calls": [{"name": "ask_user", "arguments": {
        "question": "Which?", "options": ["left", "right"]}}]}, {"text": "ok"}])
    dispatcher = build_dispatcher(AppConfig(home=home, workspace=workspace, model=model),
                                  bus=EventBus())
    client = RecordingClient(name="CodeCompanion.nvim")
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    assert "permission" not in client.names()
    assert "> The agent asked: Which?\n> 1. left\n> 2. right\n" in client.text()
    assert "answer in your next message" in client.text()
    assert client.updates("tool_call_update")[-1].status == "failed"
    assert_calls_announced_and_closed(client)


async def test_free_text_questions_without_elicitation_are_refused_clearly(
        acp: Any, client: RecordingClient, workspace: Path) -> None:
    session = await acp.new_session(cwd=str(workspace))
    await acp.prompt(session_id=session.session_id, prompt=[text_block("ask your name?")])
    assert "cannot show questions" in client.text()
    assert client.updates("tool_call_update")[-1].status == "failed"


async def test_resources_become_attachments(dispatcher: Any, workspace: Path,
                                            tmp_path: Path) -> None:
    (workspace / "notes.md").write_text("# Notes\nremember the milk\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret\n")
    client = RecordingClient()
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[
            text_block("summarise "),
            resource_link_block(name="notes.md", uri=(workspace / "notes.md").as_uri()),
            text_block(" and "),
            resource_block(embedded_text_resource("file:///x/snippet.py", "print(1)\n")),
            resource_link_block(name="secret.txt", uri=outside.as_uri()),
        ])
        sid = session.session_id
    store = dispatcher.services.store
    user = next(n for n in store.get_branch(sid, store.head(sid)) if n.role == "user")
    assert user.metadata["promptText"] == "summarise @notes.md and @snippet.py@secret.txt"
    assert "remember the milk" in user.text and "print(1)" in user.text
    assert "top secret" not in user.text and "outside the workspace" in user.text
    notes = [a.get("note") for a in user.metadata["attachments"]]
    assert notes == [None, None, "outside the workspace; not read"]
    json.dumps(user.metadata)  # stored as JSON


async def test_an_edit_never_lands_on_unsaved_changes_the_approval_did_not_show(
        dispatcher: Any, workspace: Path, script: Any, home: Path) -> None:
    from openprogram_lsp.app import AppConfig, build_dispatcher
    from openprogram_lsp.events.bus import EventBus

    (workspace / "a.txt").write_text("one\ntwo\n")
    edit = {"name": "edit_file", "arguments": {"path": "a.txt", "old_text": "two",
                                               "new_text": "2"}}
    model = script([{"tool_calls": [edit]}, {"text": "ok"}, {"tool_calls": [edit]},
                    {"text": "ok"}])
    dispatcher = build_dispatcher(AppConfig(home=home, workspace=workspace, model=model),
                                  bus=EventBus())
    client = RecordingClient(fs=True)
    target = str(workspace.resolve() / "a.txt")
    client.buffers[target] = "one\ntwo\nunsaved\n"
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        refused = client.updates("tool_call_update")[-1]
        del client.buffers[target]  # saved: the buffer is the disk again
        await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
    assert refused.status == "failed" and "unsaved changes" in refused.raw_output["output"]
    assert (workspace / "a.txt").read_text() == "one\n2\n"
    assert ("fs/write_text_file", target) in client.log
