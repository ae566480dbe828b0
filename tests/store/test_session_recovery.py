"""Recovery on read: a turn left running by a dead process reads as interrupted from any
method of any process, and the session list says running only while a turn runs."""

from __future__ import annotations

from pathlib import Path

from tests.store._proc_helpers import dead_owner, record_of, sleeper

from openprogram_lsp.core.types import Node
from openprogram_lsp.store.session_store import SessionStore


def _crashed_turn(home: Path, owner: dict[str, object]) -> str:
    """A session as a process killed mid-turn leaves it: a running reply, a running meta."""
    store = SessionStore(home)
    sid = store.create_session()
    store.append(sid, Node(id="u1", role="user", text="hi"), advance_head=True)
    store.append(sid, Node(id="u1_reply", role="assistant", predecessor="u1", text="partial",
                           status="running", metadata={"owner": owner}), advance_head=True)
    meta = store.meta(sid)
    store.update_meta(sid, running={"u1_reply": owner}, status="running",
                      branches=meta.get("branches") or {})
    store.commit_turn(sid, "turn started")
    return sid


def test_history_after_a_restart_shows_no_running_turn(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid = _crashed_turn(home, dead_owner())
    fresh = SessionStore(home)  # the restarted server, before any new turn
    reply = fresh.get_branch(sid)[-1]
    assert reply.status == "interrupted" and reply.text == "partial\n\n[interrupted]"
    assert fresh.git_log(sid)[0] == "recover: 1 interrupted turn(s)"
    assert SessionStore(home).get_branch(sid)[-1].text == "partial\n\n[interrupted]"  # once


def test_every_read_method_recovers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    readers = [lambda s, sid: s.list_branches(sid), lambda s, sid: s.meta(sid),
               lambda s, sid: s.nodes(sid), lambda s, sid: s.head(sid)]
    for read in readers:
        sid = _crashed_turn(home, dead_owner())
        store = SessionStore(home)
        read(store, sid)
        assert store.get_node(sid, "u1_reply").status == "interrupted"
        assert store.meta(sid)["status"] == "idle" and "running" not in store.meta(sid)


def test_the_session_list_recovers_and_reports_running(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dead = _crashed_turn(home, dead_owner())
    proc = sleeper()
    try:
        live = _crashed_turn(home, record_of(proc))  # another process, still running its turn
        rows = {r["id"]: r for r in SessionStore(home).list_sessions()}
        assert rows[dead]["status"] == "idle" and rows[live]["status"] == "running"
        assert SessionStore(home).get_node(live, "u1_reply").status == "running"
    finally:
        proc.kill()
        proc.wait()
    assert SessionStore(home).get_node(dead, "u1_reply").status == "interrupted"


def test_a_cached_session_notices_its_other_writer_die(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = sleeper()
    sid = _crashed_turn(home, record_of(proc))
    reader = SessionStore(home)  # a second editor's server, with the session open
    assert reader.get_branch(sid)[-1].status == "running"
    proc.kill()
    proc.wait()
    assert reader.get_branch(sid)[-1].status == "interrupted"  # no write happened meanwhile
    assert reader.list_sessions()[0]["status"] == "idle"


def test_begin_and_end_turn_drive_the_listed_status(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = SessionStore(home)
    sid = store.create_session()
    store.begin_turn(sid, "t1")
    assert SessionStore(home).list_sessions()[0]["status"] == "running"  # another process
    store.begin_turn(sid, "t2")
    store.end_turn(sid, "t1", title="x")
    assert SessionStore(home).list_sessions()[0]["status"] == "running"
    store.end_turn(sid, "t2")
    row = SessionStore(home).list_sessions()[0]
    assert row["status"] == "idle" and row["title"] == "x"
