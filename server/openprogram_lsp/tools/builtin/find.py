"""find_files: paths matching a glob, as ripgrep's walk admits them (``.gitignore``, no
``.git``, no dependency caches, none of our own state), newest first, capped.

The directory is opened by the race-proof walk and handed to ``rg --files`` as its working
directory, like grep's; each listed file's modification time is read relative to that same
descriptor (never following a link)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import time

from pydantic import BaseModel, Field

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.model import Model
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.descriptions import FIND_FILES, FIND_LIMIT
from openprogram_lsp.tools.builtin.search import (
    TIMEOUT,
    _display,
    _head,
    _walk_flags,
    rg_binary,
)
from openprogram_lsp.tools.paths import confined, protected_below
from openprogram_lsp.tools.procs import scrubbed_env, spawn

MAX_LIMIT = 1_000
MAX_LISTED = 200_000  # paths read from the walk (their times are read; the rest only counted)


class FindFilesInput(Model):
    pattern: str = Field(min_length=1, max_length=1000,
                         description="Glob, e.g. '**/*.py', 'src/**/test_*.ts', '*.{md,rst}'")
    path: str = Field(".", description="Folder to search in, relative to the workspace root")
    limit: int = Field(FIND_LIMIT, ge=1, le=MAX_LIMIT,
                       description=f"Paths to return at most (default {FIND_LIMIT})")


def _times(dir_fd: int, names: list[str]) -> list[tuple[float, str]]:
    out: list[tuple[float, str]] = []
    for name in names:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue  # gone since the walk listed it
        out.append((st.st_mtime, name))
    return out


class FindFiles(Tool):
    name = "find_files"
    description = FIND_FILES
    kind = "search"
    Input = FindFilesInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, FindFilesInput)
        where = "" if args.path in ("", ".", "./") else f" in {args.path}"
        return f"Find {args.pattern}{where}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, FindFilesInput)
        rg = rg_binary()
        if rg is None:
            raise ToolError("find_files needs ripgrep (`rg`); reinstall openprogram-lsp, "
                            "which depends on the `ripgrep` package")
        pattern = args.pattern.removeprefix("./")
        if pattern.startswith("!"):
            raise ToolError("find_files: the pattern must say which files to find, not which "
                            "to leave out")
        rel = "." if args.path in ("", ".", "./") else confined(ctx.workspace, args.path)
        st = fdfs.lstat(ctx.workspace, rel)
        if st is None:
            raise ToolError(f"{args.path}: no such directory")
        if not stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{args.path}: is not a directory; give the folder to search in")
        with fdfs.open_dir(ctx.workspace, fdfs.split(rel), rel=args.path) as fd:
            names, total, timed_out = await self._list(rg, fd, pattern,
                                                       protected_below(ctx.workspace, rel))
            found = await asyncio.to_thread(_times, fd, names)
        found.sort(key=lambda t: (-t[0], t[1]))
        shown = [_display(os.fsencode(n if rel == "." else f"{rel}/{n}"))
                 for _, n in found[:args.limit]]
        left = total - len(found) + max(len(found) - args.limit, 0)
        text = "\n".join(shown) or f"no files match {args.pattern!r}"
        if left > 0:
            text += (f"\n[{left:,} more files left out (newest first was kept); narrow the "
                     "pattern or path]")
        if timed_out:
            text += f"\n[stopped after {TIMEOUT:g} s; the list is partial]"
        return ToolOutput(text, data={"shown": len(shown), "left_out": max(left, 0)})

    async def _list(self, rg: str, dir_fd: int, pattern: str,
                    skip: list[str]) -> tuple[list[str], int, bool]:
        """The walk's files matching the pattern (at most ``MAX_LISTED`` of them), how many it
        listed in all, and whether it ran out of time."""
        argv = [rg, "--no-config", "--files", "--null", "--sort", "path",
                *_walk_flags(skip, globs=[pattern]), "--", "."]
        child = await spawn(*argv, cwd=f"/proc/self/fd/{dir_fd}", pass_fds=(dir_fd,),
                            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                            stderr=asyncio.subprocess.PIPE, env=scrubbed_env())
        assert child.stdout is not None and child.stderr is not None
        errors = asyncio.create_task(_head(child.stderr, 4096))
        names: list[str] = []
        total, buf, timed_out = 0, b"", False
        deadline = time.monotonic() + TIMEOUT
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                try:
                    async with asyncio.timeout(left):
                        chunk = await child.stdout.read(65536)
                except TimeoutError:
                    continue
                if not chunk:  # done: its status and stderr tell an error from no file
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(max(deadline - time.monotonic(), 0.1)):
                            await child.wait()
                            await asyncio.wait([errors])
                    break
                *whole, buf = (buf + chunk).split(b"\0")
                total += len(whole)
                room = MAX_LISTED - len(names)
                names += [os.fsdecode(n.removeprefix(b"./")) for n in whole[:room] if n]
        finally:
            await child.close()
            if not errors.done():
                errors.cancel()
        if child.returncode == 2 and not names:
            err = errors.result() if errors.done() and not errors.cancelled() else b""
            raise ToolError("find_files failed: "
                            + err.decode("utf-8", "replace").strip()[:1000])
        return names, total, timed_out
