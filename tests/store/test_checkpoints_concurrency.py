"""Checkpoint store: two sessions on one workspace, from threads and from two processes."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from tests.store._cp_helpers import files_of, make_workspace, open_store


def test_two_sessions_interleaving_turns_from_threads(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=True)
    store = open_store(ws, tmp_path / "home")
    turns = 12
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def session(sid: str) -> None:
        try:
            store.ensure_baseline(sid)
            barrier.wait()
            for i in range(turns):
                with store.turn_lock():  # the dispatcher holds this for the whole turn
                    path = f"{sid}/file{i}.txt"
                    (ws / sid).mkdir(exist_ok=True)
                    (ws / path).write_text(f"{sid} {i}\n")
                    store.note_paths([path])
                    cp = store.commit_turn(sid, f"{sid}-t{i}", "m")
                    assert cp is not None and files_of(cp) == {(path, "added")}
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(sid,)) for sid in ("alpha", "beta")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    for sid in ("alpha", "beta"):
        mine = [c for c in store.list(sid) if c.kind == "turn"]
        assert len(mine) == turns
        for c in mine:
            assert c.turn_id is not None and c.turn_id.startswith(sid)
            assert all(f.path.startswith(sid + "/") for f in c.files)
    chain = store.list()
    assert len(chain) == 2 * turns + 2
    # a linear chain: each checkpoint's parent is the one before it
    for newer, older in itertools.pairwise(chain):
        assert newer.parent_id == older.id


def test_concurrent_commits_without_turn_lock_lose_nothing(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    errors: list[BaseException] = []

    def writer(sid: str) -> None:
        try:
            for i in range(15):
                path = f"{sid}-{i}.txt"
                (ws / path).write_text("x\n")
                store.note_paths([path])
                store.commit_turn(sid, f"{sid}{i}", "m")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(s,)) for s in ("a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    recorded = {f.path for c in store.list() for f in c.files}
    assert recorded == {f"{s}-{i}.txt" for s in "abc" for i in range(15)}


def test_two_processes_share_one_store(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=True)
    home = tmp_path / "home"
    script = textwrap.dedent(f"""
        import pathlib, sys
        from openprogram_lsp.store.checkpoints import CheckpointStore, CheckpointConfig
        ws = pathlib.Path({str(ws)!r})
        store = CheckpointStore(ws, home=pathlib.Path({str(home)!r}), config=CheckpointConfig())
        sid = sys.argv[1]
        with store.turn_lock():  # as turns do: else it could record the other's pending file
            store.ensure_baseline(sid)
        for i in range(10):
            with store.turn_lock():
                p = f"{{sid}}-{{i}}.txt"
                (ws / p).write_text(p)
                store.note_paths([p])
                cp = store.commit_turn(sid, f"{{sid}}-{{i}}", "m")
                assert [f.path for f in cp.files] == [p], cp
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, sid]) for sid in ("p1", "p2")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    store = open_store(ws, home)
    for sid in ("p1", "p2"):
        turns = [c for c in store.list(sid) if c.kind == "turn"]
        assert sorted(f.path for c in turns for f in c.files) == sorted(
            f"{sid}-{i}.txt" for i in range(10))


def test_two_store_instances_alternating_keep_the_index_true(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    first, second = open_store(ws, tmp_path / "home"), open_store(ws, tmp_path / "home")
    first.ensure_baseline("a")
    second.ensure_baseline("b")
    for i in range(6):
        store, sid = (first, "a") if i % 2 == 0 else (second, "b")
        (ws / f"f{i}.txt").write_text(f"{i}\n")
        (ws / "src" / "main.py").write_text(f"v{i}\n")
        store.note_paths([f"f{i}.txt", "src/main.py"])
        cp = store.commit_turn(sid, f"t{i}", "m")
        assert cp is not None and files_of(cp) == {(f"f{i}.txt", "added"),
                                                   ("src/main.py", "modified")}
    head_tree = first.repo.git(["rev-parse", "refs/heads/checkpoints^{tree}"]).strip()
    third = open_store(ws, tmp_path / "home")
    assert third.commit_turn("c", "t", "m", full_scan=True) is None  # nothing unrecorded
    third.stager.flush()  # the index plus the deferred entries equals the head tree
    assert third.repo.git(["write-tree"]).strip() == head_tree


async def test_two_sessions_as_coroutines_on_one_loop(tmp_path: Path) -> None:
    import asyncio

    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")

    async def session(sid: str) -> None:
        for i in range(6):
            async with store.turn_guard():  # the whole turn: edits, then the checkpoint
                for part in range(3):  # a turn that awaits between its edits
                    path = f"{sid}-{i}-{part}.txt"
                    (ws / path).write_text("x\n")
                    store.note_paths([path])
                    await asyncio.sleep(0.001)
                cp = await asyncio.to_thread(store.commit_turn, sid, f"{sid}{i}", "m")
                assert cp is not None
                assert {f.path for f in cp.files} == {f"{sid}-{i}-{p}.txt" for p in range(3)}

    store.ensure_baseline("a")
    await asyncio.gather(session("a"), session("b"))
    assert len([c for c in store.list() if c.kind == "turn"]) == 12


async def test_a_cancelled_waiter_leaves_the_guard_free(tmp_path: Path) -> None:
    import asyncio

    store = open_store(make_workspace(tmp_path, git=False), tmp_path / "home")
    async with store.turn_guard():
        waiter = asyncio.create_task(store.turn_guard().__aenter__())
        await asyncio.sleep(0.02)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
    async with store.turn_guard(timeout=5):
        pass
