"""Background jobs (subagent runs, message deliveries, replies) on one private event loop.

Every job is tracked until it ends, its exceptions are logged, and it can be cancelled on its
own or together with the turn that started it. Jobs start in submission order, so FIFO locks
taken first thing in a job keep that order.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.core.ids import new_id, now_iso

log = logging.getLogger(__name__)

KEEP_JOBS = 1000  # finished jobs remembered for listings
JobStatus = Literal["pending", "running", "done", "error", "cancelled"]
JobKind = Literal["agent", "message", "reply"]


@dataclass(slots=True, eq=False)
class Job:
    """One background job and what is known about it."""

    id: str
    kind: JobKind
    session_id: str
    origin_session_id: str | None = None
    parent_turn_id: str | None = None
    label: str | None = None
    status: JobStatus = "pending"
    created_at: str = field(default_factory=now_iso)
    control: TurnControl | None = None
    turn_ids: list[str] = field(default_factory=list)
    head_id: str | None = None
    error: str | None = None
    result: Any = None
    cancel_requested: bool = False
    cascaded: bool = False
    in_turn: bool = False
    done_event: threading.Event = field(default_factory=threading.Event)
    task: asyncio.Task[Any] | None = None

    @property
    def done(self) -> bool:
        """Whether the job has ended (any outcome)."""
        return self.done_event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends; False on timeout."""
        return self.done_event.wait(timeout)


JobBody = Callable[[Job], Awaitable[Any]]


class TaskRunner:
    """Runs jobs on a host's long-lived loop if given one, else on a private daemon thread.

    A server attaches its own loop, so jobs share it with the approver and asker that talk to
    the editor; the CLI and tests get a private loop started on first use.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._owned = True

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run future jobs on a host's long-lived loop (the language server's)."""
        with self._lock:
            self._loop, self._thread, self._owned = loop, None, False

    # -- loop ---------------------------------------------------------------------------------

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The runner's event loop (started if needed)."""
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                self._owned = True
                ready = threading.Event()
                loop = asyncio.new_event_loop()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=main, name="openprogram-jobs",
                                                daemon=True)
                self._thread.start()
                ready.wait(10)
                self._loop = loop
            return self._loop

    @property
    def running_loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop if it was started and is still open (never starts it)."""
        loop = self._loop
        return loop if loop is not None and not loop.is_closed() else None

    def shutdown(self, timeout: float = 10.0) -> None:
        """Cancel every job, wait for them, and stop the loop."""
        for job in self.jobs():
            self.cancel(job.id)
        if self._owned:  # a host loop finishes its own jobs; waiting here could block it
            self.wait_idle(timeout)
        with self._lock:
            loop, thread, owned = self._loop, self._thread, self._owned
            self._loop = self._thread = None
        if owned and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(timeout)
            if not loop.is_running():
                loop.close()

    # -- jobs ---------------------------------------------------------------------------------

    def submit(self, body: JobBody, *, kind: JobKind, session_id: str,
               origin_session_id: str | None = None, parent_turn_id: str | None = None,
               label: str | None = None, job_id: str | None = None) -> Job:
        """Start a job; it runs with an empty context (no ContextVars leak from the caller)."""
        job = Job(id=job_id or new_id("job"), kind=kind, session_id=session_id,
                  origin_session_id=origin_session_id, parent_turn_id=parent_turn_id,
                  label=label)
        with self._lock:
            self._jobs[job.id] = job
            if len(self._jobs) > KEEP_JOBS:
                self._prune()
        loop = self.loop
        contextvars.Context().run(asyncio.run_coroutine_threadsafe, self._wrap(job, body), loop)
        return job

    async def _wrap(self, job: Job, body: JobBody) -> None:
        job.task = asyncio.current_task()
        if job.cancel_requested:
            job.status = "cancelled"
            job.done_event.set()
            return
        job.status = "running"
        try:
            job.result = await body(job)
            if job.status == "running":
                job.status = "cancelled" if job.cancel_requested else "done"
        except asyncio.CancelledError:
            job.status = "cancelled"
        except Exception as exc:
            log.exception("job %s (%s in %s) failed", job.id, job.kind, job.session_id)
            job.status = "error"
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            job.done_event.set()

    def _prune(self) -> None:
        """Forget the oldest finished jobs beyond the cap (lock held)."""
        finished = [k for k, j in self._jobs.items() if j.done]
        for key in finished[: len(self._jobs) - KEEP_JOBS]:
            del self._jobs[key]

    def get(self, job_id: str) -> Job | None:
        """A job by id."""
        with self._lock:
            return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        """Every job known, oldest first."""
        with self._lock:
            return list(self._jobs.values())

    def cancel(self, job_id: str, *, cascaded: bool = False) -> bool:
        """Cancel one job (its running turn, or the job itself when between turns)."""
        job = self.get(job_id)
        if job is None or job.done:
            return False
        job.cancel_requested = True
        job.cascaded = job.cascaded or cascaded
        if job.control is not None:
            job.control.request_cancel()
        if not job.in_turn:
            loop = self._loop
            task = job.task
            if loop is not None and task is not None and not loop.is_closed():
                loop.call_soon_threadsafe(task.cancel)
        return True

    def cancel_where(self, pred: Callable[[Job], bool], *, cascaded: bool = False) -> int:
        """Cancel every unfinished job matching a predicate; returns how many."""
        return sum(self.cancel(j.id, cascaded=cascaded) for j in self.jobs()
                   if not j.done and pred(j))

    async def drain(self, timeout: float = 30.0) -> bool:
        """Await, on the caller's loop, until every job ended; False on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while any(not j.done for j in self.jobs()):
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until no job is unfinished (jobs may start more jobs); False on timeout."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            pending = [j for j in self.jobs() if not j.done]
            if not pending:
                return True
            for job in pending:
                left = deadline - time.monotonic()
                if left <= 0 or not job.wait(left):
                    return False
