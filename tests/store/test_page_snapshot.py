"""A kept first history page is served only while it is the page the full index gives: seeded
random sessions (forks, callees, rewritten nodes) changed in every way a writer changes them,
killed writers, replaced logs, torn and hostile snapshot files."""

from __future__ import annotations

import json
import os
import random
import time
import zlib
from pathlib import Path

import pytest

from openprogram_lsp.core.fsutil import replace_file
from openprogram_lsp.core.types import Node
from openprogram_lsp.lsp.history_result import history_result
from openprogram_lsp.lsp.node_wire import WireCache
from openprogram_lsp.lsp.page_keeper import render
from openprogram_lsp.store import log_tail, node_log, page_snapshot
from openprogram_lsp.store.index import node_path
from openprogram_lsp.store.node_log import NODE_LOG
from openprogram_lsp.store.page_snapshot import SNAPSHOT
from openprogram_lsp.store.session_store import SessionStore

MARGIN = 0.03
"""Seconds the tests' stamps must age (above any file-time tick: 4 ms at HZ=250, 10 at 100)."""


@pytest.fixture(autouse=True)
def _small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_tail, "FIRST_BLOCK", 97)
    monkeypatch.setattr(log_tail, "MAX_BLOCK", 400)
    monkeypatch.setattr(page_snapshot, "MARGIN_NS", int(MARGIN * 1e9))


def _age() -> None:
    """Let every stamp written so far become old enough to rely on (the margin is what the
    mechanism waits for: file times come from a coarse clock)."""
    time.sleep(MARGIN + 0.005)


def _session(store: SessionStore, rng: random.Random, n: int) -> str:
    sid = store.create_session(title="s")
    chain: list[str] = []
    for i in range(n):
        pred = (rng.choice(chain) if chain and rng.random() < 0.15
                else chain[-1] if chain else None)
        nid = f"c{i}"
        store.append(sid, Node(id=nid, role=rng.choice(["user", "assistant"]), text=f"m{i}",
                               predecessor=pred, status="done"),
                     advance_head=rng.random() < 0.85)
        chain.append(nid)
        if rng.random() < 0.25:
            store.append(sid, Node(id=f"t{i}", role="tool", text="out", caller=nid))
        if rng.random() < 0.2:
            store.append(sid, Node(id=f"a{i}", role="system", text="att",
                                   caller=rng.choice(chain),
                                   metadata={"kind": rng.choice(["attach", "note"])}))
        if rng.random() < 0.15:
            store.update_node(sid, rng.choice(chain), text=f"edited {i}")
    store.commit_turn(sid, "random")
    return sid


def _full(home: Path, sid: str, limit: int, head: str | None = None) -> bytes:
    """The history answer's JSON from a process that opened the session (the full index)."""
    store = SessionStore(home)
    store.index(sid)
    page = store.history_page(sid, head, limit=limit, reply_role="system")
    return json.dumps(history_result(sid, page, WireCache().wire_many)).encode()


def _kept(home: Path, sid: str, limit: int, head: str | None = None) -> bytes | None:
    return SessionStore(home).kept_page(sid, head, limit=limit, before=None)


def _keep(home: Path, sid: str, limit: int) -> float | None:
    return SessionStore(home).keep_first_page(sid, render(sid), limit=limit, min_nodes=1)


def _page_ids(home: Path, sid: str, limit: int) -> list[str]:
    return [n["id"] for n in json.loads(_full(home, sid, limit))["nodes"]]


def _file_of(store: SessionStore, sid: str, nid: str) -> Path:
    idx = SessionStore(store.home).index(sid)
    return store.session_dir(sid) / "nodes" / node_path(idx.seq[nid], nid)


def _mutate(store: SessionStore, sid: str, kind: str, rng: random.Random, limit: int) -> None:
    """One change another process could make (or leave behind when killed)."""
    root = store.session_dir(sid)
    ids = _page_ids(store.home, sid, limit)
    head = store.head(sid)
    if kind == "append":
        store.append(sid, Node(id=f"x{rng.random()}", role="user", text="new", predecessor=head),
                     advance_head=True)
    elif kind == "callee":
        store.append(sid, Node(id=f"y{rng.random()}", role="system", text="late",
                               caller=rng.choice(ids), metadata={"kind": "attach"}))
    elif kind == "rewrite":
        store.update_node(sid, rng.choice(ids), text="rewritten")
    elif kind == "killed-rewrite":  # a writer killed between a page node's file and its line
        nid = rng.choice(ids)
        path = _file_of(store, sid, nid)
        body = json.loads(path.read_bytes())
        body["text"] = "rewritten, line lost"
        replace_file(path, json.dumps(body))
    elif kind == "killed-new":  # a new node's file, its line never written
        nxt = max(SessionStore(store.home).index(sid).seq.values()) + 1
        path = root / "nodes" / node_path(nxt, "lost")
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, Node(id="lost", role="user", text="lost", predecessor=head)
                     .model_dump_json())
    elif kind == "running":
        store.start_turn(sid, Node(id=f"u{rng.random()}", role="user", text="go",
                                   predecessor=head),
                         Node(id=f"r{rng.random()}", role="assistant", text="",
                              status="running"))
    elif kind == "fork":
        store.set_head(sid, rng.choice(ids[:-1] or ids))
    elif kind == "replaced-log":  # the same lines, a new file
        data = (root / ".git" / NODE_LOG).read_bytes()
        tmp = root / ".git" / "log.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, root / ".git" / NODE_LOG)
    elif kind == "title":
        store.update_meta(sid, title="renamed")
    else:
        assert kind == "nothing"


