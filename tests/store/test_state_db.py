"""The SQLite index of a state root (``OPENPROGRAM_STORE_INDEX=sqlite``): it always gives what
the node files give, rebuilt when it disagrees with the git record, and survives kill -9."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from openprogram_lsp.core.types import Node
from openprogram_lsp.store import state_db
from openprogram_lsp.store.cold_page import ColdView
from openprogram_lsp.store.index import SessionIndex
from openprogram_lsp.store.session_repo import SessionRepo
from openprogram_lsp.store.session_store import SessionStore


@pytest.fixture(autouse=True)
def _sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_db, "USE", True)


def _db(home: Path) -> state_db.StateDB:
    return state_db.StateDB.of(home / "sessions")


def _session(home: Path, n: int = 40, seed: int = 0, forks: float = 0.2
             ) -> tuple[SessionStore, str]:
    """A session with forks, tool callees, a summary and rewritten nodes, committed."""
    rng = random.Random(seed)
    store = SessionStore(home)
    sid = store.create_session()
    ids: list[str] = []
    for i in range(n):
        pred = ids[-1] if ids and rng.random() >= forks else (rng.choice(ids) if ids else None)
        role = "user" if i % 2 == 0 else "assistant"
        ids.append(store.append(sid, Node(id=f"n{i}", role=role, text=f"m{i}", predecessor=pred),
                                advance_head=True).id)
        if rng.random() < 0.2:
            store.append(sid, Node(id=f"t{i}", role="tool", text="out", caller=ids[-1]))
        if rng.random() < 0.1:
            store.update_node(sid, rng.choice(ids), text=f"edited {i}")
    store.append(sid, Node(id="sum", role="summary", text="s", caller=ids[len(ids) // 2]))
    store.commit_turn(sid, "turn")
    return store, sid


def _fresh(home: Path, sid: str) -> dict[str, object]:
    """What a new process's index holds (a new connection: not this process's one)."""
    state_db.StateDB._open.clear()
    return SessionStore(home).index(sid).snapshot()


def test_the_index_from_sqlite_is_the_index_of_the_files(tmp_path: Path) -> None:
    for seed in range(3):
        store, sid = _session(tmp_path, seed=seed)
        root = store.session_dir(sid)
        assert SessionIndex.load(root).snapshot() == SessionIndex.scan(root).snapshot()
        assert _fresh(tmp_path, sid) == SessionIndex.scan(root).snapshot()
    assert not (root / ".git" / "openprogram-nodes").read_bytes()  # no node log written


def test_rows_a_killed_writer_never_wrote_are_read_from_the_files(tmp_path: Path) -> None:
    store, sid = _session(tmp_path)
    root = store.session_dir(sid)
    # the newest node's row lost (killed after its file) and one in the middle
    with _db(tmp_path).write() as conn:
        conn.execute("DELETE FROM nodes WHERE sid=? AND id IN ('n39', 'n10')", (sid,))
    assert _fresh(tmp_path, sid) == SessionIndex.scan(root).snapshot()
    assert {r[0] for r in _db(tmp_path).query(
        "SELECT id FROM nodes WHERE sid=? AND id IN ('n39', 'n10')", (sid,))} == {"n39", "n10"}


def test_rows_not_recorded_at_the_branch_head_are_rebuilt(tmp_path: Path) -> None:
    store, sid = _session(tmp_path)
    root = store.session_dir(sid)
    db = _db(tmp_path)
    epoch = db.state(sid)[0]  # type: ignore[index]
    assert db.state(sid)[2] == SessionRepo(root).head()  # type: ignore[index]
    # a commit the index never heard of (another tool, or a writer killed before its record),
    # with a row that lies about a node
    with db.write() as conn:
        conn.execute("UPDATE nodes SET pred='n0' WHERE sid=? AND id='n30'", (sid,))
    (root / "nodes" / "extra.txt").write_text("x")
    SessionRepo(root).commit("elsewhere", everything=True)
    assert _fresh(tmp_path, sid) == SessionIndex.scan(root).snapshot()
    db = _db(tmp_path)
    assert db.state(sid)[0] == epoch + 1  # type: ignore[index]
    assert db.state(sid)[2] == SessionRepo(root).head()  # type: ignore[index]


def test_a_lost_database_is_rebuilt_from_the_files(tmp_path: Path) -> None:
    store, sid = _session(tmp_path)
    root = store.session_dir(sid)
    state_db.StateDB._open.clear()
    del store
    for name in os.listdir(tmp_path / "sessions"):
        if name.startswith(state_db.DB_NAME):
            os.unlink(tmp_path / "sessions" / name)
    fresh = SessionStore(tmp_path)
    assert [m["id"] for m in fresh.list_sessions()] == [sid]  # found from its meta again
    assert fresh.index(sid).snapshot() == SessionIndex.scan(root).snapshot()


def test_another_writer_is_followed_row_by_row_and_a_rebuild_reloads(tmp_path: Path) -> None:
    store, sid = _session(tmp_path)
    reader = SessionStore(tmp_path)
    assert reader.get_node(sid, "n39").text == "m39"
    store.update_node(sid, "n39", text="edited")
    store.append(sid, Node(id="new", role="user", text="x", predecessor="n39"),
                 advance_head=True)
    assert reader.get_node(sid, "n39").text == "edited"
    assert reader.index(sid).snapshot() == store.rebuild_index(sid).snapshot()
    with _db(tmp_path).write() as conn:  # an epoch moved: another process rebuilt the rows
        conn.execute("UPDATE sessions SET epoch = epoch + 1 WHERE id=?", (sid,))
    store.append(sid, Node(id="new2", role="assistant", text="y", predecessor="new"))
    assert reader.index(sid).snapshot() == store.rebuild_index(sid).snapshot()


def test_the_listing_follows_writes_deletes_and_sessions_it_lacks(tmp_path: Path) -> None:
    a, b = SessionStore(tmp_path), SessionStore(tmp_path)
    s1 = a.create_session(title="one")
    s2 = a.create_session(title="two")
    assert {m["id"] for m in b.list_sessions()} == {s1, s2}
    a.update_meta(s1, title="renamed")
    assert next(m for m in b.list_sessions() if m["id"] == s1)["title"] == "renamed"
    a.delete_session(s2)
    assert [m["id"] for m in b.list_sessions()] == [s1]
    with _db(tmp_path).write() as conn:  # a writer killed between its meta and its row
        conn.execute("DELETE FROM sessions WHERE id=?", (s1,))
    assert [m["id"] for m in SessionStore(tmp_path).list_sessions()] == [s1]


def test_a_history_page_of_a_session_not_opened_reads_only_its_newest_rows(
        tmp_path: Path) -> None:
    store, sid = _session(tmp_path, n=300, forks=0)
    root = store.session_dir(sid)
    view = ColdView.open(root)
    assert view is not None
    page = view.page(None, limit=20, before=None, reply_role="system")
    full = store.page(store.session_dir(sid).name, store.head(sid) or "", limit=20)[0]
    assert page is not None and [n.id for n in page.nodes] == [n.id for n in full]
    assert len(view.tail.rows) < 300  # not every row
    store.append(sid, Node(id="later", role="user", text="x", predecessor=store.head(sid)))
    assert not view.fresh()
    with _db(tmp_path).write() as conn:  # a hole: the newest file without its row
        conn.execute("DELETE FROM nodes WHERE sid=? AND id='later'", (sid,))
    assert ColdView.open(root) is None


_WRITER = """
import os, sys
from pathlib import Path
from openprogram_lsp.store import state_db
state_db.USE = True
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.session_store import SessionStore
store = SessionStore(Path(sys.argv[1]))
sid = sys.argv[2]
start = int(sys.argv[3])
pred = store.head(sid)
os.write(1, b"go\\n")
for i in range(start, start + 10_000):
    nid = store.append(sid, Node(id=f"k{i}", role="user", text="x", predecessor=pred),
                       advance_head=True).id
    if i % 3 == 0:
        store.update_node(sid, nid, text="y")
    if i % 7 == 0:
        store.commit_turn(sid, f"turn {i}")
    pred = nid
"""


def test_kill_9_at_any_write_leaves_an_index_equal_to_the_files(tmp_path: Path) -> None:
    store, sid = _session(tmp_path, n=4)
    root = store.session_dir(sid)
    rng = random.Random(7)
    start = 0
    for _ in range(4):  # each cut lands between other writes: a row, a file, a commit, a meta
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), sid, str(start)],
                                stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"go\n"
        time.sleep(rng.uniform(0.05, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state_db.StateDB._open.clear()
        fresh = SessionStore(tmp_path)
        assert fresh.index(sid).snapshot() == SessionIndex.scan(root).snapshot()
        fresh.get_branch(sid)  # the chain holds together
        start += 10_000
