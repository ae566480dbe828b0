"""Stale locks: each lock file a killed process can leave is planted, and the next operation
works (with a log line); a lock a live process holds is never taken."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.store._cp_helpers import make_workspace, open_store
from tests.store._proc_helpers import dead_owner, encode, record_of, sleeper

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.checkpoints.shadow import HEAD_REF
from openprogram_lsp.store.git import GitError
from openprogram_lsp.store.session_store import SessionStore


def _session(home: Path) -> tuple[SessionStore, str]:
    store = SessionStore(home)
    sid = store.create_session()
    store.append(sid, Node(id="u1", role="user", text="hi"), advance_head=True)
    store.commit_turn(sid, "turn one")
    return store, sid


def test_a_stale_session_ref_lock_is_removed(tmp_path: Path,
                                             caplog: pytest.LogCaptureFixture) -> None:
    store, sid = _session(tmp_path / "home")
    git_dir = store.session_dir(sid) / ".git"
    (git_dir / "index.lock").write_bytes(b"")  # left by an old git add: no longer in the way
    lock = git_dir / "refs" / "heads" / "main.lock"
    lock.write_bytes(b"")  # a writer killed between taking the ref lock and renaming it
    store.append(sid, Node(id="u2", role="user", text="again", predecessor="u1"))
    with caplog.at_level(logging.WARNING):
        assert store.commit_turn(sid, "turn two")
    assert not lock.exists()
    assert "stale git lock" in caplog.text
    assert store.git_log(sid)[0] == "turn two"


def test_a_session_ref_lock_with_a_sha_is_removed_too(tmp_path: Path) -> None:
    store, sid = _session(tmp_path / "home")
    lock = store.session_dir(sid) / ".git" / "refs" / "heads" / "main.lock"
    lock.write_bytes(b"0" * 40 + b"\n")
    store.append(sid, Node(id="u2", role="user", text="again", predecessor="u1"))
    assert store.commit_turn(sid, "turn two")
    assert not lock.exists()


def test_a_git_lock_held_open_by_a_live_process_is_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp.store import session_repo

    store, sid = _session(tmp_path / "home")
    lock = store.session_dir(sid) / ".git" / "refs" / "heads" / "main.lock"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; f = open(sys.argv[1], 'w'); "
                               "print('ok', flush=True); time.sleep(60)", str(lock)],
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"ok\n"
        monkeypatch.setattr(session_repo, "REF_LOCK_WAIT", 0.3)
        store.append(sid, Node(id="u2", role="user", text="again", predecessor="u1"))
        with pytest.raises(GitError, match=r"main\.lock"):
            store.commit_turn(sid, "turn two")
        assert lock.exists()
    finally:
        holder.kill()
        holder.wait()
    assert store.commit_turn(sid, "turn two")  # the journal still holds the turn's writes
    assert store.git_log(sid)[:2] == ["turn two", "turn one"]


@pytest.mark.parametrize("content", ["empty", "dead-owner", "sha"])
def test_a_stale_checkpoint_ref_lock_is_removed(tmp_path: Path, content: str,
                                                caplog: pytest.LogCaptureFixture) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    base = store.ensure_baseline("s")
    assert base is not None
    lock = store.repo.git_dir / (HEAD_REF + ".lock")
    lock.write_bytes({"empty": b"", "dead-owner": encode(dead_owner()),
                      "sha": b"1" * 40 + b"\n"}[content])
    (ws / "a.txt").write_text("one\n")
    store.note_paths(["a.txt"])
    with caplog.at_level(logging.WARNING):
        cp = store.commit_turn("s", "t1", "m")
    assert cp is not None and [f.path for f in cp.files] == ["a.txt"]
    assert not lock.exists() and "stale" in caplog.text
    lock.write_bytes(b"")
    out = store.restore(base.id)  # restore (and so undo) works after a crash too
    assert out.restored == ["a.txt"] and not (ws / "a.txt").exists()


def test_a_checkpoint_ref_lock_of_a_live_owner_is_refused(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    owner = sleeper()
    lock = store.repo.git_dir / (HEAD_REF + ".lock")
    try:
        lock.write_bytes(encode(record_of(owner)))
        (ws / "a.txt").write_text("one\n")
        store.note_paths(["a.txt"])
        with pytest.raises(CheckpointError, match=f"pid {owner.pid}"):
            store.commit_turn("s", "t1", "m")
        assert lock.exists()
    finally:
        owner.kill()
        owner.wait()


def test_a_stale_private_index_lock_does_not_stop_command_checkpoints(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=True)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    (store.root / "index.lock").write_bytes(b"")  # a git status/add killed mid-walk
    for turn in range(3):  # later walks flush the deferred index entries: git takes the lock
        (ws / f"made-by-command-{turn}.txt").write_text("x\n")
        store.note_all()  # what a shell command reports
        cp = store.commit_turn("s", f"t{turn}", "m")
        assert cp is not None and [f.path for f in cp.files] == [f"made-by-command-{turn}.txt"]
    assert not (store.root / "index.lock").exists()


def test_store_locks_record_their_owner(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    with store.lock:
        assert json.loads((store.root / "lock").read_bytes())["pid"] == os.getpid()
    with store.turn_lock():
        assert json.loads((store.root / "turn.lock").read_bytes())["pid"] == os.getpid()
