"""renameSession and deleteSession over stdio; sessions carry their workspace."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Starter


async def test_rename_and_delete_a_session(start: Starter, workspace: Path, home: Path) -> None:
    client = await start(model="offline")
    keep = (await client.call("openprogram/chat", {"text": "hello"}))["sessionId"]
    gone = (await client.call("openprogram/chat", {"text": "scratch"}))["sessionId"]
    rows = {s["id"]: s for s in (await client.call("openprogram/sessions", {}))["sessions"]}
    assert Path(rows[keep]["workspace"]).resolve() == workspace.resolve()

    assert await client.call("openprogram/renameSession",
                             {"sessionId": keep, "title": "  Refactor plan "}) == {}
    rows = {s["id"]: s for s in (await client.call("openprogram/sessions", {}))["sessions"]}
    assert rows[keep]["title"] == "Refactor plan"

    assert await client.call("openprogram/deleteSession", {"sessionId": gone}) == {}
    rows = {s["id"]: s for s in (await client.call("openprogram/sessions", {}))["sessions"]}
    assert set(rows) == {keep}
    assert not (home / "sessions" / gone).exists()
    assert not [p for p in (home / "sessions").iterdir() if p.name.startswith(".deleted")]
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/history", {"sessionId": gone})
    assert info.value.code == -32001
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/deleteSession", {"sessionId": gone})
    assert info.value.code == -32001
    # the kept session still works
    again = await client.call("openprogram/chat", {"text": "more", "sessionId": keep})
    assert again["status"] == "done"
