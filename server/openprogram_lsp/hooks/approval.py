"""Asking the user to approve a workspace's hooks and agent definitions before they run.

One request lists every new definition exactly as it will run; "Always allow" trusts those
definitions (by id), "Always reject" refuses them for good, "Allow once" lets them run for this
turn only. Without anyone to ask they do not run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openprogram_lsp.core.ports import Approver
from openprogram_lsp.core.types import PermissionRequest, PermissionToolCall
from openprogram_lsp.hooks.trust import TrustStore

log = logging.getLogger(__name__)

TRUST_TOOL = "trust_workspace_definitions"


@dataclass(frozen=True, slots=True)
class Pending:
    """A definition waiting for the user's decision."""

    id: str
    kind: str  # "hook" or "agent"
    shown: dict[str, Any]  # what the user is shown (the whole definition)


def _title(pending: list[Pending], workspace: Path) -> str:
    hooks = [p for p in pending if p.kind == "hook"]
    agents = [p for p in pending if p.kind == "agent"]
    parts = []
    if hooks:
        parts.append(f"{len(hooks)} hook(s): " + "; ".join(
            f"{p.shown['event']}{'(' + p.shown['matcher'] + ')' if p.shown['matcher'] else ''}"
            f" `{p.shown['command']}`" for p in hooks))
    if agents:
        parts.append(f"{len(agents)} agent definition(s): " + ", ".join(
            str(p.shown["name"]) for p in agents))
    return f"Trust the workspace {workspace.name}'s " + " and ".join(parts) + "?"


async def approve(pending: list[Pending], *, workspace: Path, trust: TrustStore,
                  approver: Approver | None, session_id: str, turn_id: str) -> frozenset[str]:
    """Ask about pending definitions; returns the ids allowed for this turn only."""
    if not pending:
        return frozenset()
    if approver is None:
        return frozenset()
    request = PermissionRequest(
        session_id=session_id, turn_id=turn_id,
        tool_call=PermissionToolCall(
            tool_call_id=f"{turn_id}_trust", name=TRUST_TOOL, kind="execute",
            title=_title(pending, workspace),
            input={"workspace": str(workspace),
                   "definitions": [{"kind": p.kind, **p.shown} for p in pending]}),
        workspace=str(workspace))
    try:
        outcome = await approver.request_permission(request)
    except Exception:
        log.exception("asking to trust workspace definitions failed")
        return frozenset()
    ids = [p.id for p in pending]
    if outcome.outcome != "selected":
        return frozenset()
    if outcome.kind == "allow_always":
        for i in ids:
            trust.set(workspace, i, "trusted")
        return frozenset()
    if outcome.kind == "reject_always":
        for i in ids:
            trust.set(workspace, i, "rejected")
        return frozenset()
    if outcome.kind == "allow_once":
        return frozenset(ids)
    return frozenset()
