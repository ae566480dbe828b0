"""One session across front ends: made by the LSP server, loaded and continued over ACP."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import text_block
from tests.acp.client import RecordingClient, subprocess_agent
from tests.lsp.conftest import Starter, start  # noqa: F401  (the real LSP server fixture)


async def test_lsp_session_is_listed_loaded_replayed_and_continued_over_acp(
        start: Starter, home: Path, workspace: Path) -> None:  # noqa: F811
    (workspace / "seen.txt").write_text("x\n")
    lsp = await start()
    made = await lsp.call("openprogram/chat", {"text": "list ."})
    sid = made["sessionId"]
    assert made["status"] == "done"

    client = RecordingClient(answer="allow_once")
    async with subprocess_agent(client, home, workspace) as (conn, _proc):
        listed = await conn.list_sessions(cwd=str(workspace))
        assert sid in [s.session_id for s in listed.sessions]
        await conn.load_session(cwd=str(workspace), session_id=sid)
        replayed = list(client.updates())
        resp = await asyncio.wait_for(conn.prompt(
            session_id=sid, prompt=[text_block("write from-zed.txt\nhi\n")]), 120)
    assert resp.stop_reason == "end_turn"
    kinds = [u.session_update for u in replayed]
    assert kinds[0] == "user_message_chunk" and replayed[0].content.text == "list ."
    call = next(u for u in replayed if u.session_update == "tool_call")
    assert call.status == "completed" and call.kind == "read"
    assert "seen.txt" in call.content[0].content.text
    assert (workspace / "from-zed.txt").read_text() == "hi\n"

    history = await lsp.call("openprogram/history", {"sessionId": sid})  # the LSP side sees it
    texts = [n["text"] for n in history["nodes"] if n["role"] == "user"]
    assert texts == ["list .", "write from-zed.txt\nhi\n"]
