"""Processes for lock and recovery tests: a live one to own things, a dead one's record."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from openprogram_lsp.store.owner import HOST, OwnerRecord, process_start_time


def sleeper() -> subprocess.Popen[bytes]:
    """A live process that sleeps until killed (bounded at 60 s)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def record_of(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    """The owner record of a process, as a JSON object."""
    record = OwnerRecord(pid=proc.pid, start_time=process_start_time(proc.pid), host=HOST)
    value: dict[str, Any] = json.loads(record.to_json())
    return value


def dead_owner() -> dict[str, Any]:
    """The owner record of a process that has exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    record = record_of(proc)
    proc.wait(timeout=30)
    return record


def encode(record: dict[str, Any]) -> bytes:
    """A record as a lock file holds it."""
    return json.dumps(record).encode()
