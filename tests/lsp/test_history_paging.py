"""``openprogram/history`` a page at a time and ``openprogram/sessions`` paged and filtered,
over stdio (offline model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from openprogram_lsp.lsp import wire
from tests.lsp.conftest import Starter


async def test_history_pages_back_to_the_root(start: Starter) -> None:
    client = await start(model="offline")
    sid = (await client.call("openprogram/chat", {"text": "turn 0"}))["sessionId"]
    for n in range(1, 4):
        await client.call("openprogram/chat", {"text": f"turn {n}", "sessionId": sid})
    whole = await client.call("openprogram/history", {"sessionId": sid})
    assert len(whole["nodes"]) == 8 and whole["hasMore"] is False
    declared = wire.HistoryResult.model_validate(whole).wire()  # the declared shape
    for node in declared["nodes"]:
        node.setdefault("predecessor", None)
        node.setdefault("caller", None)
    assert declared == whole
    pages, before = [], None
    for _ in range(5):
        params = {"sessionId": sid, "limit": 3, **({"beforeNodeId": before} if before else {})}
        page = await client.call("openprogram/history", params)
        assert page["headId"] == whole["headId"]
        pages.insert(0, [n["id"] for n in page["nodes"]])
        if not page["hasMore"]:
            break
        before = page["nodes"][0]["id"]
    assert [len(p) for p in pages] == [2, 3, 3]
    assert [i for p in pages for i in p] == [n["id"] for n in whole["nodes"]]
    older = await client.call("openprogram/history", {
        "sessionId": sid, "headId": whole["nodes"][3]["id"], "limit": 2})
    assert [n["id"] for n in older["nodes"]] == [n["id"] for n in whole["nodes"][2:4]]
    assert older["hasMore"] is True


async def test_bad_paging_params_answer_invalid_params(start: Starter) -> None:
    client = await start(model="offline")
    sid = (await client.call("openprogram/chat", {"text": "hello"}))["sessionId"]
    for params, field in [({"limit": 0}, "limit"), ({"limit": "3"}, "limit"),
                          ({"beforeNodeId": "nope"}, "beforeNodeId")]:
        with pytest.raises(JsonRpcException) as info:
            await client.call("openprogram/history", {"sessionId": sid, **params})
        assert info.value.code == -32602 and field in info.value.message, params
    assert (await client.call("openprogram/history", {"sessionId": sid}))["nodes"]


async def test_sessions_page_and_filter_by_workspace(start: Starter, tmp_path: Path,
                                                     workspace: Path) -> None:
    client = await start(model="offline")
    made = [(await client.call("openprogram/chat", {"text": f"s{n}"}))["sessionId"]
            for n in range(3)]
    listed = await client.call("openprogram/sessions", {})
    assert [s["id"] for s in listed["sessions"]] == made[::-1]
    assert listed["total"] == 3 and listed["hasMore"] is False
    first = await client.call("openprogram/sessions", {"limit": 2})
    rest = await client.call("openprogram/sessions", {"limit": 2, "offset": 2})
    assert [s["id"] for s in first["sessions"] + rest["sessions"]] == made[::-1]
    assert first["hasMore"] is True and rest["hasMore"] is False
    mine = await client.call("openprogram/sessions", {"workspace": str(workspace)})
    assert mine["total"] == 3
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert (await client.call("openprogram/sessions", {"workspace": str(other)}))["total"] == 0
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/sessions", {"offset": -1})
    assert info.value.code == -32602 and "offset" in info.value.message


async def test_a_limit_past_the_largest_page_gets_that_page_and_has_more(
        start: Starter, tmp_path: Path) -> None:
    from openprogram_lsp.core.types import Node
    from openprogram_lsp.store.session_store import SessionStore

    store = SessionStore(tmp_path / "home")
    sid = store.create_session(title="long")
    pred = None
    total = wire.HISTORY_MAX + 30
    for i in range(total):
        pred = store.append(sid, Node(id=f"n{i:05d}", role="user" if i % 2 == 0 else "assistant",
                                      text=f"m{i}", predecessor=pred, status="done"),
                            advance_head=True).id
    store.commit_turn(sid, "t")
    client = await start(model="offline")
    page = await client.call("openprogram/history", {"sessionId": sid, "limit": 10_000})
    assert len(page["nodes"]) == wire.HISTORY_MAX and page["hasMore"] is True
    assert page["nodes"][-1]["id"] == f"n{total - 1:05d}"
    rest = await client.call("openprogram/history", {
        "sessionId": sid, "limit": 10_000, "beforeNodeId": page["nodes"][0]["id"]})
    assert [n["id"] for n in rest["nodes"]] == [f"n{i:05d}" for i in range(30)]
    assert rest["hasMore"] is False
