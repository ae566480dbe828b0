"""The keyed background worker: newest request per key, reruns, retries, drain."""

from __future__ import annotations

import threading

from openprogram_lsp.core.background import KeyedWorker


def test_the_newest_request_for_a_key_runs_and_one_made_while_it_runs_runs_after() -> None:
    ran: list[tuple[str, int]] = []
    started, release = threading.Event(), threading.Event()

    def job(key: str, value: int) -> None:
        ran.append((key, value))
        if value == 1:
            started.set()
            assert release.wait(10)

    worker: KeyedWorker[str, int] = KeyedWorker("test worker", job)
    worker.ask("a", 1)
    assert started.wait(10)
    worker.ask("a", 2)  # while "a" runs: it runs once more after it
    worker.ask("a", 3)  # replaces 2, not yet run
    worker.ask("b", 4)
    release.set()
    assert worker.drain(10)
    assert ran == [("a", 1), ("a", 3), ("b", 4)]


def test_a_retry_runs_later_unless_a_newer_request_came() -> None:
    ran: list[int] = []

    def job(_key: str, value: int) -> tuple[float, int] | None:
        ran.append(value)
        return (0.0, value + 1) if value < 3 else None

    worker: KeyedWorker[str, int] = KeyedWorker("test worker", job)
    worker.ask("a", 1)
    assert worker.drain(10)
    assert ran == [1, 2, 3]


def test_drain_now_runs_what_is_due_later_and_a_failing_job_does_not_stop_the_worker() -> None:
    ran: list[int] = []

    def job(_key: int, value: int) -> None:
        ran.append(value)
        if value == 1:
            raise RuntimeError("boom")

    worker: KeyedWorker[int, int] = KeyedWorker("test worker", job)
    worker.ask(1, 1)
    worker.ask(2, 2, delay=3600.0)
    assert not worker.drain(0.2)  # the second is an hour away
    assert worker.drain(10, now=True)
    assert ran == [1, 2]
