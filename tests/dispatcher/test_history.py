"""The rules scope of a chain: the nearest reset or copy fork above its tip."""

from __future__ import annotations

from openprogram_lsp.core.types import Node
from openprogram_lsp.dispatcher.history import rules_branch


def user(nid: str, **meta: str) -> Node:
    return Node(id=nid, role="user", text="x", metadata=dict(meta))


def test_the_nearest_reset_or_copy_fork_scopes_the_rules() -> None:
    reply = Node(id="a1", role="assistant", text="ok", metadata={"rules": "reset"})
    assert rules_branch([]) is None
    assert rules_branch([user("u1"), reply, user("u2", rules="inherit")]) is None
    assert rules_branch([user("u1", rules="reset"), reply, user("u2")]) == "u1"
    assert rules_branch([user("u1", rules="reset"), user("u2", rules="copy"), user("u3")]) \
        == "u2"
