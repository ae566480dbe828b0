"""Executing one tool call: tool.started, tool.before + gate, approval, run, tool.after."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from openprogram_lsp.agent import prompts
from openprogram_lsp.agent.edit_diagnostics import EditCheck
from openprogram_lsp.agent.live_output import LiveOutput
from openprogram_lsp.approvals.choices import Choice, Grant, Origin, choices_for
from openprogram_lsp.approvals.facts import call_facts, control_paths
from openprogram_lsp.approvals.modes import READ_KINDS, mode_decision
from openprogram_lsp.approvals.rulebook import RuleBook
from openprogram_lsp.approvals.rules import CallFacts, Rule, uncovered_parts
from openprogram_lsp.core.control_files import ANY, writes_cleared
from openprogram_lsp.core.control_files import reason as control_reason
from openprogram_lsp.core.errors import OpenProgramError, ToolError
from openprogram_lsp.core.ids import now_iso
from openprogram_lsp.core.ports import Approver
from openprogram_lsp.core.secrets import redact
from openprogram_lsp.core.text_hunks import check_accepted
from openprogram_lsp.core.types import (
    ImagePart,
    PermissionMode,
    PermissionRequest,
    PermissionToolCall,
    ToolCall,
    ToolCallRecord,
)
from openprogram_lsp.events.bus import EventBus, make_event
from openprogram_lsp.events.tool_gate import GateDecision, GateRegistry
from openprogram_lsp.hooks.engine import TurnHooks, current_hooks
from openprogram_lsp.hooks.permission_updates import rules_of
from openprogram_lsp.tools import fs_errors
from openprogram_lsp.tools.approved_edit import ApprovedEdit, preview_hunks
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.output import cap_text
from openprogram_lsp.tools.paths import confined, resolved_once
from openprogram_lsp.tools.registry import ToolRegistry

log = logging.getLogger(__name__)
MAX_CARD_DESCRIPTION = 1000  # of an MCP tool's own description, on its approval card
RECORDED = {"id", "kind", "tool", "value", "edit_scope", "decision", "scope", "origin",
            "description"}  # what an approval record keeps of a rule


def approval_record(mode: PermissionMode, kind: Any, rules: list[Rule], *,
                    mcp: bool = False) -> dict[str, Any]:
    """Why a call ran without asking: the remembered rules that allowed it (one per part of a
    compound command), the bypass mode, or the mode's default for its kind (reads, and edits
    under accept-edits)."""
    allows = [r for r in rules if r.decision == "allow"]
    if allows and mode_decision(mode, kind, mcp=mcp) == "ask":
        shown = [r.model_dump(mode="json", by_alias=True, include=RECORDED) for r in allows]
        return {"by": "rule", "decidedAt": now_iso(), "mode": mode, "rule": shown[0],
                "rules": shown}
    return {"by": "bypass" if mode == "bypass" else "mode", "decidedAt": now_iso(), "mode": mode}


@dataclass(slots=True)
class Permit:
    """What ``_permit`` decided: the call to run (a PreToolUse hook may have rewritten it),
    its parsed arguments and grant, or the refusal; context hooks added for the model."""

    call: ToolCall
    args: Any
    refusal: str | None = None
    grant: Grant | None = None
    rewritten_from: dict[str, Any] | None = None  # what the model asked for
    rewritten_by: str = "PreToolUse hook"
    context: tuple[str, ...] = ()
    approved: ApprovedEdit | None = None  # the edit as the user approved it (some hunks)


@dataclass(slots=True)
class ToolRunner:
    """Everything needed to run the tool calls of one turn."""

    tools: ToolRegistry
    ctx: ToolContext
    bus: EventBus
    gates: GateRegistry = field(default_factory=GateRegistry)  # the runtime's tool gates
    mode: PermissionMode = "ask"
    rules: RuleBook = field(default_factory=RuleBook)
    approver: Approver | None = None
    before_mutation: Callable[[list[str] | None], Awaitable[None]] | None = None
    # before a call that may change files: the paths it writes when known, else None
    failures: dict[str, int] = field(default_factory=dict)
    hooks: TurnHooks | None = None  # the turn's user hooks and policies
    all_tools: ToolRegistry | None = None  # every tool, when ``tools`` is an admitted subset
    admission: str = ""  # who admitted ``tools`` (an agent definition), for refusals
    cancelled: ToolCallRecord | None = None  # the last call a cancel cut short
    label: str | None = None  # a child's label: its prompts say whose they are
    rules_session: str | None = None  # whose session rules apply (default: this session)
    rules_branch: str | None = None  # their scope in it: the nearest reset fork (Rule.branch)
    faults: list[str] = field(default_factory=list)  # failed by the machine, or made (warnings)

    def _emit(self, type: str, payload: dict[str, Any]) -> None:
        self.bus.emit(make_event(type, payload, session_id=self.ctx.session_id,
                                 turn_id=self.ctx.turn_id, origin="agent"))

    async def run(self, call: ToolCall, step: int) -> tuple[ToolCallRecord, ToolOutput]:
        """Run one call through gate and approval; never raises except on cancellation."""
        with resolved_once():  # its facts, approval and run check each path once
            return await self._run(call, step)

    async def _run(self, call: ToolCall, step: int) -> tuple[ToolCallRecord, ToolOutput]:
        tool = self.tools.get(call.name)
        record = ToolCallRecord(id=call.id, name=call.name, kind=tool.kind if tool else "other",
                                input=call.arguments, status="in_progress", step=step,
                                title=call.name)
        key = f"{call.name}:{json.dumps(call.arguments, sort_keys=True, default=str)}"
        if tool is None:
            if self.all_tools is not None and self.all_tools.get(call.name) is not None:
                record.blocked_reason = (f"{self.admission or 'this agent'} may not use "
                                         f"{call.name}")
                out = ToolOutput(f"Refused by admission: {record.blocked_reason}. Available: "
                                 f"{', '.join(self.tools.names())}", is_error=True)
            elif self.tools.refused(call.name):
                record.blocked_reason = f"{call.name} is disabled by configuration"
                out = ToolOutput(f"{call.name} is disabled by configuration (refused by static "
                                 "admission); do not call it again.", is_error=True)
            else:
                out = ToolOutput(f"Unknown tool {call.name!r}. Available: "
                                 f"{', '.join(self.tools.names())}", is_error=True)
            return self._finish(record, out, started=False), out
        try:
            args = tool.parse(call.arguments)
            record.title = tool.title(args)
        except ToolError as exc:
            out = ToolOutput(exc.message, is_error=True)
            return self._finish(record, out, started=False), out
        try:
            done = await self._started(call, tool, args, record, key)
        except asyncio.CancelledError:
            self._cancelled(record)
            raise
        if self.hooks is not None and self.hooks.halted and self.ctx.cancel is not None:
            self.ctx.cancel.set()  # a hook's continue: false, once this call is on record
        return done

    def _cancelled(self, record: ToolCallRecord) -> None:
        """A call the turn's cancel cut short: recorded and reported as such, kept for the
        loop (``cancelled``) so the stored turn still shows it."""
        record.status, record.cancelled = "failed", True
        record.output = prompts.CANCELLED_CALL
        self.cancelled = record
        self._emit("tool.finished", {"tool_call_id": record.id, "status": "failed",
                                     "output": record.output, "cancelled": True})

    async def _started(self, call: ToolCall, tool: Any, args: Any, record: ToolCallRecord,
                       key: str) -> tuple[ToolCallRecord, ToolOutput]:
        """The part of ``run`` after the call was announced (a cancel may cut it anywhere)."""
        source = tool.source()
        self._emit("tool.started", {"tool_call_id": call.id, "name": call.name,
                                    "kind": tool.kind, "title": record.title,
                                    "input": call.arguments,
                                    **({"mcp": source} if source else {})})
        if self.failures.get(key, 0) >= 2:
            out = ToolOutput(prompts.REPEATED_FAILURE, is_error=True)
            return self._finish(record, out), out
        permit = await self._permit(call, tool.kind, record.title or call.name, tool, args,
                                    record)
        if permit.refusal is not None:
            out = ToolOutput(permit.refusal, is_error=True)
            return self._finish(record, out), out
        call, args, grant = permit.call, permit.args, permit.grant  # a hook may have rewritten it
        live = LiveOutput(self._emit, call.id)
        ctx = dataclasses.replace(self.ctx, grant=grant, on_output=live.feed, emit=self._emit,
                                  approved_edit=permit.approved)
        # the control files this call may write: those its approval named (all under bypass)
        cleared = ANY if self.mode == "bypass" else frozenset(
            control_paths(self.ctx.workspace, tool.kind, call.arguments))
        if tool.kind not in READ_KINDS and tool.kind != "fetch" \
                and self.before_mutation is not None:  # a fetch asks, yet changes no file
            try:
                await self.before_mutation(_written(self.ctx, tool, args))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("baseline checkpoint failed; the tool still runs")
        check = EditCheck(ctx, call.name, call.arguments)  # what the editor sees of an edit
        await check.before()
        try:
            with writes_cleared(cleared):
                out = await tool.run(args, ctx)
        except asyncio.CancelledError:
            live.close()
            raise
        except OpenProgramError as exc:
            out = ToolOutput(exc.message, is_error=True)
        except OSError as exc:  # the file system refused (read-only, full, …): no bug
            out = ToolOutput(fs_errors.describe(call.name, call.arguments, exc), is_error=True)
            log.warning("%s", out.text)
            self.faults.append(out.text)
        except Exception as exc:
            log.exception("tool %s crashed", call.name)
            out = ToolOutput(f"{call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        made = out.data.get("made_controls")  # a sandboxed command made a control file
        if isinstance(made, str):
            self.faults.append(f"{call.name}: {made}")
        if not out.is_error:
            news = await check.after()
            if news:
                out = ToolOutput(f"{out.text}\n\n{news}", out.is_error, out.data)
        live.close()  # its last piece before tool.finished
        # whatever the tool, the model and the store get a cap, and no configured key
        out.text = redact(cap_text(out.text))
        if out.is_error:
            self.failures[key] = self.failures.get(key, 0) + 1
        note = None
        if self.hooks is not None:  # (they see the tool's own result)
            note, replaced = await self.hooks.post_tool(
                call.name, call.arguments, call.id, out.text, not out.is_error,
                mcp=tool.source() is not None)
            if replaced is not None:  # an MCP tool's result, as a PostToolUse hook rewrote it
                out = ToolOutput(redact(cap_text(replaced)), out.is_error, out.data)
        if permit.context:
            out = ToolOutput(f"{out.text}\n\n[PreToolUse hook]\n" + "\n".join(permit.context),
                             out.is_error, out.data)
        if note:
            out = ToolOutput(f"{out.text}\n\n[PostToolUse hook]\n{note}", out.is_error,
                             out.data)
        return self._finish(record, out), out

    async def _consult(self, before: Any) -> GateDecision:
        """The tool gates, with this turn's hooks bound; off the loop when hooks will run."""
        hooks = self.hooks

        def consult() -> GateDecision:
            token = current_hooks.set(hooks)
            try:
                return self.gates.decide(before)
            finally:
                current_hooks.reset(token)

        if hooks is not None and hooks.gates(str(before.payload.get("name", ""))):
            return await asyncio.to_thread(consult)
        return consult()

    def facts(self, call: ToolCall, kind: Any, tool: Tool | None = None) -> CallFacts:
        """What rules look at in a call: its command parts, or its resolved path (an MCP
        tool: its server and name, and whether it is marked destructive)."""
        source = tool.source() if tool is not None else None
        mcp = (source["server"], source["tool"]) if source else None
        return call_facts(self.ctx.workspace, call.name, kind, call.arguments,
                          self.rules_session or self.ctx.session_id, self.rules_branch,
                          mcp=mcp, destructive=tool is not None and tool.destructive())

    async def _permit(self, call: ToolCall, kind: Any, title: str, tool: Tool,
                      args: Any, record: ToolCallRecord) -> Permit:
        """Gate, mode, rules and approval: a refusal message or the call to run (as a
        PreToolUse hook may have rewritten it) with its grant."""
        permit = Permit(call, args)
        refusal, grant = await self._decide(permit, kind, title, tool, record)
        permit.refusal, permit.grant = refusal, grant
        return permit

    def _before(self, call: ToolCall, kind: Any, *, rewritten: bool = False) -> Any:
        payload = {"tool_call_id": call.id, "name": call.name, "kind": kind,
                   "input": call.arguments, "mode": self.mode}
        if rewritten:
            payload["rewritten"] = True
        return make_event("tool.before", payload, session_id=self.ctx.session_id,
                          turn_id=self.ctx.turn_id, origin="agent")

    async def _rewrite(self, permit: Permit, gate: GateDecision, kind: Any, tool: Tool,
                       record: ToolCallRecord) -> GateDecision | str:
        """Apply a PreToolUse hook's ``updatedInput``: the rewritten call is checked as the
        tool checks any call and judged again by the gates (the policy sees what will run);
        what the user is asked about and what runs is the rewritten call."""
        assert gate.updated_input is not None
        original = permit.call.arguments
        if gate.updated_input == original:
            return gate
        try:
            args = tool.parse(gate.updated_input)
        except ToolError as exc:
            record.blocked_reason = "a PreToolUse hook rewrote the call into invalid input"
            return f"A PreToolUse hook rewrote the call into invalid input: {exc.message}"
        permit.call = permit.call.model_copy(update={"arguments": dict(gate.updated_input)})
        permit.args = args
        if permit.rewritten_from is None:  # (rewritten twice: the model's is the original)
            permit.rewritten_from = original
        record.input = permit.call.arguments
        record.title = tool.title(args)
        again = await self._consult(self._before(permit.call, kind, rewritten=True))
        if again.verdict == "deny":
            return GateDecision("deny", again.reasons)
        verdict = "ask" if "ask" in (gate.verdict, again.verdict) else "allow"
        return GateDecision(verdict, (*gate.reasons, *again.reasons),  # type: ignore[arg-type]
                            approved=gate.approved and verdict == "allow", context=gate.context)

    async def _decide(self, permit: Permit, kind: Any, title: str, tool: Tool,
                      record: ToolCallRecord) -> tuple[str | None, Grant | None]:
        """``_permit``'s decision: (a refusal message or None to run, a grant)."""
        call = permit.call
        before = self._before(call, kind)
        self.bus.emit(before)
        gate = await self._consult(before)
        permit.context = gate.context
        if gate.verdict != "deny" and gate.updated_input is not None:
            rewritten = await self._rewrite(permit, gate, kind, tool, record)
            if isinstance(rewritten, str):
                return rewritten, None
            gate, call, args = rewritten, permit.call, permit.args
            title = record.title or call.name
        else:
            args = permit.args
        if gate.verdict == "deny":
            why = "; ".join(gate.reasons) or "no reason given"
            record.blocked_reason = why
            return f"Denied by a tool gate: {why}", None
        source = tool.source()
        mode = mode_decision(self.mode, kind, mcp=source is not None) if tool.asks else "allow"
        if mode == "deny":
            record.blocked_reason = f"permission mode {self.mode!r} is read-only"
            return (f"Refused: permission mode {self.mode!r} is read-only; {call.name} "
                    "changes things."), None
        facts = self.facts(call, kind, tool)
        rule = self.rules.decide(facts)
        if rule == "deny":
            record.blocked_reason = "the user chose to always reject this call"
            return "Refused: the user chose to always reject this call.", None
        # an edit of a control file (core.control_files) asks every time (no mode but bypass,
        # no rule covers it): it could make something run later, outside every approval
        control = control_paths(self.ctx.workspace, kind, call.arguments) \
            if self.mode != "bypass" else []
        first = tool.must_ask() if self.mode != "bypass" else None  # e.g. a late MCP tool
        # a hook's explicit allow skips the prompt; a deny rule, a control file or a tool's
        # first use still stop or ask, and the sandbox is the tool's own. A call the tool says
        # always asks (a command outside the sandbox) asks every time, once, like a control file
        forced = tool.always_asks(args) if self.mode != "bypass" else None
        needs_ask = (gate.verdict == "ask" or bool(control) or first is not None
                     or forced is not None
                     or (mode == "ask" and rule != "allow" and not gate.approved))
        if not needs_ask:
            record.approval = approval_record(self.mode, kind, self.rules.deciding(facts),
                                              mcp=source is not None)
            if gate.approved and mode == "ask" and rule != "allow":
                record.approval = {"by": "hook", "decidedAt": now_iso(), "mode": self.mode}
            self._note_rewrite(permit, record)
            return None, None
        # a PermissionRequest hook may answer for the user: never for a control file or a
        # tool's first use (those are the user's), nor where a PreToolUse hook asked for the user
        if self.hooks is not None and not control and first is None and gate.verdict != "ask":
            answered = await self.hooks.permission_request(call.name, call.arguments, call.id)
            if answered is not None and answered.behavior == "deny":
                record.blocked_reason = answered.message
                if answered.interrupt and self.ctx.cancel is not None:  # and stop the turn
                    self.ctx.cancel.set()
                return f"Denied by a PermissionRequest hook: {answered.message}", None
            if answered is not None and answered.updated_input is not None:
                # the hook's rewrite, checked and judged as a PreToolUse one; where the new
                # call must be asked about (a control file, outside the sandbox, a gate's
                # ask) the user is asked about it, else the hook's allow stands
                permit.rewritten_by = "PermissionRequest hook"
                again = await self._rewrite(permit, GateDecision(
                    "allow", approved=True, updated_input=answered.updated_input),
                    kind, tool, record)
                if isinstance(again, str):
                    return again, None
                call, args = permit.call, permit.args
                title = record.title or call.name
                if again.verdict == "deny":
                    why = "; ".join(again.reasons) or "no reason given"
                    record.blocked_reason = why
                    return f"Denied by a tool gate: {why}", None
                facts = self.facts(call, kind, tool)
                if self.rules.decide(facts) == "deny":
                    record.blocked_reason = "the user chose to always reject this call"
                    return "Refused: the user chose to always reject this call.", None
                control = control_paths(self.ctx.workspace, kind, call.arguments) \
                    if self.mode != "bypass" else []
                forced = tool.always_asks(args) if self.mode != "bypass" else None
                if again.verdict == "ask" or control or forced is not None:
                    answered = None
                    gate = again
            if answered is not None:
                added = [self.rules.add(r) for r in rules_of(
                    answered.updated_permissions,
                    session_id=facts.session_id or self.ctx.session_id,
                    branch=self.rules_branch, tool_call_id=call.id, turn_id=self.ctx.turn_id)]
                if added:  # the hook's "always": standing rules, as the user's choice makes
                    self._emit("rules.changed", {"action": "added", "tool_call_id": call.id,
                                                 "rule_ids": [r.id for r in added]})
                record.approval = {"by": "hook", "decidedAt": now_iso(), "mode": self.mode,
                                   "event": "PermissionRequest"}
                self._note_rewrite(permit, record)
                return None, None
        if self.approver is None:
            return prompts.NO_APPROVER, None
        try:
            diff = tool.preview(args, self.ctx)
            sandbox = await tool.sandboxing(self.ctx, args)
        except OpenProgramError as exc:
            return exc.message, None
        if diff is not None:  # listed by index: an answer may accept some (acceptedHunks);
            diff.hunks = await asyncio.to_thread(preview_hunks, diff)  # bounded, off the loop
        if diff is not None and diff.unsaved_changes:
            title = f"{title} (unsaved changes in the editor)"
        origin = Origin(session_id=facts.session_id or self.ctx.session_id,
                        turn_id=self.ctx.turn_id, tool_call_id=call.id)
        uncovered = uncovered_parts(self.rules.rules, facts)
        choices = choices_for(facts, origin, title=title, uncovered=uncovered,
                              spawns=tool.spawns, once_only=bool(control) or forced is not None)
        if control:  # the card says why it asks although the mode or a rule would allow
            title = f"{title} ({', '.join(control)}: {control_reason(control)})"
        if first is not None:
            title = f"{title} ({first})"
        if forced is not None:
            title = f"{title} ({forced})"
        shown = f"[{self.label}] {title}" if self.label else title
        if gate.reasons:
            shown = f"{shown} ({'; '.join(gate.reasons)})"
        request = PermissionRequest(
            session_id=self.ctx.session_id, turn_id=self.ctx.turn_id,
            tool_call=PermissionToolCall(
                tool_call_id=call.id, name=call.name, kind=kind, title=shown,
                input=call.arguments, diff=diff, parts=list(facts.parts) or None,
                uncovered_parts=uncovered if len(facts.parts) > 1 else None,
                mcp={**source, "description": tool.description[:MAX_CARD_DESCRIPTION]}
                if source else None),
            options=[c.option for c in choices], label=self.label,
            workspace=str(self.ctx.workspace))
        if sandbox is not None:
            request.tool_call.sandboxed = sandbox[0]
            request.tool_call.sandbox_note = sandbox[1] or None
        if self.hooks is not None:
            self.hooks.notify("Notification", "permission_prompt",
                              notification_type="permission_prompt",
                              message=f"openprogram needs your permission to use {call.name}",
                              title=request.tool_call.title)
        outcome = await self.approver.request_permission(request)
        accepted = outcome.accepted_hunks if outcome.allowed else None
        if accepted is not None:
            invalid = check_accepted(len(diff.hunks or []) if diff is not None else 0, accepted)
            if invalid is not None:
                return f"The approval answer was invalid ({invalid}); the call did not run.", None
            if not accepted:
                return "The user rejected every hunk of this edit; nothing was written.", None
        choice = self._chosen(choices, outcome)
        if outcome.outcome == "selected" and choice is not None and choice.rules:
            added = [self.rules.add(r) for r in choice.rules]
            self._emit("rules.changed", {"action": "added", "rule_ids": [r.id for r in added],
                                         "tool_call_id": call.id})
        if outcome.allowed:
            tool.approved()
            record.approval = {"by": "user", "decidedAt": now_iso(), "mode": self.mode,
                               "optionId": outcome.option_id, "option": outcome.kind}
            if diff is not None and diff.exact:  # what runs is exactly what was shown
                permit.approved = ApprovedEdit.of(diff, accepted)
            if accepted is not None and diff is not None:
                record.approval["acceptedHunks"] = sorted(accepted)
                record.approval["hunks"] = len(diff.hunks or [])
            self._note_rewrite(permit, record)
            return None, choice.grant if choice is not None else None
        if outcome.outcome == "cancelled":
            return (f"The approval was withdrawn or timed out ({outcome.reason or 'no answer'}); "
                    "the call did not run."), None
        return "The user rejected this tool call.", None

    @staticmethod
    def _note_rewrite(permit: Permit, record: ToolCallRecord) -> None:
        """The approval record keeps what the model asked for when a hook rewrote it."""
        if permit.rewritten_from is not None and record.approval is not None:
            record.approval["rewrittenBy"] = permit.rewritten_by
            record.approval["originalInput"] = permit.rewritten_from

    @staticmethod
    def _chosen(choices: list[Choice], outcome: Any) -> Choice | None:
        """The option the user picked (by id; an unknown id falls back to its kind's first)."""
        if outcome.outcome != "selected":
            return None
        by_id = next((c for c in choices if c.option.option_id == outcome.option_id), None)
        if by_id is not None:
            return by_id
        return next((c for c in choices if c.option.kind == outcome.kind and c.grant is None),
                    None)

    def _finish(self, record: ToolCallRecord, out: ToolOutput, *,
                started: bool = True) -> ToolCallRecord:
        record.status = "failed" if out.is_error else "completed"
        record.output = out.text
        attachments = out.data.get("attachments")
        if isinstance(attachments, list) and attachments:
            record.attachments = attachments
        images = out.data.get("images")
        if isinstance(images, list) and images:
            record.images = [i for i in images if isinstance(i, ImagePart)]
        if not started:
            self._emit("tool.started", {"tool_call_id": record.id, "name": record.name,
                                        "kind": record.kind, "title": record.title,
                                        "input": record.input})
        self._emit("tool.after", {"tool_call_id": record.id, "name": record.name,
                                  "is_error": out.is_error})
        finished: dict[str, Any] = {"tool_call_id": record.id, "status": record.status,
                                     "output": out.text}
        if record.blocked_reason:
            finished["blocked_reason"] = record.blocked_reason
        self._emit("tool.finished", finished)
        return record


def _written(ctx: ToolContext, tool: Tool, args: Any) -> list[str] | None:
    """The workspace paths a call writes, when its tool names them beforehand (else None)."""
    if tool.writes is None:
        return None
    out: list[str] = []
    for name in tool.writes:
        raw = getattr(args, name, None)
        if not isinstance(raw, str):
            return None
        try:
            out.append(confined(ctx.workspace, raw))
        except OpenProgramError:
            return None
    return out
