"""A running turn's reply lives in the meta until its first write: every reader, in this
process or another, sees it; it leaves the meta only once its file exists."""

from __future__ import annotations

import json
from pathlib import Path

from tests.store._proc_helpers import dead_owner, record_of, sleeper
from tests.store._session_helpers import running_turn

from openprogram_lsp.core.types import Node, ToolCallRecord
from openprogram_lsp.store import meta_slots
from openprogram_lsp.store.index import PENDING
from openprogram_lsp.store.session_store import SessionStore


def _reply_file(store: SessionStore, sid: str) -> Path:
    return store.session_dir(sid) / "nodes" / store.index(sid).files["u1_reply"]


def test_every_reader_sees_a_running_reply_before_its_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = sleeper()
    try:
        store, sid = running_turn(home, record_of(proc))
        assert not _reply_file(store, sid).exists()
        other = SessionStore(home)  # another process
        page = other.history_page(sid, None, limit=10)
        assert [(n.id, n.status) for n in page.nodes] == [("u1", None), ("u1_reply", "running")]
        assert [n.id for n in other.get_branch(sid)] == ["u1", "u1_reply"]
        assert other.meta(sid)["status"] == "running"
        assert "u1_reply" in other.rebuild_index(sid).seq  # from the files and the meta alone
        # the next node of the session takes the seq after the reply's, in every process
        assert other.index(sid).next_seq == store.index(sid).next_seq == 3
    finally:
        proc.kill()
        proc.wait()


def test_the_first_write_makes_a_new_file_and_the_end_takes_it_out_of_the_meta(
        tmp_path: Path) -> None:
    proc = sleeper()
    try:
        store, sid = running_turn(tmp_path / "home", record_of(proc))
        call = ToolCallRecord(id="c1", name="read_file", kind="read", status="in_progress",
                              input={"path": "f"})
        store.update_node(sid, "u1_reply", text="reading", tool_calls=[call])
        assert json.loads(_reply_file(store, sid).read_bytes())["tool_calls"][0]["id"] == "c1"
        assert SessionStore(tmp_path / "home").get_node(sid, "u1_reply").text == "reading"
        store.update_node(sid, "u1_reply", text="done", status="done")
        store.end_turn(sid, "u1_reply")
    finally:
        proc.kill()
        proc.wait()
    meta = meta_slots.read(store.session_dir(sid))
    assert PENDING not in meta and "running" not in meta
    assert SessionStore(tmp_path / "home").get_node(sid, "u1_reply").status == "done"


def test_a_turn_ended_before_any_reply_write_leaves_its_reply_on_disk(tmp_path: Path) -> None:
    store, sid = running_turn(tmp_path / "home", dead_owner())
    store.end_turn(sid, "u1_reply")  # an early way out of a turn: no update_node at all
    assert _reply_file(store, sid).is_file()
    assert PENDING not in meta_slots.read(store.session_dir(sid))
    store.commit_turn(sid, "t")
    fresh = SessionStore(tmp_path / "home")
    assert [n.id for n in fresh.get_branch(sid)] == ["u1", "u1_reply"]


def test_a_dead_turns_reply_is_recovered_from_the_meta(tmp_path: Path) -> None:
    _, sid = running_turn(tmp_path / "home", dead_owner())
    fresh = SessionStore(tmp_path / "home")
    _, reply = fresh.get_branch(sid)
    assert reply.status == "interrupted" and reply.text == "[interrupted]"
    assert json.loads(_reply_file(fresh, sid).read_bytes())["status"] == "interrupted"
    assert PENDING not in fresh.meta(sid) and fresh.meta(sid)["status"] == "idle"


def test_a_malformed_pending_entry_is_no_node(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    sid = store.create_session()
    store.append(sid, Node(id="u1", role="user", text="hi"), advance_head=True)
    root = store.session_dir(sid)
    meta = meta_slots.read(root)
    bad = {"seq": 2, "node": {"id": "other", "role": "assistant", "text": ""}}
    for entry in (bad, {"seq": "2", "node": {"id": "x", "role": "assistant"}},
                  {"seq": 2, "node": {"id": "x", "role": "tool", "caller": "u1"}}, "junk"):
        meta_slots.write(root, json.dumps({**meta, PENDING: {"x": entry}}).encode())
        fresh = SessionStore(tmp_path / "home")
        assert [n.id for n in fresh.nodes(sid)] == ["u1"]
