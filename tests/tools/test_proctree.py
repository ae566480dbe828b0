"""The pieces of a tool process's kill: pidfds proven ours, and the death guard's disarm."""

from __future__ import annotations

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
        os.close(armed.read_fd)
    finally:
        proc.kill()
        proc.wait(10)
