"""Agent blame the LSP way, for any client: code lenses on agent-written hunks, a hover on any
line, a code action restoring one hunk to before the agent's edit, and ``openprogram/blame``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t
from pygls.uris import to_fs_path

from openprogram_lsp.core.errors import CheckpointError, InvalidParams, OpenProgramError
from openprogram_lsp.lsp import dumps
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.documents import DocumentBuffers, RestoreBuffers
from openprogram_lsp.lsp.requests import handles
from openprogram_lsp.store.blame.agent import AgentBlame, Hunk
from openprogram_lsp.store.checkpoints import CheckpointStore

if TYPE_CHECKING:
    from openprogram_lsp.lsp.view import HandlersView

log = logging.getLogger(__name__)

RESTORE_COMMAND = "openprogram.server.restoreAgentHunk"
INFO_COMMAND = "openprogram.server.blameInfo"
COMMANDS = (RESTORE_COMMAND, INFO_COMMAND)
_MAX_BYTES = 8 * 1024 * 1024


def lens_title(hunk: Hunk) -> str:
    """``edited by the agent in turn 12 · branch `retry` · approved``."""
    info = hunk.info
    parts = [f"edited by the agent in turn {info.turn}" if info.turn else "edited by the agent"]
    if info.branch:
        parts.append(f"branch `{info.branch}`")
    approval = approval_text(info.approval)
    if approval:
        parts.append(approval)
    return " · ".join(parts)


def approval_text(approval: Any) -> str:
    """How an edit was let through, in a few words."""
    if not isinstance(approval, dict):
        return ""
    by = approval.get("by")
    if by == "user":
        return "approved" if approval.get("option") != "allow_always" else "approved (always)"
    if by == "rule":
        rule = approval.get("rule") or {}
        value = rule.get("value") or rule.get("pattern")
        return f"allowed by a rule ({rule.get('tool', '?')}{f' {value}' if value else ''})"
    if by == "bypass":
        return "ran in bypass"
    return f"allowed by {approval.get('mode', 'the')} mode"


def hover_text(hunk: Hunk) -> str | None:
    """Markdown for a line's hover; None for lines nobody changed since the first checkpoint."""
    info = hunk.info
    if hunk.kind == "unrecorded":
        return "**Changed since the last checkpoint** (not yet recorded; not by the agent)"
    if hunk.kind == "base":
        return None
    if hunk.kind == "user":
        return (f"**Changed outside the agent** · recorded in checkpoint "
                f"`{(info.checkpoint_id or '?')[:12]}` at {info.created_at or '?'}")
    lines = [f"**{lens_title(hunk)}**", ""]
    if info.prompt:
        lines.append(f"> {info.prompt}")
        lines.append("")
    call = info.tool_call
    if call:
        lines.append(f"- tool call: `{call.name}` {call.title or ''}".rstrip())
    approval = info.approval
    if isinstance(approval, dict):
        lines.append(f"- {approval_text(approval)} at {approval.get('decidedAt', '?')}")
    lines.append(f"- session `{info.session_id or '?'}`, turn `{info.turn_id or '?'}`")
    lines.append(f"- checkpoint `{(info.checkpoint_id or '?')[:12]}` at "
                 f"{info.created_at or '?'}")
    return "\n".join(lines)


