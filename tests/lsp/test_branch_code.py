"""Code that follows the conversation over stdio: fork at turn 3 of 6 with ``restoreCode``,
switch back and forth, undo each switch, and compare the two branches (real git store)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from openprogram_lsp.store.checkpoints.shadow import workspace_key
from tests.lsp.conftest import OpClient, Starter

MAIN = [("a.txt", "one\n"), ("b.txt", "two\n"), ("a.txt", "one\nthree\n"),
        ("c.txt", "four\n"), ("a.txt", "one\nthree\nfive\n"), ("b.txt", "two\nsix\n")]
ALT = [("a.txt", "one\nalt\n"), ("d.txt", "alt file\n")]


def _git(store: Path, *args: str, index: Path | None = None, ws: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_DIR=str(store), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    if index is not None and ws is not None:
        env.update(GIT_INDEX_FILE=str(index), GIT_WORK_TREE=str(ws))
    return subprocess.run(["git", *args], env=env, check=True, capture_output=True,
                          text=True).stdout


def _commit_of(store: Path, checkpoint_id: str) -> str:
    out = _git(store, "log", "--format=%H %(trailers:key=Openprogram-Checkpoint,valueonly)",
               "refs/heads/checkpoints")
    for line in out.splitlines():
        sha, _, cid = line.partition(" ")
        if cid.strip() == checkpoint_id:
            return sha
    raise AssertionError(f"no commit for {checkpoint_id}")


def _workspace_tree(store: Path, ws: Path, tmp: Path) -> str:
    """The tree git computes for the workspace now (a fresh index, the store's excludes)."""
    index = tmp / "probe-index"
    index.unlink(missing_ok=True)
    _git(store, "add", "-A", index=index, ws=ws)
    return _git(store, "write-tree", index=index, ws=ws).strip()


def _tree(store: Path, checkpoint_id: str) -> str:
    return _git(store, "rev-parse", _commit_of(store, checkpoint_id) + "^{tree}").strip()


async def _say(client: OpClient, sid: str | None, path: str, text: str) -> dict[str, Any]:
    params: dict[str, Any] = {"text": f"write {path}\n{text}"}
    if sid:
        params["sessionId"] = sid
    result: dict[str, Any] = await client.call("openprogram/chat", params)
    assert result["status"] == "done", result
    return result


async def test_fork_switch_undo_and_compare(start: Starter, tmp_path: Path,
                                            workspace: Path) -> None:
    client = await start(model="offline", args=["--permission-mode", "bypass"])
    turns: list[dict[str, Any]] = []
    sid = None
    for path, text in MAIN:
        turns.append(await _say(client, sid, path, text))
        sid = turns[0]["sessionId"]
    assert sid is not None
    store = tmp_path / "home" / "checkpoints" / workspace_key(workspace) / "git"
    main_head = turns[-1]["headId"]
    main_cp = turns[-1]["checkpoint"]["id"]

    fork = await client.call("openprogram/fork", {
        "sessionId": sid, "fromNodeId": turns[2]["assistantNodeId"], "name": "retry",
        "restoreCode": True, "text": f"write {ALT[0][0]}\n{ALT[0][1]}"})
    assert fork["status"] == "done"
    assert fork["codeRestore"]["codeCheckpointId"] == turns[2]["checkpoint"]["id"]
    assert not (workspace / "c.txt").exists()  # turn 4 is not on the fork's line
    assert (workspace / "b.txt").read_text() == "two\n"
    alt = await _say(client, sid, *ALT[1])
    alt_head, alt_cp = alt["headId"], alt["checkpoint"]["id"]
    assert _workspace_tree(store, workspace, tmp_path) == _tree(store, alt_cp)

    rows = {b["headId"]: b for b in
            (await client.call("openprogram/branches", {"sessionId": sid}))["branches"]}
    assert rows[main_head]["codeCheckpointId"] == main_cp and rows[main_head]["codeDiffers"]
    assert rows[alt_head]["codeCheckpointId"] == alt_cp and not rows[alt_head]["codeDiffers"]

    for target, cp, other, other_cp in ((main_head, main_cp, alt_head, alt_cp),
                                        (alt_head, alt_cp, main_head, main_cp)) * 2:
        moved = await client.call("openprogram/checkout", {
            "sessionId": sid, "headId": target, "restoreCode": True})
        assert moved["headId"] == target and moved["previousHeadId"] == other
        assert moved["codeCheckpointId"] == cp
        assert _workspace_tree(store, workspace, tmp_path) == _tree(store, cp)
        # undo the switch: files back, then the head
        undo = await client.call("openprogram/restore",
                                 {"checkpointId": moved["safetyCheckpointId"]})
        assert undo["restored"]
        await client.call("openprogram/checkout", {"sessionId": sid,
                                                   "headId": moved["previousHeadId"]})
        assert _workspace_tree(store, workspace, tmp_path) == _tree(store, other_cp)
        # and redo it for the next round
        await client.call("openprogram/checkout", {"sessionId": sid, "headId": target,
                                                   "restoreCode": True})
        assert _workspace_tree(store, workspace, tmp_path) == _tree(store, cp)

    # without restoreCode nothing on disk changes
    before = _workspace_tree(store, workspace, tmp_path)
    await client.call("openprogram/checkout", {"sessionId": sid, "headId": main_head})
    assert _workspace_tree(store, workspace, tmp_path) == before

    diff = await client.call("openprogram/branchDiff", {
        "sessionId": sid, "fromHeadId": main_head, "toHeadId": alt_head})
    assert (diff["fromCheckpointId"], diff["toCheckpointId"]) == (main_cp, alt_cp)
    expected = _git(store, "diff", "--no-color", "--full-index", "--no-renames",
                    _commit_of(store, main_cp), _commit_of(store, alt_cp))
    assert diff["diff"] == expected
    files = {f["path"]: f for f in diff["files"]}
    assert sorted(files) == ["a.txt", "b.txt", "c.txt", "d.txt"]
    assert files["a.txt"]["before"] == "one\nthree\nfive\n"
    assert files["a.txt"]["after"] == "one\nalt\n"
    assert files["c.txt"]["status"] == "deleted" and files["d.txt"]["status"] == "added"
    one = await client.call("openprogram/branchDiff", {
        "sessionId": sid, "fromHeadId": main_head, "toHeadId": alt_head, "path": "b.txt"})
    assert [f["path"] for f in one["files"]] == ["b.txt"]

    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/branchDiff", {
            "sessionId": sid, "fromHeadId": main_head, "toHeadId": alt_head, "path": "../x"})
    assert info.value.code != -32603
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/branchDiff", {
            "sessionId": sid, "fromHeadId": "nope", "toHeadId": alt_head})
    assert "fromHeadId" in info.value.message


