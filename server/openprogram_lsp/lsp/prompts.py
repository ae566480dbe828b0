"""Approvals and questions as server -> client requests (the Approver and Asker ports).

Clients declaring ``experimental.openprogram.permissions`` / ``questions`` get
``openprogram/requestPermission`` / ``openprogram/askQuestion``; any other client gets
``window/showMessageRequest`` with the option names as actions. A timeout or no answer is a
rejection; cancelling the turn withdraws the prompt with ``$/cancelRequest``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from lsprotocol import types
from pydantic import ValidationError

from openprogram_lsp.core.text_hunks import check_accepted
from openprogram_lsp.core.types import PermissionOutcome, PermissionRequest, Question
from openprogram_lsp.events.bus import EventBus, emit_safe
from openprogram_lsp.lsp.settings import Settings
from openprogram_lsp.lsp.wire import (
    ASK_QUESTION,
    REQUEST_PERMISSION,
    AskQuestionParams,
    AskQuestionResponse,
    PermissionResponse,
)

log = logging.getLogger(__name__)


class Peer(Protocol):
    """What prompts need from the server: requests, notifications, forgetting a request."""

    def request(self, method: str, params: Any, msg_id: str) -> asyncio.Future[Any]:
        """Send a request with a known id and return the response future."""
        ...

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        ...

    def forget_request(self, msg_id: str) -> None:
        """Stop waiting for a response."""
        ...


class Withdrawn(Exception):
    """The request timed out or the client answered with an error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def _ask_client(peer: Peer, method: str, params: Any, timeout: float | None) -> Any:
    """Send a request and await its result; withdraw it on timeout or cancellation."""
    msg_id = f"op-{uuid.uuid4().hex[:12]}"
    fut = peer.request(method, params, msg_id)
    try:
        return await asyncio.wait_for(asyncio.shield(fut), timeout)
    except TimeoutError:
        _withdraw(peer, msg_id)
        raise Withdrawn("timeout") from None
    except asyncio.CancelledError:
        _withdraw(peer, msg_id)
        raise
    except Exception as exc:  # the client answered with an error
        peer.forget_request(msg_id)
        raise Withdrawn(f"client error: {exc}") from None


def _withdraw(peer: Peer, msg_id: str) -> None:
    peer.forget_request(msg_id)
    try:
        peer.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    except Exception:
        log.debug("could not withdraw %s", msg_id, exc_info=True)


def _result_dict(value: Any) -> Any:
    if value is None or isinstance(value, dict):
        return value
    if hasattr(value, "_asdict"):
        return value._asdict()
    return value


def _title(item: Any) -> str | None:
    """The title of a chosen MessageActionItem (None when dismissed)."""
    title = item.get("title") if isinstance(item, dict) else getattr(item, "title", None)
    return title if isinstance(title, str) else None


def _message_request(kind: types.MessageType, message: str,
                     titles: list[str]) -> types.ShowMessageRequestParams:
    return types.ShowMessageRequestParams(
        type=kind, message=message, actions=[types.MessageActionItem(title=t) for t in titles])


def _describe(request: PermissionRequest) -> str:
    call = request.tool_call
    text = f"OpenProgram wants to run: {call.title} [{call.kind}]"
    if call.mcp is not None:
        args = json.dumps(call.input, ensure_ascii=False, sort_keys=True, default=str)
        cut = f"{args[:4000]} [... {len(args) - 4000} more characters]" \
            if len(args) > 4000 else args
        text += f"\nMCP server: {call.mcp.server}\ntool: {call.mcp.tool}"
        if call.mcp.description:
            text += f"\nwhat the server says it does: {call.mcp.description}"
        text += f"\narguments: {cut}"
    if call.parts and len(call.parts) > 1:
        text += "\nCommands: " + " | ".join(call.parts)
    task = call.input.get("prompt") if call.name == "agent" else None
    if isinstance(task, str):
        text += f"\nTask: {task}"
    if call.diff is not None:
        old = len(call.diff.old_text.splitlines())
        new = len(call.diff.new_text.splitlines())
        text += f"\n{call.diff.path}: {old} line(s) -> {new} line(s)"
        if call.diff.unsaved_changes:
            text += ("\nThe file has unsaved changes in the editor: the change is made in "
                     "the editor's buffer (kept with your changes, not saved).")
    if call.sandboxed is not None:
        text += "\nRuns in the sandbox." if call.sandboxed else \
            f"\nNOT sandboxed ({call.sandbox_note or 'no sandbox'})."
    return text


