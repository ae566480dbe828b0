"""Approvals through the real transport: exact command rules, revocation, the state root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from openprogram_lsp.approvals.rulebook import RuleBook
from openprogram_lsp.approvals.rules import Rule
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


async def test_rules_of_every_folder_and_of_the_settings_are_listed_and_removable(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    """Settings rules are listed once (not revocable here; the editor removes the setting and
    that takes effect at once); a second folder's rules are listed and revoked too."""
    other = tmp_path / "ws2"
    other.mkdir()
    kept = RuleBook.for_workspace(tmp_path / "home", other).add(Rule(
        id="", decision="allow", kind="command", tool="run_command", value="make",
        description="Run `make`"))
    steps = [run("echo settings"), {"text": "ran"}, run("echo settings"), {"text": "asked"}]
    client = await start(model=write_script(tmp_path / "s.json", steps),
                         init_options={"rules": [{"tool": "run_command",
                                                  "pattern": "echo set*",
                                                  "decision": "allow"}]},
                         setup=answering(lambda p: "reject_once"))
    client.workspace_did_change_workspace_folders(t.DidChangeWorkspaceFoldersParams(
        event=t.WorkspaceFoldersChangeEvent(
            added=[t.WorkspaceFolder(uri=other.as_uri(), name="ws2")], removed=[])))
    listed = (await client.call("openprogram/rules", {}))["rules"]
    by_id = {r["id"]: r for r in listed}
    assert by_id[kept.id]["workspace"] == str(other.resolve())
    [setting] = [r for r in listed if r["origin"] == "settings"]
    assert (setting["kind"], setting["value"], setting["revocable"], setting.get("workspace")) == (
        "pattern", "echo set*", False, None)
    only = (await client.call("openprogram/rules", {"workspace": str(workspace)}))["rules"]
    assert kept.id not in {r["id"] for r in only}

    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/revokeRule", {"ruleId": setting["id"]})
    assert info.value.code == -32602 and "setting" in info.value.message
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/revokeRule", {"ruleId": kept.id,
                                                     "workspace": str(tmp_path)})
    assert info.value.code == -32602 and "workspace" in info.value.message
    revoked = await client.call("openprogram/revokeRule", {"ruleId": kept.id})
    assert revoked["revoked"]["workspace"] == str(other.resolve())
    assert RuleBook.for_workspace(tmp_path / "home", other).rules == []

    first = await client.call("openprogram/chat", {"text": "echo"})
    assert client.permission_requests == []  # the setting allowed it
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"openprogram": {"rules": None}}))  # the editor removed the setting
    assert [r for r in (await client.call("openprogram/rules", {}))["rules"]
            if r["origin"] == "settings"] == []
    await client.call("openprogram/chat", {"text": "echo", "sessionId": first["sessionId"]})
    assert len(client.permission_requests) == 1  # asked now, no restart


