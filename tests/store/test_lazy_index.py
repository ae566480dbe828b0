"""The index keeps node bodies on disk until asked for; its node log survives crashes, other
processes and restarts, and history pages stay exact across forks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import BrokenChain
from openprogram_lsp.core.types import Node
from openprogram_lsp.store import index as index_mod
from openprogram_lsp.store import node_log
from openprogram_lsp.store.node_log import NODE_LOG
from openprogram_lsp.store.session_store import SessionStore


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every node file the index parses."""
    seen: list[Path] = []
    real = index_mod.read_body

    def counting(path: Path) -> Node:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(index_mod, "read_body", counting)
    return seen


def _tree(store: SessionStore) -> tuple[str, dict[str, str]]:
    """A session of 40 chain nodes with tool callees, a fork at n9 and a second root.

    Returns the session id and each tip by name."""
    sid = store.create_session()
    pred = None
    for i in range(40):
        node = store.append(sid, Node(id=f"n{i}", role="user" if i % 2 == 0 else "assistant",
                                      text=f"m{i}", predecessor=pred, status="done"),
                            advance_head=True)
        if i % 2:
            store.append(sid, Node(id=f"t{i}", role="tool", text="out", caller=node.id))
        pred = node.id
    fork = None
    for i in range(7):
        fork = store.append(sid, Node(id=f"f{i}", role="user", text=f"f{i}",
                                      predecessor=fork or "n9")).id
    store.append(sid, Node(id="r0", role="user", text="again"))
    store.commit_turn(sid, "tree")
    return sid, {"main": "n39", "fork": "f6", "root": "r0"}


@pytest.fixture(scope="module")
def _built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str]]:
    home = tmp_path_factory.mktemp("tree")
    sid, tips = _tree(SessionStore(home))
    return home, sid, tips


@pytest.fixture
def tree(_built: tuple[Path, str, dict[str, str]],
         tmp_path: Path) -> tuple[Path, str, dict[str, str]]:
    """A fresh copy of the tree session under its own home."""
    home, sid, tips = _built
    shutil.copytree(home / "sessions", tmp_path / "home" / "sessions", symlinks=True)
    return tmp_path / "home", sid, tips


def _walk(store: SessionStore, sid: str, head: str) -> list[str]:
    out: list[str] = []
    cur: str | None = head
    while cur is not None:
        out.append(cur)
        cur = store.get_node(sid, cur).predecessor
    return out[::-1]


def test_opening_a_session_reads_no_body_until_one_is_asked_for(
        tree: tuple[Path, str, dict[str, str]], reads: list[Path]) -> None:
    tmp_path, sid, _ = tree
    reads.clear()
    store = SessionStore(tmp_path)  # a restart: the index comes from the node log
    assert store.head(sid) == "n39"
    assert store.index(sid).tips() == ["n39", "f6", "r0"]
    assert len(store.chain_ids(sid)) == 40 and store.has_node(sid, "t1")
    assert [n.id for n in store.callees(sid, "n1", role="system")] == []
    assert reads == []
    nodes, more = store.page(sid, "n39", limit=5)
    assert [n.id for n in nodes] == ["n35", "n36", "n37", "n38", "n39"] and more
    assert len(reads) == 5
    store.page(sid, "n39", limit=5)  # kept: read once
    store.get_node(sid, "n37")
    assert len(reads) == 5
    assert store.index(sid).nodes.cached() == 5


def test_history_pages_match_a_full_walk_on_every_branch_after_a_restart(
        tree: tuple[Path, str, dict[str, str]]) -> None:
    tmp_path, sid, tips = tree
    first = SessionStore(tmp_path)
    first.get_branch(sid, "f6")
    for store in (first, SessionStore(tmp_path)):
        for tip in tips.values():
            pages: list[str] = []
            before = None
            for _ in range(20):
                nodes, more = store.page(sid, tip, limit=6, before=before)
                pages[:0] = [n.id for n in nodes]
                if not more:
                    break
                before = nodes[0].id
            assert pages == _walk(store, sid, tip) == [n.id for n in store.get_branch(sid, tip)]
    assert first.rebuild_index(sid).snapshot() == SessionStore(tmp_path).index(sid).snapshot()


