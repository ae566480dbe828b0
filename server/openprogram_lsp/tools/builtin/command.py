"""run_command: a shell command in the workspace, sandboxed, with a timeout and capped output."""

from __future__ import annotations

import asyncio
import codecs
import time
from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from openprogram_lsp.core.model import Model
from openprogram_lsp.core.secrets import is_secret_name
from openprogram_lsp.core.turn_context import command_env
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.background import Jobs
from openprogram_lsp.tools.builtin.descriptions import (
    COMMAND_MAX_TIMEOUT,
    COMMAND_TIMEOUT,
    RUN_COMMAND,
)
from openprogram_lsp.tools.output import HeadTail, cap_text
from openprogram_lsp.tools.procs import Child, scrubbed_env, spawn
from openprogram_lsp.tools.sandbox import (
    PARTIAL,
    Held,
    Plan,
    availability_async,
    hold,
    plan,
    sandbox_settings,
)

OUTSIDE_WHY = ("outside the sandbox, as the model asked: it can write .git and the files "
               "that make commands run later")
OUTSIDE_NOTE = "not sandboxed: run outside the sandbox as asked, with the user's approval"
READ_ONLY_HINT = ("[inside the sandbox only the workspace is writable, and in it not .git nor "
                  "the editor and agent settings; a git command that writes the repository "
                  "(add, commit, checkout, init) needs outside_sandbox: true, which asks the "
                  "user]")
MAX_OUTPUT_BYTES = 30_000
MAX_OUTPUT_LINES = 1_000
DEFAULT_TIMEOUT = COMMAND_TIMEOUT
MAX_TIMEOUT = COMMAND_MAX_TIMEOUT


def _seconds(value: float | None) -> float | None:
    """A timeout in seconds; above ``MAX_TIMEOUT`` the number is taken as milliseconds."""
    if value is None:
        return None
    seconds = value / 1000 if value > MAX_TIMEOUT else value
    if seconds > MAX_TIMEOUT:
        raise ValueError(f"at most {MAX_TIMEOUT:g} seconds ({MAX_TIMEOUT * 1000:g} ms)")
    return seconds


class RunCommandInput(Model):
    command: str = Field(min_length=1, description="Shell command (/bin/sh -c), run with the "
                         "workspace as working directory")
    timeout: Annotated[float | None, AfterValidator(_seconds)] = Field(
        None, gt=0, description=f"Seconds before the command is killed (default "
        f"{DEFAULT_TIMEOUT:g}, at most {MAX_TIMEOUT:g}; a value above {MAX_TIMEOUT:g} is taken "
        "as milliseconds). A background command has none unless one is given")
    background: bool = Field(False, description="Start it and return an id at once; read its "
                             "output with command_output, end it with command_stop")
    description: str | None = Field(None, max_length=200,
                                    description="What the command does, in a few words")
    outside_sandbox: bool = Field(False, description=(
        "Run it outside the sandbox, as the user: only for what the sandbox refuses (git add, "
        "commit, checkout, init: .git and editor/agent settings are read-only inside). The "
        "user is asked every time"))


class RunCommand(Tool):
    name = "run_command"
    description = RUN_COMMAND
    kind = "execute"
    Input = RunCommandInput

    def __init__(self, jobs: Jobs | None = None) -> None:
        self.jobs = jobs if jobs is not None else Jobs()

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, RunCommandInput)
        return f"Run `{args.command}`" + (" in the background" if args.background else "")

    async def aclose(self) -> None:
        await self.jobs.aclose()

    async def end_session(self, session_id: str) -> None:
        await self.jobs.end_session(session_id)

    async def plan(self, ctx: ToolContext, args: BaseModel | None = None) -> Plan:
        """How the next command will run (for the approval card and for ``run``)."""
        if isinstance(args, RunCommandInput) and args.outside_sandbox:
            return Plan(False, note=OUTSIDE_NOTE)
        return plan(ctx.workspace, sandbox_settings(ctx.settings),
            await availability_async())

    async def sandboxing(self, ctx: ToolContext,
                         args: BaseModel | None = None) -> tuple[bool, str] | None:
        how = await self.plan(ctx, args)
        return how.sandboxed, how.note

    def always_asks(self, args: BaseModel) -> str | None:
        assert isinstance(args, RunCommandInput)
        return OUTSIDE_WHY if args.outside_sandbox else None

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, RunCommandInput)
        how = await self.plan(ctx, args)
        held = hold(how)  # its placeholders and cgroup stay until its sandbox is gone
        if args.background:
            try:
                return await self._background(args, ctx, how, held)  # its job releases it
            except BaseException:
                held.release()
                raise
        try:
            out = await self._run(args, ctx, how, held)
        finally:
            held.release()
        hit = held.limit_note(out.text)
        if hit:
            out.text = f"{out.text}\n{hit}"
        made = held.made_note()  # a repository or control file made below the root
        if made:
            out.text = f"{out.text}\n{made}"
            out.data["made_controls"] = made  # the turn's warnings name it too
        if how.sandboxed and how.nested.partial:  # the look below the root was cut short
            out.text = f"{out.text}\n{PARTIAL}"
        if how.sandboxed and "read-only file system" in out.text.lower():
            out.text = f"{out.text}\n{READ_ONLY_HINT}"
        return out

    async def _run(self, args: RunCommandInput, ctx: ToolContext, how: Plan,
                   held: Held) -> ToolOutput:
        timeout = args.timeout or DEFAULT_TIMEOUT
        env = scrubbed_env({**hook_env(), "OPENPROGRAM_TOOL": "run_command"})
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

    async def _background(self, args: RunCommandInput, ctx: ToolContext, how: Plan,
                          held: Held) -> ToolOutput:
        """Start the command and return its id; its output waits for command_output."""
        self.jobs.room(ctx.session_id)
        env = scrubbed_env({**hook_env(), "OPENPROGRAM_TOOL": "run_command"})
        child = await spawn(*how.prefix, *how.inner, "/bin/sh", "-c", args.command,
                            sandboxed=how.sandboxed, cwd=ctx.workspace,
                            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                            stderr=asyncio.subprocess.STDOUT, env=env, on_init=held.attach)
        ctx.touched()  # what it changes before the turn ends is in the turn's checkpoint

        def ended() -> None:  # its output ends with what it made below the root
            held.release()
            if made := held.made_note():
                job.unread.feed(f"\n{made}\n".encode())

        job = self.jobs.start(ctx.session_id, args.command, child, args.timeout, how.note,
                              on_end=ended)
        limit = f"; killed after {args.timeout:g} s" if args.timeout else ""
        note = f"\n[{how.note}]" if how.note else ""
        return ToolOutput(f"Started in the background as {job.id}{limit}. Read its output "
                          f"with command_output {{\"id\": \"{job.id}\"}}; stop it with "
                          f"command_stop.{note}",
                          data={"id": job.id, "sandboxed": how.sandboxed, "background": True})


def hook_env() -> dict[str, str]:
    """What the session's SessionStart hooks set for its commands (``CLAUDE_ENV_FILE``),
    credentials left out as they are of the server's own environment."""
    return {k: v for k, v in (command_env.get() or {}).items() if not is_secret_name(k)}


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
