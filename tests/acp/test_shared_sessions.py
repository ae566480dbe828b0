"""One session across front ends: made by the LSP server, loaded and continued over ACP, and
forked on either side: the same branches in both."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import text_block
from tests.acp.client import RecordingClient, subprocess_agent
from tests.lsp.conftest import Starter, start  # noqa: F401  (the real LSP server fixture)


async def test_lsp_session_is_listed_loaded_continued_and_forked_on_either_side(
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
        history = await lsp.call("openprogram/history", {"sessionId": sid})  # the LSP side
        texts = [n["text"] for n in history["nodes"] if n["role"] == "user"]
        assert texts == ["list .", "write from-zed.txt\nhi\n"]
        # a fork made over ACP is the LSP editor's branch, named and active
        first_reply = made["assistantNodeId"]
        fork = await conn.fork_session(cwd=str(workspace), session_id=sid,
                                       openprogram={"name": "zed-try", "fromNodeId": first_reply})
        await asyncio.wait_for(conn.prompt(session_id=fork.session_id,
                                           prompt=[text_block("list .")]), 120)
        branches = (await lsp.call("openprogram/branches", {"sessionId": sid}))["branches"]
        assert [(b.get("name"), b["length"]) for b in branches if b["active"]] \
            == [("zed-try", 4)]
        # and a branch the LSP editor forks is listed to the ACP client, active
        await lsp.call("openprogram/fork", {"sessionId": sid, "fromNodeId": first_reply,
                                            "text": "list .", "name": "vscode-try"})
        await asyncio.wait_for(conn.prompt(session_id=sid,
                                           prompt=[text_block("/branches")]), 120)
        shown = client.text()
        assert "* vscode-try  (4 messages)" in shown and "  zed-try  (4 messages)" in shown
    assert resp.stop_reason == "end_turn"
    kinds = [u.session_update for u in replayed]
    assert kinds[0] == "user_message_chunk" and replayed[0].content.text == "list ."
    call = next(u for u in replayed if u.session_update == "tool_call")
    assert call.status == "completed" and call.kind == "read"
    assert "seen.txt" in call.content[0].content.text
    assert (workspace / "from-zed.txt").read_text() == "hi\n"
