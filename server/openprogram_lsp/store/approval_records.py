"""A session's approval records: how each of its tool calls was let through, read from the
nodes in its store (who decided, when, by which rule, for which call, on which branch)."""

from __future__ import annotations

from dataclasses import dataclass, field

from openprogram_lsp.store.session_store import SessionStore


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """How one tool call was let through, as its assistant node stores it."""

    by: str | None  # user, rule, mode, bypass or hook
    decided_at: str
    mode: str | None
    option: str | None  # the option the user chose (by: user)
    rule_id: str | None  # the rule that allowed it (by: rule)
    tool_call_id: str
    tool: str
    title: str | None
    turn_id: str  # the assistant node of the call
    branch_head_id: str | None  # a branch tip holding the turn
    branch: str | None  # that branch's name, when named
    rule_ids: list[str] = field(default_factory=list)  # one per part of a compound command


def approval_records(sessions: SessionStore, sid: str) -> list[ApprovalRecord]:
    """Every recorded approval of a session, oldest node first."""
    idx = sessions.index(sid)
    names = idx.meta.get("branches") or {}
    active = idx.meta.get("headId")
    chains = [(tip, set(idx.chain_ids(tip))) for tip in idx.tips()]
    out: list[ApprovalRecord] = []
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
            out.append(ApprovalRecord(
                by=a.get("by"), decided_at=a.get("decidedAt") or "",  # the stored field
                mode=a.get("mode"), option=a.get("option"),
                rule_id=rule.get("id") if rule else None,
                rule_ids=[r["id"] for r in rules if isinstance(r.get("id"), str)],
                tool_call_id=call.id, tool=call.name, title=call.title,
                turn_id=node.id, branch_head_id=tip, branch=name))
    return out
