"""Approvals through the real transport: exact command rules, revocation, the state root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.conftest import OpClient, Starter, write_script

# A rule for exactly `ls *.txt` must reach none of these.
COMPOUNDS = [
    "ls *.txt; touch PWNED; echo done.txt",
    "ls a.txt; id > x.txt",
    "ls *.txt && touch PWNED",
    "ls *.txt || touch PWNED",
    "ls *.txt | sh",
    "ls *.txt\ntouch PWNED",
    "ls *.txt & touch PWNED",
    "ls $(touch PWNED)*.txt",
    "ls `touch PWNED`*.txt",
    "ls *.txt > PWNED",
    "(ls *.txt; touch PWNED)",
    "{ ls *.txt; touch PWNED; }",
    "ls *.txt <(touch PWNED)",
]


def run(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]}


def answering(pick: Any) -> Any:
    """A permission handler answering with ``pick(params)`` and recording the requests."""

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": pick(params)}

    return setup


async def test_always_allow_covers_the_exact_command_and_no_compound_of_it(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    steps = [run("ls *.txt"), *[run(c) for c in COMPOUNDS], run("ls  *.txt"),
             {"text": "done"}]
    client = await start(model=write_script(tmp_path / "s.json", steps),
                         setup=answering(lambda p: "allow_always"
                                         if p["toolCall"]["input"]["command"] == "ls *.txt"
                                         else "reject_once"))
    result = await client.call("openprogram/chat", {"text": "list the text files"})
    assert result["status"] == "done", result
    asked = [p["toolCall"]["input"]["command"] for p in client.permission_requests]
    assert asked == ["ls *.txt", *COMPOUNDS]  # the exact repeat ran without asking
    assert not (workspace / "PWNED").exists() and not (workspace / "x.txt").exists()
    first_compound = client.permission_requests[1]["toolCall"]
    assert first_compound["parts"] == ["ls *.txt", "touch PWNED", "echo done.txt"]
    assert first_compound["uncoveredParts"] == ["touch PWNED", "echo done.txt"]
    names = [o["name"] for o in client.permission_requests[1]["options"]]
    assert "Always allow these 2 commands (`touch PWNED`; `echo done.txt`) in this session" \
        in names
    # every started call had its own id, and each prompt named the id of its tool.started
    started = client.of_type("tool.started")
    ids = [e["data"]["toolCallId"] for e in started]
    assert len(set(ids)) == len(ids) == len(COMPOUNDS) + 2
    for request in client.permission_requests:
        match = [e for e in started if e["data"]["toolCallId"] ==
                 request["toolCall"]["toolCallId"]]
        assert [e["turnId"] for e in match] == [request["turnId"]]


async def test_a_revoked_rule_asks_again_without_a_restart(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    steps = [run("echo one"), {"text": "ran"}, run("echo one"), {"text": "ran again"},
             run("echo one"), {"text": "asked again"}]
    client = await start(model=write_script(tmp_path / "s.json", steps),
                         setup=answering(lambda p: "allow_always_workspace"))
    first = await client.call("openprogram/chat", {"text": "echo"})
    assert len(client.permission_requests) == 1
    listed = (await client.call("openprogram/rules", {}))["rules"]
    [rule] = listed
    assert (rule["kind"], rule["value"], rule["scope"], rule["origin"]) == (
        "command", "echo one", "workspace", "prompt")
    assert rule["turnId"] == first["assistantNodeId"]
    assert rule["toolCallId"] == client.permission_requests[0]["toolCall"]["toolCallId"]
    assert rule["createdAt"] and rule["revocable"] is True

    await client.call("openprogram/chat", {"text": "echo", "sessionId": first["sessionId"]})
    assert len(client.permission_requests) == 1  # the rule held

    revoked = await client.call("openprogram/revokeRule", {"ruleId": rule["id"]})
    assert revoked["revoked"]["id"] == rule["id"]
    await client.wait_event("rules.changed", lambda e: e["data"]["action"] == "revoked")
    assert (await client.call("openprogram/rules", {}))["rules"] == []
    await client.call("openprogram/chat", {"text": "echo", "sessionId": first["sessionId"]})
    assert len(client.permission_requests) == 2  # asked again, same server


async def test_the_state_root_inside_the_workspace_is_off_limits(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    """Workspace = $HOME: a model cannot plant an allow-all rule in our own state."""
    home = workspace / ".local" / "share" / "openprogram-lsp"
    state = ".local/share/openprogram-lsp"
    planted = {"rules": [{"id": "evil", "decision": "allow", "kind": "pattern", "tool": "*",
                          "scope": "workspace", "origin": "prompt"}]}
    steps = [
        {"tool_calls": [{"name": "write_file", "arguments": {
            "path": f"{state}/rules/planted.json", "content": str(planted)}}]},
        {"tool_calls": [{"name": "list_dir", "arguments": {"path": state}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"{state}/sessions"}}]},
        {"tool_calls": [{"name": "grep", "arguments": {"pattern": "secret-marker"}}]},
        {"tool_calls": [{"name": "list_dir", "arguments": {"path": ".local/share"}}]},
        {"text": "done"},
    ]
    client = await start(model=write_script(tmp_path / "s.json", steps), home=home,
                         args=["--permission-mode", "bypass"])
    (workspace / "notes.txt").write_text("secret-marker in the workspace\n")
    result = await client.call("openprogram/chat", {"text": "try secret-marker"})
    assert result["status"] == "done", result
    outputs = [e["data"] for e in client.of_type("tool.finished")]
    write, listing, read, grep, share = outputs
    assert write["status"] == "failed" and "own state directory" in write["output"]
    assert not (home / "rules" / "planted.json").exists()
    assert listing["status"] == "failed" and "own state directory" in listing["output"]
    assert read["status"] == "failed" and "own state directory" in read["output"]
    # the session files hold the marker too (the user's message); grep never looks there
    assert grep["output"].splitlines() == ["notes.txt:1: secret-marker in the workspace"]
    assert "openprogram-lsp" not in share["output"]
