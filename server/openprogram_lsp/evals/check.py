"""Decide whether a task was solved: lay the hidden files over the workspace, run the check.

The check runs the agent's code, so it runs as ``run_command`` does: in the sandbox the
settings ask for (bubblewrap: only the workspace writable), with a scrubbed environment, a
timeout, and output capped. Laying the hidden files never follows a link the agent left in
the workspace: a link (or a file) where a hidden file or one of its folders goes is removed
first, so nothing is written outside the workspace.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from openprogram_lsp.config import Settings
from openprogram_lsp.tools.output import HeadTail
from openprogram_lsp.tools.procs import scrubbed_env, spawn
from openprogram_lsp.tools.sandbox import availability_async, hold, plan, sandbox_settings

OUTPUT_BYTES = 16_000


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The check's outcome."""

    passed: bool
    exit_code: int | None
    timed_out: bool
    output: str
    seconds: float
    sandboxed: bool


def _make_dir(path: Path) -> None:
    """``path`` as a real directory: a link or file in its place is removed first."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    if not path.exists():
        path.mkdir()


def lay_hidden(hidden: Path, workspace: Path) -> list[str]:
    """Copy ``hidden``'s files into the workspace, replacing what is there; their paths."""
    laid: list[str] = []
    if not hidden.is_dir():
        return laid
    for src in sorted(hidden.rglob("*")):
        if src.is_dir() or src.is_symlink():
            continue
        rel = src.relative_to(hidden)
        here = workspace
        for part in rel.parts[:-1]:
            here = here / part
            _make_dir(here)
        dest = here / rel.parts[-1]
        try:
            mode = dest.lstat().st_mode
        except FileNotFoundError:
            mode = 0
        if stat.S_ISDIR(mode):
            raise OSError(f"the agent left a folder where the check's file {rel} goes")
        if mode:
            dest.unlink()
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(src.read_bytes())
        laid.append(str(rel))
    return laid


def command_line(check: str) -> str:
    """The check with ``{python}`` replaced by this interpreter."""
    return check.replace("{python}", shlex.quote(sys.executable))


async def run_check(check: str, workspace: Path, settings: Settings,
                    timeout: float) -> CheckResult:
    """Run the check command in the workspace, sandboxed as the settings say."""
    # this interpreter as the box sees it even where its /tmp hides it (a checkout under /tmp)
    how = plan(workspace, sandbox_settings(settings), await availability_async(),
               also_read=[Path(sys.prefix), Path(sys.base_prefix)])
    held = hold(how)
    start = time.monotonic()
    out = HeadTail(OUTPUT_BYTES)
    timed_out = False
    try:
        child = await spawn(*how.prefix, *how.inner, "/bin/sh", "-c", command_line(check),
                            sandboxed=how.sandboxed, cwd=workspace,
                            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                            stderr=asyncio.subprocess.STDOUT,
                            env=scrubbed_env({"PYTHONDONTWRITEBYTECODE": "1"}),
                            on_init=held.attach)
        try:
            async with asyncio.timeout(timeout):
                assert child.stdout is not None
                while chunk := await child.stdout.read(65536):
                    out.feed(chunk)
                await child.wait()
        except TimeoutError:
            timed_out = True
            await child.kill()
        finally:
            await child.close()
    finally:
        held.release()
    code = None if timed_out else child.returncode
    text = out.text(max_lines=400)
    if timed_out:
        text += f"\n[check killed after {timeout:g} s]"
    return CheckResult(passed=code == 0, exit_code=code, timed_out=timed_out, output=text,
                       seconds=time.monotonic() - start, sandboxed=how.sandboxed)