class BlameFeatures:
    """Code lens, hover, code action and the restore command of one connection."""

    def __init__(self, handlers: HandlersView) -> None:
        self.h = handlers
        self._engines: dict[Path, AgentBlame] = {}

    @property
    def enabled(self) -> bool:
        blame = self.h.server.settings.options.blame
        return blame is None or blame.enabled

    def _locate(self, uri: str) -> tuple[CheckpointStore, str] | None:
        """(store, workspace-relative path) of a document in a workspace folder."""
        fs = to_fs_path(uri) if uri.startswith("file:") else None
        if not fs:
            return None
        path = Path(fs).resolve()
        folders = self.h.server.folders or [Path(self.h.server.primary_workspace)]
        for folder in sorted(folders, key=lambda f: len(str(f)), reverse=True):
            root = folder.resolve()
            if root == path or root in path.parents:
                cp = self.h.dispatcher.checkpointer(root)
                if isinstance(cp, CheckpointStore):
                    return cp, path.relative_to(root).as_posix()
        return None

    def _engine(self, store: CheckpointStore) -> AgentBlame:
        engine = self._engines.get(store.workspace)
        if engine is None:
            engine = AgentBlame(self.h.dispatcher.services.store, store)
            self._engines[store.workspace] = engine
        return engine

    def _text(self, uri: str, store: CheckpointStore, rel: str) -> bytes | None:
        doc = self.h.server.workspace.text_documents.get(uri)
        if doc is not None:
            source: str = doc.source
            return source.encode("utf-8", "surrogateescape")
        full = store.workspace / rel
        try:
            if not full.is_file() or full.stat().st_size > _MAX_BYTES:
                return None
            return full.read_bytes()
        except OSError:
            return None

    def blame_uri(self, uri: str) -> tuple[CheckpointStore, str, list[Hunk]] | None:
        """Hunks of a document (None: blame off, outside the workspace, or never touched)."""
        if not self.enabled:
            return None
        found = self._locate(uri)
        if found is None:
            return None
        store, rel = found
        text = self._text(uri, store, rel)
        if text is None:
            return None
        try:
            hunks = self._engine(store).blame(rel, text)
        except OpenProgramError as exc:
            log.debug("no blame for %s: %s", rel, exc.message)
            return None
        return (store, rel, hunks) if hunks else None

    # -- LSP features ------------------------------------------------------------------------

    async def code_lens(self, params: t.CodeLensParams) -> list[t.CodeLens] | None:
        found = await asyncio.to_thread(self.blame_uri, params.text_document.uri)
        if found is None:
            return None
        _store, rel, hunks = found
        return [t.CodeLens(range=t.Range(t.Position(h.start, 0), t.Position(h.start, 0)),
                           command=t.Command(title=lens_title(h), command=INFO_COMMAND,
                                             arguments=[rel, h.start]))
                for h in hunks if h.kind == "agent"]

    async def hover(self, params: t.HoverParams) -> t.Hover | None:
        found = await asyncio.to_thread(self.blame_uri, params.text_document.uri)
        if found is None:
            return None
        hunk = _at(found[2], params.position.line)
        text = hover_text(hunk) if hunk is not None else None
        if text is None or hunk is None:
            return None
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=text),
                       range=t.Range(t.Position(hunk.start, 0),
                                     t.Position(hunk.start + hunk.count, 0)))

    async def code_action(self, params: t.CodeActionParams) -> list[t.CodeAction] | None:
        found = await asyncio.to_thread(self.blame_uri, params.text_document.uri)
        if found is None:
            return None
        store, rel, hunks = found
        hunk = _at(hunks, params.range.start.line)
        if hunk is None or hunk.kind != "agent" or not hunk.info.checkpoint_id:
            return None
        index = await asyncio.to_thread(_diff_hunk, store, hunk, rel)
        if index is None:
            return None
        title = "Restore this hunk to before the agent's edit"
        args = [rel, hunk.info.checkpoint_id, index, str(store.workspace)]
        return [t.CodeAction(title=title, kind=t.CodeActionKind.RefactorRewrite,
                             command=t.Command(title=title, command=RESTORE_COMMAND,
                                               arguments=args))]

    async def execute(self, params: t.ExecuteCommandParams) -> Any:
        args = list(params.arguments or [])
        if params.command == INFO_COMMAND:
            return None
        if params.command != RESTORE_COMMAND:
            raise InvalidParams(f"command: unknown command {params.command!r}")
        if len(args) < 3 or not isinstance(args[0], str) or not isinstance(args[1], str) \
                or not isinstance(args[2], int) or isinstance(args[2], bool):
            raise InvalidParams("arguments: expected [path, checkpointId, hunk, workspace?]")
        root = Path(args[3]) if len(args) > 3 and isinstance(args[3], str) else None
        folders = [f.resolve() for f in self.h.server.folders] or [
            Path(self.h.server.primary_workspace).resolve()]
        workspace = root.resolve() if root is not None else folders[0]
        if workspace not in folders:
            raise InvalidParams("arguments: the workspace is not one of this editor's folders")
        cp = self.h.dispatcher.checkpointer(workspace)
        if not isinstance(cp, CheckpointStore):
            raise CheckpointError("checkpoints are not available for this workspace")
        self.h._refuse_during_turn()
        buffers = self.h.dispatcher.services.buffers
        sink = RestoreBuffers(buffers, cp.workspace, asyncio.get_running_loop()) \
            if isinstance(buffers, DocumentBuffers) else None
        out = await asyncio.to_thread(cp.restore_hunk, args[1], args[0], args[2],
                                      buffers=sink)
        self.h._changed(out)
        return dumps.restore(out)

    @handles("openprogram/blame")
    async def blame_request(self, p: w.BlameParams) -> dict[str, Any]:
        """``openprogram/blame {uri}``: every run of lines with who changed it."""
        found = await asyncio.to_thread(self.blame_uri, p.uri)
        if found is None:
            return w.BlameResult(uri=p.uri, hunks=[]).wire()
        _store, rel, hunks = found
        return dumps.blame(p.uri, rel, hunks)


