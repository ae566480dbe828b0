"""Neovim attaches to a running ``serve --tcp`` (``opts.connect``) and shares a live session."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.editors.nvim import runner
from tests.lsp.tcp_helpers import Client, start_tcp_server, stop_tcp_server

pytestmark = [
    pytest.mark.timeout(180),
]


async def test_neovim_drives_a_session_another_editor_watches(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    server = await start_tcp_server(home)
    watcher = await Client.connect(server.port)
    try:
        assert "result" in await watcher.initialize(server.token, ws)
        sid = (await watcher.call("openprogram/chat", {"text": "hello"}))["sessionId"]
        out = await asyncio.to_thread(
            runner.run_scenario, "tcp_attach", ws, model="offline", home=home,
            extra_env={"OP_CONNECT": str(server.port), "OP_SESSION": sid})
        assert out["init_token"] is True
        turn = out["result"]["assistantNodeId"]
        assert out["result"]["sessionId"] == sid and out["result"]["status"] == "done"
        await watcher.wait_event("turn.finished", lambda e: e.get("turnId") == turn)
        in_nvim = [e["type"] for e in out["seen"] if e.get("turn") == turn]
        in_watcher = [e["type"] for e in watcher.events if e.get("turnId") == turn]
        assert in_nvim == in_watcher
        assert {"turn.started", "tool.started", "tool.finished", "turn.finished"} <= set(in_nvim)
        assert server.alive  # Neovim leaving ended its connection only
        assert (await watcher.call("openprogram/sessions", {}))["sessions"]
    finally:
        await watcher.close()
        await stop_tcp_server(server)
