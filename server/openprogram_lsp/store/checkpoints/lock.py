"""A per-workspace lock: re-entrant across a process's threads, a file lock across processes."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from types import TracebackType

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.store.owner import OwnerRecord, clear_record, write_record


def _holder(path: Path) -> str:
    try:
        record = OwnerRecord.parse(path.read_bytes())
    except OSError:
        record = None
    return record.describe() if record is not None else "another process"


_REGISTRY: dict[str, WorkspaceLock] = {}
_REGISTRY_LOCK = threading.Lock()


class WorkspaceLock:
    """Hold it to read or change a workspace's checkpoint store; nests within one thread."""

    def __init__(self, path: Path, timeout: float = 120.0) -> None:
        self.path = path
        self.timeout = timeout
        self._rlock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._owner: int | None = None

    @classmethod
    def for_path(cls, path: Path, timeout: float = 120.0) -> WorkspaceLock:
        """The one lock object of this process for a lock file."""
        key = str(path)
        with _REGISTRY_LOCK:
            lock = _REGISTRY.get(key)
            if lock is None:
                lock = _REGISTRY[key] = cls(path, timeout)
            return lock

    def acquire(self) -> None:
        """Take the lock (waits up to ``timeout`` seconds for another process)."""
        if not self._rlock.acquire(timeout=self.timeout):
            raise CheckpointError(f"checkpoint store busy: {self.path}")
        if self._depth == 0:
            try:
                self._fd = self._flock()
            except BaseException:
                self._rlock.release()
                raise
            self._owner = threading.get_ident()
        self._depth += 1

    def held_here(self) -> bool:
        """Whether the calling thread holds the lock."""
        return self._owner == threading.get_ident() and self._depth > 0

    def release(self) -> None:
        """Give the lock back."""
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._rlock.release()

    def _flock(self) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                write_record(fd, self.path.name)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise CheckpointError(
                        f"checkpoint store locked by {_holder(self.path)}: "
                        f"{self.path}") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)

    def __enter__(self) -> WorkspaceLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


_GUARDS: dict[str, TurnGuard] = {}


class TurnGuard:
    """Serialises whole turns on a workspace: threads, coroutines on one loop, and processes.

    Not re-entrant. Unlike ``WorkspaceLock`` it may be released by another thread than the one
    that took it, and ``acquire_async`` polls, so a cancelled waiter never leaves it held.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fd: int | None = None

    @classmethod
    def for_path(cls, path: Path) -> TurnGuard:
        """The one guard object of this process for a lock file."""
        with _REGISTRY_LOCK:
            guard = _GUARDS.get(str(path))
            if guard is None:
                guard = _GUARDS[str(path)] = cls(path)
            return guard

    def prepare(self) -> None:
        """Make the lock file, blank at its record's size, unless it exists: the first turn's
        first edit then neither creates it nor allocates its blocks (a fraction of a ms of an
        edit that takes 1-2 ms)."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return
        try:
            clear_record(fd)
        finally:
            os.close(fd)

    def try_acquire(self) -> bool:
        """Take the guard if it is free, without waiting."""
        if not self._lock.acquire(blocking=False):
            return False
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            self._lock.release()
            return False
        write_record(fd, self.path.name)
        self._fd = fd
        return True

    def holder(self) -> str:
        """Who holds the guard, as recorded in its file (for messages)."""
        return _holder(self.path)

    def acquire(self, timeout: float | None = None) -> None:
        """Wait for the guard (raises CheckpointError after ``timeout`` seconds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.002
        while not self.try_acquire():
            if deadline is not None and time.monotonic() >= deadline:
                raise CheckpointError(f"workspace busy with a turn of {self.holder()}")
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    async def acquire_async(self, timeout: float | None = None) -> None:
        """Wait for the guard without blocking the event loop."""
        import asyncio

        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.002
        while not self.try_acquire():
            if deadline is not None and time.monotonic() >= deadline:
                raise CheckpointError(f"workspace busy with a turn of {self.holder()}")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)

    def release(self) -> None:
        """Give the guard back."""
        fd, self._fd = self._fd, None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._lock.release()
