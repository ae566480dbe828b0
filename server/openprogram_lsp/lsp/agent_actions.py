"""The agent as code actions, for any LSP client.

``textDocument/codeAction`` offers "Ask the agent about this selection" on a non-empty range
and "Fix with the agent" (``quickfix``) on diagnostics. Each is a ``workspace/executeCommand``
that starts a turn in a new session with the range, its text (from the open buffer) and the
diagnostics as context attachments. Approvals and questions reach the client the usual way
(``window/showMessageRequest`` without our plugin), progress through ``$/progress``, and a
client without our panel gets the reply as a ``window/showMessage``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t
from pydantic import Field, ValidationError

from openprogram_lsp.core.errors import InvalidParams
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.lsp import dumps
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.attachments import resolve

if TYPE_CHECKING:
    from openprogram_lsp.lsp.view import ConnectionView

log = logging.getLogger(__name__)

ASK_COMMAND = "openprogram.server.askAgent"
FIX_COMMAND = "openprogram.server.fixWithAgent"
COMMANDS = (ASK_COMMAND, FIX_COMMAND)
ASK_TITLE = "Ask the agent about this selection"
FIX_TITLE = "Fix with the agent"
ASK_PROMPT = ("Explain what the attached code does and point out any problems you see in it. "
              "Do not change files unless I ask.")
FIX_PROMPT = ("Fix the problem(s) reported in the attached diagnostics, changing as little as "
              "needed.")
REPLY_LIMIT = 4000

RunTurn = Callable[[TurnRequest], Awaitable[dict[str, Any]]]


class ActionArgs(w.Params):
    """The one argument of the agent commands."""

    uri: str = Field(min_length=1, max_length=w.MAX_PATH + 100)
    range: w.WireRange
    diagnostics: list[w.DiagnosticItem] | None = Field(None, max_length=500)
    prompt: str | None = Field(None, min_length=1, max_length=100_000,
                               description="The user's question; absent: a default one")
    session_id: str | None = Field(None, min_length=1, max_length=200)


def _range(r: t.Range) -> dict[str, Any]:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


def _diagnostic(d: t.Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"range": _range(d.range), "message": d.message}
    if d.severity is not None:
        out["severity"] = int(d.severity)
    if d.source:
        out["source"] = d.source
    if d.code is not None:
        out["code"] = d.code
    return out


def code_actions(params: t.CodeActionParams) -> list[t.CodeAction]:
    """The agent's actions for a range (selection) and its diagnostics."""
    rng = params.range
    uri = params.text_document.uri
    out: list[t.CodeAction] = []
    only = params.context.only
    diags = list(params.context.diagnostics or [])

    def wants(kind: str) -> bool:
        return not only or any(kind.startswith(str(o)) for o in only)

    if diags and wants(t.CodeActionKind.QuickFix):
        args = {"uri": uri, "range": _range(rng), "diagnostics": [_diagnostic(d) for d in diags]}
        out.append(t.CodeAction(title=FIX_TITLE, kind=t.CodeActionKind.QuickFix,
                                diagnostics=diags,
                                command=t.Command(title=FIX_TITLE, command=FIX_COMMAND,
                                                  arguments=[args])))
    if rng.start != rng.end and wants(t.CodeActionKind.RefactorRewrite):
        args = {"uri": uri, "range": _range(rng)}
        if diags:
            args["diagnostics"] = [_diagnostic(d) for d in diags]
        out.append(t.CodeAction(title=ASK_TITLE, kind=t.CodeActionKind.RefactorRewrite,
                                command=t.Command(title=ASK_TITLE, command=ASK_COMMAND,
                                                  arguments=[args])))
    return out


class AgentActions:
    """Runs the agent commands for one connection."""

    def __init__(self, server: ConnectionView, run_turn: RunTurn,
                 model: Callable[[str | None], str | None]) -> None:
        self.server = server
        self.run_turn = run_turn
        self.model = model

    async def execute(self, command: str, arguments: list[Any]) -> dict[str, Any]:
        """Start the turn of an agent command and answer with its TurnResult."""
        if command not in COMMANDS:
            raise InvalidParams(f"command: unknown command {command!r}")
        if len(arguments) != 1:
            raise InvalidParams("arguments: expected one object {uri, range, diagnostics?, "
                                "prompt?}")
        try:
            args = ActionArgs.model_validate(arguments[0])
        except ValidationError as exc:
            problems = "; ".join(f"arguments[0].{'.'.join(str(p) for p in e['loc'])}: "
                                 f"{e['msg']}" for e in exc.errors())
            raise InvalidParams(problems) from None
        context = [w.ContextItem(kind="selection", uri=args.uri, range=args.range)]
        if args.diagnostics:
            context.append(w.ContextItem(kind="diagnostics", uri=args.uri, range=args.range,
                                         diagnostics=args.diagnostics))
        resolved = await resolve(self.server, context)
        if args.range.start == args.range.end:  # a diagnostic at a cursor: its whole lines
            line = args.range.start.line
            lines = [d.range for d in args.diagnostics or []]
            first = min([line, *(r.start.line for r in lines)])
            last = max([line, *(r.end.line for r in lines)])
            wide = w.WireRange(start=w.WirePosition(line=first, character=0),
                               end=w.WirePosition(line=last + 1, character=0))
            resolved[0] = (await resolve(self.server, [w.ContextItem(
                kind="selection", uri=args.uri, range=wide)]))[0]
        text = args.prompt or (FIX_PROMPT if command == FIX_COMMAND else ASK_PROMPT)
        store = self.server.dispatcher.services.store
        if args.session_id is not None and not store.exists(args.session_id):
            raise InvalidParams(f"arguments[0].sessionId: unknown session {args.session_id!r}")
        result = await self.run_turn(TurnRequest(
            text=text, session_id=args.session_id,
            workspace=str(self.server.primary_workspace) if args.session_id is None else None,
            model=self.model(None), permission_mode=self.server.settings.permission_mode,
            metadata={"context": resolved, "codeAction": command}))
        if not self.server.settings.client.panel:
            self._show(result)
        return result

    def _show(self, result: dict[str, Any]) -> None:
        """The reply for a client without our panel."""
        reply = str(result.get("text") or "")
        if result.get("status") != "done":
            reply = f"[{result.get('status')}] {(result.get('error') or {}).get('message', '')}"\
                f"\n{reply}".strip()
        if len(reply) > REPLY_LIMIT:
            reply = reply[:REPLY_LIMIT] + f"\n[... {len(reply) - REPLY_LIMIT} more characters; " \
                f"session {result.get('sessionId')}]"
        kind = t.MessageType.Info if result.get("status") == "done" else t.MessageType.Error
        try:
            self.server.window_show_message(t.ShowMessageParams(
                type=kind, message=f"OpenProgram: {reply}"))
        except Exception:
            log.debug("reply not shown", exc_info=True)


def register(server: Any, actions: AgentActions) -> None:
    """Register the agent commands for ``workspace/executeCommand``."""
    from pygls.exceptions import JsonRpcException

    from openprogram_lsp.core.errors import OpenProgramError

    for name in COMMANDS:
        def make(command: str) -> Any:
            async def run(ls: object, *args: object) -> Any:  # pygls passes the server
                try:
                    return await actions.execute(command, list(args))
                except OpenProgramError as exc:
                    raise JsonRpcException(message=exc.message, code=exc.code,
                                           data=dumps.error_data(exc.data)) from None
            return run
        server.command(name)(make(name))