def test_another_process_s_appends_and_rewrites_are_seen(
        tree: tuple[Path, str, dict[str, str]]) -> None:
    tmp_path, sid, _ = tree
    a, b = SessionStore(tmp_path), SessionStore(tmp_path)
    assert b.get_node(sid, "n39").text == "m39"  # b keeps the body
    a.update_node(sid, "n39", text="edited")
    a.append(sid, Node(id="n40", role="user", text="new", predecessor="n39"),
             advance_head=True)
    assert b.get_node(sid, "n39").text == "edited"
    assert [n.id for n in b.page(sid, b.head(sid) or "", limit=2)[0]] == ["n39", "n40"]
    assert b.rebuild_index(sid).snapshot() == b.index(sid).snapshot()


def test_node_lines_a_crashed_writer_never_wrote_are_restored(
        tree: tuple[Path, str, dict[str, str]]) -> None:
    tmp_path, sid, _ = tree
    store = SessionStore(tmp_path)
    log = tmp_path / "sessions" / sid / ".git" / NODE_LOG
    lines = log.read_bytes().splitlines(keepends=True)
    # the last node's line lost (died after its file), and one in the middle
    log.write_bytes(b"".join(lines[:10] + lines[11:-1]))
    fresh = SessionStore(tmp_path)
    assert fresh.index(sid).snapshot() == store.rebuild_index(sid).snapshot()
    assert len(log.read_bytes().splitlines()) == len(lines)  # written back
    log.write_bytes(b"[1,2,\n" + log.read_bytes())  # a damaged log is rebuilt from the files
    assert SessionStore(tmp_path).index(sid).snapshot() == store.rebuild_index(sid).snapshot()
    log.unlink()  # a session from before the log
    assert SessionStore(tmp_path).index(sid).snapshot() == store.rebuild_index(sid).snapshot()
    assert log.exists()


def test_a_missing_node_file_is_a_broken_chain_when_its_body_is_read(
        tree: tuple[Path, str, dict[str, str]]) -> None:
    tmp_path, sid, _ = tree
    store = SessionStore(tmp_path)
    (tmp_path / "sessions" / sid / "nodes" / store.index(sid).files["n3"]).unlink()
    fresh = SessionStore(tmp_path)
    assert fresh.page(sid, "n39", limit=3)[0][0].id == "n37"  # the page does not need it
    with pytest.raises(BrokenChain):
        fresh.get_branch(sid)


def test_the_log_is_rewritten_when_updates_pile_up(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_mod, "LOG_SLACK", 4)
    store = SessionStore(tmp_path)
    sid = store.create_session()
    store.append(sid, Node(id="a", role="user", text="x"), advance_head=True)
    for n in range(8):
        store.update_node(sid, "a", text=f"x{n}")
    store.append(sid, Node(id="b", role="assistant", predecessor="a", status="running"))
    log = tmp_path / "sessions" / sid / ".git" / NODE_LOG
    rows: list[node_log.Row] = []
    assert node_log.read(log, rows.append) is not None
    assert [(r[1], r[5]) for r in rows] == [("a", False), ("b", True)]
    assert SessionStore(tmp_path).get_node(sid, "a").text == "x7"


def test_bodies_past_the_cap_are_dropped_oldest_first(
        tree: tuple[Path, str, dict[str, str]]) -> None:
    tmp_path, sid, _ = tree
    store = SessionStore(tmp_path)
    bodies = store.index(sid).nodes
    bodies.cap = 8
    store.get_branch(sid)
    assert bodies.cached() <= 8
    assert [n.id for n in store.get_branch(sid)] == _walk(store, sid, "n39")


def test_log_lines_carry_any_id(tmp_path: Path) -> None:
    odd = ['a\tb', 'new\nline', '"quoted', 'é-ü', 'lone\udcff', 'back\\slash', 'x' * 300]
    rows: list[node_log.Row] = [
        (n + 1, nid, "user", odd[n - 1] if n else None, None, n % 2 == 0,
         f"old/{nid}.json" if n == 3 else None) for n, nid in enumerate(odd)]
    path = tmp_path / NODE_LOG
    node_log.rewrite(path, rows[:3])
    node_log.append(path, rows[3:])
    with open(path, "ab") as fh:
        fh.write(b"9\tpartial")  # a line still being written is left for later
    got: list[node_log.Row] = []
    read = node_log.read(path, got.append)
    assert read is not None and not read.damaged and got == rows
    more: list[node_log.Row] = []
    assert node_log.read(path, more.append, read.offset, read.ident) is not None and more == []
