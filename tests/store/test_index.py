"""The in-memory index: chains walked incrementally stay exact across forks and checkouts."""

from __future__ import annotations

import pytest

from openprogram_lsp.core.errors import BrokenChain
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.index import SessionIndex, node_path, top_seq


def _add(idx: SessionIndex, nid: str, pred: str | None, status: str = "done") -> None:
    seq = idx.next_seq
    idx.add(Node(id=nid, role="user", text=nid, predecessor=pred, status=status),  # type: ignore[arg-type]
            node_path(seq, nid), seq)


def _walk(idx: SessionIndex, head: str) -> list[str]:
    out, cur = [], head
    while cur is not None:
        out.append(cur)
        cur = idx.nodes[cur].predecessor
    return out[::-1]


def test_chains_of_every_head_in_any_order_match_a_full_walk() -> None:
    idx = SessionIndex()
    pred = None
    for i in range(30):
        _add(idx, f"a{i}", pred)
        pred = f"a{i}"
    _add(idx, "b0", "a10")  # a fork in the middle
    _add(idx, "b1", "b0")
    _add(idx, "r0", None)  # a second root
    heads = ["a29", "a5", "b1", "a29", "a10", "b0", "r0", "a29", "b1"]
    for head in heads:
        assert [n.id for n in idx.chain(head)] == _walk(idx, head)
    _add(idx, "a30", "a29")
    assert [n.id for n in idx.chain("a30")] == _walk(idx, "a30")
    _add(idx, "b2", "b1")
    assert [n.id for n in idx.chain("b2")] == _walk(idx, "b2")


def test_a_cycle_or_a_missing_predecessor_is_refused() -> None:
    idx = SessionIndex()
    _add(idx, "x", "y")
    with pytest.raises(BrokenChain):
        idx.chain("x")
    _add(idx, "y", "x")
    with pytest.raises(BrokenChain):
        idx.chain("y")


def test_running_nodes_are_tracked_without_a_scan() -> None:
    idx = SessionIndex()
    _add(idx, "a", None, status="running")
    _add(idx, "b", "a")
    assert idx.running == {"a"}
    idx.add(idx.nodes["a"].model_copy(update={"status": "done"}), idx.files["a"], idx.seq["a"])
    assert idx.running == set()


def test_node_paths_shard_and_the_newest_shard_gives_the_top_seq(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert node_path(7, "n") == "000/00000/0000007-n.json"
    assert node_path(12_345, "n") == "001/00123/0012345-n.json"
    for seq in (3, 150, 10_010):
        path = tmp_path / node_path(seq, f"n{seq}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    (tmp_path / "0000042-old.json").write_text("{}")  # a flat file of an older session
    assert top_seq(tmp_path) == 10_010


def test_the_newest_seq_of_a_listing_is_read_as_each_name_would_be() -> None:
    import random

    from openprogram_lsp.store.index import _max_seq, _node_name

    rng = random.Random(7)
    for _ in range(500):  # odd names too: newlines, dots, context files, temp files
        names = ["".join(rng.choice("0123-.jsonctx\n") for _ in range(rng.randint(1, 14)))
                 + rng.choice(["", ".json", ".context.json", ".json.1.tmp"])
                 for _ in range(rng.randint(0, 6))]
        want = max((s for s in map(_node_name, names) if s is not None), default=None)
        assert _max_seq(names) == want, names


def _summary(idx: SessionIndex, nid: str, caller: str) -> None:
    seq = idx.next_seq
    idx.add(Node(id=nid, role="summary", text=nid, caller=caller), node_path(seq, nid), seq)


def _from_scratch(idx: SessionIndex, head: str) -> list[str]:
    chain = _walk(idx, head)
    at = {nid: i for i, nid in enumerate(chain)}
    found = [(at[c], idx.callees[c].index(s), s) for s in idx.summaries
             if (c := idx.nodes[s].caller) in at]
    return [s for *_, s in sorted(found)]


def test_summaries_on_a_chain_are_carried_and_equal_a_full_scan_across_forks() -> None:
    import random

    rng = random.Random(7)
    idx = SessionIndex()
    _add(idx, "n0", None)
    heads, made = ["n0"], 1
    for step in range(400):
        r = rng.random()
        head = rng.choice(heads) if r < 0.15 else heads[-1]  # now and then another line
        if r < 0.5:
            nid = f"n{made}"
            made += 1
            _add(idx, nid, head)
            heads.append(nid)
            head = nid
        else:  # a summary off some node: often the head, sometimes a node of another line
            caller = head if r < 0.85 else rng.choice(heads)
            _summary(idx, f"s{step}", caller)
        assert idx.summaries_on(head) == _from_scratch(idx, head), step
    # a summary off a child of the head, not on the chain yet; a later head continues to it
    last = heads[-1]
    _add(idx, "x0", last)
    _summary(idx, "sx", "x0")
    assert "sx" not in idx.summaries_on(last)
    _add(idx, "x1", "x0")
    assert "sx" in idx.summaries_on("x1") and idx.summaries_on("x1") == _from_scratch(idx, "x1")
    _summary(idx, "sx2", "x0")  # a second one on the same caller comes after the first
    on = idx.summaries_on("x1")
    assert on.index("sx2") == on.index("sx") + 1 and on == _from_scratch(idx, "x1")


def test_the_node_log_path_is_built_once_and_follows_its_root(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from openprogram_lsp.store import node_log

    a, b = tmp_path / "a", tmp_path / "b"
    idx = SessionIndex(a)
    first = idx._log_path
    assert first == a / ".git" / node_log.NODE_LOG and idx._log_path is first
    idx.root = b  # a root set again is never served the old one's log
    assert idx._log_path == b / ".git" / node_log.NODE_LOG
