"""Code navigation answered by the editor's language servers (the ``LanguageServers`` port).

Read-only, bounded, and offered only when the session's editor answers ``openprogram/navigate``
(``dispatcher.tool_sources`` adds them). Results inside the workspace come with the line's
text; a place outside it (a library, another project) is given as its path only.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.model import Model
from openprogram_lsp.core.navigation import Navigation, NavigationKind, Place, Symbol
from openprogram_lsp.core.types import ToolKind
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin import descriptions as d
from openprogram_lsp.tools.builtin.files import _read_whole_text
from openprogram_lsp.tools.paths import confined

MAX_LINE_TEXT = 200
MAX_SNIPPET_FILES = 50

SYMBOL_KINDS = ("file", "module", "namespace", "package", "class", "method", "property",
                "field", "constructor", "enum", "interface", "function", "variable", "constant",
                "string", "number", "boolean", "array", "object", "key", "null", "enum member",
                "struct", "event", "operator", "type parameter")


class PositionInput(Model):
    path: str = Field(description="The file, relative to the workspace")
    line: int = Field(ge=1, le=10_000_000, description="1-based line the symbol is on")
    symbol: str = Field(min_length=1, max_length=200,
                        description="The identifier as written on that line")


class FileInput(Model):
    path: str = Field(description="The file, relative to the workspace")


class QueryInput(Model):
    query: str = Field(min_length=1, max_length=200, description="A symbol name or part of one")


def _text(ctx: ToolContext, rel: str, display: str) -> str:
    """The file as the editor shows it (unsaved changes included), else as on disk."""
    if ctx.buffers is not None:
        unsaved = ctx.buffers.unsaved(ctx.session_id, ctx.workspace.resolve() / rel)
        if unsaved is not None:
            return unsaved
    return _read_whole_text(ctx.workspace, rel, display)


def _column(text: str, line: int, symbol: str, display: str) -> int:
    """The UTF-16 character of ``symbol`` on 1-based ``line`` (its first whole-word match)."""
    lines = text.split("\n")
    if line > len(lines):
        raise ToolError(f"{display} has {len(lines)} lines; there is no line {line}")
    row = lines[line - 1]
    m = re.search(rf"(?<!\w){re.escape(symbol)}(?!\w)", row)
    at = m.start() if m else row.find(symbol)
    if at < 0:
        raise ToolError(f"{symbol!r} is not on line {line} of {display}; that line reads: "
                        f"{row.strip()[:MAX_LINE_TEXT]!r}")
    return len(row[:at].encode("utf-16-le")) // 2


def _inside(ctx: ToolContext, path: Path) -> str | None:
    """The workspace-relative path of a place, None when it is outside the workspace."""
    root = os.path.realpath(ctx.workspace)
    real = os.path.realpath(path)
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        return None
    rel = os.path.relpath(real, root)
    try:
        return confined(ctx.workspace, rel)
    except Exception:  # an escape or a bad name: treated as outside
        return None


class _Lines:
    """Line texts of result files (each read once, a bounded number of files)."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.files: dict[str, list[str] | None] = {}

    def line(self, rel: str, line: int) -> str:
        if rel not in self.files:
            if len(self.files) >= MAX_SNIPPET_FILES:
                return ""
            try:
                self.files[rel] = _text(self.ctx, rel, rel).split("\n")
            except Exception:  # unreadable, binary, gone: the place stands without its text
                self.files[rel] = None
        rows = self.files[rel]
        if rows is None or line >= len(rows):
            return ""
        return rows[line].strip()[:MAX_LINE_TEXT]


def _places(ctx: ToolContext, places: list[Place], what: str) -> str:
    unique = sorted(set(places), key=lambda p: (_inside(ctx, p.path) is None, str(p.path),
                                                p.line, p.character))
    if not unique:
        return f"The language servers found no {what}."
    lines = _Lines(ctx)
    out = []
    for p in unique[:d.NAV_MAX_RESULTS]:
        rel = _inside(ctx, p.path)
        if rel is None:
            out.append(f"{p.path} (outside the workspace)")
        else:
            out.append(f"{rel}:{p.line + 1}:{p.character + 1}: {lines.line(rel, p.line)}")
    if len(unique) > d.NAV_MAX_RESULTS:
        out.append(f"… and {len(unique) - d.NAV_MAX_RESULTS} more")
    return "\n".join(out)


def _kind(n: int) -> str:
    return SYMBOL_KINDS[n - 1] if 1 <= n <= len(SYMBOL_KINDS) else "symbol"