KINDS = ["append", "callee", "rewrite", "killed-rewrite", "killed-new", "running", "fork",
         "replaced-log", "title", "nothing", "nothing"]


@pytest.mark.parametrize("seed", [1])
def test_a_kept_page_is_served_only_while_it_is_the_full_index_page(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    home = tmp_path / "home"
    store = SessionStore(home)
    sessions = [(_session(store, rng, rng.randint(15, 35)), rng.choice([4, 9, 200]))
                for _ in range(3)]
    kinds = rng.sample(KINDS, len(KINDS)) * 2  # every kind, in a seeded order
    served, refused = [], []
    for _ in range(6):
        _age()
        for sid, limit in sessions:
            assert _keep(home, sid, limit) is None
        for sid, limit in sessions:
            kept = _kept(home, sid, limit)
            if kept is not None:  # kept (not every state can be: a turn still running)
                assert kept == _full(home, sid, limit)
            kind = kinds.pop()
            _mutate(store, sid, kind, rng, limit)
            after = _kept(home, sid, limit)
            if kept is not None and kind == "nothing":
                assert after == kept
                served.append(kind)
            elif kept is not None:
                assert after is None, kind  # every change moves a stamp
                refused.append(kind)
            if kind == "running":  # the turn ends (its owner is alive: no recovery)
                for tid in store.meta(sid).get("running") or {}:
                    store.update_node(sid, tid, status="done", text="done")
                    store.end_turn(sid, tid)
    assert served and len(set(refused)) >= 6, (served, refused)


def _kept_session(store: SessionStore, home: Path, seed: int) -> str:
    """A 30-node random session whose first 10-node page is kept (its stamps aged)."""
    sid = _session(store, random.Random(seed), 30)
    _age()
    assert _keep(home, sid, 10) is None
    return sid


def test_a_page_held_elsewhere_or_asked_differently_is_not_served(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = SessionStore(home)
    sid = _kept_session(store, home, 5)
    full = _full(home, sid, 10)
    assert _kept(home, sid, 10) == full
    assert _kept(home, sid, 11) is None  # another page size
    head = json.loads(full)["headId"]
    assert _kept(home, sid, 10, head) == full
    assert _kept(home, sid, 10, "c0") is None  # another branch
    assert SessionStore(home).kept_page(sid, None, limit=10, before="c3") is None
    opened = SessionStore(home)
    opened.index(sid)
    assert opened.kept_page(sid, None, limit=10, before=None) is None  # the index serves
    # another session's snapshot copied over is not this one's (its sid, its files' stamps)
    other = _kept_session(store, home, 6)
    theirs = store.session_dir(other) / ".git" / SNAPSHOT
    mine = store.session_dir(sid) / ".git" / SNAPSHOT
    mine.write_bytes(theirs.read_bytes())
    assert _kept(home, sid, 10) is None
    forged = theirs.read_bytes().replace(other.encode(), sid.encode())
    mine.write_bytes(forged)
    assert _kept(home, sid, 10) is None  # the stamps are the other session's files


def _rewrite(path: Path, header: dict[str, object], payload: bytes) -> None:
    header = {**header, "size": len(payload), "crc": zlib.crc32(payload)}
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)


def test_torn_and_hostile_snapshot_files_are_never_served(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = SessionStore(home)
    sid = _kept_session(store, home, 7)
    path = store.session_dir(sid) / ".git" / SNAPSHOT
    good = path.read_bytes()
    assert _kept(home, sid, 10) is not None
    line, payload = good.split(b"\n", 1)
    header = json.loads(line)
    cases: list[bytes] = [
        good[: len(good) // 2], good[:-1], good + b" ", b"", b"\n", b"\x00" * 100,
        good.replace(b'"hasMore": true', b'"hasMore": false'),  # checksum
        b"[1]\n" + payload, b'{"v": 1}\n' + payload, line + b"\n" + b"\xff" * 10,
        b"{" * 100_000 + b"\n",
    ]
    for case in cases:
        path.write_bytes(case)
        assert _kept(home, sid, 10) is None, case[:60]
    hostile = [
        (header, b'{"sessionId": 1'),  # not JSON, checksum right
        (header, payload[:-1] + b", 1}"),
        (header, payload.replace(b'"hasMore"', b'"other"')),
        (header, payload.replace(b'"nodes": [', b'"nodes": [NaN, ')),  # not JSON to a client
        (header, payload.replace(b'"nodes": [', b'"nodes": [-Infinity, ')),
        (header, json.dumps({**json.loads(payload), "sessionId": "elsewhere"}).encode()),
        (header, json.dumps({**json.loads(payload), "nodes": {}}).encode()),
        (header, json.dumps(json.loads(payload), ensure_ascii=False).replace(
            "m", "\u00e9").encode()),
        (header, json.dumps(json.loads(payload)).encode("utf-16")),
        ({**header, "first": 0, "top": 10**12}, payload),  # a huge range to stat
        ({**header, "first": True}, payload),
        ({**header, "extra": ["nodes/../../x"]}, payload),
        ({**header, "stamps": header["stamps"][:-1]}, payload),
        ({**header, "stamps": [[1, 2, 3]] * len(header["stamps"])}, payload),
        ({**header, "limit": "10"}, payload),
    ]
    for head, body in hostile:
        _rewrite(path, head, body)
        assert _kept(home, sid, 10) is None, (head, body[:60])
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_bytes(good)
    assert _kept(home, sid, 10) is None  # not followed
    path.unlink()
    path.mkdir()
    assert _kept(home, sid, 10) is None
    path.rmdir()
    _rewrite(path, header, payload)
    assert _kept(home, sid, 10) == payload  # the same bytes rewritten: served again


def test_nothing_is_kept_while_stamps_are_young_or_a_turn_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    store = SessionStore(home)
    sid = _session(store, random.Random(8), 30)
    monkeypatch.setattr(page_snapshot, "MARGIN_NS", 3_600 * 10**9)
    again = _keep(home, sid, 10)
    assert again is not None and again > 3_000  # try again once the stamps are old enough
    assert not (store.session_dir(sid) / ".git" / SNAPSHOT).exists()
    monkeypatch.setattr(page_snapshot, "MARGIN_NS", int(MARGIN * 1e9))
    store.start_turn(sid, Node(id="u", role="user", text="go", predecessor=store.head(sid)),
                     Node(id="r", role="assistant", text="", status="running"))
    _age()
    assert _keep(home, sid, 10) is None
    assert not (store.session_dir(sid) / ".git" / SNAPSHOT).exists()  # recovery's business
    assert SessionStore(home).keep_first_page(sid, render(sid), limit=10) is None


def _where() -> list[str]:
    out = ["tmp"]
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        out.append("shm")
    return out


@pytest.mark.parametrize("where", _where())
def test_a_file_replaced_in_a_directory_moves_its_stamp(
        tmp_path: Path, where: str) -> None:
    """What the shard stamps rely on, on this file system (ext4 for tmp here, tmpfs for shm):
    creating a temporary file in a directory and renaming it over a node file changes the
    directory's mtime, even when the writer dies before the rename."""
    import tempfile

    base = Path(tempfile.mkdtemp(dir="/dev/shm")) if where == "shm" else tmp_path
    try:
        shard = base / "nodes" / "000" / "00000"
        shard.mkdir(parents=True)
        node = shard / "0000001-a.json"
        replace_file(node, "{}")
        old = 1_000_000_000_000_000_000  # in 2001: any change now is later
        for step in ("rename", "temp only"):
            os.utime(shard, ns=(old, old))
            before = page_snapshot.stamps(base, ["nodes/000/00000"])
            if step == "rename":
                replace_file(node, '{"x": 1}')
            else:  # a writer killed after creating its temporary file
                (shard / ".0000001-a.json.1.0.tmp").write_bytes(b"{")
            after = page_snapshot.stamps(base, ["nodes/000/00000"])
            assert before[0] is not None and after[0] is not None
            assert after[0][3] > old and after != before, step
        log = base / "log"
        log.write_bytes(b"1\ta\tuser\t\t\t0\n")
        before = page_snapshot.stamps(base, ["log"])
        node_log.append(log, [(2, "b", "user", "a", None, False, None)])
        assert page_snapshot.stamps(base, ["log"]) != before  # every line moves the size
        node_log.forget(log)
    finally:
        if where == "shm":
            import shutil

            shutil.rmtree(base, ignore_errors=True)
