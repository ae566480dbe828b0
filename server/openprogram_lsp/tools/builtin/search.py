"""grep: a regular-expression search over the workspace's text files."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from pydantic import BaseModel, Field

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.paths import relative, resolve_in_workspace

MAX_MATCHES = 200
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache", ".tox", "dist", "build"})


class GrepInput(BaseModel):
    pattern: str = Field(description="Python regular expression")
    path: str = Field(".", description="File or directory to search, relative to the workspace")


class Grep(Tool):
    name = "grep"
    description = "Search workspace files for a regular expression; prints path:line: text."
    kind = "search"
    Input = GrepInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, GrepInput)
        return f"Search {args.pattern!r} in {args.path}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, GrepInput)
        try:
            rx = re.compile(args.pattern)
        except re.error as exc:
            raise ToolError(f"invalid pattern {args.pattern!r}: {exc}") from None
        root = ctx.workspace.resolve() if args.path in ("", ".") else \
            resolve_in_workspace(ctx.workspace, args.path)
        # file I/O and regex work stay off the server's event loop
        return await asyncio.to_thread(self._search, rx, root, ctx.workspace)

    def _search(self, rx: re.Pattern[str], root: Path, workspace: Path) -> ToolOutput:
        top = workspace.resolve()
        files = [root] if root.is_file() else self._walk(root)
        hits: list[str] = []
        for f in files:
            if f.is_symlink() and top not in f.resolve().parents:
                continue  # a link leading out of the workspace is never followed
            try:
                data = f.read_bytes()
            except OSError:
                continue
            if b"\x00" in data[:4096]:
                continue
            for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if rx.search(line):
                    hits.append(f"{relative(workspace, f)}:{n}: {line[:300]}")
                    if len(hits) >= MAX_MATCHES:
                        return ToolOutput("\n".join(hits) + f"\n[stopped at {MAX_MATCHES}]")
        return ToolOutput("\n".join(hits) or "no matches")

    @staticmethod
    def _walk(root: Path) -> list[Path]:
        out: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            out.extend(Path(dirpath) / f for f in sorted(filenames))
        return out