def _at(hunks: list[Hunk], line: int) -> Hunk | None:
    return next((h for h in hunks if h.start <= line < h.start + h.count), None)


def _diff_hunk(store: CheckpointStore, hunk: Hunk, rel: str) -> int | None:
    """The index in the checkpoint's diff of the hunk that wrote these lines."""
    try:
        diff = store.diff(str(hunk.info.checkpoint_id), rel)
    except OpenProgramError:
        return None
    files = [f for f in diff.files if f.path == rel]
    if not files:
        return None
    line = hunk.orig_start + 1
    for n, h in enumerate(files[0].hunks or []):
        if h.new_start <= line < h.new_start + h.new_lines:
            return n
    return None


def register(server: Any, features: BlameFeatures,
             more_actions: Callable[[t.CodeActionParams], list[t.CodeAction]] | None = None
             ) -> None:
    """Register the standard features (a failure answers nothing rather than an error) and the
    server commands (errors carry their JSON-RPC codes). ``more_actions`` adds code actions
    of other features (the agent's) to blame's."""
    from pygls.exceptions import JsonRpcException

    def quiet(name: str, fn: Any) -> Any:
        async def handler(params: Any) -> Any:
            try:
                return await fn(params)
            except Exception:
                log.exception("%s failed", name)
                return None
        return handler

    server.feature(t.TEXT_DOCUMENT_CODE_LENS, t.CodeLensOptions(resolve_provider=False))(
        quiet("codeLens", features.code_lens))
    server.feature(t.TEXT_DOCUMENT_HOVER)(quiet("hover", features.hover))
    async def code_action(params: t.CodeActionParams) -> list[t.CodeAction] | None:
        found = list(await quiet("codeAction", features.code_action)(params) or [])
        if more_actions is not None:
            try:
                found.extend(more_actions(params))
            except Exception:
                log.exception("codeAction failed")
        return found or None

    server.feature(t.TEXT_DOCUMENT_CODE_ACTION, t.CodeActionOptions(
        code_action_kinds=[t.CodeActionKind.RefactorRewrite, t.CodeActionKind.QuickFix]))(
        code_action)

    for name in COMMANDS:
        def make(command: str) -> Any:
            async def run(ls: object, *args: object) -> Any:  # pygls passes the server
                try:
                    return await features.execute(t.ExecuteCommandParams(
                        command=command, arguments=list(args)))
                except OpenProgramError as exc:
                    raise JsonRpcException(message=exc.message, code=exc.code,
                                           data=dumps.error_data(exc.data)) from None
            return run
        server.command(name)(make(name))
