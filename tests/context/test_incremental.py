"""The context engine's shortcuts equal the plain, from-scratch computations they replace."""

from __future__ import annotations

import random

from openprogram_lsp.context.engine import pick_summary
from openprogram_lsp.context.types import ChainIds
from openprogram_lsp.core.types import Node


def plain_pick(history: list[Node], summaries: list[Node]) -> tuple[Node | None, int]:
    """The whole-chain version: every position, then the summary reaching furthest."""
    pos = {n.id: i for i, n in enumerate(history)}
    best, best_pos = None, -1
    for s in summaries:
        through = s.metadata.get("through") or s.caller
        p = pos.get(through) if isinstance(through, str) else None
        if p is None or (p >= len(history) - 1 and history[-1].role == "user"):
            continue
        if p > best_pos:
            best, best_pos = s, p
    return best, best_pos + 1


def test_pick_summary_equals_the_whole_chain_version() -> None:
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(0, 40)
        history = [Node(id=f"n{i}", role=rng.choice(["user", "assistant"]), text="x")
                   for i in range(n)]
        summaries = []
        for k in range(rng.randint(0, 4)):
            through = rng.choice([f"n{rng.randint(0, 45)}", None])
            meta = {"through": through} if through and rng.random() < 0.7 else {}
            summaries.append(Node(id=f"s{k}", role="summary", text="s",
                                  caller=through or f"n{rng.randint(0, 45)}", metadata=meta))
        got, start = pick_summary(history, summaries)
        want, want_start = plain_pick(history, summaries)
        assert (got.id if got else None, start if got else 0) == \
            (want.id if want else None, want_start if want else 0)


def test_chain_ids_is_the_id_list_of_a_prefix() -> None:
    nodes = [Node(id=f"n{i}", role="user", text="x") for i in range(5)]
    ids = ChainIds(nodes, 3)
    assert list(ids) == ["n0", "n1", "n2"] == ids and len(ids) == 3
    assert ids[-1] == "n2" and ids[1:] == ["n1", "n2"] and "n2" in ids and "n3" not in ids
    assert ChainIds(nodes, 9) == [n.id for n in nodes] and not ChainIds()
