"""Golden JSON pinning the wire shapes (ids, times and token counts normalised).

Regenerate with ``OPENPROGRAM_UPDATE_GOLDEN=1 pytest tests/lsp/test_golden.py``.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pygls.exceptions import JsonRpcException

from openprogram_lsp.lsp import methods
from openprogram_lsp.lsp.schema import protocol_json_schema
from tests.imagefiles import png
from tests.lsp.conftest import OpClient, Starter, write_script
from tests.tools.mcp.demo import demo_def

GOLDEN = Path(__file__).parent / "golden"
CASES = ("methods", "chat_result", "request_permission", "ask_question", "history",
         "sessions", "branches", "events", "invalid_params_error", "cancel_result")
MORE = ("checkpoints_result", "checkpoint_diff_result", "restore_result", "undo_result",
        "agents_result", "subscribe_result", "unsubscribe_result", "steer_result",
        "name_branch_result", "checkout_result", "rename_session_result", "hooks_result",
        "mcp_result", "rules_result", "delete_session_result", "fork_result",
        "branch_diff_result", "blame_result", "restore_hunk_result", "files_result",
        "commands_result", "revoke_rule_result", "answer_result", "trust_result",
        "mcp_restart_result", "mcp_revoke_trust_result", "diagnostics_request",
        "navigate_request", "image_result")
BY_METHOD = {
    "openprogram/chat": "chat_result", "openprogram/fork": "fork_result",
    "openprogram/cancel": "cancel_result", "openprogram/steer": "steer_result",
    "openprogram/sessions": "sessions", "openprogram/history": "history",
    "openprogram/branches": "branches", "openprogram/checkout": "checkout_result",
    "openprogram/nameBranch": "name_branch_result", "openprogram/answer": "answer_result",
    "openprogram/checkpoints": "checkpoints_result",
    "openprogram/checkpointDiff": "checkpoint_diff_result",
    "openprogram/restore": "restore_result", "openprogram/agents": "agents_result",
    "openprogram/renameSession": "rename_session_result",
    "openprogram/deleteSession": "delete_session_result",
    "openprogram/restoreHunk": "restore_hunk_result", "openprogram/hooks": "hooks_result",
    "openprogram/trust": "trust_result", "openprogram/mcp": "mcp_result",
    "openprogram/mcpRestart": "mcp_restart_result",
    "openprogram/mcpRevokeTrust": "mcp_revoke_trust_result",
    "openprogram/subscribe": "subscribe_result", "openprogram/unsubscribe": "unsubscribe_result",
    "openprogram/branchDiff": "branch_diff_result", "openprogram/blame": "blame_result",
    "openprogram/files": "files_result", "openprogram/commands": "commands_result",
    "openprogram/image": "image_result", "openprogram/rules": "rules_result",
    "openprogram/revokeRule": "revoke_rule_result", "openprogram/event": "events",
    "openprogram/requestPermission": "request_permission",
    "openprogram/askQuestion": "ask_question", "openprogram/diagnostics": "diagnostics_request",
    "openprogram/navigate": "navigate_request",
}
"""The golden file pinning each method's result (requests) or params (what the server sends)."""

SCRIPT = [
    {"text": "Writing.", "tool_calls": [{"id": "call_w", "name": "write_file", "arguments": {
        "path": "a.txt", "content": "one\n"}}]},
    {"text": "Done."},
    {"tool_calls": [{"id": "call_q", "name": "ask_user", "arguments": {
        "question": "Proceed?", "options": ["yes", "no"]}}]},
    {"text": "Noted."},
]


