"""The page keeper writes first pages in its own thread: after a finished turn, after a read,
again when the session's last write is too recent to rely on its stamps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openprogram_lsp.core.types import Node
from openprogram_lsp.events.bus import make_event
from openprogram_lsp.lsp import page_keeper
from openprogram_lsp.lsp.history_result import history_result
from openprogram_lsp.lsp.node_wire import WireCache
from openprogram_lsp.lsp.page_keeper import PageKeeper
from openprogram_lsp.store import page_snapshot
from openprogram_lsp.store.page_snapshot import SNAPSHOT
from openprogram_lsp.store.session_store import SessionStore


def _session(store: SessionStore, n: int) -> str:
    sid = store.create_session()
    pred = None
    for i in range(n):
        pred = store.append(sid, Node(id=f"n{i}", role="user", text=f"{i}", predecessor=pred,
                                      status="done"), advance_head=True).id
    return sid


def test_a_finished_turn_and_a_read_queue_the_page_and_young_stamps_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_snapshot, "MIN_NODES", 5)
    monkeypatch.setattr(page_snapshot, "MARGIN_NS", 0)
    store = SessionStore(tmp_path / "home")
    sid, small = _session(store, 12), _session(store, 3)
    keeper = PageKeeper(store)
    calls: list[tuple[str, float | None]] = []
    real = store.keep_first_page

    def keep(sid: str, render: page_snapshot.Render, *, limit: int) -> float | None:
        again = 0.01 if not calls else real(sid, render, limit=limit)  # first: "too young"
        calls.append((sid, again))
        return again

    monkeypatch.setattr(store, "keep_first_page", keep)
    keeper.on_event(make_event("text.delta", {}, session_id=sid, turn_id="t", origin="x"))
    assert keeper.drain(5.0)  # nothing queued
    keeper.on_event(make_event("turn.finished", {}, session_id=sid, turn_id="t", origin="x"))
    keeper.want(small, 10)
    assert keeper.drain(5.0)
    assert sorted(calls, key=str) == sorted([(sid, 0.01), (sid, None), (small, None)], key=str)
    page = store.history_page(sid, None, limit=200)
    want = json.dumps(history_result(sid, page, WireCache().wire_many)).encode()
    assert SessionStore(store.home).kept_page(sid, None, limit=200, before=None) == want
    assert not (store.session_dir(small) / ".git" / SNAPSHOT).exists()  # too short to keep
    keeper.want(sid, 6)  # the size a reader asked for is kept from then on
    keeper.on_event(make_event("turn.finished", {}, session_id=sid, turn_id="t", origin="x"))
    assert keeper.drain(5.0)
    got = SessionStore(store.home).kept_page(sid, None, limit=6, before=None)
    assert got is not None and [n["id"] for n in json.loads(got)["nodes"]] == [
        f"n{i}" for i in range(6, 12)]


def test_a_read_longer_than_a_page_is_not_kept_nor_remembered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_snapshot, "MIN_NODES", 5)
    monkeypatch.setattr(page_snapshot, "MARGIN_NS", 0)
    store = SessionStore(tmp_path / "home")
    sid = _session(store, 12)
    keeper = PageKeeper(store)
    keeper.want(sid, page_keeper.KEEP_MAX + 1)  # a bulk read: its memory is not spent again
    assert keeper.drain(5.0)
    assert not (store.session_dir(sid) / ".git" / SNAPSHOT).exists()
    keeper.on_event(make_event("turn.finished", {}, session_id=sid, turn_id="t", origin="x"))
    assert keeper.drain(5.0)  # the editors' page, as before the long read
    assert SessionStore(store.home).kept_page(sid, None, limit=page_keeper.KEEP_MAX,
                                              before=None) is not None
