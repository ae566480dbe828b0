"""The process-wide tool gates that hooks and the destructive-command policy answer through.

Registered once per process with ``register_tool_gate``: each finds the running turn's hooks
in ``current_hooks`` (a turn without hooks is not consulted). Critical hooks and the policy sit
in the critical tier, so a crash of our own code there denies too.
"""

from __future__ import annotations

import threading

from openprogram_lsp.events.bus import Event
from openprogram_lsp.events.tool_gate import GateDecision, register_tool_gate
from openprogram_lsp.hooks.engine import current_hooks
from openprogram_lsp.hooks.policies import destructive
from openprogram_lsp.tools.facts import call_facts

HOOKS_GATE = "hooks.PreToolUse"
CRITICAL_HOOKS_GATE = "hooks.PreToolUse.critical"
DESTRUCTIVE_GATE = "policy.destructive-commands"

_installed = False
_lock = threading.Lock()


def _hooks(critical: bool) -> GateDecision | None:
    def gate(event: Event) -> GateDecision | None:
        turn = current_hooks.get()
        if turn is None or event.type != "tool.before":
            return None
        answer = turn.pre_tool(event.payload, critical=critical)
        if answer is None:
            return None
        verdict, reasons = answer
        return GateDecision(verdict, reasons)  # type: ignore[arg-type]

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
            turn.workspace, "run_command", "execute", arguments, event.session_id)) == "allow":
        return None
    return GateDecision("deny", (f"{why} is refused by the destructive-commands policy; a rule "
                                 "allowing this exact command lets it run",))


def install_gates() -> None:
    """Register the hook and policy gates (once per process)."""
    global _installed
    with _lock:
        if _installed:
            return
        register_tool_gate(_hooks(False), name=HOOKS_GATE)  # type: ignore[arg-type]
        register_tool_gate(_hooks(True), name=CRITICAL_HOOKS_GATE,  # type: ignore[arg-type]
                           critical=True)
        register_tool_gate(destructive_gate, name=DESTRUCTIVE_GATE, critical=True)
        _installed = True
