"""After an edit lands, tell the model the errors and warnings it introduced.

The editor's language servers (the ``LanguageServers`` port) give the edited file's
diagnostics before the edit and once they settle after it (a bounded wait, in the editor);
``core.diagnostics`` compares them. Nothing is asked when the level is ``off`` or the editor
offers no diagnostics (ACP, plain LSP clients).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from openprogram_lsp.agent.prompts import EditorDiagnostics
from openprogram_lsp.config.sections.diagnostics import DiagnosticsSection
from openprogram_lsp.core.diagnostics import Diagnostic, DiagnosticsLevel, compare, report
from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.paths import confined

log = logging.getLogger(__name__)

EDIT_TOOLS = frozenset({"write_file", "edit_file", "multi_edit"})
BUDGET = 1.5  # seconds both asks of one edit may add to it, round trips included
MIN_AFTER = 0.3  # the ask after the edit gets at least this much
MAX_TRIP = 0.1  # the longest round trip the ask before the edit is taken to estimate


def level_of(ctx: ToolContext) -> DiagnosticsLevel:
    """The configured level (``errors`` without settings)."""
    if ctx.settings is None:
        return "errors"
    return ctx.settings.get(DiagnosticsSection).after_edits


def editor_diagnostics(ctx: ToolContext) -> EditorDiagnostics:
    """What the session's editor reports after an edit (``none``: it cannot)."""
    language = ctx.language
    if language is None or not language.offers_diagnostics(ctx.session_id):
        return "none"
    return level_of(ctx)


class EditCheck:
    """The diagnostics of one edit call's file: ``before`` it runs, ``after`` it landed."""

    def __init__(self, ctx: ToolContext, name: str, arguments: dict[str, Any]) -> None:
        self.ctx = ctx
        self.rel: str | None = None
        self.path: Path | None = None
        self.level: DiagnosticsLevel = "off"
        self.old: list[Diagnostic] | None = None
        self.spent = 0.0  # seconds the ask before the edit took
        language = ctx.language
        if name not in EDIT_TOOLS or language is None \
                or not language.offers_diagnostics(ctx.session_id):
            return
        self.level = level_of(ctx)
        raw = arguments.get("path")
        if self.level == "off" or not isinstance(raw, str):
            return
        try:
            self.rel = confined(ctx.workspace, raw)
        except OpenProgramError:
            return
        self.path = ctx.workspace.resolve() / self.rel

    async def _ask(self, *, settle: bool,
                   within: float | None = None) -> dict[Path, list[Diagnostic]] | None:
        assert self.path is not None and self.ctx.language is not None
        try:
            return await self.ctx.language.diagnostics(self.ctx.session_id, [self.path],
                                                       settle=settle, within=within)
        except Exception:  # the editor went away: the edit stands, unreported
            log.warning("diagnostics of %s not available", self.rel, exc_info=True)
            return None

    async def before(self) -> None:
        """The file's diagnostics as they are (loaded and settled if no buffer held it)."""
        if self.path is None or self.ctx.language is None:
            return
        started = time.monotonic()
        got = await self._ask(settle=False, within=BUDGET)
        self.spent = time.monotonic() - started
        self.old = got.get(self.path, []) if got is not None else None

    async def after(self) -> str:
        """What the edit introduced and fixed ("" when nothing, or no answer)."""
        if self.path is None or self.rel is None or self.ctx.language is None:
            return ""
        # both asks share one bound, round trips included: a file the editor had to load first
        # leaves less to wait, and the ask before (at least one round trip: no more than
        # MAX_TRIP of it counts as one) stands for the ask after's own trip
        trip = min(self.spent, MAX_TRIP)
        got = await self._ask(settle=True,
                              within=max(MIN_AFTER, BUDGET - self.spent - trip))
        if got is None:
            return ""
        introduced, fixed = compare(self.old or [], got.get(self.path, []), self.level)
        return report(self.rel, introduced, fixed)
