"""The pieces of a tool process's kill: pidfds proven ours, and the death guard's disarm."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys

import pytest

from openprogram_lsp.tools import proctree
from tests.tooling import missing


@pytest.fixture(autouse=True)
def _linux() -> None:
    if not sys.platform.startswith("linux"):
        missing("pidfds and /proc are Linux-only")


def test_a_pidfd_is_given_only_for_a_child_of_the_named_parent() -> None:
    proc = subprocess.Popen(["sleep", "39.5"])
    try:
        fd = proctree.child_pidfd(os.getpid(), proc.pid)
        assert fd is not None and not proctree.exited(fd)
        os.close(fd)
        assert proctree.child_pidfd(os.getppid(), proc.pid) is None  # not its parent
        assert proctree.child_pidfd(proc.pid, os.getpid()) is None
    finally:
        proc.kill()
        proc.wait(10)


def test_the_guard_fires_on_close_only_when_aimed() -> None:
    proc = subprocess.Popen(["sleep", "39.6"], start_new_session=True)
    try:
        guard = proctree.Guard()
        guard.aim(proc.pid)
        guard.close()  # a normal end disarms before it closes: the group lives on
        assert proc.poll() is None
        armed = proctree.Guard()
        armed.aim(proc.pid)
        os.close(armed._write_fd)  # what our death does: the last write end closes
        assert proc.wait(10) == -signal.SIGKILL
        for fd in (armed.read_fd, *armed._ours):
            os.close(fd)
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.parametrize("first", ["below", "above"])
def test_the_guard_fires_when_the_other_read_ends_went_first(first: str) -> None:
    """The child's read end can be gone before our write end is released (its first process
    died first), and at our death the kernel releases our files in an order it does not
    promise: whichever of our read ends goes first, the other still fires the signal."""
    proc = subprocess.Popen(["sleep", "39.7"], start_new_session=True)  # holds no read end
    try:
        guard = proctree.Guard()
        guard.aim(proc.pid)
        low, high = sorted(guard._ours)
        assert low < guard._write_fd < high  # one on each side of the write end
        for fd in (guard.read_fd, low, high):
            assert fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ASYNC
        # separate open files, not descriptors of one (file status flags are per open file)
        fcntl.fcntl(low, fcntl.F_SETFL, fcntl.fcntl(low, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        assert fcntl.fcntl(high, fcntl.F_GETFL) & os.O_NONBLOCK
        assert not fcntl.fcntl(guard.read_fd, fcntl.F_GETFL) & os.O_NONBLOCK
        os.close(guard.read_fd)  # the end the child would have held: released first
        gone, kept = (low, high) if first == "below" else (high, low)
        os.close(gone)
        os.close(guard._write_fd)
        assert proc.wait(10) == -signal.SIGKILL
        os.close(kept)
    finally:
        proc.kill()
        proc.wait(10)
