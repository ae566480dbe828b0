"""Chat turns over stdio: approvals through both paths, questions, events, progress."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.conftest import OpClient, Starter, close_client, write_script

WRITE = [
    {"text": "Writing the file.",
     "tool_calls": [{"name": "write_file", "arguments": {"path": "hello.txt",
                                                          "content": "hello\n"}}]},
    {"text": "Done."},
]


async def test_chat_with_request_permission(start: Starter, tmp_path: Path,
                                            workspace: Path) -> None:
    model = write_script(tmp_path / "script.json", WRITE)

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "allow_once"}

    client = await start(model=model, setup=setup)
    result = await client.call("openprogram/chat", {"text": "write hello.txt"})
    assert result["status"] == "done", result
    assert (workspace / "hello.txt").read_text() == "hello\n"
    [request] = client.permission_requests
    assert request["toolCall"]["name"] == "write_file"
    assert request["toolCall"]["kind"] == "edit"
    assert request["toolCall"]["diff"]["path"] == "hello.txt"
    assert {o["kind"] for o in request["options"]} == {
        "allow_once", "allow_always", "reject_once", "reject_always"}
    kinds = [e["type"] for e in client.events if e["sessionId"] == result["sessionId"]]
    for expected in ("turn.started", "text.delta", "tool.started", "tool.finished",
                     "turn.finished"):
        assert expected in kinds
    finished = client.of_type("turn.finished")[-1]["data"]
    assert finished["status"] == "done"
    assert finished["sessionId"] == result["sessionId"]


async def test_chat_with_show_message_request(start: Starter, tmp_path: Path,
                                              workspace: Path) -> None:
    model = write_script(tmp_path / "script.json", WRITE)

    def setup(client: OpClient) -> None:
        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def _ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            client.message_requests.append(params)
            return next(a for a in params.actions or [] if a.title == "Allow once")

    client = await start(model=model, experimental=False, setup=setup)
    result = await client.call("openprogram/chat", {"text": "write hello.txt"})
    assert result["status"] == "done", result
    assert (workspace / "hello.txt").read_text() == "hello\n"
    [request] = client.message_requests
    assert "write_file" in request.message or "hello.txt" in request.message
    assert [a.title for a in request.actions or []] == [
        "Allow once", "Always allow edits to hello.txt in this session",
        "Always allow every edit in the workspace in this session",
        "Always allow edits to hello.txt in every session of this workspace", "Reject",
        "Always reject edits to hello.txt"]


def _allow(kind: str) -> Any:
    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": kind}

    return setup


async def test_always_allow_survives_restart(start: Starter, tmp_path: Path,
                                             workspace: Path) -> None:
    """A workspace-scoped rule for one file outlives the server, and covers that file only."""
    first = await start(model=write_script(tmp_path / "one.json", WRITE),
                        setup=_allow("allow_always_workspace"))
    result = await first.call("openprogram/chat", {"text": "write hello.txt"})
    assert result["status"] == "done"
    assert len(first.permission_requests) == 1
    assert await close_client(first) == ""

    again = [{"tool_calls": [{"name": "write_file",
                              "arguments": {"path": "hello.txt", "content": "2\n"}}]},
             {"text": "Done again."},
             {"tool_calls": [{"name": "write_file",
                              "arguments": {"path": "second.txt", "content": "2\n"}}]},
             {"text": "Refused, as you said."}]
    second = await start(model=write_script(tmp_path / "two.json", again),
                         setup=_allow("reject_once"))
    result = await second.call("openprogram/chat", {"text": "write hello.txt again"})
    assert result["status"] == "done"
    assert second.permission_requests == []
    assert (workspace / "hello.txt").read_text() == "2\n"
    result = await second.call("openprogram/chat", {"text": "write second.txt"})
    [asked] = second.permission_requests
    assert asked["toolCall"]["input"]["path"] == "second.txt"
    assert not (workspace / "second.txt").exists()


async def test_reject_is_told_to_the_model(start: Starter, tmp_path: Path,
                                           workspace: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", WRITE),
                         setup=_allow("reject_once"))
    result = await client.call("openprogram/chat", {"text": "write hello.txt"})
    assert result["status"] == "done"
    assert not (workspace / "hello.txt").exists()
    finished = await client.wait_event("tool.finished")
    assert finished["data"]["status"] == "failed"
    assert "rejected" in finished["data"]["output"]


async def test_approval_timeout_is_a_rejection(start: Starter, tmp_path: Path,
                                               workspace: Path) -> None:
    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        async def _never(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            await asyncio.sleep(30)
            return {"outcome": "selected", "optionId": "allow_once"}

    client = await start(model=write_script(tmp_path / "s.json", WRITE), setup=setup,
                         init_options={"approvalTimeout": 0.3})
    result = await client.call("openprogram/chat", {"text": "write hello.txt"})
    assert result["status"] == "done"
    assert not (workspace / "hello.txt").exists()
    finished = await client.wait_event("tool.finished")
    assert "timed out" in finished["data"]["output"]


ASK = [
    {"tool_calls": [{"name": "ask_user",
                     "arguments": {"question": "Which colour?", "options": ["red", "blue"]}}]},
    {"text": "Noted."},
]


async def test_question_answered_through_ask_question(start: Starter, tmp_path: Path) -> None:
    def setup(client: OpClient) -> None:
        @client.feature("openprogram/askQuestion")
        def _ask(params: Any) -> dict[str, Any]:
            client.question_requests.append(params)
            return {"answer": "blue"}

    client = await start(model=write_script(tmp_path / "s.json", ASK), setup=setup)
    result = await client.call("openprogram/chat", {"text": "ask me"})
    assert result["status"] == "done"
    [asked] = client.question_requests
    assert asked["question"] == "Which colour?"
    assert asked["options"] == ["red", "blue"]
    assert asked["sessionId"] == result["sessionId"]
    replied = await client.wait_event("question.replied")
    assert replied["data"] == {"questionId": asked["questionId"], "answer": "blue"}
    finished = await client.wait_event("tool.finished")
    assert finished["data"]["output"] == "blue"


async def test_question_answered_through_show_message_request(start: Starter,
                                                              tmp_path: Path) -> None:
    def setup(client: OpClient) -> None:
        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def _ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            client.message_requests.append(params)
            return types.MessageActionItem(title="red")

    client = await start(model=write_script(tmp_path / "s.json", ASK), experimental=False,
                         setup=setup)
    result = await client.call("openprogram/chat", {"text": "ask me"})
    assert result["status"] == "done"
    assert client.message_requests[0].message == "Which colour?"
    finished = await client.wait_event("tool.finished")
    assert finished["data"]["output"] == "red"


async def test_question_answered_through_answer_first_wins(start: Starter,
                                                           tmp_path: Path) -> None:
    def setup(client: OpClient) -> None:
        @client.feature("openprogram/askQuestion")
        async def _slow(params: Any) -> dict[str, Any]:
            client.question_requests.append(params)
            await asyncio.sleep(30)
            return {"answer": "too late"}

    client = await start(model=write_script(tmp_path / "s.json", ASK), setup=setup)
    turn = asyncio.ensure_future(client.call("openprogram/chat", {"text": "ask me"}))
    asked = await client.wait_event("question.asked")
    qid = asked["data"]["questionId"]
    first = await client.call("openprogram/answer", {"questionId": qid, "answer": "green"})
    second = await client.call("openprogram/answer", {"questionId": qid, "answer": "red"})
    assert first == {"accepted": True}
    assert second == {"accepted": False}
    result = await turn
    assert result["status"] == "done"
    finished = await client.wait_event("tool.finished")
    assert finished["data"]["output"] == "green"


SLOW = [{"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 30"}}]},
        {"text": "never reached"}]


async def test_cancel_request_during_slow_tool(start: Starter, tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", SLOW),
                         args=["--permission-mode", "bypass"])
    pending = client.call_with_id("openprogram/chat", {"text": "sleep"}, "chat-1")
    await client.wait_event("tool.started")
    client.cancel_request("chat-1")
    result = await asyncio.wait_for(pending, 10)
    assert result["status"] == "cancelled"
    history = await client.call("openprogram/history", {"sessionId": result["sessionId"]})
    assert history["nodes"][-1]["status"] == "cancelled"


async def test_openprogram_cancel(start: Starter, tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", SLOW),
                         args=["--permission-mode", "bypass"])
    pending = asyncio.ensure_future(client.call("openprogram/chat", {"text": "sleep"}))
    started = await client.wait_event("tool.started")
    sid = started["sessionId"]
    busy = await client.call("openprogram/cancel", {"sessionId": sid})
    assert busy == {"cancelled": True}
    result = await asyncio.wait_for(pending, 10)
    assert result["status"] == "cancelled"
    idle = await client.call("openprogram/cancel", {"sessionId": sid})
    assert idle == {"cancelled": False}


async def test_work_done_progress(start: Starter, tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", WRITE), progress=True,
                         setup=_allow("allow_once"))
    result = await client.call("openprogram/chat", {"text": "write hello.txt"})
    assert result["status"] == "done"
    for _ in range(500):
        reports = [r for rs in client.progress_reports.values() for r in rs]
        if any(getattr(r, "kind", "") == "end" for r in reports):
            break
        await asyncio.sleep(0.01)
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"


async def test_cancelling_the_turn_withdraws_the_prompt(start: Starter, tmp_path: Path,
                                                        workspace: Path) -> None:
    withdrawn: list[str] = []

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        async def _wait(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                withdrawn.append(params["toolCall"]["toolCallId"])
                raise
            return {"outcome": "selected", "optionId": "allow_once"}

    client = await start(model=write_script(tmp_path / "s.json", WRITE), setup=setup)
    pending = asyncio.ensure_future(client.call("openprogram/chat", {"text": "write"}))
    for _ in range(2000):
        if client.permission_requests:
            break
        await asyncio.sleep(0.01)
    sid = client.permission_requests[0]["sessionId"]
    assert await client.call("openprogram/cancel", {"sessionId": sid}) == {"cancelled": True}
    result = await asyncio.wait_for(pending, 10)
    assert result["status"] == "cancelled"
    for _ in range(500):
        if withdrawn:
            break
        await asyncio.sleep(0.01)
    assert withdrawn == [client.permission_requests[0]["toolCall"]["toolCallId"]]
    assert not (workspace / "hello.txt").exists()


async def test_cancelling_the_progress_cancels_the_turn(start: Starter, tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", SLOW), progress=True,
                         args=["--permission-mode", "bypass"])
    pending = asyncio.ensure_future(client.call("openprogram/chat", {"text": "sleep"}))
    await client.wait_event("tool.started")
    token = None
    for _ in range(1000):
        token = next((t for t, rs in client.progress_reports.items()
                      if any(getattr(r, "kind", "") == "begin" for r in rs)), None)
        if token is not None:
            break
        await asyncio.sleep(0.01)
    assert token is not None
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(pending, 10)
    assert result["status"] == "cancelled"


async def test_thoughts_plan_and_how_a_reply_ends_reach_the_client(start: Starter,
                                                                   tmp_path: Path) -> None:
    plan = [{"content": "Read", "status": "completed"},
            {"content": "Write", "status": "in_progress", "activeForm": "Writing"}]
    model = write_script(tmp_path / "s.json", [
        {"thought": "Plan it first.", "text": "Planning.",
         "tool_calls": [{"name": "todo_write", "arguments": {"todos": plan}}]},
        {"thought": "Long answer.", "text": "Here is the sta", "stop": "max_tokens"},
        {"text": "I can't help with that.", "stop": "refusal"},
    ])
    client = await start(model=model)
    first = await client.call("openprogram/chat", {"text": "go"})
    sid = first["sessionId"]
    assert first["status"] == "truncated" and first["text"].endswith("Here is the sta")
    [warning] = first["warnings"]
    assert "output limit" in warning and "continue" in warning
    finished = client.of_type("turn.finished")[-1]["data"]
    assert (finished["status"], finished["warnings"]) == ("truncated", [warning])
    thoughts = "".join(e["data"]["text"] for e in client.of_type("thought.delta"))
    assert thoughts == "Plan it first.Long answer."
    assert "Plan it" not in "".join(e["data"]["text"] for e in client.of_type("text.delta"))
    [updated] = client.of_type("plan.updated")
    assert updated["data"]["entries"] == plan
    second = await client.call("openprogram/chat", {"text": "continue", "sessionId": sid})
    assert (second["status"], second["text"]) == ("refused", "I can't help with that.")
    assert "declined" in second["warnings"][0]
    assert client.of_type("turn.finished")[-1]["data"]["status"] == "refused"
    # stored: the thoughts per step (never in the text), how each reply stopped
    nodes = (await client.call("openprogram/history", {"sessionId": sid}))["nodes"]
    replies = [n for n in nodes if n["role"] == "assistant"]
    assert [[t["text"] for t in r["metadata"].get("thoughts", [])] for r in replies] == [
        ["Plan it first.", "Long answer."], []]
    assert [r["metadata"].get("stop") for r in replies] == ["max_tokens", "refusal"]
    assert all("Plan it" not in r["text"] for r in replies)
