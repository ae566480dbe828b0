"""Lifecycle: configuration changes, logging, shutdown during a turn, TCP transport."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.lsp.conftest import OpClient, Starter, close_client, write_script

WRITE = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "c.txt", "content": "c\n"}}]},
    {"text": "Done."},
]


def _record_permissions(client: OpClient) -> None:
    @client.feature("openprogram/requestPermission")
    def _permission(params: Any) -> dict[str, Any]:
        client.permission_requests.append(params)
        return {"outcome": "selected", "optionId": "reject_once"}


async def test_did_change_configuration_updates_mode(start: Starter, tmp_path: Path,
                                                     workspace: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", WRITE),
                         setup=_record_permissions, init_options={"permissionMode": "ask"})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"openprogram": {"permissionMode": "accept-edits"}}))
    result = await client.call("openprogram/chat", {"text": "write c.txt"})
    assert result["status"] == "done"
    assert client.permission_requests == []
    assert (workspace / "c.txt").read_text() == "c\n"


async def test_configured_rules_and_bad_options(start: Starter, tmp_path: Path,
                                                workspace: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", WRITE),
                         setup=_record_permissions,
                         init_options={"rules": [{"tool": "write_file", "decision": "allow"}],
                                       "approvalTimeout": "soon"})
    for _ in range(500):
        if client.messages:
            break
        await asyncio.sleep(0.01)
    assert any("approvalTimeout" in m.message for m in client.messages)
    result = await client.call("openprogram/chat", {"text": "write c.txt"})
    assert result["status"] == "done"
    assert client.permission_requests == []
    assert (workspace / "c.txt").exists()
    assert any("ready" in m.message for m in client.log_messages)


SLOW = [{"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 30"}}]},
        {"text": "unused"}]


async def test_shutdown_cancels_running_turn_and_store_stays_consistent(
        start: Starter, tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", SLOW),
                         args=["--permission-mode", "bypass"])
    pending = asyncio.ensure_future(client.call("openprogram/chat", {"text": "sleep"}))
    started = await client.wait_event("tool.started")
    await asyncio.wait_for(client.shutdown_session(), 20)
    result = await asyncio.wait_for(pending, 5)
    assert result["status"] == "cancelled"
    await asyncio.wait_for(client.stop(), 30)

    again = await start(model="offline")
    history = await again.call("openprogram/history", {"sessionId": started["sessionId"]})
    # the editor stopped the server, not the user the turn: recorded interrupted (the chat
    # request itself still answered "cancelled", the wire's word for a turn cut short)
    assert history["nodes"][-1]["status"] == "interrupted"
    assert history["nodes"][-1]["text"].endswith("[interrupted]")
    assert (await again.call("openprogram/sessions", {}))["sessions"][0]["status"] == "idle"


async def test_empty_configuration_keeps_initialization_options(start: Starter,
                                                                tmp_path: Path,
                                                                workspace: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", WRITE),
                         setup=_record_permissions,
                         init_options={"permissionMode": "accept-edits"})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"openprogram": {"questionTimeout": 5}}))
    result = await client.call("openprogram/chat", {"text": "write c.txt"})
    assert result["status"] == "done"
    assert client.permission_requests == []
    assert (workspace / "c.txt").exists()


async def test_a_server_whose_test_setup_failed_is_stopped_not_waited_for(start: Starter) -> None:
    started: list[OpClient] = []

    def broken(client: OpClient) -> None:  # a test's setup callback that raises
        started.append(client)
        raise RuntimeError("setup failed")

    with pytest.raises(RuntimeError, match="setup failed"):
        await start(setup=broken)
    (client,) = started
    assert await close_client(client) == ""  # not "did not exit within 30 s; killed"
    assert client._server is not None and client._server.returncode is not None
