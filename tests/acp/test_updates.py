"""The session updates beyond text and tool calls: the plan, thoughts, commands kept current."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from acp import text_block
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import EventBus, make_event
from tests.acp.client import RecordingClient, in_process, until

TODOS = [{"content": "Read the code", "status": "completed"},
         {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
         {"content": "Run the tests", "status": "pending"}]


def scripted(home: Path, workspace: Path, script: Path, steps: list[dict[str, Any]]
             ) -> Dispatcher:
    script.write_text(json.dumps(steps))
    return build_dispatcher(AppConfig(home=home, workspace=workspace,
                                      model=f"scripted:{script}"), bus=EventBus())


async def test_the_plan_tool_s_list_is_a_plan_update_and_comes_back_on_load(
        home: Path, workspace: Path, tmp_path: Path) -> None:
    dispatcher = scripted(home, workspace, tmp_path / "s.json", [
        {"tool_calls": [{"name": "todo_write", "arguments": {"todos": TODOS}}]},
        {"text": "Working on it."}])
    client = RecordingClient()
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        resp = await conn.prompt(session_id=session.session_id,
                                 prompt=[text_block("fix the bug")])
    assert resp.stop_reason == "end_turn"
    assert "permission" not in client.names()  # the plan asks nothing
    plans = client.updates("plan")
    assert len(plans) == 1
    assert [(e.content, e.status) for e in plans[0].entries] == [
        ("Read the code", "completed"), ("Fix the bug", "in_progress"),
        ("Run the tests", "pending")]
    names = client.names()
    assert names.index("update:tool_call") < names.index("update:plan")
    again = RecordingClient()
    async with in_process(dispatcher, again) as (conn, _agent):
        await conn.load_session(cwd=str(workspace), session_id=session.session_id)
    replayed = again.updates("plan")
    assert [e.content for e in replayed[-1].entries] == [t["content"] for t in TODOS]


async def test_reasoning_is_thought_chunks_never_reply_text(
        home: Path, workspace: Path, tmp_path: Path) -> None:
    dispatcher = scripted(home, workspace, tmp_path / "s.json", [
        {"text": "I will write it.",
         "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt",
                                                              "content": "x\n"}}]},
        {"text": "Done."}])
    client = RecordingClient(hold=asyncio.Event())
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        sid = session.session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid,
                                                 prompt=[text_block("write a")]))
        await until(lambda: "permission" in client.names(), "the permission request")
        running = dispatcher.user_turn(sid)
        assert running is not None
        for piece in ("The user wants ", "a file."):  # what a reasoning model streams
            dispatcher.services.bus.emit(make_event(
                "thought.delta", {"text": piece}, session_id=sid, turn_id=running.turn_id))
        await until(lambda: bool(client.updates("agent_thought_chunk")), "the thought")
        assert client.hold is not None
        client.hold.set()
        resp = await asyncio.wait_for(turn, 60)
    assert resp.stop_reason == "end_turn"
    thoughts = "".join(u.content.text for u in client.updates("agent_thought_chunk"))
    assert thoughts == "The user wants a file."
    assert "wants" not in client.text()
    assert "I will write it." in client.text()


async def test_available_commands_follow_the_workspace_s_own_commands(
        acp: Any, client: RecordingClient, workspace: Path) -> None:
    session = await acp.new_session(cwd=str(workspace))
    await until(lambda: bool(client.updates("available_commands_update")), "the commands")
    first = [c.name for c in client.updates("available_commands_update")[-1].available_commands]
    assert "fork" in first and "review" not in first
    commands = workspace / ".openprogram" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review the diff\n---\nReview $ARGUMENTS\n")
    await acp.prompt(session_id=session.session_id, prompt=[text_block("list .")])
    await until(lambda: len(client.updates("available_commands_update")) == 2, "the update")
    latest = client.updates("available_commands_update")[-1].available_commands
    review = next(c for c in latest if c.name == "review")
    assert review.description == "Review the diff"
    await acp.prompt(session_id=session.session_id, prompt=[text_block("list .")])
    await asyncio.sleep(0.05)
    assert len(client.updates("available_commands_update")) == 2  # unchanged: not sent again


async def test_an_image_block_reaches_the_model_stored_once_and_comes_back_on_load(
        acp: Any, client: RecordingClient, dispatcher: Dispatcher, workspace: Path) -> None:
    import base64

    from acp import image_block
    from openprogram_lsp.context.render import render_node
    from tests.imagefiles import png

    session = await acp.new_session(cwd=str(workspace))
    caps = await acp._conn.send_request("initialize", {"protocolVersion": 1})
    assert caps["agentCapabilities"]["promptCapabilities"]["image"] is True
    data = base64.b64encode(png(16, 9)).decode()
    for _ in range(2):  # the same picture twice: one stored file
        resp = await acp.prompt(session_id=session.session_id, prompt=[
            text_block("what is on it?"), image_block(data, "image/jpeg", uri="file:///s.png")])
        assert resp.stop_reason == "end_turn"
    assert "Not passed to the model" not in client.text()
    users = [n for n in dispatcher.services.store.get_branch(session.session_id)
             if n.role == "user"]
    record = users[0].metadata["context"][0]
    assert (record["kind"], record["mediaType"], record["width"], record["height"]) \
        == ("image", "image/png", 16, 9)  # the bytes decide, not the block's mimeType
    [message] = render_node(users[0])
    assert [(i.media_type, i.width) for i in message.images] == [("image/png", 16)]
    assert dispatcher.services.store.images.count() == 1
    await acp.load_session(cwd=str(workspace), session_id=session.session_id)
    await asyncio.sleep(0.05)
    shown = [u for u in client.updates("user_message_chunk")
             if getattr(u.content, "type", "") == "image"]
    assert shown and shown[-1].content.data == data


async def test_an_image_over_the_limits_is_downscaled_and_the_user_told_first(
        acp: Any, client: RecordingClient, dispatcher: Dispatcher, workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import base64

    from acp import image_block
    from openprogram_lsp.core import images
    from tests.imagefiles import png

    monkeypatch.setattr(images, "STORE_SIDE", 8)  # so a 16x9 picture is over it
    session = await acp.new_session(cwd=str(workspace))
    resp = await acp.prompt(session_id=session.session_id, prompt=[
        text_block("look"), image_block(base64.b64encode(png(16, 9)).decode(), "image/png",
                                        uri="file:///wide.png")])
    assert resp.stop_reason == "end_turn"
    text = client.text()
    note = "(image wide.png (16x9, 0.000"  # then its size, and what it became
    assert text.startswith(note) and "was downscaled to 8x4 (" in text  # before the reply
    [user] = [n for n in dispatcher.services.store.get_branch(session.session_id)
              if n.role == "user"]
    record = user.metadata["context"][0]
    assert (record["width"], record["height"], record["original"]["width"]) == (8, 4, 16)


async def test_an_image_block_that_is_not_an_image_is_invalid_params(
        acp: Any, dispatcher: Dispatcher, workspace: Path) -> None:
    import base64

    from acp import RequestError, image_block

    session = await acp.new_session(cwd=str(workspace))
    fake = base64.b64encode(b"%PDF-1.7 not a picture").decode()
    try:
        await acp.prompt(session_id=session.session_id,
                         prompt=[text_block("look"), image_block(fake, "image/png")])
        raise AssertionError("accepted")
    except RequestError as exc:
        assert "prompt[1]: not a PNG, JPEG, GIF or WebP image" in str(exc.data)
    assert dispatcher.services.store.images.count() == 0
