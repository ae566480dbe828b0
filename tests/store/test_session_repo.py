"""The session repository written in process: journaled writes, sharded trees, packing."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest
from tests.store._session_helpers import uncommitted

from openprogram_lsp.core.types import Node
from openprogram_lsp.store import session_repo
from openprogram_lsp.store.git import run_git
from openprogram_lsp.store.gitobj.trees import read_commit, read_tree
from openprogram_lsp.store.index import SHARD
from openprogram_lsp.store.session_repo import (
    JOURNAL,
    JOURNAL_MARK,
    JOURNAL_MAX,
    SessionRepo,
    wait_for_maintenance,
)
from openprogram_lsp.store.session_store import SessionStore


def _grow(store: SessionStore, sid: str, count: int, start: int = 0) -> None:
    pred = store.head(sid)
    for i in range(start, start + count):
        pred = store.append(sid, Node(id=f"n{i}", role="user" if i % 2 == 0 else "assistant",
                                      text=f"message {i}", predecessor=pred),
                            advance_head=True).id


def _new_repo(tmp_path: Path) -> tuple[Path, SessionRepo]:
    """A new session's directory and a repository object on it."""
    store = SessionStore(tmp_path)
    root = store.session_dir(store.create_session())
    return root, SessionRepo(root)


def _largest_tree(repo: SessionRepo, sha: str) -> int:
    entries = read_tree(repo.odb, sha)
    return max([len(entries), *(_largest_tree(repo, child) for mode, child in entries.values()
                                if mode == "40000")])


