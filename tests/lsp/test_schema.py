"""``openprogram-lsp schema`` and the method table."""

from __future__ import annotations

import json
import sys

from openprogram_lsp.lsp import methods, wire
from openprogram_lsp.lsp.schema import protocol_json_schema
from tests.forkserver import run_command


def test_schema_command_prints_every_method_and_event() -> None:
    done = run_command([sys.executable, "-m", "openprogram_lsp", "schema"])
    assert done.returncode == 0, done.stderr
    out = done.stdout
    schema = json.loads(out)
    assert set(schema["requests"]) == set(methods.CLIENT_REQUESTS)
    assert set(schema["serverRequests"]) == set(methods.SERVER_REQUESTS)
    assert set(schema["notifications"]) == {wire.EVENT}
    assert set(schema["events"]) <= set(methods.EVENT_TYPES)
    chat = schema["requests"]["openprogram/chat"]
    assert chat["params"]["required"] == ["text"]
    assert set(chat["params"]["properties"]) >= {"text", "sessionId", "branchFrom", "model"}
    assert {"sessionId", "status", "usage", "checkpoint"} <= set(
        chat["result"]["properties"])
    perm = schema["serverRequests"]["openprogram/requestPermission"]
    assert {"sessionId", "turnId", "toolCall", "options"} <= set(perm["params"]["properties"])


def test_contract_fields_are_in_the_params_models() -> None:
    contract = {
        "openprogram/chat": {"text", "sessionId", "branchFrom", "model"},
        "openprogram/fork": {"sessionId", "fromNodeId", "text", "name"},
        "openprogram/cancel": {"sessionId"},
        "openprogram/steer": {"sessionId", "text"},
        "openprogram/sessions": set(),
        "openprogram/history": {"sessionId", "headId"},
        "openprogram/branches": {"sessionId"},
        "openprogram/checkout": {"sessionId", "headId"},
        "openprogram/nameBranch": {"sessionId", "headId", "name"},
        "openprogram/answer": {"questionId", "answer"},
        "openprogram/checkpoints": {"sessionId"},
        "openprogram/checkpointDiff": {"checkpointId", "path"},
        "openprogram/restore": {"checkpointId", "paths"},
        "openprogram/agents": {"sessionId"},
    }
    schema = protocol_json_schema()
    for method, fields in contract.items():
        props = set(schema["requests"][method]["params"].get("properties", {}))
        assert props >= fields, method  # listed fields are fixed; fields may be added


def test_method_table_has_no_duplicates() -> None:
    table = methods.as_table()
    names = [n for key in ("clientRequests", "serverRequests", "serverNotifications")
             for n in table[key]]
    assert len(names) == len(set(names)) == len(methods.ALL_CUSTOM)
    assert all(n.startswith("openprogram/") for n in names)