def _withdrawn_event(request: PermissionRequest, reason: str, bus: EventBus | None) -> None:
    """Tell every client a prompt is gone (clients cannot match $/cancelRequest ids)."""
    emit_safe("permission.withdrawn", {"tool_call_id": request.tool_call.tool_call_id,
                                       "reason": reason},
              bus=bus, session_id=request.session_id, turn_id=request.turn_id, origin="lsp")


class LspApprover:
    """The Approver port over LSP."""

    def __init__(self, peer: Peer, settings: Settings, *, bus: EventBus | None = None) -> None:
        self.peer = peer
        self.settings = settings
        self.bus = bus

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        """Ask the client; a timeout, an error or a dismissal is ``cancelled``."""
        timeout = self.settings.approval_timeout
        by_id = {o.option_id: o for o in request.options}
        try:
            if self.settings.client.permissions:
                raw = _result_dict(await _ask_client(self.peer, REQUEST_PERMISSION,
                                                     request.wire(), timeout))
                try:
                    resp = PermissionResponse.model_validate(raw or {})
                except ValidationError:
                    return PermissionOutcome(outcome="cancelled", reason="invalid response")
                option = by_id.get(resp.option_id or "")
                if resp.outcome != "selected" or option is None:
                    return PermissionOutcome(outcome="cancelled", reason="dismissed")
                accepted = resp.accepted_hunks if option.kind.startswith("allow") else None
                if accepted is not None:
                    diff = request.tool_call.diff
                    why = check_accepted(len(diff.hunks or []) if diff else 0, accepted)
                    if why is not None:
                        return PermissionOutcome(outcome="cancelled",
                                                 reason=f"invalid response: {why}")
                    return PermissionOutcome(outcome="selected", option_id=option.option_id,
                                             kind=option.kind, accepted_hunks=sorted(accepted))
            else:
                params = _message_request(types.MessageType.Warning, _describe(request),
                                          [o.name for o in request.options])
                title = _title(await _ask_client(self.peer, types.WINDOW_SHOW_MESSAGE_REQUEST,
                                                 params, timeout))
                option = next((o for o in request.options if o.name == title), None)
                if option is None:
                    return PermissionOutcome(outcome="cancelled", reason="dismissed")
        except Withdrawn as exc:
            _withdrawn_event(request, exc.reason, self.bus)
            return PermissionOutcome(outcome="cancelled", reason=exc.reason)
        except asyncio.CancelledError:
            _withdrawn_event(request, "cancelled", self.bus)
            raise
        return PermissionOutcome(outcome="selected", option_id=option.option_id,
                                 kind=option.kind)


class LspAsker:
    """The Asker port over LSP."""

    def __init__(self, peer: Peer, settings: Settings,
                 show: Callable[[str], None] | None = None) -> None:
        self.peer = peer
        self.settings = settings
        self.show = show

    async def ask(self, question: Question) -> str | None:
        """Ask the client; None when dismissed. With no way to ask, wait for openprogram/answer."""
        timeout = self.settings.question_timeout
        try:
            if self.settings.client.questions:
                params = AskQuestionParams(
                    session_id=question.session_id, turn_id=question.turn_id,
                    question_id=question.question_id, question=question.question,
                    options=question.options, allow_free_text=question.allow_free_text)
                raw = _result_dict(await _ask_client(self.peer, ASK_QUESTION,
                                                     params.wire(), timeout))
                try:
                    resp = AskQuestionResponse.model_validate(raw or {})
                except ValidationError:
                    return None
                return None if resp.cancelled else resp.answer
            if question.options:
                choice = _message_request(types.MessageType.Info, question.question,
                                          list(question.options))
                return _title(await _ask_client(self.peer, types.WINDOW_SHOW_MESSAGE_REQUEST,
                                                choice, timeout))
        except Withdrawn:
            return None
        if self.show is not None:
            self.show(f"OpenProgram asks: {question.question} "
                      f"(answer with openprogram/answer, questionId {question.question_id})")
        await asyncio.Event().wait()  # answered through openprogram/answer, or timed out
        return None