async def test_a_session_without_edits_switches_nothing(start: Starter,
                                                        workspace: Path) -> None:
    (workspace / "keep.txt").write_text("mine\n")
    client = await start(model="offline")
    first = await client.call("openprogram/chat", {"text": "hello"})
    sid = first["sessionId"]
    second = await client.call("openprogram/fork", {
        "sessionId": sid, "fromNodeId": first["userNodeId"], "text": "again",
        "restoreCode": True})
    assert second["status"] == "done"
    moved = await client.call("openprogram/checkout", {
        "sessionId": sid, "headId": first["headId"], "restoreCode": True})
    assert moved["restored"] == [] and "codeCheckpointId" not in moved
    assert (workspace / "keep.txt").read_text() == "mine\n"
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/branchDiff", {
            "sessionId": sid, "fromHeadId": first["headId"], "toHeadId": second["headId"]})
    assert "no code state" in info.value.message


async def test_a_switch_keeps_the_files_the_user_chose_and_switches_the_rest(
        start: Starter, workspace: Path) -> None:
    client = await start(model="offline", args=["--permission-mode", "bypass"])
    first = await _say(client, None, "a.txt", "one\n")
    sid = first["sessionId"]
    main = await _say(client, sid, "b.txt", "two\n")
    fork = await client.call("openprogram/fork", {
        "sessionId": sid, "fromNodeId": first["assistantNodeId"], "restoreCode": True,
        "text": "write a.txt\nalt\n"})
    assert fork["status"] == "done" and not (workspace / "b.txt").exists()
    (workspace / "a.txt").write_text("mine\n")  # the user's own change since the fork's turn
    with pytest.raises(JsonRpcException) as info:  # outside the workspace: refused, nothing written
        await client.call("openprogram/checkout", {
            "sessionId": sid, "headId": main["headId"], "restoreCode": True,
            "keepPaths": ["../outside.txt"]})
    assert info.value.code != -32603
    assert not (workspace / "b.txt").exists()
    moved = await client.call("openprogram/checkout", {
        "sessionId": sid, "headId": main["headId"], "restoreCode": True, "keepPaths": ["a.txt"]})
    assert (workspace / "a.txt").read_text() == "mine\n"  # kept
    assert (workspace / "b.txt").read_text() == "two\n"  # the rest switched
    assert moved["skipped"] == ["a.txt"] and moved["restored"] == ["b.txt"]
    # the safety checkpoint holds everything as it was: undo brings the fork's code back
    await client.call("openprogram/restore", {"checkpointId": moved["safetyCheckpointId"]})
    assert not (workspace / "b.txt").exists() and (workspace / "a.txt").read_text() == "mine\n"
