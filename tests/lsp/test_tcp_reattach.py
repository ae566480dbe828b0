"""``serve --tcp --keep-turns``: a turn whose editor goes away (a window reload) runs on, and the
editor that subscribes to its session re-attaches: it gets the turn so far, then the rest live,
and the approval the turn was waiting for. Real loopback sockets, a real server process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import write_script
from tests.lsp.tcp_helpers import Client, clients, start_tcp_server, stop_tcp_server

pytestmark = pytest.mark.timeout(90)


async def _editor(port: int, token: str, workspace: Path, opened: list[Client]) -> Client:
    c = await Client.connect(port)
    opened.append(c)
    assert "result" in await c.initialize(token, workspace)
    return c


async def _leave(c: Client, *, shutdown: bool) -> None:
    """An editor's window goes: VS Code sends shutdown and exit; a killed one just drops."""
    if shutdown:
        assert (await c.request("shutdown"))["result"] is None
        c.send({"jsonrpc": "2.0", "method": "exit"})
    await c.close()


def _allowing(editor: Client) -> list[Any]:
    """Make ``editor`` allow every prompt once; the prompts' params, as they come."""
    answered: list[Any] = []

    async def allow(method: str, params: Any) -> Any:
        answered.append(params)
        return {"outcome": "selected", "optionId": "allow_once"}

    editor.on_request = allow
    return answered


async def _waiting_write(editor: Client) -> tuple[str, asyncio.Future[Any]]:
    """A session whose second turn waits on its write's approval card, which ``editor`` never
    answers (its window goes while the card is open): the session id and the turn's request."""
    asked = asyncio.Event()

    async def never_answer(method: str, params: Any) -> Any:
        asked.set()
        await asyncio.Event().wait()

    sid = (await editor.call("openprogram/chat", {"text": "hello"}))["sessionId"]
    editor.on_request = never_answer
    turn = asyncio.ensure_future(editor.request(
        "openprogram/chat", {"text": "write notes.txt\nhi there", "sessionId": sid}))
    await asyncio.wait_for(asked.wait(), 30)
    return sid, turn


@pytest.mark.parametrize("shutdown", [True, False], ids=["shutdown", "dropped"])
async def test_a_reloaded_editor_re_attaches_to_the_running_turn(
        tmp_path: Path, workspace: Path, shutdown: bool) -> None:
    server = await start_tcp_server(tmp_path / "home", "--keep-turns", "30")
    try:
        async with clients() as opened:
            old = await _editor(server.port, server.token, workspace, opened)
            sid, turn = await _waiting_write(old)
            started = await old.wait_event("turn.started",
                                           lambda e: e["data"].get("text", "").startswith("write"))
            tid = started["turnId"]
            await _leave(old, shutdown=shutdown)
            turn.cancel()
            assert server.alive
            assert not (workspace / "notes.txt").exists()

            new = await _editor(server.port, server.token, workspace, opened)
            answered = _allowing(new)
            sub = await new.call("openprogram/subscribe", {"sessionId": sid, "replay": True})
            assert sub["runningTurnId"] == tid
            finished = await new.wait_event("turn.finished", lambda e: e["turnId"] == tid)
            assert finished["data"]["status"] == "done"
            assert (workspace / "notes.txt").exists()
            # the approval the old window left open came again, to the editor that re-attached
            assert [p["toolCall"]["name"] for p in answered] == ["write_file"]
            mine = [e for e in new.events if e.get("turnId") == tid]
            replayed = [e for e in mine if e.get("replayed")]
            assert replayed and replayed[0]["type"] == "turn.started"
            assert mine == replayed + [e for e in mine if not e.get("replayed")]
            history = await new.call("openprogram/history", {"sessionId": sid})
            assert history["nodes"][-1]["status"] == "done"
            assert not history["nodes"][-1]["text"].endswith("[interrupted]")
    finally:
        await stop_tcp_server(server)


