"""Subagents over stdio: the child's question and the follow-up's approval reach the editor."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.lsp.conftest import OpClient, Starter, write_script


async def test_child_branch_and_follow_up_seen_by_the_editor(start: Starter, tmp_path: Path,
                                                            workspace: Path) -> None:
    parent = write_script(tmp_path / "parent.json", [
        {"tool_calls": [{"name": "agent", "arguments": {"prompt": "ask for a name",
                                                        "label": "kid"}}]},
        {"text": "Spawned kid."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "name.txt",
                                                             "content": "bob\n"}}]},
        {"text": "Saved the name."}])
    child = write_script(tmp_path / "child.json", [
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Which name?"}}]},
        {"text": "The name is bob."}])
    parent_done = asyncio.Event()

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "allow_once"}

        @client.feature("openprogram/askQuestion")
        async def _question(params: Any) -> dict[str, Any]:
            client.question_requests.append(params)
            await parent_done.wait()  # answer only once the parent's turn has returned
            return {"answer": "bob"}

    client = await start(model=parent, setup=setup, init_options={"agentModel": child})
    result = await client.call("openprogram/chat", {"text": "get a name and save it"})
    assert result["status"] == "done" and result["text"] == "Spawned kid."
    sid = result["sessionId"]
    running = await client.call("openprogram/agents", {"sessionId": sid})
    assert [(a["label"], a["status"]) for a in running["agents"]] == [("kid", "running")]
    parent_done.set()

    ended = await client.wait_event("subagent.ended")
    assert ended["sessionId"] == sid and ended["data"]["status"] == "done"
    follow = await client.wait_event(
        "turn.finished", lambda e: e["data"]["assistantNodeId"] not in (
            result["assistantNodeId"], ended["data"]["headId"]))
    assert follow["data"]["status"] == "done", follow
    assert follow["data"]["text"].endswith("Saved the name.")
    assert (workspace / "name.txt").read_text() == "bob\n"
    # the child's question and the follow-up's approval were asked from background jobs
    [question] = client.question_requests
    assert question["sessionId"] == sid and question["turnId"] == ended["data"]["headId"]
    assert [p["toolCall"]["name"] for p in client.permission_requests] == ["agent",
                                                                          "write_file"]
    started = client.of_type("subagent.started")
    assert [e["sessionId"] for e in started] == [sid]
    # the child's turn names its agent, so an editor shows its stream apart, live
    [child_turn] = [e for e in client.of_type("turn.started")
                    if e["data"].get("agentId") == started[0]["data"]["agentId"]]
    assert child_turn["data"]["source"] == "agent_spawn"
    assert child_turn["turnId"] == ended["data"]["headId"]
    assert "agentId" not in client.of_type("turn.started")[0]["data"]  # the user's own turn
    assert any(e["data"]["kind"] == "reply" for e in client.of_type("branch.message_sent"))

    agents = await client.call("openprogram/agents", {"sessionId": sid})
    [agent] = agents["agents"]
    assert agent["label"] == "kid" and agent["status"] == "done"
    assert agent["headId"] == ended["data"]["headId"] and agent["sessionId"] == sid
    branches = await client.call("openprogram/branches", {"sessionId": sid})
    named = {b.get("name"): b for b in branches["branches"]}
    assert named["kid"]["headId"] == agent["headId"] and not named["kid"]["active"]
    child_history = await client.call("openprogram/history",
                                      {"sessionId": sid, "headId": agent["headId"]})
    [asked] = child_history["nodes"][-1]["toolCalls"]
    assert asked["name"] == "ask_user" and asked["status"] == "completed"
    assert "bob" in asked["output"]
    history = await client.call("openprogram/history", {"sessionId": sid})
    assert history["headId"] == follow["data"]["assistantNodeId"]
    # the child's reply is attached to the parent's turn in history
    attached = [a for n in history["nodes"] for a in n.get("attachments", [])]
    assert attached and attached[0]["role"] == "system"
    assert attached[0]["metadata"]["kind"] == "attach" and "bob" in attached[0]["text"]


async def test_shutdown_cancels_a_running_child_and_records_it(start: Starter,
                                                             tmp_path: Path) -> None:
    parent = write_script(tmp_path / "parent.json", [
        {"tool_calls": [{"name": "agent", "arguments": {"prompt": "sleep", "label": "slow"}}]},
        {"text": "spawned"}])
    child = write_script(tmp_path / "child.json", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 30"}}]},
        {"text": "unused"}])
    client = await start(model=parent, init_options={"agentModel": child},
                         args=["--permission-mode", "bypass"])
    result = await client.call("openprogram/chat", {"text": "spawn a slow child"})
    sid = result["sessionId"]
    await client.wait_event("tool.started", lambda e: e["data"]["name"] == "run_command")
    await asyncio.wait_for(client.shutdown_session(), 20)
    await asyncio.wait_for(client.stop(), 30)

    again = await start(model="offline")
    [agent] = (await again.call("openprogram/agents", {"sessionId": sid}))["agents"]
    assert agent["label"] == "slow" and agent["status"] == "cancelled"
    history = await again.call("openprogram/history", {"sessionId": sid,
                                                       "headId": agent["headId"]})
    assert history["nodes"][-1]["status"] == "cancelled"
