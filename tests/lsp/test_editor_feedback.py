"""Protocol additions asked for by the first real editor client (editors/nvim/PROTOCOL-NOTES.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.lsp.conftest import OpClient, Starter, write_script

WRITE = [{"tool_calls": [{"name": "write_file",
                          "arguments": {"path": "a.txt", "content": "x\n"}}]},
         {"text": "ok"}]


async def test_client_turn_id_is_echoed_in_turn_started(start: Starter, tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", [{"text": "hi"}]))
    result = await client.call("openprogram/chat", {"text": "hello", "clientTurnId": "c-1"})
    started = await client.wait_event("turn.started")
    assert started["data"]["clientTurnId"] == "c-1"
    assert started["sessionId"] == result["sessionId"]


async def test_empty_list_params_mean_no_params(start: Starter) -> None:
    client = await start()
    assert await client.call("openprogram/sessions", []) == {"sessions": [], "total": 0,
                                                             "hasMore": False}


async def test_fork_from_null_starts_a_new_root(start: Starter, tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json",
                                            [{"text": "one"}, {"text": "two"}]))
    first = await client.call("openprogram/chat", {"text": "first"})
    fork = await client.call("openprogram/fork", {"sessionId": first["sessionId"],
                                                  "fromNodeId": None, "text": "fresh",
                                                  "name": "clean-slate"})
    history = await client.call("openprogram/history", {"sessionId": first["sessionId"]})
    assert [n["text"] for n in history["nodes"]] == ["fresh", "two"]
    branches = await client.call("openprogram/branches", {"sessionId": first["sessionId"]})
    assert {b.get("name") for b in branches["branches"]} >= {"clean-slate"}
    assert fork["status"] == "done"


async def test_timed_out_prompt_emits_permission_withdrawn(start: Starter,
                                                           tmp_path: Path) -> None:
    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        async def _never(params: Any) -> dict[str, Any]:
            await asyncio.sleep(30)
            return {"outcome": "cancelled"}

    client = await start(model=write_script(tmp_path / "s.json", WRITE), setup=setup,
                         init_options={"approvalTimeout": 0.2})
    await client.call("openprogram/chat", {"text": "write"})
    withdrawn = await client.wait_event("permission.withdrawn")
    started = await client.wait_event("tool.started")
    assert withdrawn["data"]["toolCallId"] == started["data"]["toolCallId"]
    assert withdrawn["data"]["reason"] == "timeout"


async def test_checkpoint_ids_accept_unique_prefixes(start: Starter, tmp_path: Path,
                                                     workspace: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", WRITE),
                         init_options={"permissionMode": "bypass"})
    result = await client.call("openprogram/chat", {"text": "write"})
    cid = result["checkpoint"]["id"]
    diff = await client.call("openprogram/checkpointDiff", {"checkpointId": cid[:-2]})
    assert diff["checkpointId"] == cid and "a.txt" in diff["diff"]
