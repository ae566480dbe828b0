"""run_command: a shell command in the workspace, sandboxed, with a timeout and capped output."""

from __future__ import annotations

import asyncio
import codecs
import time
from collections.abc import Callable

from pydantic import BaseModel, Field

from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.output import HeadTail, cap_text
from openprogram_lsp.tools.procs import Child, scrubbed_env, spawn
from openprogram_lsp.tools.sandbox import (
    Held,
    Plan,
    availability_async,
    hold,
    plan,
    sandbox_settings,
)

MAX_OUTPUT_BYTES = 30_000
MAX_OUTPUT_LINES = 1_000
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0


class RunCommandInput(BaseModel):
    command: str = Field(description="Shell command, run with the workspace as working directory")
    timeout: float | None = Field(None, description="Seconds before the command is killed",
                                  gt=0, le=MAX_TIMEOUT)


class RunCommand(Tool):
    name = "run_command"
    description = ("Run a shell command in the workspace and return its exit code and output. "
                   "It runs in a sandbox: only the workspace is writable, /tmp is private.")
    kind = "execute"
    Input = RunCommandInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, RunCommandInput)
        return f"Run `{args.command}`"

    async def plan(self, ctx: ToolContext) -> Plan:
        """How the next command will run (for the approval card and for ``run``)."""
        return plan(ctx.workspace, sandbox_settings(ctx.settings),
            await availability_async())

    async def sandboxing(self, ctx: ToolContext) -> tuple[bool, str] | None:
        how = await self.plan(ctx)
        return how.sandboxed, how.note

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, RunCommandInput)
        how = await self.plan(ctx)
        held = hold(how)  # its placeholders and cgroup stay until its sandbox is gone
        try:
            out = await self._run(args, ctx, how, held)
        finally:
            held.release()
        hit = held.limit_note(out.text)
        if hit:
            out.text = f"{out.text}\n{hit}"
        return out

    async def _run(self, args: RunCommandInput, ctx: ToolContext, how: Plan,
                   held: Held) -> ToolOutput:
        timeout = args.timeout or DEFAULT_TIMEOUT
        env = scrubbed_env({"OPENPROGRAM_TOOL": "run_command"})
        if ctx.editor is not None:  # the editor's terminal, where it offers one
            done = await ctx.editor.run_command(
                ctx.session_id, _with_env(how, env, args.command), ctx.workspace.resolve(),
                timeout)
            if done is not None:
                ctx.touched()
                return _result(done.exit_code, done.output, timeout, how,
                               timed_out=done.timed_out, signal=done.signal)
        argv = [*how.prefix, *how.inner, "/bin/sh", "-c", args.command]
        try:
            child = await spawn(
                *argv, sandboxed=how.sandboxed, cwd=ctx.workspace,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, env=env, on_init=held.attach)
            out = HeadTail(MAX_OUTPUT_BYTES)
            try:
                timed_out = await _collect(child, out, timeout, ctx.output)
            finally:
                await child.close()  # a cancel too: everything it started ends here
        finally:
            ctx.touched()  # the tree may have changed anywhere: the checkpoint re-scans
        text = out.text(max_lines=MAX_OUTPUT_LINES)
        note = f"\n[{how.note}]" if how.note else ""
        if timed_out:
            return ToolOutput(f"{text}\n[killed after {timeout:g} s timeout]{note}".lstrip("\n"),
                              is_error=True, data={"sandboxed": how.sandboxed})
        code = child.returncode
        return ToolOutput(f"exit code {code}\n{text}".rstrip() + note, is_error=code != 0,
                          data={"sandboxed": how.sandboxed})


def _with_env(how: Plan, env: dict[str, str], command: str) -> list[str]:
    """The argv for a process someone else starts (the editor): our scrubbed env, not theirs."""
    if how.sandboxed:
        sets = [x for k, v in env.items() for x in ("--setenv", k, v)]
        return [*how.prefix[:-1], "--clearenv", *sets, "--", *how.inner, "/bin/sh", "-c",
                command]
    return ["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items() if "=" not in k),
            "/bin/sh", "-c", command]


def _result(code: int | None, output: str, timeout: float, how: Plan, *, timed_out: bool,
            signal: str | None) -> ToolOutput:
    text = cap_text(output, max_bytes=MAX_OUTPUT_BYTES, max_lines=MAX_OUTPUT_LINES)
    note = f"\n[{how.note}]" if how.note else ""
    data = {"sandboxed": how.sandboxed}
    if timed_out:
        return ToolOutput(f"{text}\n[killed after {timeout:g} s timeout]{note}", is_error=True,
                          data=data)
    if code is None:
        return ToolOutput(f"killed by signal {signal or '?'}\n{text}".rstrip() + note,
                          is_error=True, data=data)
    return ToolOutput(f"exit code {code}\n{text}".rstrip() + note, is_error=code != 0,
                      data=data)


async def _collect(child: Child, out: HeadTail, timeout: float,
                   live: Callable[[str], None]) -> bool:
    """Stream the output into ``out`` (and ``live``) until exit; True when the timeout killed
    it."""
    assert child.stdout is not None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a split character waits
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            await child.kill()
            return True
        try:
            async with asyncio.timeout(left):  # not wait_for: on 3.11 it can eat a cancel
                chunk = await child.stdout.read(65536)
        except TimeoutError:
            continue
        if not chunk:
            live(decoder.decode(b"", final=True))
            break
        out.feed(chunk)
        live(decoder.decode(chunk))
    # stdout closed: the shell is done (what it left running was killed with it), or it closed
    # its output and runs on until the timeout
    try:
        async with asyncio.timeout(max(deadline - time.monotonic(), 0.1)):
            await child.wait()
    except TimeoutError:
        await child.kill()
        return True
    return False
