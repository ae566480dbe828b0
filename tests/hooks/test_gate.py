"""The destructive-commands gate reads the turn's rules in the turn's session-rules scope."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.approvals.rulebook import RuleBook
from openprogram_lsp.approvals.rules import Rule
from openprogram_lsp.events.bus import make_event
from openprogram_lsp.hooks.config import Policies
from openprogram_lsp.hooks.engine import TurnHooks, current_hooks
from openprogram_lsp.hooks.gate import destructive_gate


def test_a_session_rule_lets_a_destructive_command_through_only_in_its_scope(
        tmp_path: Path) -> None:
    rule = Rule(id="r", decision="allow", kind="command", tool="run_command",
                value="git push --force origin main", scope="session", session_id="s1",
                branch="u-fork")
    event = make_event("tool.before", {"name": "run_command",
                                       "input": {"command": "git push --force origin main"}},
                       session_id="s1", turn_id="t1", origin="agent")
    verdicts = []
    for scope in ("u-fork", None, "u-other"):
        turn = TurnHooks(engine=None, workspace=tmp_path, session_id="s1",  # type: ignore[arg-type]
                         turn_id="t1", mode="ask", transcript_path="", hooks=(),
                         policies=Policies(), rules=RuleBook(rules=[rule]), rules_branch=scope)
        token = current_hooks.set(turn)
        try:
            decision = destructive_gate(event)
        finally:
            current_hooks.reset(token)
        verdicts.append(decision.verdict if decision is not None else None)
    assert verdicts == [None, "deny", "deny"]
