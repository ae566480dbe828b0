"""A history page of a session not yet open is read from its node log's tail: the same page
the full index gives, on every branch and page, and the full index whenever the tail cannot be
sure (holes, running nodes, damaged or torn lines, a replaced log)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import BrokenChain, InvalidParams, NotFound
from openprogram_lsp.core.types import Node
from openprogram_lsp.store import log_tail, meta_slots, node_log
from openprogram_lsp.store.cold_page import ColdView, HistoryPage
from openprogram_lsp.store.index import node_path, read_bodies
from openprogram_lsp.store.node_log import NODE_LOG
from openprogram_lsp.store.session_store import SessionStore


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of a few lines, so every page reads across block boundaries."""
    monkeypatch.setattr(log_tail, "FIRST_BLOCK", 97)
    monkeypatch.setattr(log_tail, "MAX_BLOCK", 400)


def _random_session(store: SessionStore, seed: int) -> tuple[str, list[str]]:
    """A seeded session: chain nodes with forks, tool and system callees (some attachments),
    nodes rewritten later; returns the session id and every chain node id."""
    rng = random.Random(seed)
    sid = store.create_session(title=f"s{seed}")
    chain: list[str] = []
    for i in range(70):
        pred = (rng.choice(chain) if chain and rng.random() < 0.15
                else chain[-1] if chain else None)
        role = rng.choice(["user", "assistant"])
        nid = f"c{i}"
        store.append(sid, Node(id=nid, role=role, text=f"m{i}", predecessor=pred,
                               status="done"), advance_head=rng.random() < 0.8)
        chain.append(nid)
        if rng.random() < 0.3:
            store.append(sid, Node(id=f"t{i}", role="tool", text="out", caller=nid))
        if rng.random() < 0.2:
            target = rng.choice(chain)  # a reply can hang off an older node too
            kind = rng.choice(["attach", "note"])
            store.append(sid, Node(id=f"a{i}", role="system", text="att", caller=target,
                                   metadata={"kind": kind}))
        if rng.random() < 0.2:
            store.update_node(sid, rng.choice(chain), text=f"edited {i}")
    store.commit_turn(sid, "random")
    return sid, chain


def _ids(page: HistoryPage) -> tuple[object, ...]:
    return (page.head, [n.id for n in page.nodes], page.more,
            {k: [(n.id, n.text) for n in v] for k, v in page.replies.items()},
            [n.text for n in page.nodes])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_page_of_every_branch_matches_the_full_index(tmp_path: Path, seed: int) -> None:
    home = tmp_path / "home"
    sid, chain = _random_session(SessionStore(home), seed)
    warm = SessionStore(home)
    rng = random.Random(seed)
    root = warm.session_dir(sid)
    for head in [None, *rng.sample(chain, 8)]:
        limit = rng.choice([1, 3, 7, 200])
        before: str | None = None
        for _ in range(12):  # scroll up page by page, each from a fresh view and a kept one
            want = warm.history_page(sid, head, limit=limit, before=before)
            view = ColdView.open(root)
            assert view is not None
            got = view.page(head, limit=limit, before=before, reply_role="system")
            assert got is not None and _ids(got) == _ids(want)
            if not want.more:
                break
            before = want.nodes[0].id


