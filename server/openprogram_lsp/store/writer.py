"""The per-turn node writer, bound in a ContextVar so deep code writes into the same session."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from openprogram_lsp.core.types import Node
from openprogram_lsp.store.session_store import SessionStore


class SessionNodeWriter:
    """Writes nodes of one session for the running turn."""

    def __init__(self, store: SessionStore, session_id: str, *, advance_head: bool) -> None:
        self.store = store
        self.session_id = session_id
        self.advance_head = advance_head

    def append(self, node: Node, *, advance_head: bool | None = None) -> Node:
        """Append a node; chain nodes move the head when the turn advances it."""
        adv = self.advance_head if advance_head is None else advance_head
        return self.store.append(self.session_id, node,
                                 advance_head=adv and node.caller is None)

    def update(self, node_id: str, **changes: Any) -> Node:
        """Update a node of this session."""
        return self.store.update_node(self.session_id, node_id, **changes)


current_writer: ContextVar[SessionNodeWriter | None] = ContextVar("op_writer", default=None)
