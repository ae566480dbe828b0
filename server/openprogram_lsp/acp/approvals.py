"""Approvals and questions over ACP: ``session/request_permission`` and ``elicitation/create``.

The four option kinds map one to one onto ACP's; "always" answers become rules in the same
per-workspace rule store the LSP server uses (the dispatcher's tool runner records them).
A question goes to an elicitation form when the client offers one; otherwise a question with
choices becomes a permission-style choice, and a free-text question is refused with a note.
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

    def workspace_of(self, session_id: str) -> Path: ...

    def approval_timeout_of(self, session_id: str) -> float | None: ...

    def approved(self, session_id: str, tool_call_id: str) -> None: ...

    def notify(self, session_id: str, update: SessionUpdate) -> None: ...


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
        workspace = self.host.workspace_of(request.session_id)
        content = [diff_content(workspace, call.diff)] if call.diff is not None else None
        update = ToolCallUpdate(tool_call_id=call.tool_call_id, title=call.title,
                                kind=call.kind, status="pending", content=content,
                                locations=location(workspace, call.input),
                                raw_input=call.input)
        options = [PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind)
                   for o in request.options]
        try:
            resp = await _ask(self.host, lambda p: p.request_permission(
                session_id=request.session_id, tool_call=update, options=options),
                self.host.approval_timeout_of(request.session_id))
        except Exception as exc:  # the client answered with an error
            log.info("permission request failed: %s", exc)
            return PermissionOutcome(outcome="cancelled", reason=f"client error: {exc}")
        if resp is None:
            return PermissionOutcome(outcome="cancelled", reason="timeout")
        outcome = resp.outcome
        chosen = next((o for o in request.options
                       if isinstance(outcome, AllowedOutcome) and o.option_id == outcome.option_id),
                      None)
        if chosen is None:
            return PermissionOutcome(outcome="cancelled", reason="dismissed")
        if chosen.kind in ("allow_once", "allow_always"):
            self.host.approved(request.session_id, call.tool_call_id)
        return PermissionOutcome(outcome="selected", option_id=chosen.option_id,
                                 kind=chosen.kind)


class AcpAsker:
    """The Asker port: elicitation form, else a choice, else a clear refusal."""

    def __init__(self, host: Host) -> None:
        self.host = host

    async def ask(self, question: Question) -> str | None:
        """Return the answer, or None when dismissed or when the client cannot ask."""
        sid = question.session_id or ""
        try:
            if self.host.elicits():
                return await self._form(question, sid)
            if question.options:
                return await self._choice(question, sid)
        except Exception as exc:
            log.info("question failed: %s", exc)
            return None
        self.host.notify(sid, helpers.update_agent_message_text(
            f"\n\n> The agent asked: {question.question}\n> This editor cannot show questions; "
            "answer in your next message.\n\n"))
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
        resp = await _ask(self.host, lambda p: p.request_permission(
            session_id=sid, tool_call=call, options=options), self.host.question_timeout)
        outcome = resp.outcome if resp is not None else None
        if not isinstance(outcome, AllowedOutcome) or not outcome.option_id.startswith("answer-"):
            return None
        index = int(outcome.option_id.removeprefix("answer-"))
        opts = question.options or []
        return opts[index] if 0 <= index < len(opts) else None