def test_the_first_page_of_a_long_session_reads_only_its_tail(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    store = SessionStore(home)
    sid = store.create_session()
    pred = None
    for i in range(400):
        pred = store.append(sid, Node(id=f"n{i}", role="user", text=f"{i}", predecessor=pred),
                            advance_head=True).id
    monkeypatch.setattr(log_tail, "FIRST_BLOCK", 8192)
    monkeypatch.setattr(log_tail, "MAX_BLOCK", 8192)
    cold = SessionStore(home)
    page = cold.history_page(sid, None, limit=20)
    assert [n.id for n in page.nodes] == [f"n{i}" for i in range(380, 400)] and page.more
    assert sid not in cold._open  # the session was not opened
    view = cold._cold[sid]
    size = os.path.getsize(cold.session_dir(sid) / ".git" / NODE_LOG)
    assert len(view.tail.rows) < 400 and size > 8192  # only the last block was read
    older = cold.history_page(sid, None, limit=20, before=page.nodes[0].id)
    assert [n.id for n in older.nodes] == [f"n{i}" for i in range(360, 380)]
    cold.get_node(sid, "n0")  # opening it hands over to the index
    assert sid not in cold._cold


def _log(store: SessionStore, sid: str) -> Path:
    return store.session_dir(sid) / ".git" / NODE_LOG


def _linear(home: Path, n: int = 30) -> tuple[SessionStore, str]:
    store = SessionStore(home)
    sid = store.create_session()
    pred = None
    for i in range(n):
        pred = store.append(sid, Node(id=f"n{i}", role="user", text=f"{i}", predecessor=pred,
                                      status="done"), advance_head=True).id
    return store, sid


def test_a_torn_tail_is_ignored_and_later_writes_are_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store, sid = _linear(home)
    with open(_log(store, sid), "ab") as fh:
        fh.write(b"31\tn30\tus")  # a writer killed in the middle of its line
    view = ColdView.open(store.session_dir(sid))
    assert view is not None
    page = view.page(None, limit=5, before=None, reply_role="system")
    assert page is not None and [n.id for n in page.nodes] == [f"n{i}" for i in range(25, 30)]
    later = SessionStore(home)  # another process writes on after the torn line
    later.append(sid, Node(id="n30", role="user", text="30", predecessor="n29"),
                 advance_head=True)
    again = SessionStore(home).history_page(sid, None, limit=3)
    assert [n.id for n in again.nodes] == ["n28", "n29", "n30"]
    assert SessionStore(home).rebuild_index(sid).seq == SessionStore(home).index(sid).seq


@pytest.mark.parametrize("lost", ["n27", "att"])
def test_a_hole_in_the_log_falls_back_to_the_index_which_repairs_it(tmp_path: Path,
                                                                    lost: str) -> None:
    home = tmp_path / "home"
    store, sid = _linear(home)
    store.append(sid, Node(id="att", role="system", text="a", caller="n26",
                           metadata={"kind": "attach"}))
    store.append(sid, Node(id="n30", role="user", text="30", predecessor="n29"),
                 advance_head=True)
    path = _log(store, sid)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(line for line in lines if f"\t{lost}\t".encode() not in line))
    assert ColdView.open(store.session_dir(sid)).page(  # type: ignore[union-attr]
        None, limit=5, before=None, reply_role="system") is None
    cold = SessionStore(home)
    page = cold.history_page(sid, None, limit=5)
    assert [n.id for n in page.nodes] == [f"n{i}" for i in range(26, 31)]
    assert [n.id for n in page.replies["n26"]] == ["att"]
    assert sid in cold._open and f"\t{lost}\t".encode() in path.read_bytes()  # restored


def test_a_file_newer_than_every_line_is_left_to_the_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store, sid = _linear(home)
    root = store.session_dir(sid)
    node = Node(id="n30", role="user", text="30", predecessor="n29")
    target = root / "nodes" / node_path(31, "n30")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(node.model_dump_json())  # a writer died before its line
    meta = meta_slots.read(root)
    meta_slots.write(root, json.dumps({**meta, "headId": "n30"}).encode())
    assert ColdView.open(root) is None
    page = SessionStore(home).history_page(sid, None, limit=2)
    assert [n.id for n in page.nodes] == ["n29", "n30"]


def test_running_nodes_and_turns_leave_the_page_to_the_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store, sid = _linear(home)
    store.update_node(sid, "n28", status="running", metadata={"owner": {"pid": 0}})
    root = store.session_dir(sid)
    view = ColdView.open(root)
    assert view is not None and view.page(None, limit=5, before=None,
                                          reply_role="system") is None
    assert view.page(None, limit=1, before=None, reply_role="system") is not None  # n29 only
    store.update_node(sid, "n28", status="done")
    store.update_meta(sid, running={"t1": {"pid": 1}})
    assert ColdView.open(root) is None


