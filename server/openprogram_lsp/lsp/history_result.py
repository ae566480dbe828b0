"""The ``openprogram/history`` result of a page, built from the nodes' wire dicts.

What ``HistoryResult(...).wire()`` gives, without validating every node again (the store's
nodes are valid; that pass cost 16 ms a 200-node page). The handler and the kept first page
(``page_keeper``) both build it here, so a kept page is the answer the handler would give.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openprogram_lsp.core.types import Node
from openprogram_lsp.store.cold_page import HistoryPage

WireMany = Callable[[list[Node]], list[dict[str, Any]]]


def history_result(sid: str, page: HistoryPage, wire_many: WireMany) -> dict[str, Any]:
    """The result dict of one page (``wire_many``: the nodes' wire dicts, fresh copies)."""
    out: dict[str, Any] = {"sessionId": sid, "headId": page.head,
                           "nodes": wire_many(page.nodes), "hasMore": page.more}
    # replies from subagents and other branches hang off a chain node by caller
    replies = page.replies
    for node in out["nodes"]:  # listed contract fields are always present
        node.setdefault("predecessor", None)
        node.setdefault("caller", None)
        if node.get("role") == "user" and (node.get("metadata") or {}).get("context"):
            node["context"] = node["metadata"]["context"]  # what the model was shown
        attached = [c.wire() for c in replies.get(node["id"], ())
                    if c.metadata.get("kind") == "attach"]
        if attached:
            node["attachments"] = attached
    return out
