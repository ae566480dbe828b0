"""Permission modes: what a mode says about a tool kind before any rule (see ``rules``)."""

from __future__ import annotations

from typing import Literal

from openprogram_lsp.approvals.rules import EDIT_KINDS
from openprogram_lsp.core.types import PermissionMode, ToolKind

Decision = Literal["allow", "ask", "deny"]
READ_KINDS: frozenset[str] = frozenset({"read", "search", "think"})

__all__ = ["EDIT_KINDS", "READ_KINDS", "Decision", "mode_decision"]


def mode_decision(mode: PermissionMode, kind: ToolKind, *, mcp: bool = False) -> Decision:
    """What a permission mode says about a tool kind, before rules (``accept-edits`` accepts
    our own edit tools, never an MCP server's tool: ``mcp``)."""
    if kind in READ_KINDS:
        return "allow"
    if mode == "bypass":
        return "allow"
    if mode == "plan":
        return "ask" if kind == "fetch" else "deny"  # a fetch changes nothing: ask, in plan too
    if mode == "accept-edits" and kind in EDIT_KINDS and not mcp:
        return "allow"
    return "ask"