def test_a_damaged_or_replaced_log_stops_the_tail(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store, sid = _linear(home)
    path = _log(store, sid)
    data = path.read_bytes()
    path.write_bytes(data[:40] + b"not a row\n" + data[40:])
    view = ColdView.open(store.session_dir(sid))
    assert view is not None
    assert view.page(None, limit=30, before=None, reply_role="system") is None
    assert view.tail.damaged
    page = SessionStore(home).history_page(sid, None, limit=30)  # rebuilt from the files
    assert [n.id for n in page.nodes] == [f"n{i}" for i in range(30)]

    view = ColdView.open(store.session_dir(sid))
    assert view is not None
    node_log.rewrite(path, [])  # replaced while the view reads it
    assert view.page(None, limit=30, before=None, reply_role="system") is None
    assert view.tail.changed and not view.fresh()


def test_unknown_heads_and_pages_off_the_branch_get_the_index_s_errors(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _, sid = _linear(home)
    with pytest.raises(NotFound, match="headId"):
        SessionStore(home).history_page(sid, "nope", limit=5)
    with pytest.raises(InvalidParams, match="beforeNodeId"):
        SessionStore(home).history_page(sid, None, limit=5, before="nope")
    empty = SessionStore(home)
    fresh = empty.create_session()
    assert empty.history_page(fresh, None, limit=5) == HistoryPage(None, [], False)
    with pytest.raises(InvalidParams, match="beforeNodeId"):
        SessionStore(home).history_page(fresh, None, limit=5, before="n1")


def test_a_write_after_the_view_is_seen(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _, sid = _linear(home)
    reader = SessionStore(home)
    assert reader.history_page(sid, None, limit=1).nodes[0].id == "n29"
    SessionStore(home).append(sid, Node(id="n30", role="user", text="30", predecessor="n29"),
                              advance_head=True)
    assert reader.history_page(sid, None, limit=1).nodes[0].id == "n30"


def test_node_files_read_together_are_each_checked(tmp_path: Path) -> None:
    """The page's files are validated as one array: a file holding two nodes, part of one, or
    another node's body cannot pass for the files asked for."""
    nodes = [Node(id=f"n{i}", role="user", text=f"{i} " * (i * 12000)) for i in range(4)]
    paths = []
    for i, node in enumerate(nodes):  # n3's body is past one read's 64 KiB
        paths.append(str(tmp_path / f"{i}.json"))
        Path(paths[-1]).write_text(node.model_dump_json())
    assert read_bodies(paths) == nodes and read_bodies(paths[:1]) == nodes[:1]
    assert len(Path(paths[3]).read_bytes()) > 1 << 16
    whole = [Path(p).read_bytes() for p in paths]
    bad = {
        "two in one, none in another": [whole[0] + b"," + whole[1], b"", whole[2], whole[3]],
        "one split over two": [whole[0][:40], whole[0][40:], whole[2], whole[3]],
        "cut short": [whole[0], whole[1][:-1], whole[2], whole[3]],
        "two in one": [whole[0] + b"," + whole[1], whole[1], whole[2], whole[3]],
    }
    for case, datas in bad.items():
        for path, data in zip(paths, datas, strict=True):
            Path(path).write_bytes(data)
        with pytest.raises(ValueError):
            read_bodies(paths)
            pytest.fail(case)


def test_a_node_file_holding_another_node_leaves_the_page_to_the_index(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    store, sid = _linear(home, 6)
    nodes_dir = store.session_dir(sid) / "nodes"
    (nodes_dir / node_path(4, "n3")).write_bytes((nodes_dir / node_path(5, "n4")).read_bytes())
    cold = SessionStore(home)
    with pytest.raises(BrokenChain, match="holds 'n4', not 'n3'"):
        cold.history_page(sid, None, limit=3)
    assert sid in cold._open  # the view gave up and the index said why


def test_a_view_keeps_few_bodies_and_a_page_of_an_open_session_keeps_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp.store import cold_page

    monkeypatch.setattr(cold_page, "BODIES_KEPT", 20)
    store = SessionStore(tmp_path / "home")
    sid = store.create_session(title="long")
    pred = None
    for i in range(120):
        pred = store.append(sid, Node(id=f"n{i:03d}", role="user" if i % 2 == 0 else "assistant",
                                      text=f"message {i}", predecessor=pred, status="done"),
                            advance_head=True).id
    store.commit_turn(sid, "t")
    cold = SessionStore(tmp_path / "home")
    seen: list[str] = []
    before = None
    while True:  # paged back to the root by a server that never opened the session
        page = cold.history_page(sid, None, limit=50, before=before)
        seen[:0] = [n.id for n in page.nodes]
        assert len(cold._cold[sid]._bodies) <= 20
        if not page.more:
            break
        before = page.nodes[0].id
    assert seen == [f"n{i:03d}" for i in range(120)]
    # an open session: the page's bodies are read, not kept by the index
    store.index(sid).nodes._cache.clear()
    page = store.history_page(sid, None, limit=100)
    assert [n.id for n in page.nodes] == [f"n{i:03d}" for i in range(20, 120)]
    assert store.index(sid).nodes.cached() == 0
