import os
import threading
from pathlib import Path

import pytest
from tests.store._session_helpers import uncommitted

from openprogram_lsp.core.errors import BrokenChain, InvalidParams, NotFound
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.session_store import SessionStore


def _chain(store: SessionStore, sid: str, n: int, pred: str | None = None) -> list[str]:
    ids = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        node = store.append(sid, Node(id=f"n{len(store.nodes(sid))}", role=role, text=str(i),
                                      predecessor=pred), advance_head=True)
        pred = node.id
        ids.append(node.id)
    return ids


def test_create_append_get_branch_and_head(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session(title="t")
    ids = _chain(store, sid, 4)
    assert store.head(sid) == ids[-1]
    assert [n.id for n in store.get_branch(sid)] == ids
    assert [n.id for n in store.get_branch(sid, ids[1])] == ids[:2]
    assert store.get_node(sid, ids[0]).created_at


def test_fork_lists_two_tips_and_names_follow_growth(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    a = _chain(store, sid, 3)
    b = store.append(sid, Node(id="fork", role="user", text="other", predecessor=a[0]))
    store.name_branch(sid, "fork", "experiment")
    tips = {t.head_id: t for t in store.list_branches(sid)}
    assert set(tips) == {a[-1], "fork"}
    assert tips[a[-1]].active and not tips["fork"].active
    assert tips["fork"].name == "experiment" and tips["fork"].length == 2
    grown = store.append(sid, Node(id="fork2", role="assistant", text="x", predecessor=b.id))
    assert store.find_branch(sid, "experiment") == grown.id
    store.set_head(sid, "fork2")
    assert [n.id for n in store.get_branch(sid)] == [a[0], "fork", "fork2"]


def test_tool_and_summary_nodes_are_not_tips(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    a = _chain(store, sid, 2)
    store.append(sid, Node(id="tool1", role="tool", text="out", caller=a[1]))
    store.append(sid, Node(id="sum1", role="summary", text="s"))
    assert [t.head_id for t in store.list_branches(sid)] == [a[1]]
    assert [n.id for n in store.callees(sid, a[1])] == ["tool1"]
    with pytest.raises(InvalidParams):
        store.set_head(sid, "sum1")


def test_broken_chain_refused(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    _chain(store, sid, 2)
    # simulate damage on disk: a node whose predecessor file is gone
    (tmp_path / "sessions" / sid / "nodes" / store.index(sid).files["n0"]).unlink()
    with pytest.raises(BrokenChain):  # found when the session is next read from disk
        SessionStore(tmp_path).get_branch(sid)


def test_unknown_ids_and_bad_ids(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with pytest.raises(NotFound):
        store.get_branch("nosuch")
    with pytest.raises(InvalidParams):
        store.get_branch("../etc")
    sid = store.create_session()
    with pytest.raises(NotFound):
        store.get_node(sid, "nope")
    with pytest.raises(NotFound):
        store.append(sid, Node(id="x", role="user", predecessor="missing"))


def test_commit_turn_makes_one_commit_and_index_rebuilds_equal(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    _chain(store, sid, 4)
    store.update_node(sid, "n1", text="edited", status="done")
    assert store.commit_turn(sid, "turn: one")
    assert store.commit_turn(sid, "turn: nothing new") is None
    assert store.git_log(sid) == ["turn: one"]
    status = uncommitted(tmp_path / "sessions" / sid)
    assert status == b""
    assert store.rebuild_index(sid).snapshot() == store.index(sid).snapshot()


def test_other_process_write_is_picked_up(tmp_path: Path) -> None:
    a = SessionStore(tmp_path)
    b = SessionStore(tmp_path)  # a second "process" with its own cache
    sid = a.create_session()
    _chain(a, sid, 2)
    assert len(b.get_branch(sid)) == 2
    _chain(a, sid, 2, pred=a.head(sid))
    assert len(b.get_branch(sid)) == 4


def test_lru_capacity(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, capacity=2)
    sids = [store.create_session() for _ in range(3)]
    for sid in sids:
        _chain(store, sid, 1)
    assert len(store._open) == 2
    assert len(store.get_branch(sids[0])) == 1  # evicted session reopens from disk


def test_two_threads_two_sessions(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sids = [store.create_session(), store.create_session()]
    errors: list[BaseException] = []

    def work(sid: str) -> None:
        try:
            pred = None
            for i in range(40):
                pred = store.append(sid, Node(id=f"m{i}", role="user", predecessor=pred),
                                    advance_head=True).id
            store.commit_turn(sid, "turn")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in sids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for sid in sids:
        assert len(store.get_branch(sid)) == 40
        assert store.rebuild_index(sid).snapshot() == store.index(sid).snapshot()


def test_atomic_write_leaves_no_partial_files(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    _chain(store, sid, 3)
    # a crashed writer's temp file must not break the index
    leaf = (tmp_path / "sessions" / sid / "nodes" / store.index(sid).files["n0"]).parent
    (leaf / ".0000009-x.json.abc.tmp").write_text("{")
    assert len(store.rebuild_index(sid).nodes) == 3


def test_context_commits_are_immutable(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    store.write_context_commit(sid, "t1", {"estimate": 1})
    assert store.read_context_commit(sid, "t1") == {"estimate": 1}
    with pytest.raises(ValueError):
        store.write_context_commit(sid, "t1", {"estimate": 2})


def test_context_commit_lists_are_stored_as_chain_ranges(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    _chain(store, sid, 60)
    ids = [n.id for n in store.get_branch(sid)]
    record = {"estimate": 3, "kept": ["summary-x", *ids[20:]], "snipped": ids[5:10] + ids[12:14],
              "summarised": ids[:20], "replaced": ["n21:call1"]}
    store.write_context_commit(sid, ids[-1], record)
    assert store.read_context_commit(sid, ids[-1]) == record
    stored = next(store.session_dir(sid).rglob("*.context.json")).read_bytes()
    assert len(stored) < 200  # four ranges and one id, not 60 ids


def test_checkpoint_refs_follow_the_nodes_without_a_scan(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SessionStore(tmp_path / "home")
    sid = store.create_session(workspace=str(ws))
    other = store.create_session(workspace=str(tmp_path))
    store.append(sid, Node(id="u1", role="user", text="hi", metadata={"checkpointId": "c1"}))
    store.append(sid, Node(id="a1", role="assistant", text="", predecessor="u1"))
    store.update_node(sid, "a1", metadata={"checkpointId": "c2"})
    store.append(other, Node(id="x", role="user", text="x", metadata={"checkpointId": "c9"}))
    assert store.checkpoint_refs(ws) == {"c1", "c2"}
    refs = store.session_dir(sid) / ".git" / "openprogram-checkpoints"
    refs.unlink()  # a session written before the file existed: scanned once, file rebuilt
    assert SessionStore(tmp_path / "home").checkpoint_refs(ws) == {"c1", "c2"}
    assert refs.read_text().split() == ["c1", "c2"]
    store.delete_session(sid)
    assert store.checkpoint_refs(ws) == set()


def test_a_node_id_that_would_leave_its_directory_is_refused(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    for bad in ("../../escape", "a/b", ".hidden", "nul\0"):
        with pytest.raises(InvalidParams, match="id"):
            store.append(sid, Node(id=bad, role="user", text="x"))
    assert not list(tmp_path.rglob("*escape*"))


def test_taking_the_session_lock_sees_a_write_made_within_the_same_clock_tick(
        tmp_path: Path) -> None:
    mine, other = SessionStore(tmp_path), SessionStore(tmp_path)
    sid = mine.create_session()
    mine.append(sid, Node(id="a", role="user", text="a"), advance_head=True)
    journal = mine.session_dir(sid) / ".git" / "openprogram-journal"
    stamp = os.stat(journal)
    other.append(sid, Node(id="b", role="assistant", text="b", predecessor="a"),
                 advance_head=True)  # another process, in the same tick as far as mtime goes:
    os.utime(journal, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    with mine.hold_session(sid, "turn"):  # the journal's size still moved
        assert mine.head(sid) == "b" and mine.index(sid).next_seq == other.index(sid).next_seq
