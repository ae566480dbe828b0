"""Every custom method with malformed params answers -32602 naming the field; the server lives."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from openprogram_lsp.lsp import methods
from tests.lsp.conftest import Starter

BAD: list[tuple[str, Any, str]] = [
    ("openprogram/chat", {}, "text"),
    ("openprogram/chat", {"text": 42}, "text"),
    ("openprogram/chat", {"text": "hi", "sessionId": 7}, "sessionId"),
    ("openprogram/chat", {"text": "hi", "branchFrom": ["x"]}, "branchFrom"),
    ("openprogram/chat", [1, 2], "params"),
    ("openprogram/fork", {"sessionId": "s", "text": "x"}, "fromNodeId"),
    ("openprogram/cancel", {}, "sessionId"),
    ("openprogram/steer", {"sessionId": "s"}, "text"),
    ("openprogram/sessions", "all", "params"),
    ("openprogram/history", {"headId": "h"}, "sessionId"),
    ("openprogram/branches", {"sessionId": None}, "sessionId"),
    ("openprogram/checkout", {"sessionId": "s"}, "headId"),
    ("openprogram/nameBranch", {"sessionId": "s", "headId": "h", "name": ""}, "name"),
    ("openprogram/answer", {"questionId": "q"}, "answer"),
    ("openprogram/checkpoints", {"sessionId": 3}, "sessionId"),
    ("openprogram/checkpointDiff", {"path": "a"}, "checkpointId"),
    ("openprogram/restore", {"checkpointId": "c", "paths": "a.txt"}, "paths"),
    ("openprogram/agents", {"sessionId": {}}, "sessionId"),
    ("openprogram/renameSession", {"sessionId": "s", "title": ""}, "title"),
    ("openprogram/deleteSession", {"sessionId": 5}, "sessionId"),
    ("openprogram/restoreHunk", {"checkpointId": "c", "path": "a", "hunk": -1}, "hunk"),
    ("openprogram/hooks", "all", "params"),
    ("openprogram/trust", {"id": "h1"}, "decision"),
    ("openprogram/mcp", "all", "params"),
    ("openprogram/mcpRestart", {"server": 5}, "server"),
    ("openprogram/mcpRevokeTrust", {}, "server"),
    ("openprogram/subscribe", {}, "sessionId"),
    ("openprogram/unsubscribe", {"sessionId": 5}, "sessionId"),
    ("openprogram/branchDiff", {"sessionId": "s", "fromHeadId": "a"}, "toHeadId"),
    ("openprogram/blame", {"uri": 5}, "uri"),
    ("openprogram/checkout", {"sessionId": "s", "headId": "h", "restoreCode": [1]},
     "restoreCode"),
    ("openprogram/rules", {"sessionId": 5}, "sessionId"),
    ("openprogram/revokeRule", {}, "ruleId"),
    ("openprogram/files", {"query": "x", "limit": 0}, "limit"),
    ("openprogram/commands", "all", "params"),
    ("openprogram/image", {"sha256": "../../etc/passwd"}, "sha256"),  # a hash, never a path
]


def test_every_request_is_covered() -> None:
    assert {m for m, _, _ in BAD} == set(methods.CLIENT_REQUESTS)


async def test_malformed_params_answer_invalid_params(start: Starter) -> None:
    client = await start(model="offline")
    for method, params, field in BAD:
        with pytest.raises(JsonRpcException) as info:
            await client.call(method, params)
        assert info.value.code == -32602, (method, info.value)
        assert field in info.value.message, (method, info.value.message)
        assert method in info.value.message
        # the server keeps serving after each bad request
        assert "sessions" in await client.call("openprogram/sessions", {})
    result = await client.call("openprogram/chat", {"text": "still alive"})
    assert result["status"] == "done"


async def test_missing_params_object(start: Starter) -> None:
    client = await start(model="offline")
    assert await client.call("openprogram/sessions") == {"sessions": [], "total": 0,
                                                          "hasMore": False}
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/chat")
    assert info.value.code == -32602
    assert "text" in info.value.message
