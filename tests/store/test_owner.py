"""A lock file's owner record: what it says, written over the old bytes, made once a second."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from openprogram_lsp.store import owner
from openprogram_lsp.store.owner import RECORD_BYTES, OwnerRecord, clear_record, write_record


def _read(path: Path) -> OwnerRecord | None:
    return OwnerRecord.parse(path.read_bytes())


def test_the_record_names_this_process_now(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        clock = [1_800_000_000.2]
        monkeypatch.setattr(owner.time, "time", lambda: clock[0])
        write_record(fd, "checkpoint store")
        first = _read(path)
        expected = OwnerRecord.current("checkpoint store")
        assert first is not None and first.is_self() and first.alive()
        assert first.purpose == "checkpoint store"
        assert first.start_time == expected.start_time
        assert first.since == "2027-01-15T08:00:00+00:00"
        assert path.stat().st_size == RECORD_BYTES
        clock[0] += 0.5  # the same second: the same line
        write_record(fd, "checkpoint store")
        assert _read(path) == first
        clock[0] += 1  # the next second: a new one
        write_record(fd, "checkpoint store")
        again = _read(path)
        assert again is not None and again.since == "2027-01-15T08:00:01+00:00"
        write_record(fd, "turn guard")  # another purpose in the same second
        other = _read(path)
        assert other is not None and other.purpose == "turn guard"
        clear_record(fd)
        assert _read(path) is None and path.read_bytes() == b" " * RECORD_BYTES
    finally:
        os.close(fd)


def test_a_forked_child_writes_its_own_pid(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        write_record(fd, "x")  # the parent's line is made (and kept)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                write_record(fd, "x")
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        record = json.loads(path.read_bytes())
        assert record["pid"] == pid
    finally:
        os.close(fd)