def normalise(value: Any, key: str = "") -> Any:
    """Replace run-specific values by placeholders."""
    if key == "metadata":
        return "<object>"
    if key == "stderr":  # an MCP server's last lines (pids; read beside the handshake)
        return "<lines>"
    if isinstance(value, dict):
        return {k: normalise(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [normalise(v, key) for v in value]
    if isinstance(value, str) and (key in ("id", "predecessor", "caller") or key.endswith("Id")):
        return "<id>"
    if isinstance(value, str) and key.endswith("At"):
        return "<time>"
    if key in ("inputTokens", "outputTokens", "usedTokens") and isinstance(value, int):
        return "<int>"  # token counts follow the temporary paths in the prompt
    if key == "timeoutMs" and isinstance(value, int) and value < 1500:
        return "<what the ask before the edit left of 1500>"  # the asks share one bound
    if key in ("root", "workspace"):
        return "<root>"
    if key in ("uri", "uris") and isinstance(value, str) and value.startswith("file:"):
        return "<file uri>"
    if key == "target":  # an MCP server's command line: this machine's paths
        return "<command>"
    if key == "model" and isinstance(value, str):
        return "<model>"
    if key == "message" and isinstance(value, str) and value.startswith("turn "):
        return "<checkpoint message>"
    return value


def check(name: str, payload: Any) -> None:
    """Compare with (or, when updating, write) a golden file."""
    path = GOLDEN / f"{name}.json"
    text = json.dumps(normalise(payload), indent=2, sort_keys=True) + "\n"
    if os.environ.get("OPENPROGRAM_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"missing golden {path.name}; set OPENPROGRAM_UPDATE_GOLDEN=1"
    assert json.loads(path.read_text()) == json.loads(text), name


def conforms(schema: dict[str, Any], payload: Any) -> None:
    """The payload is what the generated schema (and so both editors' types) says."""
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in jsonschema.Draft202012Validator(schema).iter_errors(payload)]
    assert errors == []


async def pinned(client: OpClient, name: str, method: str, params: dict[str, Any]) -> Any:
    """``openprogram/METHOD``'s result: checked against the schema and the golden file NAME."""
    out = await client.call(f"openprogram/{method}", params)
    conforms(_requests()[f"openprogram/{method}"]["result"], out)
    check(name, out)
    return out


@functools.cache
def _requests() -> dict[str, Any]:
    return protocol_json_schema()["requests"]


def test_every_golden_file_is_registered() -> None:
    assert {p.stem for p in GOLDEN.glob("*.json")} == set(CASES) | set(MORE)


def test_every_method_has_a_golden_file() -> None:
    """A method added to the wire fails here until a golden case pins its shape."""
    wire = {*methods.CLIENT_REQUESTS, *methods.CLIENT_NOTIFICATIONS, *methods.SERVER_REQUESTS,
            *methods.SERVER_NOTIFICATIONS}
    assert sorted(wire - set(BY_METHOD)) == [], "methods without a golden case"
    assert sorted(set(BY_METHOD) - wire) == [], "golden cases of methods no longer on the wire"
    missing = [name for name in BY_METHOD.values() if not (GOLDEN / f"{name}.json").exists()]
    assert missing == []
    assert set(BY_METHOD.values()) <= set(CASES) | set(MORE)


def test_every_method_of_the_protocol_doc_has_a_golden_file() -> None:
    """docs/protocol.md's method tables (generated from the wire) name no method without one."""
    doc = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text("utf-8")
    tables = re.findall(r"<!-- generated: (?:requests|server-requests) .*?-->\n(.*?)<!-- end",
                        doc, re.S)
    listed = {m for table in tables
              for m in re.findall(r"^\| \[?`(openprogram/\w+)`", table, re.M)}
    assert len(listed) == len(methods.CLIENT_REQUESTS) + len(methods.SERVER_REQUESTS)
    assert sorted(listed - set(BY_METHOD)) == []


async def test_wire_shapes(start: Starter, tmp_path: Path) -> None:
    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "allow_once"}

        @client.feature("openprogram/askQuestion")
        def _question(params: Any) -> dict[str, Any]:
            client.question_requests.append(params)
            return {"answer": "yes"}

    client = await start(model=write_script(tmp_path / "s.json", SCRIPT), setup=setup)
    check("methods", methods.as_table())
    result = await client.call("openprogram/chat", {"text": "write a.txt"})
    check("chat_result", result)
    check("request_permission", client.permission_requests[0])
    sid = result["sessionId"]
    await client.call("openprogram/chat", {"text": "ask me", "sessionId": sid})
    check("ask_question", client.question_requests[0])
    check("history", await client.call("openprogram/history", {"sessionId": sid}))
    check("sessions", await client.call("openprogram/sessions", {}))
    check("branches", await client.call("openprogram/branches", {"sessionId": sid}))
    check("cancel_result", await client.call("openprogram/cancel", {"sessionId": sid}))
    firsts: dict[str, Any] = {}
    for event in client.events:
        if event["type"] != "file.changed":  # timing-dependent batches
            firsts.setdefault(event["type"], event)
    check("events", firsts)
    schema = protocol_json_schema()
    req = schema["requests"]
    conforms(req["openprogram/chat"]["result"], result)
    conforms(schema["serverRequests"]["openprogram/requestPermission"]["params"],
             client.permission_requests[0])
    conforms(schema["serverRequests"]["openprogram/askQuestion"]["params"],
             client.question_requests[0])
    for method in ("history", "sessions", "branches", "cancel", "checkpoints", "agents"):
        name = f"openprogram/{method}"
        conforms(req[name]["result"], await client.call(name, {"sessionId": sid}))
    for event in client.events:
        conforms(schema["notifications"]["openprogram/event"], event)
        if event["type"] in schema["events"]:
            conforms(schema["events"][event["type"]], event["data"])
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/history", {"headId": 3})
    err = info.value
    check("invalid_params_error", {"code": err.code, "message": err.message, "data": err.data})


async def test_every_result_shape(start: Starter, tmp_path: Path, workspace: Path) -> None:
    """The results the first test does not reach, pinned and validated against the schema."""
    client = await start(model=write_script(tmp_path / "s.json", SCRIPT[:2]),
                         args=["--permission-mode", "bypass"])
    turn = await client.call("openprogram/chat", {"text": "write a.txt"})
    sid, cid = turn["sessionId"], turn["checkpoint"]["id"]
    await pinned(client, "checkpoints_result", "checkpoints", {"sessionId": sid})
    await pinned(client, "checkpoint_diff_result", "checkpointDiff", {"checkpointId": cid})
    (workspace / "a.txt").write_text("changed\n")
    await pinned(client, "restore_result", "restore", {"checkpointId": cid})
    await pinned(client, "undo_result", "restore", {"checkpointId": cid, "undo": True})
    await pinned(client, "agents_result", "agents", {"sessionId": sid})
    await pinned(client, "subscribe_result", "subscribe", {"sessionId": sid})
    await pinned(client, "unsubscribe_result", "unsubscribe", {"sessionId": sid})
    await pinned(client, "steer_result", "steer", {"sessionId": sid, "text": "more"})
    head = turn["headId"]
    await pinned(client, "name_branch_result", "nameBranch", {"sessionId": sid, "headId": head,
                                                      "name": "main"})
    await pinned(client, "checkout_result", "checkout", {"sessionId": sid, "headId": head})
    await pinned(client, "rename_session_result", "renameSession", {"sessionId": sid, "title": "t"})
    await pinned(client, "hooks_result", "hooks", {})
    await pinned(client, "mcp_result", "mcp", {})
    await pinned(client, "rules_result", "rules", {})
    await pinned(client, "delete_session_result", "deleteSession", {"sessionId": sid})


CODE = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
TURNS = [
    {"text": "Editing.", "tool_calls": [{"id": "call_e", "name": "write_file", "arguments": {
        "path": "code.py", "content": "one\nTWO\nthree\nfour\nfive\nSIX\nseven\n"}}]},
    {"text": "Edited."},
    {"text": "Adding.", "tool_calls": [{"id": "call_b", "name": "write_file", "arguments": {
        "path": "b.txt", "content": "branch\n"}}]},
    {"text": "Forked."},
    {"text": "Seen."},
    {"tool_calls": [{"id": "call_q", "name": "ask_user", "arguments": {
        "question": "Proceed?", "options": ["yes", "no"]}}]},
    {"text": "Noted."},
]


async def test_turn_and_code_method_shapes(start: Starter, tmp_path: Path,
                                           workspace: Path) -> None:
    """fork, answer, blame, restoreHunk, branchDiff, files, commands, image and revokeRule."""
    (workspace / "code.py").write_text(CODE)
    (workspace / ".openprogram" / "commands").mkdir(parents=True)
    (workspace / ".openprogram" / "commands" / "explain.md").write_text(
        "---\ndescription: Explain code\n---\nExplain $ARGUMENTS to a newcomer.\n")

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "allow_always_workspace"}

        @client.feature("openprogram/askQuestion")
        async def _unanswered(params: Any) -> dict[str, Any]:  # openprogram/answer comes first
            client.question_requests.append(params)
            await asyncio.sleep(30)
            return {"answer": "too late"}

    client = await start(model=write_script(tmp_path / "s.json", TURNS), setup=setup)
    first = await client.call("openprogram/chat", {"text": "edit code.py"})
    assert first["status"] == "done", first
    sid, cid = first["sessionId"], first["checkpoint"]["id"]
    fork = await pinned(client, "fork_result", "fork", {"sessionId": sid, "fromNodeId": None,
                                                "text": "add b.txt", "name": "alt"})
    assert fork["status"] == "done" and fork["headId"] != first["headId"], fork
    diff = await pinned(client, "branch_diff_result", "branchDiff", {
        "sessionId": sid, "fromHeadId": first["headId"], "toHeadId": fork["headId"]})
    assert [f["path"] for f in diff["files"]] == ["b.txt"]
    blame = await pinned(client, "blame_result", "blame", {"uri": (workspace / "code.py").as_uri()})
    assert {h["turnId"] for h in blame["hunks"] if "turnId" in h} == {first["assistantNodeId"]}
    hunk = await pinned(client, "restore_hunk_result", "restoreHunk",
                        {"checkpointId": cid, "path": "code.py", "hunk": 0})
    assert hunk["restored"] == ["code.py"]
    assert (workspace / "code.py").read_text() == "one\ntwo\nthree\nfour\nfive\nSIX\nseven\n"
    files = await pinned(client, "files_result", "files", {"query": "code"})
    assert files["files"][0]["path"] == "code.py"
    shot = await client.call("openprogram/chat", {
        "sessionId": sid, "text": "see", "context": [
            {"kind": "image", "uri": "clipboard:a.png",
             "data": base64.b64encode(png(1, 1)).decode()}]})
    assert shot["status"] == "done", shot
    page = await client.call("openprogram/history", {"sessionId": sid})
    [record] = [c for n in page["nodes"] for c in n.get("context", []) if c["kind"] == "image"]
    image = await pinned(client, "image_result", "image", {"sha256": record["sha256"]})
    assert image["mediaType"] == "image/png" and image["data"].startswith("iVBORw0KGgo")
    commands = await pinned(client, "commands_result", "commands", {})
    assert "explain" in {c["name"] for c in commands["commands"]}
    rules = (await client.call("openprogram/rules", {}))["rules"]
    assert {r["kind"] for r in rules} == {"edit"}, rules  # one per "always" the user gave
    revoked = await pinned(client, "revoke_rule_result", "revokeRule", {"ruleId": rules[0]["id"]})
    assert revoked["revoked"]["id"] == rules[0]["id"]
    after = (await client.call("openprogram/rules", {}))["rules"]
    assert rules[0]["id"] not in {r["id"] for r in after}

    turn = asyncio.ensure_future(client.call("openprogram/chat", {
        "text": "ask me", "sessionId": sid}))
    asked = await client.wait_event("question.asked")
    await pinned(client, "answer_result", "answer", {"questionId": asked["data"]["questionId"],
                                             "answer": "yes"})
    assert (await turn)["status"] == "done"
    finished = client.of_type("tool.finished")[-1]["data"]
    assert finished["output"] == "yes"


