"""Session rules on a fork (inherit, reset, copy) and the approval records of a session, through
the real transport; the records are read back from the store by a restarted server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import OpClient, Starter, close_client, write_script


def run(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]}


def answers(picks: list[str]) -> Any:
    """A permission handler giving ``picks`` in order, recording each request."""

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": picks.pop(0)}

    return setup


def asked(client: OpClient) -> list[str]:
    return [p["toolCall"]["input"]["command"] for p in client.permission_requests]


async def test_a_reset_fork_asks_again_while_the_parent_and_an_inheriting_fork_do_not(
        start: Starter, tmp_path: Path) -> None:
    steps = [run("echo one"), {"text": "1"},   # parent: asked, always (this session)
             run("echo one"), {"text": "2"},   # parent again: the rule holds
             run("echo one"), run("echo two"), {"text": "3"},  # reset fork: asked for both
             run("echo one"), {"text": "4"},   # parent: still unprompted
             run("echo two"), {"text": "5"},   # parent: the fork's rule is not its own
             run("echo one"), {"text": "6"},   # inheriting fork: unprompted
             run("echo two"), {"text": "7"},   # reset fork, later turn: its own rule holds
             run("echo one"), {"text": "8"}]   # copy fork: the parent's rule, copied
    picks = ["allow_always", "allow_once", "allow_always", "reject_once"]
    client = await start(model=write_script(tmp_path / "s.json", steps), setup=answers(picks))
    first = await client.call("openprogram/chat", {"text": "echo"})
    sid = first["sessionId"]
    assert asked(client) == ["echo one"]
    second = await client.call("openprogram/chat", {"text": "echo", "sessionId": sid})
    assert asked(client) == ["echo one"]

    reset = await client.call("openprogram/fork", {
        "sessionId": sid, "fromNodeId": first["assistantNodeId"], "text": "echo",
        "rules": "reset"})
    assert reset["status"] == "done", reset
    assert asked(client) == ["echo one", "echo one", "echo two"]

    back = await client.call("openprogram/chat", {
        "text": "echo", "sessionId": sid, "branchFrom": second["assistantNodeId"]})
    assert asked(client) == ["echo one", "echo one", "echo two"]
    await client.call("openprogram/chat", {
        "text": "echo", "sessionId": sid, "branchFrom": back["assistantNodeId"]})
    assert asked(client)[-1] == "echo two" and len(asked(client)) == 4  # rejected there

    await client.call("openprogram/fork", {
        "sessionId": sid, "fromNodeId": first["assistantNodeId"], "text": "echo"})
    assert len(asked(client)) == 4  # inherit is the default
    await client.call("openprogram/chat", {
        "text": "echo", "sessionId": sid, "branchFrom": reset["assistantNodeId"]})
    assert len(asked(client)) == 4

    await client.call("openprogram/chat", {
        "text": "echo", "sessionId": sid, "branchFrom": second["assistantNodeId"],
        "rules": "copy"})
    assert len(asked(client)) == 4 and not picks

    rules = (await client.call("openprogram/rules", {"sessionId": sid}))["rules"]
    scopes = sorted((r["value"], r.get("branch") or "") for r in rules)
    copied = [r for r in rules if r.get("branch") not in (None, reset["userNodeId"])]
    assert len(copied) == 1 and copied[0]["value"] == "echo one"
    assert scopes == sorted([("echo one", ""), ("echo two", reset["userNodeId"]),
                             ("echo one", copied[0]["branch"])])


async def test_rules_on_a_fork_are_validated(start: Starter, tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", [{"text": "hi"}]))
    sid = (await client.call("openprogram/chat", {"text": "hi"}))["sessionId"]
    cases = [("openprogram/fork", {"sessionId": sid, "fromNodeId": None, "text": "x",
                                   "rules": "forget"}, "rules"),
             ("openprogram/chat", {"sessionId": sid, "text": "x", "rules": "reset"}, "rules"),
             ("openprogram/rules", {"records": True}, "records"),
             ("openprogram/rules", {"sessionId": sid, "records": True, "cursor": "x"},
              "cursor"),
             ("openprogram/rules", {"sessionId": sid, "records": True, "limit": 0}, "limit")]
    for method, params, field in cases:
        with pytest.raises(JsonRpcException) as info:
            await client.call(method, params)
        assert info.value.code == -32602 and field in str(info.value), (method, info.value)
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/rules", {"sessionId": "nope", "records": True})
    assert info.value.code == -32001


async def test_approval_records_are_listed_from_the_store_after_a_restart(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    steps = [run("echo one"), run("echo one"), {"tool_calls": [{"name": "read_file",
                                                                 "arguments": {"path": "a.txt"}}]},
             {"text": "1"}, run("echo two"), {"text": "2"}]
    client = await start(model=write_script(tmp_path / "s.json", steps),
                         setup=answers(["allow_always", "allow_once"]))
    first = await client.call("openprogram/chat", {"text": "echo"})
    sid = first["sessionId"]
    fork = await client.call("openprogram/fork", {
        "sessionId": sid, "fromNodeId": first["assistantNodeId"], "text": "again",
        "name": "retry", "rules": "reset"})
    assert fork["status"] == "done" and client.permission_requests
    started = [e["data"]["toolCallId"] for e in client.of_type("tool.started")]
    rule_id = (await client.call("openprogram/rules", {"sessionId": sid}))["rules"][0]["id"]
    assert await close_client(client) == ""

    again = await start(model=write_script(tmp_path / "t.json", []))
    page = await again.call("openprogram/rules", {"sessionId": sid, "records": True,
                                                   "limit": 3})
    assert page["nextCursor"] == "3" and len(page["records"]) == 3
    rest = await again.call("openprogram/rules", {"sessionId": sid, "records": True,
                                                   "limit": 3, "cursor": page["nextCursor"]})
    assert rest.get("nextCursor") is None
    records = page["records"] + rest["records"]
    assert [r["toolCallId"] for r in records] == started
    user, by_rule, read, reset = records
    assert (user["by"], user["option"], user["tool"]) == ("user", "allow_always",
                                                          "run_command")
    assert (by_rule["by"], by_rule["ruleId"], by_rule["ruleIds"]) == ("rule", rule_id,
                                                                      [rule_id])
    assert read["by"] == "mode" and read["tool"] == "read_file"
    assert reset["by"] == "user"  # the reset fork asked again
    assert all(r["decidedAt"] and r["mode"] == "ask" for r in records)
    assert {r["turnId"] for r in records[:3]} == {first["assistantNodeId"]}
    assert reset["turnId"] == fork["assistantNodeId"]
    assert reset["branch"] == "retry" and reset["branchHeadId"] == fork["headId"]
