"""Killing everything a tool process started, and only that (Linux ``/proc`` and pidfds).

Every signal goes either through a pidfd (``os.pidfd_open``), which names one process for good,
opened for a pid proven ours (the child of a process we hold, checked after the open), or to
the process group of a first process we have not reaped yet (its pid and group id cannot be
handed to anyone else before the reap). Never to a bare number that may have been reused.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import select
import signal
import sys

_WALK_LIMIT = 4096  # processes one kill collects at most (a fork bomb stops there)


def pidfd(pid: int) -> int | None:
    """A pidfd for ``pid``, or None (gone, or no pidfd support here)."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


@functools.cache
def pidfds() -> bool:
    """Whether this kernel and Python give pidfds (Linux 5.3 and later)."""
    fd = pidfd(os.getpid())
    if fd is None:
        return False
    os.close(fd)
    return True


def parent_of(pid: int) -> int | None:
    """``pid``'s parent from ``/proc/<pid>/stat``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]) if len(fields) > 1 else None


def child_pidfd(parent: int, pid: int) -> int | None:
    """A pidfd for ``pid`` if it is ``parent``'s child, checked after the open (so the pidfd
    names that child, not a later process given the same number); None otherwise."""
    fd = pidfd(pid)
    if fd is None:
        return None
    if parent_of(pid) != parent:
        os.close(fd)
        return None
    return fd


def exited(fd: int) -> bool:
    """Whether the process behind a pidfd has exited (a pidfd reads ready then)."""
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


def send(fd: int, sig: int) -> None:
    """Send ``sig`` through a pidfd; a process already gone is not an error."""
    with contextlib.suppress(ProcessLookupError, OSError):
        signal.pidfd_send_signal(fd, sig)


def kill_group(leader: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group of ``leader``: only while it is unreaped (the caller's duty)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, sig)


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as fh:
                kids += [int(x) for x in fh.read().split()]
        except (OSError, ValueError):
            continue
    return kids


def _walk(leader: int, leader_fd: int | None, sig: int | None) -> list[int]:
    """Pidfds for every descendant still linked to ``leader`` (an unreaped child of ours, its
    pidfd ``leader_fd``), each checked to be its parent's child while that parent was alive,
    and sent ``sig`` as it is found (SIGSTOP: nothing forks or reaps while the tree is read
    from ``/proc/<pid>/task/*/children``)."""
    held: list[int] = []
    if leader_fd is None or not sys.platform.startswith("linux"):
        return held
    todo = [(leader, leader_fd)]
    while todo and len(held) < _WALK_LIMIT:
        parent, parent_fd = todo.pop()
        kids = _children(parent)
        if exited(parent_fd):  # the list may be a later process's: a zombie has no children
            continue
        for kid in kids[:_WALK_LIMIT - len(held)]:
            fd = child_pidfd(parent, kid)
            if fd is None:
                continue
            if exited(parent_fd):  # the parent check above raced the parent's exit
                os.close(fd)
                continue
            if sig is not None:
                send(fd, sig)
            held.append(fd)
            todo.append((kid, fd))
    return held


def descendants(leader: int, leader_fd: int | None) -> list[int]:
    """Pidfds for the processes linked to ``leader`` by parenthood now (see ``kill_tree``),
    to kill later whichever of them outlive it; the caller closes them."""
    return _walk(leader, leader_fd, None)


def kill_tree(leader: int, leader_fd: int | None) -> None:
    """SIGKILL ``leader`` (an unreaped child of ours, its pidfd ``leader_fd``), its process
    group, and every descendant still linked to it, whatever session or group they moved to.

    The group is stopped first (SIGSTOP) and each descendant is stopped as it is found, so
    nothing forks or reaps while the tree is read; each is held by a pidfd checked to be its
    parent's child while that parent was alive. A process whose parent had already exited (a
    daemon's double fork) is linked to nothing of ours and out of reach here: the sandbox's
    PID namespace is what contains those.
    """
    kill_group(leader, signal.SIGSTOP)
    held = _walk(leader, leader_fd, signal.SIGSTOP)
    try:
        for fd in held:
            send(fd, signal.SIGKILL)
        kill_group(leader, signal.SIGKILL)
    finally:
        for fd in held:
            os.close(fd)


class Guard:
    """SIGKILL for a process group when this server dies, however it dies.

    A pipe whose read end the child inherits, marked ``O_ASYNC`` with ``F_SETSIG`` SIGKILL:
    when the last write end closes (ours, at our exit, SIGKILL included) the kernel signals
    the owners of the pipe's open read ends, here the group set with ``aim``. It cannot kill
    a PID namespace's init (the kernel ignores such a signal there); it reaches the processes
    of the init's group.

    The signal goes only to read ends still open when the write end is released, and the
    child's own read end may be gone by then: its first process can die first (its death
    signal fires when the thread that started it ends, before our last thread closes our
    files), leaving the rest of its group. So we also hold two read ends of our own (separate
    open files of the same pipe, armed alike), one below the write end's descriptor and one
    above it: at our death the kernel closes descriptors in ascending order and releases the
    files afterwards in an order it does not promise (last in, first out on the kernels we
    run on), and either way one of ours is still open when the write end goes.
    """

    def __init__(self) -> None:
        self.read_fd, write_fd = os.pipe()
        self._setsig: int | None = getattr(fcntl, "F_SETSIG", None)
        self._armed = self._setsig is not None  # not Linux: the pipe never fires
        self._ours: list[int] = []
        self._write_fd = write_fd
        if self._setsig is None:
            return
        try:
            low = self._reopen()
            if low > write_fd:  # the write end above our first read end
                self._write_fd = fcntl.fcntl(write_fd, fcntl.F_DUPFD_CLOEXEC, low + 1)
                os.close(write_fd)
            high = self._reopen()
            if high < self._write_fd:  # and our second read end above it
                moved = fcntl.fcntl(high, fcntl.F_DUPFD_CLOEXEC, self._write_fd + 1)
                os.close(high)
                self._ours.remove(high)
                self._ours.append(moved)
            for fd in (self.read_fd, *self._ours):
                self._arm(fd)
        except BaseException:
            self.close()
            raise

    def _reopen(self) -> int:
        """Another open file of the pipe's read side (not a duplicate descriptor of ours)."""
        fd = os.open(f"/proc/self/fd/{self.read_fd}",
                     os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self._ours.append(fd)
        return fd

    def _arm(self, fd: int) -> None:
        assert self._setsig is not None
        fcntl.fcntl(fd, self._setsig, signal.SIGKILL)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)

    def aim(self, group: int) -> None:
        """Kill ``group`` (a process group id, held by an unreaped process of ours) on our
        death. The kernel keeps the group itself, not its number, so a reused id is safe."""
        if self._armed:
            for fd in (self.read_fd, *self._ours):
                with contextlib.suppress(OSError):
                    fcntl.fcntl(fd, fcntl.F_SETOWN, -group)

    def close(self) -> None:
        """Disarm (no owner), then close every end: closing the write end fires the signal."""
        if self._armed:
            for fd in (self.read_fd, *self._ours):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        fcntl.fcntl(fd, fcntl.F_SETOWN, 0)
            self._armed = False
        for fd in (self._write_fd, self.read_fd, *self._ours):
            if fd >= 0:
                os.close(fd)
        self._write_fd = self.read_fd = -1
        self._ours = []
