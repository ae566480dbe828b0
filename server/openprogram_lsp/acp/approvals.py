"""Approvals and questions over ACP: ``session/request_permission`` and ``elicitation/create``.

A prompt offers at most one option of each ACP kind (clients such as codecompanion draw one
line and key per kind): allow once, the narrowest "always" (this file, command or exact call,
in this session), reject, and "never" (workspace-wide), each named with its scope. The wider
"always" options of the LSP front ends are not offered here. Answers become rules in the same
per-workspace rule store the LSP server uses (the dispatcher's tool runner records them).
A prompt about a call the client was never shown (an MCP server or hook to trust) is announced
as a ``tool_call`` first and completed or failed with the answer.
A question goes to an elicitation form when the client offers one; otherwise a question with
choices becomes a permission-style choice where the client draws options by name, and any
other question is shown in the chat (with its choices) for the user to answer in the next
message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from acp import helpers
from openprogram_lsp.acp.updates import SessionUpdate, diff_content, location
from openprogram_lsp.approvals.modes import EDIT_KINDS
from openprogram_lsp.core.types import PermissionOption as Option
from openprogram_lsp.core.types import PermissionOutcome, PermissionRequest, Question

log = logging.getLogger(__name__)


class Peer(Protocol):
    """What approvals need from the agent side of the connection."""

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption],
                                 **kwargs: Any) -> RequestPermissionResponse: ...

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any: ...


class Host(Protocol):
    """The agent's side: connection, ordering, capabilities, workspaces and notices."""

    peer: Peer | None
    question_timeout: float | None

    async def flush(self) -> None: ...

    def elicits(self) -> bool: ...

    def shows_option_names(self) -> bool: ...

    def workspace_of(self, session_id: str) -> Path: ...

    def approval_timeout_of(self, session_id: str) -> float | None: ...

    def approved(self, session_id: str, tool_call_id: str) -> None: ...

    def announced(self, session_id: str, tool_call_id: str) -> bool: ...

    def acp_id(self, store_id: str) -> str | None: ...

    def notify(self, session_id: str, update: SessionUpdate) -> None: ...


def _scope(option: Option, kind: str) -> str:
    """What a standing option covers, in a few words (``tools.choices`` names it in full)."""
    if " of MCP server " in option.name:
        return "this MCP tool"
    if " fetches from " in option.name:
        return "this host"
    if kind in EDIT_KINDS:
        return "this file"
    if kind == "execute":
        return "these commands" if " these " in f" {option.name}" else "this command"
    return "this exact call"


def acp_options(options: list[Option], kind: str) -> list[PermissionOption]:
    """One option per ACP kind, the first (narrowest) of each; the rule-making ones renamed
    to say their scope briefly (others, such as an MCP server's trust, keep their names)."""
    out: list[PermissionOption] = []
    for option in options:
        if any(o.kind == option.kind for o in out):
            continue
        name = option.name
        if option.kind == "allow_always" and name.startswith("Always allow"):
            name = f"Always, {_scope(option, kind)} (this session)"
        elif option.kind == "reject_always" and name.startswith("Always reject"):
            name = f"Never, {_scope(option, kind)} (whole workspace)"
        out.append(PermissionOption(option_id=option.option_id, name=name, kind=option.kind))
    return out


async def _ask(host: Host, make: Callable[[Peer], Awaitable[Any]],
               timeout: float | None) -> Any:
    """Send one client request (after every queued update) with a timeout; None if gone."""
    peer = host.peer
    if peer is None:
        return None
    await host.flush()
    try:
        return await asyncio.wait_for(make(peer), timeout)
    except TimeoutError:
        return None
    except ConnectionError:
        return None