def test_a_commit_holds_what_was_written_and_no_tree_grows_with_the_session(
        tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session(title="t")
    _grow(store, sid, SHARD + 20)  # crosses a leaf boundary
    assert store.commit_turn(sid, "turn: many\n\nbody")
    root = store.session_dir(sid)
    assert uncommitted(root) == b""
    run_git(["fsck", "--strict", "--no-dangling"], cwd=root)
    assert run_git(["log", "--format=%s"], cwd=root) == b"turn: many\n"
    repo = SessionRepo(root)
    head = repo.head()
    assert head is not None
    assert _largest_tree(repo, read_commit(repo.odb, head).tree) <= SHARD
    store.update_node(sid, "n3", text="edited")
    assert store.commit_turn(sid, "turn: edit")
    changed = run_git(["diff", "--name-only", "HEAD~1", "HEAD"], cwd=root).decode().split()
    assert changed == [f"nodes/{store.index(sid).files['n3']}"]
    assert store.commit_turn(sid, "nothing") is None
    assert store.git_log(sid) == ["turn: edit", "turn: many"]


def test_writes_of_another_process_are_committed_and_seen(tmp_path: Path) -> None:
    first, second = SessionStore(tmp_path), SessionStore(tmp_path)
    sid = first.create_session()
    _grow(first, sid, 3)
    first.commit_turn(sid, "one")
    _grow(second, sid, 2, start=3)  # another process appends and does not commit
    assert [n.id for n in first.get_branch(sid)] == ["n0", "n1", "n2", "n3", "n4"]
    assert first.commit_turn(sid, "two")
    assert uncommitted(first.session_dir(sid)) == b""


def test_each_commit_is_one_pack_and_the_background_merge_keeps_every_object(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_repo, "SMALL_PACKS", 6)
    store, other = SessionStore(tmp_path), SessionStore(tmp_path)  # other: a second process
    sid = store.create_session()
    root = store.session_dir(sid)
    for turn in range(session_repo.SMALL_PACKS + 2):
        _grow(store, sid, 2, start=2 * turn)
        assert store.commit_turn(sid, f"turn {turn}")
        assert [n.id for n in other.get_branch(sid)][-1] == f"n{2 * turn + 1}"
    wait_for_maintenance()  # the commit past SMALL_PACKS started a merge in the background
    repo = SessionRepo(root)
    assert repo.loose_count() == 0
    assert repo.pack_count() < session_repo.SMALL_PACKS
    run_git(["fsck", "--strict", "--no-dangling"], cwd=root)
    assert uncommitted(root) == b""
    _grow(other, sid, 2, start=100)  # trees read from merged packs, by a reader that knew
    assert other.commit_turn(sid, "last")  # only the packs that are gone now
    assert uncommitted(root) == b""
    last = session_repo.SMALL_PACKS
    assert SessionRepo(root).log(3) == ["last", f"turn {last + 1}", f"turn {last}"]
    assert repo.maintain() >= 0


def test_the_journal_keeps_only_what_the_last_commit_did_not_take(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    _grow(store, sid, 2)
    store.commit_turn(sid, "one")
    journal = store.session_dir(sid) / ".git" / JOURNAL
    assert journal.read_bytes().endswith(JOURNAL_MARK)  # a mark, not an emptied file
    _grow(store, sid, 1, start=2)
    repo = SessionRepo(store.session_dir(sid))
    with repo._journal(fcntl.LOCK_EX) as fd:
        assert repo._pending_paths(fd) == {f"nodes/{store.index(sid).files['n2']}", "meta.json"}
    while journal.stat().st_size < JOURNAL_MAX:
        with open(journal, "ab") as fh:
            fh.write(b"meta.json\n" * 1000)
    assert store.commit_turn(sid, "two")
    assert journal.stat().st_size == 0  # a long journal is emptied
    assert store.commit_turn(sid, "nothing") is None
    assert repo.log() == ["two", "one"]
    other = SessionStore(tmp_path)  # commits of two processes take turns on one journal
    _grow(other, sid, 1, start=3)
    assert other.commit_turn(sid, "three")
    _grow(store, sid, 1, start=4)
    assert store.commit_turn(sid, "four")
    assert uncommitted(store.session_dir(sid)) == b""
    assert repo.log(2) == ["four", "three"]


def test_loose_objects_of_a_session_from_before_packs_are_merged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_repo, "PACK_THRESHOLD", 5)
    store = SessionStore(tmp_path)
    sid = store.create_session()
    root = store.session_dir(sid)
    loose = [SessionRepo(root).odb.write("blob", f"old {i}".encode()) for i in range(8)]
    _grow(SessionStore(tmp_path), sid, 2)  # a process that opens it now
    assert SessionStore(tmp_path).commit_turn(sid, "first of this process")
    wait_for_maintenance()
    repo = SessionRepo(root)
    assert repo.loose_count() == 0
    assert all(repo.odb.read(sha)[0] == "blob" for sha in loose)
    run_git(["fsck", "--strict", "--no-dangling"], cwd=root)


def test_the_journal_stays_open_between_writes_but_never_stays_locked(tmp_path: Path) -> None:
    root, repo = _new_repo(tmp_path)
    repo.write("a.txt", "1")
    kept = repo._jfd
    repo.write("b.txt", "2")
    assert kept is not None and repo._jfd == kept  # one descriptor, not one per write
    with open(root / ".git" / JOURNAL, "rb") as other:  # another writer's commit can lock it
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(other.fileno(), fcntl.LOCK_UN)
    assert repo.commit("two files")
    with open(root / ".git" / JOURNAL, "rb") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert {b"a.txt", b"b.txt"} <= set(
        run_git(["show", "--name-only", "--format=", "HEAD"], cwd=root).split())


def test_a_commit_takes_what_was_written_unless_the_file_changed_since(tmp_path: Path) -> None:
    root, repo = _new_repo(tmp_path)
    repo.write("a.txt", "mine")
    repo.write("b.txt", "mine too")
    other = SessionRepo(root)  # another writer replaces b.txt after us
    other.write("b.txt", "theirs")
    read_back: list[str] = []
    real_read = session_repo.read_file
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(session_repo, "read_file",
                   lambda path: read_back.append(os.path.basename(path)) or real_read(path))
        assert repo.commit("two")
    # a.txt's stamp is still the one its write took: its bytes are not read back
    assert "b.txt" in read_back and "a.txt" not in read_back
    assert run_git(["show", "HEAD:a.txt"], cwd=root) == b"mine"
    assert run_git(["show", "HEAD:b.txt"], cwd=root) == b"theirs"  # read back: not ours
    repo.write("a.txt", "again")
    (root / "a.txt").write_text("edited in place")  # not through the store
    assert repo.commit("three")
    assert run_git(["show", "HEAD:a.txt"], cwd=root) == b"edited in place"


def test_the_branch_ref_moves_in_place_and_a_killed_writers_lock_is_taken_over(
        tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    root = store.session_dir(sid)
    _grow(store, sid, 1)
    assert store.commit_turn(sid, "one")
    ref = root / ".git" / "refs" / "heads" / "main"
    inode = ref.stat().st_ino
    _grow(store, sid, 1, start=1)
    created: list[str] = []
    real_open = os.open

    def recording_open(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
        if flags & os.O_CREAT:
            created.append(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "open", recording_open)
        assert store.commit_turn(sid, "two")
    assert ref.stat().st_ino == inode  # overwritten, not replaced
    assert not [p for p in created if p.endswith("main.lock")]  # and no git lock file for it
    (root / ".git" / "refs" / "heads" / "main.lock").write_text("")  # a killed writer's
    _grow(store, sid, 1, start=2)
    assert store.commit_turn(sid, "three")
    assert not (root / ".git" / "refs" / "heads" / "main.lock").exists()
    assert store.git_log(sid)[:3] == ["three", "two", "one"]
    run_git(["fsck", "--strict", "--no-dangling"], cwd=root)
