"""The first checkpoint of a big folder is taken in the background once the editor names it,
reported with ``$/progress`` (create, begin, report, end), and a turn that edits meanwhile is
still checkpointed exactly. Real transport, real git."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from openprogram_lsp.lsp.checkpoint_warmup import CheckpointWarmup
from openprogram_lsp.store.checkpoints.store import CheckpointStore
from tests.lsp.conftest import OpClient, Starter, write_script

FILES = 2_100  # over ``stage.BULK_ADD``: the walk hashes them into one pack, with progress
WAIT = 60.0


def _tree(ws: Path) -> None:
    for d in range(FILES // 100):
        (ws / f"pkg{d:02d}").mkdir()
        for f in range(100):
            (ws / f"pkg{d:02d}" / f"f{f:03d}.txt").write_text(f"{d}.{f}\n")
    (ws / "target.txt").write_text("before\n")


def _kinds(client: OpClient) -> dict[str, list[Any]]:
    return {t: list(v) for t, v in client.progress_reports.items()
            if str(t).startswith("openprogram-checkpoint-")}


async def _until(check: Any, what: str) -> Any:
    for _ in range(int(WAIT / 0.01)):
        got = check()
        if got:
            return got
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def _allow(client: OpClient) -> None:
    @client.feature("openprogram/requestPermission")
    def _permission(params: Any) -> dict[str, Any]:
        return {"outcome": "selected", "optionId": "allow_once"}


async def test_the_first_checkpoint_walks_in_the_background_with_progress(
        start: Starter, workspace: Path, tmp_path: Path) -> None:
    _tree(workspace)
    script = write_script(tmp_path / "s.json", [
        {"text": "Editing.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "target.txt", "content": "after\n"}}]},
        {"text": "Done."}])
    client = await start(model=script, progress=True, setup=_allow)
    token = await _until(lambda: next(iter(_kinds(client)), None), "a checkpoint progress")
    # during the walk: the user saves a file in the editor, then starts a turn that edits
    (workspace / "pkg00" / "f000.txt").write_text("saved by the user\n")
    await client.wait_event("file.changed", lambda e: any(
        c["path"] == "pkg00/f000.txt" for c in e["data"]["changes"]), timeout=WAIT)
    result = await client.call("openprogram/chat", {"text": "edit target.txt"})
    assert result["status"] == "done"
    reports = await _until(
        lambda: (r := _kinds(client)[token]) and r[-1].kind == "end" and r, "the progress end")
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
    assert set(kinds[1:-1]) == {"report"}
    percents = [r.percentage for r in reports if r.kind == "report"]
    assert percents == sorted(percents) and percents[-1] == 100
    assert f"{FILES + 1:,} files" in (reports[-1].message or "")

    listed = await client.call("openprogram/checkpoints", {"sessionId": result["sessionId"]})
    turn = next(c for c in listed["checkpoints"] if c["kind"] == "turn")
    baseline = next(c for c in listed["checkpoints"] if c["kind"] == "baseline")
    assert [f["path"] for f in turn["files"]] == ["target.txt"]  # the save is not the turn's
    diff = await client.call("openprogram/checkpointDiff", {"checkpointId": turn["id"]})
    assert "-before" in diff["diff"] and "+after" in diff["diff"]
    # the baseline holds the user's save: restoring it there writes nothing
    out = await client.call("openprogram/restore", {"checkpointId": baseline["id"],
                                                    "paths": ["pkg00/f000.txt"]})
    assert out["restored"] == []
    assert (workspace / "pkg00" / "f000.txt").read_text() == "saved by the user\n"


async def test_a_small_folder_shows_no_progress(start: Starter, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    client = await start(model="offline", progress=True)
    listed = await client.call("openprogram/checkpoints", {})
    assert listed == {"checkpoints": []}  # the walk records nothing visible by itself
    assert _kinds(client) == {}


async def test_a_first_edit_that_starts_the_walk_reports_it(
        start: Starter, workspace: Path, tmp_path: Path) -> None:
    _tree(workspace)
    script = write_script(tmp_path / "s.json", [
        {"text": "Editing.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "target.txt", "content": "after\n"}}]},
        {"text": "Done."}])
    client = await start(model=script, progress=True, setup=_allow)
    # at once, before the background walk starts: the edit's baseline walks the tree
    result = await client.call("openprogram/chat", {"text": "edit target.txt"})
    # (its checkpoint is committed after the walk when the turn ended before it)
    assert result["status"] == "done" and (result["checkpoint"] or result["checkpointPending"])
    token = await _until(lambda: next(iter(_kinds(client)), None), "a checkpoint progress")
    reports = await _until(
        lambda: (r := _kinds(client)[token]) and r[-1].kind == "end" and r, "the progress end")
    assert reports[0].kind == "begin" and "report" in [r.kind for r in reports]
    assert f"{FILES + 1:,} files recorded" == reports[-1].message


async def test_files_a_first_edit_hashed_get_a_progress_however_soon_the_walk_ends(
        tmp_path: Path) -> None:
    """The edit's walk hashed the files before the warm-up's began: the warm-up's
    ``prepare`` has nothing to do and may be done before its result is looked at. The
    progress shows all the same (whether it did was a race with that no-op's thread; the
    test above then waited for a progress that never came)."""
    created: list[str] = []
    begun: list[str] = []

    class Progress:
        async def create_async(self, token: str) -> None:
            created.append(token)

        def begin(self, token: str, value: object) -> None:
            begun.append(token)

    server = SimpleNamespace(work_done_progress=Progress(), settings=SimpleNamespace(
        client=SimpleNamespace(work_done_progress=True)))
    hashing = asyncio.Event()
    hashing.set()  # (by the edit's walk, through the store's progress)
    work: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    work.set_result(False)  # nothing left to walk
    token = await CheckpointWarmup(server)._show_when_slow(work, hashing, tmp_path)
    assert token is not None and created == begun == [token]


async def test_a_turn_that_ends_during_the_walk_does_not_wait_for_it(
        start: Starter, workspace: Path, tmp_path: Path) -> None:
    """The walk is held by a second process holding the store's lock (as a CLI run or another
    editor's server would): the turn returns at once with its checkpoint pending, history
    names it, a second turn of the session is pending after it, a diff asked for meanwhile
    waits, and once the walk ran each checkpoint comes by ``checkpoint.created`` with exactly
    its turn's change (a save made after the turn's end is not the turn's), and the first
    turn's undo works."""
    _tree(workspace)  # over the entries a turn's end would wait the walk of
    script = write_script(tmp_path / "s.json", [
        {"text": "Editing.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "target.txt", "content": "after\n"}}]},
        {"text": "Done."},
        {"text": "More.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "second.txt", "content": "second\n"}}]},
        {"text": "Done again."}])
    other = CheckpointStore(workspace, home=tmp_path / "home")  # the second process's part
    other.lock.acquire()
    try:
        client = await start(model=script, setup=_allow)
        result = await asyncio.wait_for(
            client.call("openprogram/chat", {"text": "edit target.txt"}), WAIT)
        assert result["status"] == "done" and result["checkpoint"] is None
        pending = result["checkpointPending"]
        assert pending
        history = await client.call("openprogram/history", {"sessionId": result["sessionId"]})
        reply = next(n for n in history["nodes"] if n["id"] == result["assistantNodeId"])
        assert reply["metadata"]["checkpointId"] == pending
        again = await asyncio.wait_for(client.call("openprogram/chat", {
            "text": "write second.txt", "sessionId": result["sessionId"]}), WAIT)
        assert again["checkpoint"] is None and again["checkpointPending"] not in (None, pending)
        diff = asyncio.ensure_future(
            client.call("openprogram/checkpointDiff", {"checkpointId": pending}))
        (workspace / "pkg00" / "f000.txt").write_text("saved after the turn\n")
        await client.wait_event("file.changed", lambda e: any(
            c["path"] == "pkg00/f000.txt" for c in e["data"]["changes"]), timeout=WAIT)
        assert not diff.done()  # it waits for the walk and the pending commit
        assert not any(e["type"] == "checkpoint.created" for e in client.events)
    finally:
        other.lock.release()
    created = await client.wait_event("checkpoint.created",
                                      lambda e: e["data"]["id"] == pending, timeout=WAIT)
    assert created["turnId"] == result["assistantNodeId"]
    assert [(f["path"], f["status"]) for f in created["data"]["files"]] == \
        [("target.txt", "modified")]
    second = await client.wait_event(
        "checkpoint.created", lambda e: e["data"]["id"] == again["checkpointPending"],
        timeout=WAIT)
    assert [f["path"] for f in second["data"]["files"]] == ["second.txt"]
    assert second["data"]["parentId"] == pending  # committed after the first, on top of it
    got = await asyncio.wait_for(diff, WAIT)
    assert "-before" in got["diff"] and "+after" in got["diff"] and "f000" not in got["diff"]
    out = await client.call("openprogram/restore", {"checkpointId": pending, "undo": True})
    assert out["restored"] == ["target.txt"]
    assert (workspace / "target.txt").read_text() == "before\n"
    assert (workspace / "pkg00" / "f000.txt").read_text() == "saved after the turn\n"
