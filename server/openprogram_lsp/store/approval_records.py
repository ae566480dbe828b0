"""A session's approval records: how each of its tool calls was let through, read from the
nodes in its store (who decided, when, by which rule, for which call, on which branch)."""

from __future__ import annotations

from typing import Any

from openprogram_lsp.store.session_store import SessionStore


def approval_records(sessions: SessionStore, sid: str) -> list[dict[str, Any]]:
    """Every recorded approval of a session, oldest node first (wire field names)."""
    idx = sessions.index(sid)
    names = idx.meta.get("branches") or {}
    active = idx.meta.get("headId")
    chains = [(tip, set(idx.chain_ids(tip))) for tip in idx.tips()]
    out: list[dict[str, Any]] = []
    for node in sessions.nodes(sid):
        calls = [c for c in node.tool_calls or [] if c.approval]
        if not calls:
            continue
        holding = [tip for tip, ids in chains if node.id in ids]
        named = [t for t in holding if (names.get(t) or {}).get("name")]
        tip = active if active in holding else (named[0] if named else
                                                 (holding[0] if holding else None))
        name = (names.get(tip) or {}).get("name") if tip else None
        for call in calls:
            a = call.approval or {}
            rules = [r for r in a.get("rules") or [] if isinstance(r, dict)]
            rule = a.get("rule") if isinstance(a.get("rule"), dict) else None
            out.append({
                "by": a.get("by"), "decidedAt": a.get("decidedAt") or "",
                "mode": a.get("mode"), "option": a.get("option"),
                "ruleId": rule.get("id") if rule else None,
                "ruleIds": [r["id"] for r in rules if isinstance(r.get("id"), str)],
                "toolCallId": call.id, "tool": call.name, "title": call.title,
                "turnId": node.id, "branchHeadId": tip, "branch": name})
    return out
