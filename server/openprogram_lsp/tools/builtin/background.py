"""Background commands: ``run_command`` with ``background: true`` starts one and returns its
id; ``command_output`` reads what it printed since the last read; ``command_stop`` kills it
and everything it started.

Ids are ``bg_1``, ``bg_2``, ... per registry; a job belongs to the session that started it
(to another session its id is unknown); its
unread output is kept in a bounded buffer (the first and last halves, the middle counted and
dropped); the jobs of a registry end when the server ends (``aclose``) and, should the server
die, by the death guard every child process has (``tools.procs``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.model import Model
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.descriptions import COMMAND_OUTPUT, COMMAND_STOP
from openprogram_lsp.tools.output import HeadTail
from openprogram_lsp.tools.procs import Child

BUFFER_BYTES = 30_000  # unread output kept per job (and returned by one read at most)
MAX_LINES = 1_000
MAX_RUNNING = 8  # per session
MAX_KEPT = 32  # per session, finished ones included (the oldest finished go first)


@dataclass(slots=True)
class Job:
    """One background command: its process, its unread output and how it ended."""

    id: str
    session_id: str
    command: str
    child: Child
    started: float = field(default_factory=time.monotonic)
    unread: HeadTail = field(default_factory=lambda: HeadTail(BUFFER_BYTES))
    reader: asyncio.Task[None] | None = None
    timed_out: bool = False
    stopped: bool = False
    note: str = ""  # how the command runs (the sandbox's note)

    @property
    def running(self) -> bool:
        return self.reader is not None and not self.reader.done()

    def status(self) -> str:
        """``running (12 s)``, ``exited with code 0``, ``killed after ...`` or ``stopped``."""
        if self.running:
            return f"running ({time.monotonic() - self.started:.0f} s)"
        if self.stopped:
            return "stopped by command_stop"
        if self.timed_out:
            return "killed by its timeout"
        code = self.child.returncode
        return f"exited with code {code}" if code is not None and code >= 0 \
            else f"killed by signal {-(code or 0)}"

    def take(self) -> str:
        """The output not read yet (capped, with a note of what was cut), then forget it."""
        if not self.unread.total:
            return ""
        text = self.unread.text(max_lines=MAX_LINES)
        self.unread = HeadTail(BUFFER_BYTES)
        return text


class Jobs:
    """The background commands started through one tool registry."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._started = 0

    def get(self, session_id: str, job_id: str) -> Job:
        job = self._jobs.get(job_id.strip())
        if job is None or job.session_id != session_id:
            known = [j.id for j in self._jobs.values() if j.session_id == session_id]
            raise ToolError(f"no background command {job_id!r} in this session"
                            + (f"; known: {', '.join(known)}" if known else ""))
        return job

    def room(self, session_id: str) -> None:
        """Refuse a new job over the per-session limit; forget the oldest finished ones."""
        mine = [j for j in self._jobs.values() if j.session_id == session_id]
        running = [j for j in mine if j.running]
        if len(running) >= MAX_RUNNING:
            raise ToolError(f"{len(running)} background commands are running in this session "
                            f"(at most {MAX_RUNNING}); stop one with command_stop first: "
                            + ", ".join(j.id for j in running))
        for job in [j for j in mine if not j.running][:max(len(mine) - MAX_KEPT + 1, 0)]:
            del self._jobs[job.id]

    def start(self, session_id: str, command: str, child: Child, timeout: float | None,
              note: str, on_end: Callable[[], None] | None = None) -> Job:
        """Track a started command: read its output until it ends (or its timeout), then
        call ``on_end`` (the sandbox's hold is released once the sandbox is gone)."""
        self._started += 1
        job = Job(id=f"bg_{self._started}", session_id=session_id, command=command,
                  child=child, note=note)
        job.reader = asyncio.create_task(self._read(job, timeout, on_end))
        self._jobs[job.id] = job
        return job

    async def _read(self, job: Job, timeout: float | None,
                    on_end: Callable[[], None] | None) -> None:
        stdout = job.child.stdout
        assert stdout is not None
        try:
            async with asyncio.timeout(timeout):
                while chunk := await stdout.read(65536):
                    job.unread.feed(chunk)
                await job.child.wait()
        except TimeoutError:
            job.timed_out = True
        finally:
            try:
                await asyncio.shield(job.child.close())  # what it left running ends with it
            finally:
                if on_end is not None:
                    on_end()

    async def stop(self, job: Job) -> None:
        """Kill the job's whole process tree and wait (bounded) for its reader to finish."""
        if job.running:
            job.stopped = True
            await job.child.kill()
            assert job.reader is not None
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                async with asyncio.timeout(5):
                    await asyncio.shield(job.reader)

    async def end_session(self, session_id: str) -> None:
        """End and forget one session's jobs (the session is being deleted)."""
        for job in [j for j in self._jobs.values() if j.session_id == session_id]:
            del self._jobs[job.id]
            await self.stop(job)

    async def aclose(self) -> None:
        """End every job (the server is stopping)."""
        jobs, self._jobs = list(self._jobs.values()), {}
        for job in jobs:
            await self.stop(job)
            if job.reader is not None and not job.reader.done():
                job.reader.cancel()


def report(job: Job, *, head: str = "") -> str:
    """A job's new output and status, for the model."""
    text = job.take()
    parts = [head] if head else []
    parts.append(f"[{job.id}: {job.status()}]")
    parts.append(text.rstrip("\n") if text else "(no new output)")
    if job.note:
        parts.append(f"[{job.note}]")
    return "\n".join(parts)


class JobInput(Model):
    id: str = Field(min_length=1, max_length=64,
                    description="The id run_command returned for the background command")


class CommandOutput(Tool):
    name = "command_output"
    description = COMMAND_OUTPUT
    kind = "read"
    Input = JobInput

    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, JobInput)
        return f"Output of {args.id}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, JobInput)
        job = self.jobs.get(ctx.session_id, args.id)
        await asyncio.sleep(0)  # let its reader take what is in the pipe already
        failed = not job.running and (job.timed_out or (job.child.returncode or 0) != 0)
        return ToolOutput(report(job), is_error=failed and not job.stopped,
                          data={"id": job.id, "running": job.running,
                                "exit_code": job.child.returncode})


class CommandStop(Tool):
    name = "command_stop"
    description = COMMAND_STOP
    kind = "execute"
    asks = False  # it only ends what an approved call started
    Input = JobInput

    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, JobInput)
        return f"Stop {args.id}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, JobInput)
        job = self.jobs.get(ctx.session_id, args.id)
        was = job.running
        await self.jobs.stop(job)
        ctx.touched()  # it may have changed files: the checkpoint re-scans
        head = f"Stopped {job.id} (`{job.command}`)." if was \
            else f"{job.id} had already ended."
        return ToolOutput(report(job, head=head),
                          data={"id": job.id, "exit_code": job.child.returncode})