class AcpApprover:
    """The Approver port over ``session/request_permission``."""

    def __init__(self, host: Host) -> None:
        self.host = host

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        """Ask the client; a timeout, an error, a dismissal or an unknown option is cancelled."""
        call = request.tool_call
        sid = self.host.acp_id(request.session_id) or request.session_id
        workspace = self.host.workspace_of(request.session_id)
        content: list[Any] | None = [diff_content(workspace, call.diff)] \
            if call.diff is not None else None
        if call.mcp is not None:  # what the server says its tool does, on the card
            about = f"MCP server {call.mcp.server}, tool {call.mcp.tool}"
            if call.mcp.description:
                about = f"{about}: {call.mcp.description}"
            content = [*(content or []), helpers.tool_content(helpers.text_block(about))]
        kind: Any = call.kind
        update = ToolCallUpdate(tool_call_id=call.tool_call_id, title=call.title,
                                kind=kind, status="pending", content=content,
                                locations=location(workspace, call.input),
                                raw_input=call.input)
        announce = not self.host.announced(request.session_id, call.tool_call_id)
        if announce:  # a prompt about no tool call of the turn: show it as one first
            self.host.notify(sid, helpers.start_tool_call(
                call.tool_call_id, call.title, kind=kind, status="pending", content=content,
                locations=update.locations, raw_input=call.input))
        options = acp_options(request.options, call.kind)
        offered = {o.option_id for o in options}
        outcome = await self._answer(sid, update, options,
                                     self.host.approval_timeout_of(request.session_id))
        chosen = next((o for o in request.options if o.option_id in offered
                       and isinstance(outcome, AllowedOutcome)
                       and o.option_id == outcome.option_id), None)
        allowed = chosen is not None and chosen.kind in ("allow_once", "allow_always")
        if announce:
            self.host.notify(sid, helpers.update_tool_call(
                call.tool_call_id, status="completed" if allowed else "failed",
                content=[helpers.tool_content(helpers.text_block(
                    chosen.name if chosen is not None else "No answer"))]))
        if isinstance(outcome, str):
            return PermissionOutcome(outcome="cancelled", reason=outcome)
        if chosen is None:
            return PermissionOutcome(outcome="cancelled", reason="dismissed")
        if allowed:
            self.host.approved(request.session_id, call.tool_call_id)
        return PermissionOutcome(outcome="selected", option_id=chosen.option_id,
                                 kind=chosen.kind)

    async def _answer(self, sid: str, update: ToolCallUpdate,
                      options: list[PermissionOption], timeout: float | None) -> Any:
        """The client's outcome, or a reason string when there is none."""
        try:
            resp = await _ask(self.host, lambda p: p.request_permission(
                session_id=sid, tool_call=update, options=options), timeout)
        except Exception as exc:  # the client answered with an error
            log.info("permission request failed: %s", exc)
            return f"client error: {exc}"
        return resp.outcome if resp is not None else "timeout"


class AcpAsker:
    """The Asker port: elicitation form, else a choice, else a clear refusal."""

    def __init__(self, host: Host) -> None:
        self.host = host

    async def ask(self, question: Question) -> str | None:
        """Return the answer, or None when dismissed or when the client cannot ask."""
        sid = question.session_id or ""
        sid = self.host.acp_id(sid) or sid
        try:
            if self.host.elicits():
                return await self._form(question, sid)
            if question.options and self.host.shows_option_names():
                return await self._choice(question, sid)
        except Exception as exc:
            log.info("question failed: %s", exc)
            return None
        choices = "".join(f"\n> {i}. {c}" for i, c in enumerate(question.options or [], 1))
        self.host.notify(sid, helpers.update_agent_message_text(
            f"\n\n> The agent asked: {question.question}{choices}\n> This editor cannot show "
            "questions; answer in your next message.\n\n"))
        return None

    async def _form(self, question: Question, sid: str) -> str | None:
        prop = ElicitationStringPropertySchema(type="string", title="Answer",
                                               description=question.question)
        if question.options and not question.allow_free_text:
            prop.enum = list(question.options)
        elif question.options:
            prop.description = f"{question.question} (e.g. {', '.join(question.options)})"
        mode = ElicitationFormSessionMode(
            session_id=sid, requested_schema=ElicitationSchema(
                type="object", properties={"answer": prop}, required=["answer"]))
        resp = await _ask(self.host, lambda p: p.create_elicitation(
            message=question.question, mode=mode), self.host.question_timeout)
        if not isinstance(resp, AcceptElicitationResponse) or not resp.content:
            return None
        answer = resp.content.get("answer")
        return str(answer) if answer is not None else None

    async def _choice(self, question: Question, sid: str) -> str | None:
        options = [PermissionOption(option_id=f"answer-{i}", name=text, kind="allow_once")
                   for i, text in enumerate(question.options or [])]
        options.append(PermissionOption(option_id="dismiss", name="Dismiss", kind="reject_once"))
        call = ToolCallUpdate(tool_call_id=question.question_id, title=question.question,
                              kind="think", status="pending")
        # the question is a call of its own: announced, then completed with the answer
        self.host.notify(sid, helpers.start_tool_call(question.question_id, question.question,
                                                      kind="think", status="pending"))
        answer: str | None = None
        try:
            resp = await _ask(self.host, lambda p: p.request_permission(
                session_id=sid, tool_call=call, options=options), self.host.question_timeout)
            outcome = resp.outcome if resp is not None else None
            if isinstance(outcome, AllowedOutcome) and outcome.option_id.startswith("answer-") \
                    and outcome.option_id.removeprefix("answer-").isdigit():
                index = int(outcome.option_id.removeprefix("answer-"))
                opts = question.options or []
                answer = opts[index] if 0 <= index < len(opts) else None
        finally:
            self.host.notify(sid, helpers.update_tool_call(
                question.question_id, status="completed" if answer is not None else "failed",
                content=[helpers.tool_content(helpers.text_block(answer or "No answer"))]))
        return answer
