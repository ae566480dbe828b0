"""History resolution: which chain a turn continues (inherit, new root, or sibling fork)."""

from __future__ import annotations

from openprogram_lsp.core.errors import InvalidParams
from openprogram_lsp.core.types import INHERIT, Node
from openprogram_lsp.store.session_store import SessionStore


def resolve_history(store: SessionStore, sid: str,
                    branch_from: object) -> tuple[str | None, list[Node]]:
    """Return (predecessor of the new user node, history up to it)."""
    if branch_from is INHERIT:
        head = store.head(sid)
        return (head, store.get_branch(sid, head)) if head else (None, [])
    if branch_from is None:
        return None, []
    if not isinstance(branch_from, str):
        raise InvalidParams("branchFrom: must be \"inherit\", null or a node id")
    node = store.get_node(sid, branch_from)
    if node.caller is not None or node.role not in ("user", "assistant", "system"):
        raise InvalidParams(f"branchFrom: {branch_from!r} is not a conversation message")
    return node.id, store.get_branch(sid, node.id)


RULES_CHOICES = ("inherit", "reset", "copy")


def rules_branch(chain: list[Node]) -> str | None:
    """The rules scope of a chain's tip: the nearest user node that started a fork with
    ``rules: "reset"`` or ``"copy"`` (its id), else None (the session's own rules)."""
    for node in reversed(chain):
        if node.role == "user" and node.metadata.get("rules") in ("reset", "copy"):
            return node.id
    return None