def _symbols(ctx: ToolContext, symbols: list[Symbol], *, with_path: bool) -> str:
    if not symbols:
        return "The language servers found no symbols."
    out = []
    for s in symbols[:d.NAV_MAX_RESULTS]:
        where = ""
        if s.place is not None:
            rel = _inside(ctx, s.place.path)
            if with_path:
                where = (f"{rel}:{s.place.line + 1}: " if rel is not None
                         else f"{s.place.path} (outside the workspace): ")
            else:
                where = f"line {s.place.line + 1}: "
        inside = f" (in {s.container})" if s.container else ""
        out.append(f"{where}{_kind(s.kind)} {s.name}{inside}")
    if len(symbols) > d.NAV_MAX_RESULTS:
        out.append(f"… and {len(symbols) - d.NAV_MAX_RESULTS} more")
    return "\n".join(out)


class _Navigate(Tool):
    """A navigation question for the editor's language servers."""

    kind: ClassVar[ToolKind] = "read"
    category: ClassVar[str] = "navigation"
    question: ClassVar[NavigationKind]

    async def ask(self, ctx: ToolContext, *, path: Path | None = None, line: int = 0,
                  character: int = 0, query: str = "") -> Navigation:
        if ctx.language is None or not ctx.language.offers_navigation(ctx.session_id):
            raise ToolError(f"{self.name} needs an editor whose language servers can answer; "
                            "this session's editor has none (use grep instead)")
        got = await ctx.language.navigate(ctx.session_id, self.question, path=path, line=line,
                                          character=character, query=query)
        if got is None:
            raise ToolError("the editor's language servers did not answer in time; "
                            "try again or use grep")
        return got

    async def at(self, args: BaseModel, ctx: ToolContext) -> Navigation:
        assert isinstance(args, PositionInput)
        rel = confined(ctx.workspace, args.path)
        text = await asyncio.to_thread(_text, ctx, rel, args.path)
        character = _column(text, args.line, args.symbol, args.path)
        return await self.ask(ctx, path=ctx.workspace.resolve() / rel, line=args.line - 1,
                              character=character)

    def title(self, args: BaseModel) -> str:
        if isinstance(args, PositionInput):
            return f"{self.name} {args.symbol} ({args.path}:{args.line})"
        if isinstance(args, FileInput):
            return f"{self.name} {args.path}"
        if isinstance(args, QueryInput):
            return f"{self.name} {args.query}"
        return self.name


class LspDefinition(_Navigate):
    name = "lsp_definition"
    description = d.LSP_DEFINITION
    question = "definition"
    Input = PositionInput

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        got = await self.at(args, ctx)
        return ToolOutput(_places(ctx, got.places, "definition"))


class LspReferences(_Navigate):
    name = "lsp_references"
    description = d.LSP_REFERENCES
    kind = "search"
    question = "references"
    Input = PositionInput

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        got = await self.at(args, ctx)
        return ToolOutput(_places(ctx, got.places, "references"))


class LspHover(_Navigate):
    name = "lsp_hover"
    description = d.LSP_HOVER
    question = "hover"
    Input = PositionInput

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        got = await self.at(args, ctx)
        text = got.hover.strip()
        if not text:
            return ToolOutput("The language servers have nothing to show for it.")
        if len(text) > d.NAV_HOVER_CHARS:
            text = text[:d.NAV_HOVER_CHARS] + f"\n[… {len(text) - d.NAV_HOVER_CHARS} more " \
                                              "characters]"
        return ToolOutput(text)


class LspDocumentSymbols(_Navigate):
    name = "lsp_document_symbols"
    description = d.LSP_DOCUMENT_SYMBOLS
    question = "documentSymbols"
    Input = FileInput

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, FileInput)
        rel = confined(ctx.workspace, args.path)
        got = await self.ask(ctx, path=ctx.workspace.resolve() / rel)
        return ToolOutput(_symbols(ctx, got.symbols, with_path=False))


class LspWorkspaceSymbols(_Navigate):
    name = "lsp_workspace_symbols"
    description = d.LSP_WORKSPACE_SYMBOLS
    kind = "search"
    question = "workspaceSymbols"
    Input = QueryInput

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, QueryInput)
        got = await self.ask(ctx, query=args.query)
        inside = [s for s in got.symbols if s.place is None
                  or _inside(ctx, s.place.path) is not None]
        return ToolOutput(_symbols(ctx, inside, with_path=True))


def navigation_tools() -> list[Tool]:
    """The navigation tools (offered where the editor answers ``openprogram/navigate``)."""
    return [LspDefinition(), LspReferences(), LspHover(), LspDocumentSymbols(),
            LspWorkspaceSymbols()]
