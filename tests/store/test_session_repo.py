"""The session repository written in process: journaled writes, sharded trees, packing."""

from __future__ import annotations

from pathlib import Path

from tests.store._session_helpers import uncommitted

from openprogram_lsp.core.types import Node
from openprogram_lsp.store.git import run_git
from openprogram_lsp.store.gitobj.trees import read_commit, read_tree
from openprogram_lsp.store.index import SHARD
from openprogram_lsp.store.session_repo import SessionRepo
from openprogram_lsp.store.session_store import SessionStore


def _grow(store: SessionStore, sid: str, count: int, start: int = 0) -> None:
    pred = store.head(sid)
    for i in range(start, start + count):
        pred = store.append(sid, Node(id=f"n{i}", role="user" if i % 2 == 0 else "assistant",
                                      text=f"message {i}", predecessor=pred),
                            advance_head=True).id


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


def test_loose_objects_are_packed_and_still_read(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    _grow(store, sid, 6)
    store.commit_turn(sid, "one")
    root = store.session_dir(sid)
    repo = SessionRepo(root)
    assert repo.maintain() > 10
    assert repo.loose_count() == 0
    run_git(["fsck", "--strict", "--no-dangling"], cwd=root)
    _grow(store, sid, 2, start=6)
    assert store.commit_turn(sid, "two")  # trees read from the pack, new ones loose
    assert uncommitted(root) == b""
    assert SessionRepo(root).log() == ["two", "one"]
