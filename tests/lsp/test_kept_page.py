"""A long session's first history page is answered from the page kept for it, over stdio, and
kept by the server after it read the page the ordinary way (one server: the ordinary read does
not open the session, so the next request is as cold as a fresh server's)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from openprogram_lsp.core.types import Node
from openprogram_lsp.store.page_snapshot import MIN_NODES, SNAPSHOT
from openprogram_lsp.store.session_store import SessionStore
from tests.lsp.conftest import Starter

KEPT = "its kept first page"
"""What the server's log says when it answers from the kept page."""


def _long_session(home: Path, n: int) -> str:
    store = SessionStore(home)
    sid = store.create_session(title="long")
    pred = None
    for i in range(n):
        pred = store.append(sid, Node(id=f"n{i}", role="user" if i % 2 else "assistant",
                                      text=f"message {i} \u00e9", predecessor=pred,
                                      status="done"), advance_head=True).id
    store.append(sid, Node(id="att", role="system", text="attached", caller=f"n{n - 1}",
                           metadata={"kind": "attach"}))
    store.commit_turn(sid, "long")
    return sid


async def _kept_file(path: Path, timeout: float = 20.0) -> bytes:
    """The kept page once the server's background thread wrote it (a bounded wait)."""
    for _ in range(int(timeout / 0.05)):
        if path.exists():
            return path.read_bytes()
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} was not written within {timeout} s")


async def test_the_first_page_is_kept_and_answered_from_until_the_session_changes(
        start: Starter, tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid = _long_session(home, MIN_NODES + 10)
    kept = home / "sessions" / sid / ".git" / SNAPSHOT
    client = await start(model="offline")
    params = {"sessionId": sid, "limit": MIN_NODES}
    read = await client.call("openprogram/history", params)
    assert len(read["nodes"]) == MIN_NODES and read["hasMore"] is True
    assert read["nodes"][-1]["attachments"][0]["text"] == "attached"
    await _kept_file(kept)  # written off the request's path, after it was answered
    log = tmp_path / "server0.log"
    assert KEPT not in log.read_text()
    again = await client.call_with_id("openprogram/history", params, 'odd "id" \u2028')
    assert again == read
    assert log.read_text().count(KEPT) == 1
    other = await client.call("openprogram/history", {"sessionId": sid, "limit": 3})
    assert [n["id"] for n in other["nodes"]] == [f"n{i}" for i in range(MIN_NODES + 7,
                                                                       MIN_NODES + 10)]
    SessionStore(home).update_node(sid, f"n{MIN_NODES + 9}", text="changed elsewhere")
    changed = await client.call("openprogram/history", params)
    assert changed["nodes"][-1]["text"] == "changed elsewhere"
    assert log.read_text().count(KEPT) == 1
    assert json.loads(kept.read_bytes().split(b"\n", 1)[1]) == read  # the old one, unused
    # a turn here: once the session is idle, the page is kept again, ending at the turn
    done = await client.call("openprogram/chat", {"sessionId": sid, "text": "one more"})
    for _ in range(400):  # bounded: the keeper waits 2 s of idleness, then writes
        header = json.loads(kept.read_bytes().split(b"\n", 1)[0])
        if header["head"] == done["assistantNodeId"]:
            break
        await asyncio.sleep(0.05)
    assert header["head"] == done["assistantNodeId"] and header["limit"] == MIN_NODES
    after = await client.call("openprogram/history", params)
    assert after["nodes"][-1]["id"] == done["assistantNodeId"]
    assert log.read_text().count(KEPT) == 1  # the turn opened the session: the index serves