async def test_trust_and_mcp_method_shapes(start: Starter, tmp_path: Path,
                                           workspace: Path) -> None:
    """trust (a workspace hook), mcpRestart and mcpRevokeTrust (the demo MCP server)."""
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PostToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}))
    notes = tmp_path / "notes"
    notes.mkdir()
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"notes": demo_def(
        notes=notes)}}))
    steps = [{"tool_calls": [{"id": "call_p", "name": "mcp__notes__echo",
                              "arguments": {"text": "hi"}}]}, {"text": "Echoed."}]

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "allow_always"}

    client = await start(model=write_script(tmp_path / "s.json", steps), setup=setup)
    [hook] = (await client.call("openprogram/hooks", {}))["hooks"]
    trusted = await pinned(client, "trust_result", "trust", {"id": hook["id"], "decision": "trust"})
    assert trusted == {"id": hook["id"], "trust": "trusted"}
    turn = await client.call("openprogram/chat", {"text": "echo hi"})
    assert turn["status"] == "done", turn
    assert client.of_type("tool.finished")[-1]["data"]["output"] == "hi"
    restarted = await pinned(client, "mcp_restart_result", "mcpRestart", {"server": "notes"})
    assert restarted["restarted"] == ["notes"]
    revoked = await pinned(client, "mcp_revoke_trust_result", "mcpRevokeTrust", {"server": "notes"})
    assert revoked == {"revoked": True}


