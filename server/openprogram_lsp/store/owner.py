"""Who holds a lock: pid, process start time and host, so a dead holder is told from a live one.

The record is JSON ``{"pid", "startTime", "host", "since", "purpose"}``. ``startTime`` is the
process start in clock ticks since boot (``/proc/<pid>/stat`` field 22), so a recycled pid does
not pass for the holder. Any lock file of the project can carry one (see ``owned_lock``).
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

HOST = socket.gethostname()


def process_start_time(pid: int) -> int | None:
    """The start time of a process in clock ticks since boot, or None when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces or ')'
    fields = raw[raw.rfind(b")") + 2:].split()
    try:
        return int(fields[19])  # field 22 overall; fields here start at field 3
    except (IndexError, ValueError):
        return None


_own_start: tuple[int, int | None] | None = None


def _own_start_time(pid: int) -> int | None:
    """``process_start_time`` of this process, read once per pid (a fork reads it again)."""
    global _own_start
    cached = _own_start
    if cached is None or cached[0] != pid:
        cached = _own_start = (pid, process_start_time(pid))
    return cached[1]


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (a zombie counts as dead)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
        return raw[raw.rfind(b")") + 2:][:1] != b"Z"
    except OSError:
        return True


@dataclass(frozen=True, slots=True)
class OwnerRecord:
    """The process holding a lock."""

    pid: int
    start_time: int | None
    host: str
    since: str = ""
    purpose: str = ""

    @classmethod
    def current(cls, purpose: str = "") -> OwnerRecord:
        """A record naming this process."""
        pid = os.getpid()
        return cls(pid=pid, start_time=_own_start_time(pid), host=HOST,
                   since=datetime.now(UTC).isoformat(timespec="seconds"), purpose=purpose)

    @classmethod
    def parse(cls, text: str | bytes) -> OwnerRecord | None:
        """A record from its JSON, or None when it is not one."""
        try:
            data: Any = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict):
            return None
        pid, start, host = data.get("pid"), data.get("startTime"), data.get("host")
        if not isinstance(pid, int) or isinstance(pid, bool) or not isinstance(host, str):
            return None
        return cls(pid=pid, start_time=start if isinstance(start, int) else None, host=host,
                   since=str(data.get("since") or ""), purpose=str(data.get("purpose") or ""))

    def to_json(self) -> str:
        """The record as one JSON line."""
        return json.dumps({"pid": self.pid, "startTime": self.start_time, "host": self.host,
                           "since": self.since, "purpose": self.purpose})

    def is_self(self) -> bool:
        """Whether the record names this process."""
        return self.host == HOST and self.pid == os.getpid()

    def alive(self) -> bool:
        """Whether the holder still runs (a record from another host counts as alive)."""
        if self.host != HOST:
            return True
        if not pid_alive(self.pid):
            return False
        if self.start_time is None:
            return True
        return process_start_time(self.pid) in (None, self.start_time)

    def describe(self) -> str:
        """A short phrase for messages: ``pid 123 on host, since ...``."""
        where = "" if self.host == HOST else f" on {self.host}"
        since = f", since {self.since}" if self.since else ""
        return f"pid {self.pid}{where}{since}"


RECORD_BYTES = 512
"""A lock file's record is padded with spaces to this size (or the file's size, if larger)."""


def write_record(fd: int, purpose: str = "") -> None:
    """Put this process's record into a lock file it has just locked.

    Written over the old bytes, padded with spaces, never truncated: the file keeps its size
    and its blocks, so taking a lock costs no block allocation (ext4 flushes a file whose
    data is truncated to nothing, which costs milliseconds on a busy disk)."""
    os.pwrite(fd, _current_line(purpose).ljust(max(RECORD_BYTES, os.fstat(fd).st_size)), 0)


_lines: dict[str, tuple[int, int, bytes]] = {}  # purpose -> (pid, second, record line)


def _current_line(purpose: str) -> bytes:
    """``OwnerRecord.current(purpose).to_json()`` encoded, made once per second (``since``
    holds whole seconds): a turn takes a few locks, each writing this line."""
    now = int(time.time())
    pid = os.getpid()
    held = _lines.get(purpose)
    if held is None or held[0] != pid or held[1] != now:
        since = datetime.fromtimestamp(now, UTC).isoformat(timespec="seconds")
        record = OwnerRecord(pid=pid, start_time=_own_start_time(pid), host=HOST, since=since,
                             purpose=purpose)
        held = _lines[purpose] = (pid, now, record.to_json().encode())
    return held[2]


def clear_record(fd: int) -> None:
    """Blank a lock file's record (spaces: no record) as its holder lets go."""
    os.pwrite(fd, b" " * max(RECORD_BYTES, os.fstat(fd).st_size), 0)


def record_of(value: object) -> OwnerRecord | None:
    """A record from its JSON object as stored in node metadata or ``meta.json``, or None."""
    if not isinstance(value, dict):
        return None
    return OwnerRecord.parse(json.dumps(value))


def current_record(purpose: str = "") -> dict[str, Any]:
    """This process's record as a JSON object (for node metadata and ``meta.json``)."""
    record = OwnerRecord.current(purpose)  # the object ``to_json`` writes, built directly
    return {"pid": record.pid, "startTime": record.start_time, "host": record.host,
            "since": record.since, "purpose": record.purpose}


def record_alive(value: object) -> bool:
    """Whether a stored record names a live process (a missing or malformed one: no)."""
    record = record_of(value)
    return record is not None and record.alive()


def record_is_self(value: object) -> bool:
    """Whether a stored record names this process."""
    record = record_of(value)
    return record is not None and record.is_self()


def describe_record(value: object) -> str:
    """``describe()`` of a stored record, or "an unknown process"."""
    record = record_of(value)
    return record.describe() if record is not None else "an unknown process"
