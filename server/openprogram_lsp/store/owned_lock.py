"""A cross-process lock file (``flock``) that records its owner and is shared within a process.

Several holders in one process (a turn and the appends it makes, two threads) share one flock;
the file lock is taken on the first hold and dropped on the last release. The lock file carries
an ``OwnerRecord``. ``flock`` locks vanish with their process; one can outlive its owner only
through a descendant that kept the descriptor. When the record names a dead process the lock is
taken over: the file is unlinked and a fresh one locked (a holder checks that the path still
names the inode it locked, so two takers never both win).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from openprogram_lsp.store.owner import OwnerRecord, clear_record, write_record

_REGISTRY: dict[str, OwnedLock] = {}
_REGISTRY_LOCK = threading.Lock()


class LockHeld(Exception):
    """Another process holds the lock; ``holder`` is its record when readable."""

    def __init__(self, path: Path, holder: OwnerRecord | None) -> None:
        who = holder.describe() if holder is not None else "an unknown process"
        super().__init__(f"{path} is held by {who}")
        self.path = path
        self.holder = holder


class OwnedLock:
    """One lock file of this process; use ``OwnedLock.for_path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._mutex = threading.Lock()
        self._count = 0
        self._fd: int | None = None

    @classmethod
    def for_path(cls, path: Path) -> OwnedLock:
        """The one lock object of this process for a path."""
        key = os.path.abspath(path)
        with _REGISTRY_LOCK:
            lock = _REGISTRY.get(key)
            if lock is None:
                lock = _REGISTRY[key] = cls(Path(key))
            return lock

    @property
    def held(self) -> bool:
        """Whether this process holds the lock now."""
        return self._count > 0

    def acquire(self, purpose: str = "", timeout: float = 0.0) -> bool:
        """Hold the lock; waits up to ``timeout`` seconds, then raises LockHeld.

        Returns True when this hold took the file lock (another process may have worked under
        it since this process last held it), False when it joined a hold of this process.
        """
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            with self._mutex:
                if self._count > 0:
                    self._count += 1
                    return False
                holder = self._try_lock(purpose)
                if holder is None:
                    self._count = 1
                    return True
            if time.monotonic() >= deadline:
                raise LockHeld(self.path, holder if holder.pid >= 0 else None)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def release(self) -> None:
        """Give one hold back; the last one unlocks the file."""
        with self._mutex:
            if self._count == 0:
                return
            self._count -= 1
            if self._count == 0 and self._fd is not None:
                fd, self._fd = self._fd, None
                with contextlib.suppress(OSError):
                    clear_record(fd)
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    @contextlib.contextmanager
    def hold(self, purpose: str = "", timeout: float = 0.0) -> Iterator[bool]:
        """``acquire`` ... ``release`` as a context manager (yields ``acquire``'s result)."""
        fresh = self.acquire(purpose, timeout)
        try:
            yield fresh
        finally:
            self.release()

    def holder(self) -> OwnerRecord | None:
        """The recorded owner, if the file names one."""
        try:
            return OwnerRecord.parse(self.path.read_bytes())
        except OSError:
            return None

    def _try_lock(self, purpose: str) -> OwnerRecord | None:
        """Lock the file once (taking over a dead owner's); None on success, else the holder."""
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        for _ in range(3):
            try:
                fd = os.open(self.path, flags, 0o600)
            except FileNotFoundError:  # its directory is made on first use only
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, flags, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = OwnerRecord.parse(os.pread(fd, 1 << 16, 0))
                if holder is not None and not holder.alive():
                    # the owner died but a descendant keeps the descriptor: start a new file
                    self._take_over(fd)
                    os.close(fd)
                    continue
                os.close(fd)
                return holder or OwnerRecord(pid=-1, start_time=None, host="")
            if not self._same_inode(fd):  # taken over (unlinked) while we waited: retry
                os.close(fd)
                continue
            write_record(fd, purpose)
            self._fd = fd
            return None
        return self.holder() or OwnerRecord(pid=-1, start_time=None, host="")

    def _take_over(self, stale_fd: int) -> None:
        """Unlink the stale file, unless another taker already replaced it."""
        guard = os.open(f"{self.path}.takeover", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(guard, fcntl.LOCK_EX)
            if self._same_inode(stale_fd):
                os.unlink(self.path)
        finally:
            os.close(guard)

    def _same_inode(self, fd: int) -> bool:
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        own = os.fstat(fd)
        return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)
