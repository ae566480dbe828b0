"""What a hook's exit code and output mean, per event (Claude Code's semantics).

Exit 0: success, stdout may be a JSON object. Exit 2: a blocking answer whose reason is stderr.
Any other exit, a timeout or a failure to start: the hook failed -- ignored with a warning,
except a ``critical`` gate or prompt hook, which then refuses (fail-closed).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Literal

from openprogram_lsp.hooks.runner import HookRun

log = logging.getLogger(__name__)

Verdict = Literal["allow", "ask", "deny"]
# events whose ``continue: false`` ends the turn (UserPromptSubmit's blocks the prompt, a Stop
# hook's lets the turn stop; the session events have no turn left to end)
HALTING = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
                     "SubagentStart", "PreCompact", "PostCompact", "Notification"})
_VERDICTS = {"allow": "allow", "ask": "ask", "deny": "deny", "approve": "allow",
             "block": "deny"}


def _specific(out: dict[str, Any]) -> dict[str, Any]:
    spec = out.get("hookSpecificOutput")
    return spec if isinstance(spec, dict) else {}


def _str(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def failure_text(run: HookRun) -> str:
    """Why a run counts as failed, in one line."""
    name = run.hook.command if len(run.hook.command) <= 60 else run.hook.command[:57] + "..."
    if run.error:
        return f"hook `{name}` {run.error}"
    if run.timed_out:
        return f"hook `{name}` timed out after {run.hook.timeout:g}s"
    if run.cancelled:
        return f"hook `{name}` was cancelled"
    tail = (run.stderr.strip().splitlines() or [""])[-1][:200]
    return f"hook `{name}` exited {run.exit_code}" + (f": {tail}" if tail else "")


def _warn(run: HookRun) -> None:
    log.warning("%s (%s); ignored", failure_text(run), run.hook.source or run.hook.scope)


def _output(run: HookRun) -> dict[str, Any] | None:
    """The hook's JSON answer; None when it gave none, or failed (logged and ignored)."""
    if run.failed:
        _warn(run)
        return None
    return run.json_output()


@dataclass(frozen=True, slots=True)
class GateAnswer:
    """A PreToolUse hook's answer on a call: a verdict, a rewritten input, context."""

    verdict: Verdict | None  # None: no opinion
    reason: str = ""
    updated_input: dict[str, Any] | None = None  # in Claude Code's spelling (or ours)
    context: str | None = None  # additionalContext, for the model


def pre_tool(run: HookRun) -> GateAnswer:
    """PreToolUse: exit 2 / ``decision: block`` / ``permissionDecision`` decide the call;
    ``updatedInput`` rewrites it and ``additionalContext`` goes to the model with its result."""
    if run.exit_code == 2:
        return GateAnswer("deny", run.stderr.strip() or f"blocked by {failure_text(run)}")
    if run.failed:
        if run.hook.critical:
            return GateAnswer("deny", f"critical {failure_text(run)}; the call is refused")
        _warn(run)
        return GateAnswer(None)
    out = run.json_output()
    if out is None:
        return GateAnswer(None)
    spec = _specific(out)
    raw = spec.get("permissionDecision", out.get("permissionDecision"))
    reason = _str(spec.get("permissionDecisionReason")) or _str(
        out.get("permissionDecisionReason")) or _str(out.get("reason")) or ""
    if raw is None:
        raw = out.get("decision")
    if out.get("continue") is False:
        return GateAnswer("deny", _str(out.get("stopReason")) or reason or "stopped by a hook")
    updated = spec.get("updatedInput")
    if updated is not None and not isinstance(updated, dict):
        return GateAnswer("deny", f"hook `{run.hook.command}` answered an updatedInput that is "
                                  "not an object")
    context = _str(spec.get("additionalContext"))
    if raw is None or raw == "defer":
        return GateAnswer(None, reason, updated, context)
    verdict = _VERDICTS.get(str(raw))
    if verdict is None:  # an answer we cannot read is not a yes
        return GateAnswer("deny", f"hook `{run.hook.command}` answered an unknown decision "
                                  f"{raw!r}")
    return GateAnswer(verdict, reason, updated, context)  # type: ignore[arg-type]


