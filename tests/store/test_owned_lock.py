"""The owned lock file: shared within a process, exclusive across processes, stale holders."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from openprogram_lsp.store.owned_lock import LockHeld, OwnedLock
from openprogram_lsp.store.owner import OwnerRecord, process_start_time

HOLDER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from openprogram_lsp.store.owned_lock import OwnedLock
    lock = OwnedLock.for_path(Path(sys.argv[1]))
    lock.acquire("test holder")
    if sys.argv[2] == "leak":  # a child keeps the descriptor, the owner itself dies
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        print("ready", child, flush=True)
        os._exit(0)
    print("ready", os.getpid(), flush=True)
    time.sleep(60)
""")


def _holder(path: Path, mode: str = "hold") -> tuple[subprocess.Popen[str], int]:
    """A process holding the lock, and the pid of whoever keeps its descriptor."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), mode],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    word, pid = proc.stdout.readline().split()
    assert word == "ready"
    return proc, int(pid)


def test_holds_nest_within_a_process(tmp_path: Path) -> None:
    lock = OwnedLock.for_path(tmp_path / "a.lock")
    assert OwnedLock.for_path(tmp_path / "a.lock") is lock
    assert lock.acquire("one") is True
    assert lock.acquire("two") is False
    record = lock.holder()
    assert record is not None and record.is_self() and record.purpose == "one"
    lock.release()
    assert lock.held
    lock.release()
    assert not lock.held


def test_another_process_is_refused_and_named(tmp_path: Path) -> None:
    path = tmp_path / "b.lock"
    proc, _ = _holder(path)
    try:
        with pytest.raises(LockHeld) as info:
            OwnedLock.for_path(path).acquire("mine", timeout=0.05)
        assert info.value.holder is not None and info.value.holder.pid == proc.pid
        assert info.value.holder.purpose == "test holder"
    finally:
        proc.kill()
        proc.wait(10)


def test_a_killed_holder_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "c.lock"
    proc, _ = _holder(path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    lock = OwnedLock.for_path(path)
    assert lock.acquire("after the kill") is True
    record = lock.holder()
    assert record is not None and record.is_self()
    lock.release()


def test_a_dead_owner_whose_child_keeps_the_descriptor_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "d.lock"
    proc, child = _holder(path, "leak")
    proc.wait(10)  # the owner is gone; its forked child still holds the flock
    try:
        record = OwnerRecord.parse(path.read_bytes())
        assert record is not None and record.pid == proc.pid and not record.alive()
        lock = OwnedLock.for_path(path)
        assert lock.acquire("takeover") is True
        assert lock.holder() is not None and lock.holder().is_self()  # type: ignore[union-attr]
        lock.release()
    finally:
        os.kill(child, signal.SIGKILL)


def test_a_recycled_pid_is_not_the_owner() -> None:
    me = OwnerRecord.current()
    assert me.alive() and me.start_time == process_start_time(os.getpid())
    impostor = OwnerRecord(pid=me.pid, start_time=(me.start_time or 0) + 1, host=me.host)
    assert not impostor.alive()
    assert OwnerRecord.parse(b"not json") is None
    assert OwnerRecord.parse(me.to_json()) == me
