"""run_command: a shell command in the workspace, with a timeout and capped output."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from pydantic import BaseModel, Field

from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput

MAX_OUTPUT_CHARS = 30_000
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0


class RunCommandInput(BaseModel):
    command: str = Field(description="Shell command, run with the workspace as working directory")
    timeout: float | None = Field(None, description="Seconds before the command is killed",
                                  gt=0, le=MAX_TIMEOUT)


# Credentials of the model providers never reach commands the model runs (they would land in
# tool output, the session store and the next model request).
_WITHHELD = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in _WITHHELD and not k.endswith("_API_KEY")}
    env["OPENPROGRAM_TOOL"] = "run_command"
    return env


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    half = MAX_OUTPUT_CHARS // 2
    return f"{text[:half]}\n[... {len(text) - MAX_OUTPUT_CHARS} characters cut ...]\n{text[-half:]}"


class RunCommand(Tool):
    name = "run_command"
    description = "Run a shell command in the workspace and return its exit code and output."
    kind = "execute"
    Input = RunCommandInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, RunCommandInput)
        return f"Run `{args.command}`"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, RunCommandInput)
        timeout = args.timeout or DEFAULT_TIMEOUT
        if ctx.editor is not None:  # the editor's terminal, where it offers one
            done = await ctx.editor.run_command(ctx.session_id, ["/bin/sh", "-c", args.command],
                                                ctx.workspace.resolve(), timeout)
            if done is not None:
                ctx.touched()
                return _result(done.exit_code, done.output, timeout,
                               timed_out=done.timed_out, signal=done.signal)
        proc = await asyncio.create_subprocess_shell(
            args.command, cwd=ctx.workspace, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True, env=_child_env(),
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            _kill(proc)
            out = await _drain(proc)
            ctx.touched()
            return ToolOutput(_cap(out.decode("utf-8", "replace")) +
                              f"\n[killed after {timeout:g} s timeout]", is_error=True)
        except asyncio.CancelledError:
            _kill(proc)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), 2)
            raise
        ctx.touched()  # the tree may have changed anywhere: the checkpoint re-scans
        text = _cap(out.decode("utf-8", "replace"))
        code = proc.returncode
        return ToolOutput(f"exit code {code}\n{text}".rstrip(), is_error=code != 0)


def _result(code: int | None, output: str, timeout: float, *, timed_out: bool,
            signal: str | None) -> ToolOutput:
    text = _cap(output)
    if timed_out:
        return ToolOutput(f"{text}\n[killed after {timeout:g} s timeout]", is_error=True)
    if code is None:
        return ToolOutput(f"killed by signal {signal or '?'}\n{text}".rstrip(), is_error=True)
    return ToolOutput(f"exit code {code}\n{text}".rstrip(), is_error=code != 0)


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _drain(proc: asyncio.subprocess.Process) -> bytes:
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 2)
        return out or b""
    except (TimeoutError, ValueError):
        return b""