async def test_a_turn_nobody_re_attaches_to_ends_interrupted_and_a_watcher_does_not_adopt(
        tmp_path: Path, workspace: Path) -> None:
    server = await start_tcp_server(tmp_path / "home", "--keep-turns", "1")
    try:
        async with clients() as opened:
            driver = await _editor(server.port, server.token, workspace, opened)
            sid, turn = await _waiting_write(driver)
            # a second window watching the live turn does not take it over from its editor
            watcher = await _editor(server.port, server.token, workspace, opened)
            await watcher.call("openprogram/subscribe", {"sessionId": sid, "replay": True})
            assert watcher.server_requests == []
            await watcher.close()
            await _leave(driver, shutdown=False)
            turn.cancel()
            # nobody re-attaches within the second: the turn is cut as interrupted
            late = await _editor(server.port, server.token, workspace, opened)
            for _ in range(300):
                history = await late.call("openprogram/history", {"sessionId": sid})
                if history["nodes"][-1]["status"] != "running" and \
                        history["nodes"][-1]["role"] == "assistant":
                    break
                await asyncio.sleep(0.05)
            assert history["nodes"][-1]["status"] == "interrupted"
            assert not (workspace / "notes.txt").exists()
            # the node is recorded before the turn lets go: a subscriber in between is told it
            # runs, and then gets its turn.finished (sent once the turn is gone); nobody adopts it
            running = (await late.call("openprogram/subscribe", {"sessionId": sid})) \
                .get("runningTurnId")
            if running is not None:
                finished = await late.wait_event("turn.finished",
                                                 lambda e: e["turnId"] == running)
                assert finished["data"]["status"] == "interrupted"
            assert late.server_requests == []
            assert (await late.call("openprogram/subscribe", {"sessionId": sid})) \
                .get("runningTurnId") is None
    finally:
        await stop_tcp_server(server)


async def test_a_second_window_watching_takes_over_when_the_first_goes(
        tmp_path: Path, workspace: Path) -> None:
    server = await start_tcp_server(tmp_path / "home", "--keep-turns", "30")
    try:
        async with clients() as opened:
            first = await _editor(server.port, server.token, workspace, opened)
            sid, turn = await _waiting_write(first)
            second = await _editor(server.port, server.token, workspace, opened)
            answered = _allowing(second)
            sub = await second.call("openprogram/subscribe", {"sessionId": sid, "replay": True})
            assert second.server_requests == []  # it watches while the first is there
            await _leave(first, shutdown=True)  # the first window closes
            turn.cancel()
            finished = await second.wait_event(
                "turn.finished", lambda e: e["turnId"] == sub["runningTurnId"])
            assert finished["data"]["status"] == "done"
            assert [p["toolCall"]["name"] for p in answered] == ["write_file"]
            assert (workspace / "notes.txt").exists()
    finally:
        await stop_tcp_server(server)


async def test_a_subagent_still_at_work_is_replayed_and_asks_the_reloaded_window(
        tmp_path: Path, workspace: Path) -> None:
    parent = write_script(tmp_path / "parent.json", [
        {"tool_calls": [{"name": "agent", "arguments": {"prompt": "ask for a name",
                                                        "label": "kid"}}]},
        {"text": "Spawned kid."}])
    child = write_script(tmp_path / "child.json", [
        {"text": "Asking.", "tool_calls": [{"name": "ask_user",
                                            "arguments": {"question": "Which name?"}}]},
        {"text": "The name is bob."}])
    server = await start_tcp_server(tmp_path / "home", "--keep-turns", "30")
    asked = asyncio.Event()

    async def first_window(method: str, params: Any) -> Any:
        if method == "openprogram/requestPermission":
            return {"outcome": "selected", "optionId": "allow_once"}  # the agent call
        asked.set()  # the child's question: the window reloads before answering
        await asyncio.Event().wait()

    try:
        async with clients() as opened:
            c = await Client.connect(server.port)
            opened.append(c)
            assert "result" in await c.initialize(server.token, workspace,
                                                  options={"agentModel": child})
            c.on_request = first_window
            result = await c.call("openprogram/chat", {"text": "get a name", "model": parent})
            assert result["text"] == "Spawned kid."  # the parent's turn is over, the child runs
            sid = result["sessionId"]
            await asyncio.wait_for(asked.wait(), 30)
            await _leave(c, shutdown=True)

            new = await _editor(server.port, server.token, workspace, opened)
            answers: list[Any] = []

            async def answer(method: str, params: Any) -> Any:
                answers.append(params)
                return {"answer": "bob"}

            new.on_request = answer
            await new.call("openprogram/subscribe", {"sessionId": sid, "replay": True})
            replayed = [e for e in new.events if e.get("replayed")]
            # the subagent's section comes back (its spawning turn is gone), then its turn
            assert [e["type"] for e in replayed][:2] == ["subagent.started", "turn.started"]
            assert replayed[0]["data"]["label"] == "kid"
            assert replayed[1]["data"]["agentId"] == replayed[0]["data"]["agentId"]
            ended = await new.wait_event("subagent.ended")
            assert ended["data"]["status"] == "done"
            assert [p["question"] for p in answers] == ["Which name?"]
    finally:
        await stop_tcp_server(server)
