"""Sessions, history, fork, branches, checkout and nameBranch over stdio (offline model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Starter, write_script


async def test_fork_and_checkout_seen_in_history(start: Starter) -> None:
    client = await start(model="offline")
    first = await client.call("openprogram/chat", {"text": "hello"})
    sid = first["sessionId"]
    second = await client.call("openprogram/chat", {"text": "and again", "sessionId": sid})
    assert second["sessionId"] == sid

    fork = await client.call("openprogram/fork", {"sessionId": sid, "text": "other way",
                                                  "fromNodeId": first["assistantNodeId"],
                                                  "name": "alt"})
    assert fork["status"] == "done"
    history = await client.call("openprogram/history", {"sessionId": sid})
    ids = [n["id"] for n in history["nodes"]]
    assert history["headId"] == fork["headId"]
    assert ids[:2] == [first["userNodeId"], first["assistantNodeId"]]
    assert fork["userNodeId"] in ids and second["userNodeId"] not in ids
    assert [n["role"] for n in history["nodes"]] == ["user", "assistant", "user", "assistant"]

    branches = (await client.call("openprogram/branches", {"sessionId": sid}))["branches"]
    assert len(branches) == 2
    active = [b for b in branches if b["active"]]
    assert [b.get("name") for b in active] == ["alt"]

    moved = await client.call("openprogram/checkout", {"sessionId": sid,
                                                       "headId": second["headId"]})
    assert moved == {"headId": second["headId"], "previousHeadId": fork["headId"]}
    history = await client.call("openprogram/history", {"sessionId": sid})
    ids = [n["id"] for n in history["nodes"]]
    assert second["userNodeId"] in ids and fork["userNodeId"] not in ids

    older = await client.call("openprogram/history", {"sessionId": sid,
                                                      "headId": fork["headId"]})
    assert older["nodes"][-1]["id"] == fork["headId"]

    assert await client.call("openprogram/nameBranch", {"sessionId": sid,
                                                        "headId": second["headId"],
                                                        "name": "main line"}) == {}
    names = {b["headId"]: b.get("name")
             for b in (await client.call("openprogram/branches", {"sessionId": sid}))["branches"]}
    assert names[second["headId"]] == "main line"

    follow = await client.call("openprogram/chat", {"text": "continue", "sessionId": sid})
    history = await client.call("openprogram/history", {"sessionId": sid})
    assert history["nodes"][-2]["id"] == follow["userNodeId"]
    assert history["nodes"][-3]["id"] == second["assistantNodeId"]


async def test_a_fork_runs_with_the_model_it_names(start: Starter, tmp_path: Path) -> None:
    """The model picked in the editor reaches a fork, as it reaches chat; absent: the server's."""
    started = write_script(tmp_path / "started.json", [{"text": "from the started model"}] * 3)
    picked = write_script(tmp_path / "picked.json", [{"text": "from the picked model"}])
    client = await start(model=started)
    first = await client.call("openprogram/chat", {"text": "hello"})
    sid = first["sessionId"]
    assert first["text"] == "from the started model"

    fork = await client.call("openprogram/fork", {"sessionId": sid, "text": "other way",
                                                  "fromNodeId": first["assistantNodeId"],
                                                  "model": picked})
    assert (fork["status"], fork["text"]) == ("done", "from the picked model"), fork
    plain = await client.call("openprogram/fork", {"sessionId": sid, "text": "third way",
                                                   "fromNodeId": first["assistantNodeId"]})
    assert plain["text"] == "from the started model", plain

    with pytest.raises(JsonRpcException) as bad:
        await client.call("openprogram/fork", {"sessionId": sid, "text": "x", "fromNodeId": None,
                                               "model": 7})
    assert bad.value.code == -32602 and "model" in str(bad.value)


async def test_new_root_and_sessions_list(start: Starter) -> None:
    client = await start(model="offline")
    first = await client.call("openprogram/chat", {"text": "hello there"})
    sid = first["sessionId"]
    root = await client.call("openprogram/chat", {"text": "fresh start", "sessionId": sid,
                                                  "branchFrom": None})
    history = await client.call("openprogram/history", {"sessionId": sid})
    assert history["nodes"][0]["id"] == root["userNodeId"]
    assert history["nodes"][0]["predecessor"] is None
    assert history["nodes"][1]["predecessor"] == root["userNodeId"]
    other = await client.call("openprogram/chat", {"text": "second session"})
    sessions = (await client.call("openprogram/sessions", {}))["sessions"]
    assert {s["id"] for s in sessions} == {sid, other["sessionId"]}
    entry = next(s for s in sessions if s["id"] == sid)
    assert entry["title"] == "hello there"
    assert entry["headId"] == root["headId"]
    assert set(entry) >= {"id", "title", "headId", "status", "updatedAt"}
    assert await client.call("openprogram/agents", {"sessionId": sid}) == {"agents": [],
                                                                            "definitions": []}


async def test_unknown_ids_answer_not_found(start: Starter) -> None:
    client = await start(model="offline")
    first = await client.call("openprogram/chat", {"text": "hello"})
    sid = first["sessionId"]
    cases = [
        ("openprogram/history", {"sessionId": "nope"}),
        ("openprogram/history", {"sessionId": sid, "headId": "nope"}),
        ("openprogram/chat", {"text": "x", "sessionId": "nope"}),
        ("openprogram/chat", {"text": "x", "sessionId": sid, "branchFrom": "nope"}),
        ("openprogram/fork", {"sessionId": sid, "fromNodeId": "nope", "text": "x"}),
        ("openprogram/checkout", {"sessionId": sid, "headId": "nope"}),
        ("openprogram/branches", {"sessionId": "nope"}),
        ("openprogram/cancel", {"sessionId": "nope"}),
    ]
    for method, params in cases:
        with pytest.raises(JsonRpcException) as info:
            await client.call(method, params)
        assert info.value.code == -32001, (method, info.value)
        assert "nope" in info.value.message
        assert "Traceback" not in info.value.message


async def test_branches_carry_a_stable_fork_identity(start: Starter) -> None:
    client = await start(model="offline")
    first = await client.call("openprogram/chat", {"text": "hello"})
    sid = first["sessionId"]
    await client.call("openprogram/chat", {"text": "list .", "sessionId": sid})
    fork = await client.call("openprogram/fork", {"sessionId": sid, "text": "list .",
                                                  "fromNodeId": first["assistantNodeId"]})

    def by_fork(rows: list[dict[str, object]]) -> dict[object, dict[str, object]]:
        return {r.get("forkId"): r for r in rows}

    rows = by_fork((await client.call("openprogram/branches", {"sessionId": sid}))["branches"])
    # same preview on both branches, yet each has its own identity
    assert set(rows) == {None, fork["userNodeId"]}
    forked = rows[fork["userNodeId"]]
    assert forked["forkedFrom"] == first["assistantNodeId"]
    assert forked["startPreview"] == "list ." and forked["startedAt"]
    # growing either branch, or forking again inside the fork, keeps both identities
    await client.call("openprogram/chat", {"text": "more", "sessionId": sid})
    again = await client.call("openprogram/fork", {"sessionId": sid, "text": "third way",
                                                   "fromNodeId": fork["userNodeId"]})
    rows = by_fork((await client.call("openprogram/branches", {"sessionId": sid}))["branches"])
    assert set(rows) == {None, fork["userNodeId"], again["userNodeId"]}