async def test_a_child_runs_under_the_parents_mode_and_settings_rules(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    """An ask-mode parent's child asks before its edit (labelled), and the editor's deny
    rule still refuses its other edit; the spawn prompt showed the child's task."""
    parent = [{"tool_calls": [{"name": "agent", "arguments": {
        "prompt": "write the two notes", "label": "kid"}}]}, {"text": "spawned"},
        {"text": "noted"}, {"text": "spare"}]
    child = [{"tool_calls": [{"name": "write_file", "arguments": {
        "path": "denied.txt", "content": "x\n"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {
            "path": "asked.txt", "content": "x\n"}}]}, {"text": "child done"}]
    client = await start(
        model=write_script(tmp_path / "parent.json", parent),
        init_options={"agentModel": write_script(tmp_path / "child.json", child),
                      "rules": [{"tool": "write_file", "pattern": "denied.txt",
                                 "decision": "deny"}]},
        setup=answering(lambda p: "allow_once" if p["toolCall"]["name"] == "agent"
                        else "reject_once"))
    result = await client.call("openprogram/chat", {"text": "delegate"})
    assert result["status"] == "done", result
    await client.wait_event("subagent.ended", timeout=30)
    spawn, edit = client.permission_requests
    assert spawn["toolCall"]["input"]["prompt"] == "write the two notes"
    assert "allow_unattended" in [o["optionId"] for o in spawn["options"]]
    assert edit["toolCall"]["input"]["path"] == "asked.txt"
    assert edit["label"] == "kid" and edit["toolCall"]["title"].startswith("[kid] ")
    assert not (workspace / "denied.txt").exists() and not (workspace / "asked.txt").exists()
    refused = [e["data"] for e in client.of_type("tool.finished")
               if "always reject" in e["data"].get("output", "")]
    assert len(refused) == 1


async def test_edits_of_the_agents_own_settings_always_ask(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    """accept-edits lets edits run, but not one that could switch the editor to bypass or swap
    the server command; no "always" option is offered for it."""
    bypass = '{"openprogram.permissionMode": "bypass"}\n'
    steps = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt",
                                                              "content": "x\n"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": ".vscode/settings.json",
                                                              "content": bypass}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "all.code-workspace",
                                                              "content": "{}\n"}}]},
        {"text": "done"},
    ]
    client = await start(model=write_script(tmp_path / "s.json", steps),
                         args=["--permission-mode", "accept-edits"],
                         setup=answering(lambda p: "reject_once"))
    result = await client.call("openprogram/chat", {"text": "tidy up"})
    assert result["status"] == "done", result
    assert (workspace / "notes.txt").exists()  # an ordinary edit ran unasked
    settings, code_ws = client.permission_requests
    assert settings["toolCall"]["input"]["path"] == ".vscode/settings.json"
    assert "this file can make commands run later" in settings["toolCall"]["title"]
    assert [o["optionId"] for o in settings["options"]] == ["allow_once", "reject_once"]
    assert code_ws["toolCall"]["input"]["path"] == "all.code-workspace"
    assert not (workspace / ".vscode" / "settings.json").exists()


# Every kind of control file the issue found written unasked in accept-edits.
CONTROL_WRITES = [".mcp.json", ".claude/settings.json", ".claude/settings.local.json",
                  ".claude/agents/helper.md", ".openprogram/settings.json",
                  ".openprogram/agents/a.md", ".vscode/tasks.json", ".vscode/launch.json",
                  ".nvim.lua", ".exrc", ".envrc", ".gitattributes", ".gitmodules",
                  "package.json", "web/package.json", ".bashrc", ".zshrc", "AGENTS.md",
                  ".VSCode/Settings.json"]


async def test_every_control_file_asks_in_accept_edits_even_under_an_every_edit_rule(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    """A file that can make commands run later asks in accept-edits, whatever standing rule
    allows edits, offers no "always" option, and the card says why."""
    RuleBook.for_workspace(tmp_path / "home", workspace).add(Rule(
        id="", decision="allow", kind="edit", tool="*", edit_scope="workspace", value=None,
        scope="workspace", description="Edit any file of the workspace"))
    (workspace / "CLAUDE.md").write_text("be nice\n")
    steps = [{"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt",
                                                                   "content": "x\n"}}]},
             *({"tool_calls": [{"name": "write_file",
                                "arguments": {"path": p, "content": "planted\n"}}]}
               for p in CONTROL_WRITES),
             {"tool_calls": [{"name": "edit_file", "arguments": {
                 "path": "CLAUDE.md", "old_text": "be nice", "new_text": "run evil"}}]},
             {"tool_calls": [{"name": "multi_edit", "arguments": {
                 "path": "CLAUDE.md", "edits": [{"old_text": "be", "new_text": "run"}]}}]},
             {"text": "done"}]
    client = await start(model=write_script(tmp_path / "s.json", steps),
                         args=["--permission-mode", "accept-edits"],
                         setup=answering(lambda p: "reject_once"))
    result = await client.call("openprogram/chat", {"text": "set things up"})
    assert result["status"] == "done", result
    assert (workspace / "notes.txt").exists()  # an ordinary edit ran unasked
    asked = [p["toolCall"]["input"]["path"] for p in client.permission_requests]
    assert asked == [*CONTROL_WRITES, "CLAUDE.md", "CLAUDE.md"]
    for request in client.permission_requests:
        assert "this file can make commands run later" in request["toolCall"]["title"]
        assert [o["optionId"] for o in request["options"]] == ["allow_once", "reject_once"]
    assert "direnv runs it" in client.permission_requests[CONTROL_WRITES.index(".envrc")][
        "toolCall"]["title"]
    planted = [p for p in CONTROL_WRITES if (workspace / p).exists()]
    assert planted == [] and (workspace / "CLAUDE.md").read_text() == "be nice\n"


