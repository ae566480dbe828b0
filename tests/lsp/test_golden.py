"""Golden JSON pinning the wire shapes (ids, times and token counts normalised).

Regenerate with ``OPENPROGRAM_UPDATE_GOLDEN=1 pytest tests/lsp/test_golden.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pygls.exceptions import JsonRpcException

from openprogram_lsp.lsp import methods
from openprogram_lsp.lsp.schema import protocol_json_schema
from tests.lsp.conftest import OpClient, Starter, write_script

GOLDEN = Path(__file__).parent / "golden"
CASES = ("methods", "chat_result", "request_permission", "ask_question", "history",
         "sessions", "branches", "events", "invalid_params_error", "cancel_result")
MORE = ("checkpoints_result", "checkpoint_diff_result", "restore_result", "undo_result",
        "agents_result", "subscribe_result", "unsubscribe_result", "steer_result",
        "name_branch_result", "checkout_result", "rename_session_result", "hooks_result",
        "mcp_result", "rules_result", "delete_session_result")

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
    if key in ("root", "workspace"):
        return "<root>"
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


def test_every_golden_file_is_registered() -> None:
    assert {p.stem for p in GOLDEN.glob("*.json")} == set(CASES) | set(MORE)


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
    req = protocol_json_schema()["requests"]

    async def pinned(name: str, method: str, params: dict[str, Any]) -> Any:
        out = await client.call(f"openprogram/{method}", params)
        conforms(req[f"openprogram/{method}"]["result"], out)
        check(name, out)
        return out

    turn = await client.call("openprogram/chat", {"text": "write a.txt"})
    sid, cid = turn["sessionId"], turn["checkpoint"]["id"]
    await pinned("checkpoints_result", "checkpoints", {"sessionId": sid})
    await pinned("checkpoint_diff_result", "checkpointDiff", {"checkpointId": cid})
    (workspace / "a.txt").write_text("changed\n")
    await pinned("restore_result", "restore", {"checkpointId": cid})
    await pinned("undo_result", "restore", {"checkpointId": cid, "undo": True})
    await pinned("agents_result", "agents", {"sessionId": sid})
    await pinned("subscribe_result", "subscribe", {"sessionId": sid})
    await pinned("unsubscribe_result", "unsubscribe", {"sessionId": sid})
    await pinned("steer_result", "steer", {"sessionId": sid, "text": "more"})
    head = turn["headId"]
    await pinned("name_branch_result", "nameBranch", {"sessionId": sid, "headId": head,
                                                      "name": "main"})
    await pinned("checkout_result", "checkout", {"sessionId": sid, "headId": head})
    await pinned("rename_session_result", "renameSession", {"sessionId": sid, "title": "t"})
    await pinned("hooks_result", "hooks", {})
    await pinned("mcp_result", "mcp", {})
    await pinned("rules_result", "rules", {})
    await pinned("delete_session_result", "deleteSession", {"sessionId": sid})
