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