async def test_diagnostics_request_shape(start: Starter, tmp_path: Path,
                                         workspace: Path) -> None:
    """openprogram/diagnostics: asked before and (settling) after an edit; the model is told."""
    asked: list[dict[str, Any]] = []
    error = {"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}},
             "severity": 1, "message": "undefined name 'y'", "source": "pyflakes"}

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/diagnostics")
        def _diagnostics(params: Any) -> dict[str, Any]:
            asked.append(params)
            found = [error] if len(asked) > 1 else []
            return {"files": [{"uri": uri, "diagnostics": found} for uri in params["uris"]]}

    steps = [{"tool_calls": [{"id": "call_w", "name": "write_file", "arguments": {
        "path": "m.py", "content": "x = y\n"}}]}, {"text": "Written."}]
    log = tmp_path / "model.jsonl"
    client = await start(model=write_script(tmp_path / "s.json", steps), diagnostics=True,
                         args=["--permission-mode", "bypass"], setup=setup,
                         extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    turn = await client.call("openprogram/chat", {"text": "write m.py"})
    assert turn["status"] == "done", turn
    system = json.loads(log.read_text("utf-8").splitlines()[0])["system"]
    assert "its result lists the errors the editor's language servers report" in system
    assert "No language-server diagnostics" not in system
    before, after = asked
    assert before["uris"] == after["uris"] == [(workspace / "m.py").as_uri()]
    schema = protocol_json_schema()["serverRequests"]["openprogram/diagnostics"]["params"]
    conforms(schema, after)
    check("diagnostics_request", after)
    output = client.of_type("tool.finished")[-1]["data"]["output"]
    assert "line 1: error: undefined name 'y' [pyflakes]" in output


async def test_navigate_request_shape(start: Starter, tmp_path: Path, workspace: Path) -> None:
    """openprogram/navigate: the navigation tools are offered only to a client declaring it, ask
    it with the symbol's position, and list what it answers."""
    asked: list[dict[str, Any]] = []
    (workspace / "app.py").write_text("from lib import greet\nprint(greet('x'))\n", "utf-8")
    (workspace / "lib.py").write_text("def greet(name):\n    return name\n", "utf-8")

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/navigate")
        def _navigate(params: Any) -> dict[str, Any]:
            asked.append(params)
            return {"servers": ["pylsp"], "locations": [{"uri": (workspace / "lib.py").as_uri(),
                    "range": {"start": {"line": 0, "character": 4},
                              "end": {"line": 0, "character": 9}}}]}

    steps = [{"tool_calls": [{"id": "call_d", "name": "lsp_definition", "arguments": {
        "path": "app.py", "line": 2, "symbol": "greet"}}]}, {"text": "Found."}]
    client = await start(model=write_script(tmp_path / "s.json", steps), navigation=True,
                         setup=setup)
    turn = await client.call("openprogram/chat", {"text": "where is greet"})
    assert turn["status"] == "done", turn
    (params,) = asked
    assert params["position"] == {"line": 1, "character": 6}
    assert params["uri"] == (workspace / "app.py").as_uri()
    schema = protocol_json_schema()["serverRequests"]["openprogram/navigate"]["params"]
    conforms(schema, params)
    check("navigate_request", params)
    output = client.of_type("tool.finished")[-1]["data"]["output"]
    assert output == "lib.py:1:5: def greet(name):"


async def test_no_navigation_tools_without_the_capability(start: Starter, tmp_path: Path) -> None:
    """A plain LSP client (no experimental.openprogram.diagnostics or navigation): the model is
    told once, in the system prompt, that nothing reports diagnostics and nothing navigates; no
    lsp_* tool is offered, one called anyway answers at once; an edit asks nothing."""
    steps = [{"tool_calls": [{"id": "call_d", "name": "lsp_definition", "arguments": {
        "path": "app.py", "line": 1, "symbol": "x"}}]},
        {"tool_calls": [{"id": "call_w", "name": "write_file", "arguments": {
            "path": "m.py", "content": "x = y\n"}}]}, {"text": "No."}]
    log = tmp_path / "model.jsonl"
    client = await start(model=write_script(tmp_path / "s.json", steps),
                         args=["--permission-mode", "bypass"],
                         extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    turn = await client.call("openprogram/chat", {"text": "where is x"})
    assert turn["status"] == "done", turn
    output = client.of_type("tool.finished")[0]["data"]["output"]
    assert output.startswith("Unknown tool 'lsp_definition'"), output
    wrote = client.of_type("tool.finished")[1]["data"]["output"]
    assert wrote == "Created m.py (6 bytes)", wrote
    calls = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert len(calls) == 3
    for call in calls:
        assert call["system"].count("No language-server diagnostics reach you here") == 1
        assert call["system"].count("There is no definition, references or symbol lookup") == 1
        assert not [t for t in call["tools"] if t.startswith("lsp_")]
