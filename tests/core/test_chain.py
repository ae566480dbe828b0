"""NodeChain: the ids up front, bodies read only when looked at."""

from __future__ import annotations

import pytest

from openprogram_lsp.core.chain import BodyLog, Mark, NodeChain, id_at
from openprogram_lsp.core.types import Node


def test_a_chain_reads_only_the_bodies_it_is_asked_for() -> None:
    bodies = {f"n{i}": Node(id=f"n{i}", role="user", text=str(i)) for i in range(10)}
    reads: list[str] = []

    def fetch(ids: list[str]) -> list[Node]:
        reads.extend(ids)
        return [bodies[i] for i in ids]

    ids = [f"n{i}" for i in range(8)]
    chain = NodeChain(ids, fetch, 6)  # the owner's list may grow: only 6 are this chain
    ids.append("n8")
    assert len(chain) == 6 and chain.id_at(-1) == "n5" and chain.ids(4) == ["n4", "n5"]
    assert not reads
    assert [n.id for n in chain[4:]] == ["n4", "n5"] and reads == ["n4", "n5"]
    longer = chain.plus(bodies["n9"])
    assert len(longer) == 7 and longer.id_at(-1) == "n9" and longer[-1] is bodies["n9"]
    edited = longer.with_last(Node(id="n9", role="user", text="expanded"))
    assert edited[-1].text == "expanded" and longer[-1].text == "9"
    assert chain.with_last(bodies["n9"]).ids() == ["n0", "n1", "n2", "n3", "n4", "n9"]
    assert [n.id for n in edited] == [*ids[:6], "n9"] and edited.ids(5, 7) == ["n5", "n9"]
    assert [n.id for n in edited[::3]] == ["n0", "n3", "n9"]
    with pytest.raises(IndexError):
        edited.id_at(7)
    plain = list(bodies.values())[:3]
    assert NodeChain.of(plain).ids() == ["n0", "n1", "n2"] and id_at(plain, -1) == "n2"
    assert NodeChain.of(edited) is edited
    with pytest.raises(IndexError):
        NodeChain.of([]).with_last(bodies["n0"])
    # a prefix reads nothing and keeps what the chain holds itself
    reads.clear()
    assert edited.held == 1 and chain.held == 0
    assert edited.prefix(6).ids() == ids[:6] and edited.prefix(6).held == 0
    assert edited.prefix(7).ids() == edited.ids() and edited.prefix(99).held == 1
    assert edited.prefix(-1).ids() == [] and not reads


def test_the_body_log_answers_what_changed_since_until_it_forgets() -> None:
    log = BodyLog(keep=2)
    assert log.count == 0 and log.since(0) == []
    for nid in ("a", "b", "c"):
        log.note(nid)
    assert log.count == 3 and log.since(1) == ["b", "c"] and log.since(3) == []
    for nid in ("d", "e"):
        log.note(nid)  # past twice ``keep``: the oldest are forgotten
    assert log.count == 5 and log.since(3) == ["d", "e"] and log.since(0) is None


def test_positions_and_the_mark_go_with_the_chain() -> None:
    nodes = [Node(id=f"n{i}", role="user", text=str(i)) for i in range(4)]
    ids = [n.id for n in nodes]
    pos = {nid: i for i, nid in enumerate(ids)}
    mark = Mark(BodyLog(), 0)
    chain = NodeChain(ids, lambda want: [nodes[int(i[1:])] for i in want], 3, mark=mark,
                      positions=pos)
    extra = Node(id="x", role="user", text="x")
    longer = chain.plus(extra).with_last(extra)
    assert longer.mark is mark and longer.indexed and longer.stored == 3
    assert longer.position("n2") == 2 and longer.position("x") == 3
    assert longer.position("n3") is None  # past this chain's part of the owner's list
    assert chain.with_last(extra).stored == 2 and chain.with_last(extra).position("x") == 2
    plain = NodeChain(ids, lambda want: [nodes[int(i[1:])] for i in want], 3)
    assert not plain.indexed and plain.position("n1") == 1 and plain.position("n3") is None
