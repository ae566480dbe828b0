"""ContextCommits whose ``replaced``/``protected`` lists are stored as a change from the
previous turn's record: read back, they equal the full record written, on seeded random
sessions with forks, branch switches, edits of history, restarts and damaged bases."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.context.commit import ContextCommit
from openprogram_lsp.core.types import Node
from openprogram_lsp.store import context_deltas
from openprogram_lsp.store.context_deltas import FULL_EVERY, apply, diff
from openprogram_lsp.store.session_store import SessionStore


def _record(turn: str, replaced: list[str], protected: list[str]) -> dict[str, Any]:
    return {"version": 3, "sessionId": "s", "turnId": turn, "model": "m", "contextWindow": 10,
            "outputReserve": 1, "estimate": 2, "estimateInput": 1, "rawEstimateInput": 1,
            "calibration": 1.0, "usageRatio": 0.2, "messages": 4, "messagesDigest": "d",
            "replaced": list(replaced), "protected": list(protected)}


def _turn(store: SessionStore, sid: str, t: int, head: str | None) -> str:
    user = store.append(sid, Node(id=f"u{t}", role="user", text=f"turn {t}", predecessor=head))
    return store.append(sid, Node(id=f"a{t}", role="assistant", text=f"done {t}",
                                  predecessor=user.id, status="done")).id


def _context_file(store: SessionStore, sid: str, turn: str) -> Path:
    path = store.session_dir(sid) / "nodes" / store.index(sid).files[turn]
    return path.with_name(path.name[:-5] + ".context.json")


def _stored(store: SessionStore, sid: str, turn: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_context_file(store, sid, turn).read_bytes())
    return data


def _changed(rng: random.Random, keys: list[str], fresh: list[str], *, order: bool) -> list[str]:
    """``keys`` with a few dropped and a few new ones put in (kept sorted when ``order``)."""
    out = [k for k in keys if rng.random() > 0.04]
    for _ in range(rng.choice([0, 0, 0, 1, 2, 5])):
        out.insert(rng.randint(0, len(out)), fresh.pop())
    if rng.random() < 0.03 and out:  # now and then a repeated key, or a reordering
        out.insert(rng.randint(0, len(out)), rng.choice(out))
    if rng.random() < 0.03:
        rng.shuffle(out)
    return sorted(set(out)) if order else out


def test_diff_and_apply_give_back_the_new_list_or_nothing() -> None:
    rng = random.Random(5)
    fresh = [f"n{i}:c{i}" for i in range(5000)]
    keys = fresh[:40]
    del fresh[:40]
    for _ in range(300):
        new = _changed(rng, keys, fresh, order=False)
        delta = diff(keys, new)
        if delta is not None:
            assert apply(keys, *delta) == new
            assert len(delta[0]) + len(delta[1]) <= len(new) // 2 + 1
        keys = new
    assert diff(["a", "b"], ["b", "a"]) is None  # a reordering is no small change
    assert diff(["a", "a", "b"], ["a", "b"]) is None  # nor a repeated key dropped
    for drop, add in (([1, 0], []), ([5], []), (["0"], []), ([], [[3, "x"]]), ([], [[0, 1]]),
                      ([], [[1, "x"], [0, "y"]]), ([], ["x"])):
        with pytest.raises(ValueError):
            apply(["a", "b"], drop, add)


def test_records_read_back_equal_the_full_ones_on_random_sessions(tmp_path: Path) -> None:
    rng = random.Random(3)
    store = SessionStore(tmp_path)
    sid = store.create_session()
    fresh = [f"n{i}:call_{i}" for i in range(20000)]
    lists: dict[str, tuple[list[str], list[str]]] = {}  # turn -> the lists it recorded
    head: str | None = None
    kinds: set[str] = set()
    for t in range(160):
        roll = rng.random()
        what = ""
        if head is not None and roll < 0.08:  # fork from an earlier turn of this branch
            head = rng.choice([i for i in store.chain_ids(sid, head) if i in lists])
            what = "fork"
        elif roll < 0.12 and lists:  # switch to another branch
            head = rng.choice(store.index(sid).tips())
            what = "switch"
        elif roll < 0.16:  # restart: nothing remembered
            store = SessionStore(tmp_path)
            what = "restart"
        elif roll < 0.24 and head is not None:  # edit of history
            old = rng.choice([i for i in store.chain_ids(sid, head) if i in lists])
            store.update_node(sid, old, text="edited")
            what = "edit"
        base = lists.get(head or "", ([], []))
        if rng.random() < 0.05:  # a compaction: the results go with the summarised turns
            replaced, protected = [], []
        else:
            replaced = _changed(rng, base[0] or fresh[-30:], fresh, order=False)
            protected = _changed(rng, base[1] or fresh[-40:-30], fresh, order=True)
        head = _turn(store, sid, t, head)
        lists[head] = (replaced, protected)
        record = _record(head, replaced, protected)
        store.write_context_commit(sid, head, record)
        assert store.read_context_commit(sid, head) == record
        stored = _stored(store, sid, head)
        kinds.add("delta" if "listsBase" in stored else "full")
        if "listsBase" in stored:
            kinds.add(f"delta after {what}" if what else "delta")
            if "listsBase" in _stored(store, sid, stored["listsBase"]):
                kinds.add("on a delta")
            assert stored["listsBase"] in store.chain_ids(sid, head)  # an ancestor's record
            assert stored["listsDepth"] < FULL_EVERY
            with pytest.raises(ValueError, match="delta"):
                ContextCommit.model_validate(stored)
    assert kinds >= {"delta", "full", "on a delta", "delta after fork", "delta after switch",
                     "delta after restart", "delta after edit"}, kinds
    again = SessionStore(tmp_path)  # read from scratch: every record as it was written
    for turn, (replaced, protected) in lists.items():
        got = again.read_context_commit(sid, turn)
        assert got == _record(turn, replaced, protected)
        assert ContextCommit.model_validate(got).replaced == replaced


def test_a_line_of_deltas_ends_with_a_full_record(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    keys = [f"n{i}:c" for i in range(50)]
    head = None
    depths = []
    for t in range(FULL_EVERY + 3):
        head = _turn(store, sid, t, head)
        store.write_context_commit(sid, head, _record(head, keys, keys[:10]))
        depths.append(_stored(store, sid, head).get("listsDepth", 0))
    assert depths == [*range(FULL_EVERY), 0, 1, 2]


def test_the_record_of_a_turn_that_changed_nothing_does_not_grow(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    head = None
    sizes: dict[int, int] = {}
    keys = [f"t{t:06d}_reply:c" for t in range(10)]
    for t in range(10, 50):
        keys.append(f"t{t:06d}_reply:c{t}")  # a result cleared on most turns
        for k in range(30 if t % 10 == 9 else 0):  # ... and now and then many
            keys.append(f"t{t:06d}_reply:more{k}")
        head = _turn(store, sid, t, head)
        store.write_context_commit(sid, head, _record(head, keys, keys[::7]))
        if t % 10 == 5:  # after a turn that added one: the next one adds none
            head = _turn(store, sid, 1000 + t, head)
            store.write_context_commit(sid, head, _record(head, keys, keys[::7]))
            sizes[len(keys)] = len(json.dumps(_stored(store, sid, head)))
    full = len(json.dumps(_record(head or "", keys, keys[::7])))
    # the same bytes at 16 keys and at 136 (give or take a digit of its depth)
    assert max(sizes.values()) - min(sizes.values()) <= 1, sizes
    assert max(sizes.values()) * 5 < full


def test_a_missing_or_damaged_base_gives_no_lists_never_wrong_ones(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    keys = [f"n{i}:c" for i in range(30)]
    turns = []
    head = None
    for t in range(6):
        head = _turn(store, sid, t, head)
        keys = [*keys, f"x{t}:c"]
        store.write_context_commit(sid, head, _record(head, keys, keys[:12]))
        turns.append(head)
    assert "listsBase" in _stored(store, sid, turns[-1])
    base = _context_file(store, sid, turns[2])
    good = base.read_bytes()
    data = json.loads(good)
    for n, damage in enumerate(("replacedAdd", "missing", "torn")):
        if damage == "missing":
            base.unlink()
        elif damage == "torn":
            base.write_bytes(good[:40])
        else:  # still valid JSON, another key put in
            base.write_text(json.dumps({**data, "replacedAdd": [[0, "other:c"]]}))
        for turn in turns[3:]:  # every later record of that line
            got = store.read_context_commit(sid, turn)
            assert got is not None and got["replaced"] is None and got["protected"] is None
            assert got["listsUnresolved"] and got["estimate"] == 2
            with pytest.raises(ValueError):
                ContextCommit.model_validate(got)
        assert store.read_context_commit(sid, turns[1]) == _record(turns[1], keys[:-4],
                                                                   keys[:12])
        # the next turn, with nothing remembered, cannot use that line: a full record
        fresh = SessionStore(tmp_path)
        head = _turn(fresh, sid, 100 + n, turns[-1])
        turns.append(head)
        fresh.write_context_commit(sid, head, _record(head, keys, keys[:12]))
        assert "listsBase" not in _stored(fresh, sid, head)
        assert fresh.read_context_commit(sid, head) == _record(head, keys, keys[:12])
        base.write_bytes(good)
        turns = turns[:-1]
    # the full record a line starts from, changed: every delta on it gives no lists
    first = _context_file(store, sid, turns[0])
    was = json.loads(first.read_bytes())
    first.write_text(json.dumps({**was, "replaced": ["other:c", *was["replaced"][1:]]}))
    got = store.read_context_commit(sid, turns[1])
    assert got is not None and got["replaced"] is None and "digest" in got["listsUnresolved"]
    # a remembered base whose file went: not used either
    head = _turn(store, sid, 200, turns[-1])
    store.write_context_commit(sid, head, _record(head, keys, keys[:12]))
    assert "listsBase" in _stored(store, sid, head)
    _context_file(store, sid, head).unlink()
    nxt = _turn(store, sid, 201, head)
    store.write_context_commit(sid, nxt, _record(nxt, keys, keys[:12]))
    assert "listsBase" not in _stored(store, sid, nxt)


def test_older_records_and_short_lists_are_stored_as_they_come(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create_session()
    keys = [f"n{i}:c" for i in range(30)]
    head = _turn(store, sid, 0, None)
    store.write_context_commit(sid, head, {**_record(head, keys, keys), "version": 2})
    nxt = _turn(store, sid, 1, head)
    store.write_context_commit(sid, nxt, {**_record(nxt, keys, keys), "version": 2})
    assert _stored(store, sid, nxt)["replaced"] == keys  # version 2: lists in full
    third = _turn(store, sid, 2, nxt)
    store.write_context_commit(sid, third, _record(third, keys, keys))
    assert _stored(store, sid, third)["listsBase"] == nxt  # on a version 2 record
    assert store.read_context_commit(sid, third) == _record(third, keys, keys)
    short = _turn(store, sid, 3, third)
    store.write_context_commit(sid, short, _record(short, keys[:3], keys[:3]))
    assert _stored(store, sid, short)["replaced"] == keys[:3]
    assert context_deltas.resolve({"listsBase": "x", "listsDepth": 0}, lambda t: None) is None