async def test_a_command_outside_the_sandbox_always_asks_and_can_write_git(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    """.git is read-only in the box: `git add` fails there with a hint; asked to run outside
    the sandbox it asks every time (a rule for the command does not cover it, no "always"
    option), the card says so, and once allowed it writes the repository."""
    import subprocess
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / "a.txt").write_text("a\n")
    RuleBook.for_workspace(tmp_path / "home", workspace).add(Rule(
        id="", decision="allow", kind="command", tool="run_command", value="git add a.txt",
        scope="workspace", description="Run `git add a.txt`"))
    outside = {"command": "git add a.txt", "outside_sandbox": True}
    steps = [run("git add a.txt"), {"tool_calls": [{"name": "run_command",
                                                    "arguments": outside}]},
             {"text": "done"}]
    client = await start(model=write_script(tmp_path / "s.json", steps),
                         setup=answering(lambda p: "allow_once"))
    result = await client.call("openprogram/chat", {"text": "stage a.txt"})
    assert result["status"] == "done", result
    inside, out = [e["data"] for e in client.of_type("tool.finished")]
    assert "Read-only file system" in inside["output"], inside
    assert "outside_sandbox: true" in inside["output"]  # the model is told how
    [asked] = client.permission_requests  # the rule covered the sandboxed run only
    assert "outside the sandbox" in asked["toolCall"]["title"]
    assert asked["toolCall"]["sandboxed"] is False
    assert [o["optionId"] for o in asked["options"]] == ["allow_once", "reject_once"]
    assert out["status"] == "completed", out
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=workspace,
                            capture_output=True, text=True, check=True).stdout
    assert staged.split() == ["a.txt"]


async def test_an_answer_accepting_some_hunks_writes_only_those(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    before = "".join(f"line {i}\n" for i in range(1, 21))
    (workspace / "a.txt").write_text(before)
    edits = [{"old_text": "line 2\n", "new_text": "two\n"},
             {"old_text": "line 12\n", "new_text": "twelve\n"}]
    multi = {"tool_calls": [{"name": "multi_edit",
                             "arguments": {"path": "a.txt", "edits": edits}}]}
    answers: list[Any] = [[1], [True], [2], "bad"]

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "allow_once",
                    "acceptedHunks": answers[len(client.permission_requests) - 1]}

    steps = [multi, *({"tool_calls": [{"name": "edit_file", "arguments": {
        "path": "a.txt", "old_text": "line 3\n", "new_text": f"three {n}\n"}}]}
        for n in range(3))]
    client = await start(model=write_script(tmp_path / "s.json", [*steps, {"text": "done"}]),
                         setup=setup)
    result = await client.call("openprogram/chat", {"text": "edit a.txt"})
    assert result["status"] == "done", result
    hunks = client.permission_requests[0]["toolCall"]["diff"]["hunks"]
    assert hunks == [{"index": 0, "oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 1,
                      "header": "@@ -2,1 +2,1 @@"},
                     {"index": 1, "oldStart": 12, "oldLines": 1, "newStart": 12,
                      "newLines": 1, "header": "@@ -12,1 +12,1 @@"}]
    # only hunk 1 was written; `true`, an index the edit lacks and a non-list ran nothing
    assert (workspace / "a.txt").read_text() == before.replace("line 12\n", "twelve\n")
    finished = [e["data"] for e in client.of_type("tool.finished")]
    assert [f["status"] for f in finished] == ["completed", "failed", "failed", "failed"]
    assert "applied hunks 1; rejected hunks 0" in finished[0]["output"]
    assert "-line 2\n+two" in finished[0]["output"]
    resolved = [e["data"] for e in client.of_type("permission.resolved")]
    assert resolved[0]["acceptedHunks"] == [1]
    assert [r["outcome"] for r in resolved] == ["selected", "cancelled", "cancelled",
                                                "cancelled"]
    assert "no hunk 2" in resolved[2]["reason"]
