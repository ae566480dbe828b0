"""The rules scope of a chain: the nearest reset or copy fork above its tip."""

from __future__ import annotations

from openprogram_lsp.core.types import Node
from openprogram_lsp.dispatcher.history import RulesScopes, rules_branch


def user(nid: str, **meta: str) -> Node:
    return Node(id=nid, role="user", text="x", metadata=dict(meta))


def test_the_nearest_reset_or_copy_fork_scopes_the_rules() -> None:
    reply = Node(id="a1", role="assistant", text="ok", metadata={"rules": "reset"})
    assert rules_branch([]) is None
    assert rules_branch([user("u1"), reply, user("u2", rules="inherit")]) is None
    assert rules_branch([user("u1", rules="reset"), reply, user("u2")]) == "u1"
    assert rules_branch([user("u1", rules="reset"), user("u2", rules="copy"), user("u3")]) \
        == "u2"


def chain_of(*specs: tuple[str, str | None]) -> list[Node]:
    out: list[Node] = []
    for nid, rules in specs:
        meta = {"rules": rules} if rules else {}
        out.append(Node(id=nid, role="user", text="x", predecessor=out[-1].id if out else None,
                        metadata=meta))
    return out


def test_remembered_scopes_follow_extension_branch_switch_and_forks() -> None:
    scopes = RulesScopes(capacity=2)
    line = chain_of(("u1", None), ("u2", "reset"), ("u3", None))
    assert scopes.scope("s", line) == "u2"
    longer = [*line, Node(id="u4", role="user", text="x", predecessor="u3")]
    assert scopes.scope("s", longer) == "u2"  # only u4 looked at; the remembered answer holds
    fork = [*longer, Node(id="u5", role="user", text="x", predecessor="u4",
                          metadata={"rules": "copy"})]
    assert scopes.scope("s", fork) == "u5"  # a new fork on the same line
    # another branch from u1: the remembered position holds another node, so it is rescanned
    other = [line[0], Node(id="v2", role="user", text="x", predecessor="u1")]
    assert scopes.scope("s", other) is None
    assert scopes.scope("s", line[:2]) == "u2"  # a shorter chain (an earlier node): rescanned
    assert scopes.scope("s", []) is None
    # evicted sessions are recomputed; results always equal the plain scan
    for sid in ("a", "b", "c", "s"):
        for chain in (line, longer, fork, other, line[:1]):
            assert scopes.scope(sid, chain) == rules_branch(chain)