def replaced_output(run: HookRun) -> str | None:
    """PostToolUse of an MCP tool: ``updatedMCPToolOutput``, the result the model gets instead
    (text as it is, anything else as JSON)."""
    out = run.json_output()
    if out is None or "updatedMCPToolOutput" not in _specific(out):
        return None
    value = _specific(out)["updatedMCPToolOutput"]
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def feedback(run: HookRun) -> str | None:
    """PostToolUse: exit 2's stderr, a ``block`` reason or added context, for the model."""
    if run.exit_code == 2:
        return run.stderr.strip() or None
    out = _output(run)
    if out is None:
        return None
    parts = []
    if out.get("decision") == "block":
        parts.append(_str(out.get("reason")) or "a PostToolUse hook flagged this result")
    extra = _str(_specific(out).get("additionalContext"))
    if extra:
        parts.append(extra)
    return "\n".join(parts) or None


@dataclass(frozen=True, slots=True)
class PromptAnswer:
    """A UserPromptSubmit hook's answer: block the prompt, or context to add."""

    blocked: str | None = None
    context: str | None = None


def prompt(run: HookRun) -> PromptAnswer:
    """UserPromptSubmit: exit 2 or ``decision: block`` refuse; stdout / additionalContext add."""
    if run.exit_code == 2:
        return PromptAnswer(blocked=run.stderr.strip() or "blocked by a UserPromptSubmit hook")
    if run.failed:
        if run.hook.critical:
            return PromptAnswer(blocked=f"critical {failure_text(run)}")
        _warn(run)
        return PromptAnswer()
    out = run.json_output()
    if out is None:
        text = run.stdout.strip()
        return PromptAnswer(context=text or None)
    if out.get("decision") == "block" or out.get("continue") is False:
        return PromptAnswer(blocked=_str(out.get("reason")) or _str(out.get("stopReason"))
                            or "blocked by a UserPromptSubmit hook")
    return PromptAnswer(context=_str(_specific(out).get("additionalContext")))


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """A PermissionRequest hook's answer for the user: allow (maybe with a rewritten input)
    or deny (with a message; ``interrupt`` ends the turn too)."""

    behavior: Literal["allow", "deny"]
    message: str = ""
    updated_input: dict[str, Any] | None = None  # in Claude Code's spelling (or ours)
    interrupt: bool = False
    updated_permissions: Any = None  # an allow's rule updates (hooks.permission_updates)


def permission(run: HookRun) -> PermissionAnswer | None:
    """PermissionRequest: ``hookSpecificOutput.decision.behavior`` allow (``updatedInput``
    rewrites the call) / deny (``message``, ``interrupt``), or exit 2 (deny, stderr the
    message); None: the user is asked."""
    if run.exit_code == 2:
        return PermissionAnswer("deny", run.stderr.strip() or "denied by a PermissionRequest "
                                                              "hook")
    out = _output(run)
    decision = _specific(out).get("decision") if out is not None else None
    if not isinstance(decision, dict):
        return None
    behavior = decision.get("behavior")
    if behavior == "deny":
        return PermissionAnswer("deny", _str(decision.get("message"))
                                or "denied by a PermissionRequest hook",
                                interrupt=decision.get("interrupt") is True)
    if behavior == "allow":
        updated = decision.get("updatedInput")
        if updated is not None and not isinstance(updated, dict):
            return PermissionAnswer("deny", f"hook `{run.hook.command}` answered an "
                                            "updatedInput that is not an object")
        return PermissionAnswer("allow", updated_input=updated,
                                updated_permissions=decision.get("updatedPermissions"))
    return None


def later(run: HookRun) -> str | None:
    """An async hook's ``systemMessage`` or ``additionalContext`` (for the next turn)."""
    out = _output(run)
    if out is None:
        return None
    parts = [_str(out.get("systemMessage")), _str(_specific(out).get("additionalContext"))]
    return "\n".join(p for p in parts if p) or None


def context(run: HookRun) -> str | None:
    """SessionStart / SubagentStart: stdout, or ``additionalContext`` of a JSON answer."""
    if run.failed or run.exit_code != 0:
        if run.failed:
            _warn(run)
        return None
    out = run.json_output()
    if out is None:
        return run.stdout.strip() or None
    return _str(_specific(out).get("additionalContext"))


def stop(run: HookRun) -> str | None:
    """Stop / SubagentStop: exit 2 or ``decision: block`` keep the turn going, with a reason."""
    if run.exit_code == 2:
        return run.stderr.strip() or "A Stop hook asked you to continue."
    if run.failed:
        _warn(run)
        return None
    out = run.json_output()
    if out is not None and out.get("continue") is False:  # stop, whatever else it says
        return None
    if out is not None and out.get("decision") == "block":
        return _str(out.get("reason")) or "A Stop hook asked you to continue."
    return None


def observed(run: HookRun) -> None:
    """Observers: only a failure is worth a line in the log."""
    if run.failed:
        _warn(run)
