"""The task runner: order, errors logged, cancellation, host loops, pruning."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator

import pytest

from openprogram_lsp.collab import task_runner
from openprogram_lsp.collab.task_runner import Job, TaskRunner

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def runner() -> Iterator[TaskRunner]:
    r = TaskRunner()
    yield r
    r.shutdown()


def test_jobs_start_in_submission_order_and_return_results(runner: TaskRunner) -> None:
    seen: list[int] = []

    def body(i: int) -> task_runner.JobBody:
        async def run(job: Job) -> int:
            seen.append(i)
            await asyncio.sleep(0)
            return i * 10
        return run

    jobs = [runner.submit(body(i), kind="message", session_id="s") for i in range(20)]
    assert runner.wait_idle(30)
    assert seen == list(range(20))
    assert [j.result for j in jobs] == [i * 10 for i in range(20)]
    assert {j.status for j in jobs} == {"done"}


def test_a_failing_job_is_logged_and_marked(runner: TaskRunner,
                                            caplog: pytest.LogCaptureFixture) -> None:
    async def boom(job: Job) -> None:
        raise RuntimeError("kaput")

    with caplog.at_level(logging.ERROR, logger="openprogram_lsp.collab.task_runner"):
        job = runner.submit(boom, kind="agent", session_id="s1")
        assert job.wait(30)
    assert job.status == "error" and job.error == "RuntimeError: kaput"
    assert any("kaput" in (r.exc_text or "") or "s1" in r.getMessage()
               for r in caplog.records)


def test_cancel_one_job_or_a_family(runner: TaskRunner) -> None:
    gate = threading.Event()

    async def wait(job: Job) -> str:
        for _ in range(2000):
            if gate.is_set():
                return "released"
            await asyncio.sleep(0.005)
        return "gave up"

    a = runner.submit(wait, kind="agent", session_id="s", parent_turn_id="t1")
    b = runner.submit(wait, kind="agent", session_id="s", parent_turn_id="t1")
    c = runner.submit(wait, kind="agent", session_id="s", parent_turn_id="t2")
    assert runner.cancel(a.id) and a.wait(10) and a.status == "cancelled"
    assert runner.cancel_where(lambda j: j.parent_turn_id == "t1", cascaded=True) == 1
    assert b.wait(10) and b.status == "cancelled" and b.cascaded
    gate.set()
    assert c.wait(10) and c.status == "done" and c.result == "released"
    assert not runner.cancel(c.id)  # finished jobs cannot be cancelled


def test_attached_host_loop_runs_jobs_and_drain_awaits_them() -> None:
    async def main() -> tuple[bool, bool]:
        runner = TaskRunner()
        runner.attach_loop(asyncio.get_running_loop())
        ran_on: list[bool] = []
        me = threading.get_ident()

        async def body(job: Job) -> None:
            await asyncio.sleep(0.01)
            ran_on.append(threading.get_ident() == me)

        runner.submit(body, kind="reply", session_id="s")
        drained = await runner.drain(10)
        runner.shutdown()  # does not stop a loop it does not own
        return drained, all(ran_on) and len(ran_on) == 1

    assert asyncio.run(main()) == (True, True)


def test_finished_jobs_are_pruned_beyond_the_cap(runner: TaskRunner,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_runner, "KEEP_JOBS", 5)

    async def quick(job: Job) -> None:
        return None

    for _ in range(12):
        runner.submit(quick, kind="message", session_id="s").wait(10)
    assert len(runner.jobs()) <= 6
