"""One long-lived daemon thread per worker, running keyed jobs off every request's path.

A request names a key, a value and when it is due; a newer request for a key replaces the
older one not yet run (one made while that key's job runs makes it run once more after it).
A job may ask to be tried again later; a newer request wins over that retry. A forked child
starts its own thread on its first request (a lock a parent's thread held would never be let
go in the child).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")

Job = Callable[[K, V], "tuple[float, V] | None"]
"""Runs one request; returns (seconds, value) to be tried again that much later, or None."""


class KeyedWorker(Generic[K, V]):
    """Requests by key, run one at a time in due order by one daemon thread."""

    def __init__(self, name: str, job: Job[K, V], *, wait_at_exit: bool = False) -> None:
        self._name, self._job, self._wait_at_exit = name, job, wait_at_exit
        self._pid = 0
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._due: dict[K, tuple[float, V]] = {}
        self._busy = False
        self._thread: threading.Thread | None = None

    def ask(self, key: K, value: V, delay: float = 0.0) -> None:
        """Run ``job(key, value)`` ``delay`` seconds from now (replacing a request not yet run)."""
        if self._pid != os.getpid():  # first use in this process (a forked child's too)
            if self._pid == 0 and self._wait_at_exit:
                atexit.register(self.drain)
            self._pid = os.getpid()
            self._reset()
        with self._cond:
            self._due.pop(key, None)  # re-inserted last: equal times run in asking order
            self._due[key] = (time.monotonic() + delay, value)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            else:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    now = time.monotonic()
                    soonest = min(self._due.items(), key=lambda kv: kv[1][0], default=None)
                    if soonest is not None and soonest[1][0] <= now:
                        break
                    self._busy = False
                    self._cond.notify_all()  # wake drain()
                    self._cond.wait(None if soonest is None else soonest[1][0] - now)
                key, (_when, value) = soonest
                del self._due[key]
                self._busy = True
            try:
                again = self._job(key, value)
            except Exception:
                log.exception("%s failed", self._name)
                again = None
            if again is not None:
                with self._cond:  # a request made meanwhile wins over the retry
                    self._due.setdefault(key, (time.monotonic() + again[0], again[1]))

    def drain(self, timeout: float = 30.0, *, now: bool = False) -> bool:
        """Wait until every request made so far has run (``now``: whatever its delay); False
        on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            if now:
                self._due = {key: (0.0, value) for key, (_w, value) in self._due.items()}
                self._cond.notify_all()
            while self._due or self._busy:
                left = deadline - time.monotonic()
                if left <= 0 or self._thread is None or not self._thread.is_alive():
                    return False
                self._cond.wait(left)
        return True
