"""A session held for one turn: recovery once at open, the hold refuses other processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import SessionBusy
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.owner import current_record
from openprogram_lsp.store.session_handle import SessionHandle
from openprogram_lsp.store.session_store import SessionStore


def _running_turns(store: SessionStore, sid: str, *ids: str) -> None:
    """Replies this process left running (as a turn that ended without finalizing does)."""
    pred = None
    for nid in ids:
        store.start_turn(
            sid, Node(id=f"{nid}_u", role="user", text=nid, predecessor=pred),
            Node(id=nid, role="assistant", predecessor=f"{nid}_u", status="running",
                 text="partial", metadata={"owner": current_record("turn")}))
        pred = nid


def test_open_recovers_this_process_s_dead_turns_once_and_keeps_live_ones(
        tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    _running_turns(store, sid, "gone", "live")
    asked: list[int] = []

    def live() -> set[str]:
        asked.append(1)
        return {"live"}

    with SessionHandle.open(store, sid, "turn", live=live) as session:
        assert asked == [1]  # asked once, at open
        gone = session.node("gone")
        assert gone.status == "interrupted" and gone.text == "partial\n\n[interrupted]"
        assert session.node("live").status == "running"
        assert set(session.meta()["running"]) == {"live"}
    assert store.git_log(sid, 1) == ["recover: 1 interrupted turn(s)"]


def test_a_turn_s_writes_through_the_handle_make_one_commit(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    with SessionHandle.open(store, sid, "turn") as session:
        session.start_turn(
            Node(id="u1", role="user", text="hi"),
            Node(id="u1_reply", role="assistant", predecessor="u1", status="running"),
            advance_head=True)
        assert session.head() == "u1_reply" and [n.id for n in session.chain()] == ["u1",
                                                                                  "u1_reply"]
        session.append(Node(id="t1", role="tool", text="out", caller="u1_reply"))
        session.update_node("u1_reply", text="done", status="done")
        session.end_turn("u1_reply", title="hi")
        session.commit("turn: hi")
    fresh = SessionStore(tmp_path)  # another process's view
    assert [n.text for n in fresh.get_branch(sid)] == ["hi", "done"]
    assert fresh.meta(sid)["status"] == "idle" and fresh.meta(sid)["title"] == "hi"
    assert fresh.git_log(sid, 1) == ["turn: hi"]


HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from openprogram_lsp.store.session_handle import SessionHandle
    from openprogram_lsp.store.session_store import SessionStore
    with SessionHandle.open(SessionStore(Path(sys.argv[1])), sys.argv[2], "turn"):
        print("ready", flush=True)
        time.sleep(60)
""")


def test_a_session_held_by_another_process_s_handle_is_refused(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path), sid],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        with pytest.raises(SessionBusy, match=f"pid {proc.pid}"), \
                SessionHandle.open(store, sid, "turn"):
            pass
    finally:
        proc.kill()
        proc.wait(10)
    with SessionHandle.open(store, sid, "turn") as session:  # its holder died: free again
        assert session.head() is None


def test_a_held_session_s_stamp_is_read_at_open_and_close_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    stamps: list[Path] = []
    real = SessionStore._fingerprint

    def counted(self: SessionStore, root: Path) -> tuple[int, ...]:
        stamps.append(root)
        return real(self, root)

    monkeypatch.setattr(SessionStore, "_fingerprint", counted)
    with SessionHandle.open(store, sid, "turn") as session:
        at_open = len(stamps)  # read (and read again after loading the index: a first open)
        assert 1 <= at_open <= 2
        session.start_turn(Node(id="u1", role="user", text="hi"),
                           Node(id="u1_reply", role="assistant", predecessor="u1",
                                status="running"), advance_head=True)
        for i in range(5):
            session.append(Node(id=f"t{i}", role="tool", text="out", caller="u1_reply"))
            session.update_node("u1_reply", text=f"step {i}")
        assert session.chain()[-1].text == "step 4"
        session.update_node("u1_reply", status="done")
        session.end_turn("u1_reply")
        session.commit("turn: hi")
        assert len(stamps) == at_open  # none of the turn's reads and writes looked again
    assert len(stamps) == at_open + 1  # and at close, before the lock is given back
    monkeypatch.undo()
    assert SessionStore(tmp_path).get_node(sid, "u1_reply").text == "step 4"


def test_another_store_s_write_unpins_a_held_session(tmp_path: Path) -> None:
    store, other = SessionStore(tmp_path), SessionStore(tmp_path)
    sid = store.create_session(title="before")
    with SessionHandle.open(store, sid, "turn") as session:
        assert session.meta()["title"] == "before"
        other.update_meta(sid, title="renamed")  # the same process: joins the hold
        assert session.meta()["title"] == "renamed"  # re-checked, not served from the pin
        session.end_turn("none", lastTurnAt="now")
    assert other.meta(sid)["title"] == "renamed"


RENAME = textwrap.dedent("""
    import sys
    from pathlib import Path
    from openprogram_lsp.core.errors import SessionBusy
    from openprogram_lsp.store.session_store import SessionStore
    try:
        SessionStore(Path(sys.argv[1])).update_meta(sys.argv[2], title="theirs")
    except SessionBusy as exc:
        print(exc.message)
""")


def test_another_process_writes_a_held_session_only_once_it_is_let_go(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session(title="ours")

    def rename() -> str:
        return subprocess.run([sys.executable, "-c", RENAME, str(tmp_path), sid], check=True,
                              capture_output=True, text=True, timeout=60).stdout

    with SessionHandle.open(store, sid, "turn") as session:
        assert "session is busy in another process" in rename()  # refused, nothing written
        session.end_turn("none", lastTurnAt="now")
        assert session.meta()["title"] == "ours"
    assert rename() == ""
    assert store.meta(sid)["title"] == "theirs"
