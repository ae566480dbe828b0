"""The tool gates that hooks and the destructive-command policy answer through.

Registered once per runtime by ``install_gates``: each finds the running turn's hooks
in ``current_hooks`` (a turn without hooks is not consulted). Critical hooks and the policy sit
in the critical tier, so a crash of our own code there denies too.
"""

from __future__ import annotations

from openprogram_lsp.approvals.facts import call_facts
from openprogram_lsp.events.bus import Event
from openprogram_lsp.events.tool_gate import GateDecision, GateRegistry
from openprogram_lsp.hooks.engine import current_hooks
from openprogram_lsp.hooks.policies import destructive

HOOKS_GATE = "hooks.PreToolUse"
CRITICAL_HOOKS_GATE = "hooks.PreToolUse.critical"
DESTRUCTIVE_GATE = "policy.destructive-commands"

def _hooks(critical: bool) -> GateDecision | None:
    def gate(event: Event) -> GateDecision | None:
        turn = current_hooks.get()
        if turn is None or event.type != "tool.before":
            return None
        if event.payload.get("rewritten"):  # a call the hooks rewrote: judged by the policy
            return None
        answer = turn.pre_tool(event.payload, critical=critical)
        if answer is None:
            return None
        return GateDecision(answer.verdict or "allow",  # type: ignore[arg-type]
                            answer.reasons if answer.verdict != "allow" else (),
                            approved=answer.verdict == "allow",
                            updated_input=answer.updated_input, context=answer.context)

    return gate  # type: ignore[return-value]


def destructive_gate(event: Event) -> GateDecision | None:
    """Refuse destructive shell commands unless a rule allows that command."""
    if event.type != "tool.before" or event.payload.get("name") != "run_command":
        return None
    arguments = event.payload.get("input") or {}
    command = arguments.get("command") if isinstance(arguments, dict) else None
    if not isinstance(command, str):
        return None
    turn = current_hooks.get()
    if turn is not None and not turn.policies.destructive_commands:
        return None
    why = destructive(command, workspace=turn.workspace if turn is not None else None)
    if not why:
        return None
    if turn is not None and turn.rules is not None and turn.rules.decide(call_facts(
            turn.workspace, "run_command", "execute", arguments, event.session_id,
            turn.rules_branch)) == "allow":
        return None
    return GateDecision("deny", (f"{why} is refused by the destructive-commands policy; a rule "
                                 "allowing this exact command lets it run",))


def install_gates(gates: GateRegistry) -> None:
    """Register the hook and policy gates on a runtime's registry (once: again is a no-op)."""
    if HOOKS_GATE in gates.names():
        return
    gates.register(_hooks(False), name=HOOKS_GATE)  # type: ignore[arg-type]
    gates.register(_hooks(True), name=CRITICAL_HOOKS_GATE,  # type: ignore[arg-type]
                   critical=True)
    gates.register(destructive_gate, name=DESTRUCTIVE_GATE, critical=True)
