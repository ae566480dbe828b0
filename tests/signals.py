"""Which signals a piece of code sends by number, through an audit hook (``os.kill`` and
``os.killpg`` raise audit events; ``signal.pidfd_send_signal`` does not): the rule that a
number is signalled only while it is ours, checked on real processes."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

_LOCK = threading.Lock()
_RECORDS: list[list[tuple[str, int, bool]]] = []  # while a list is here: the signals sent
_INSTALLED: list[bool] = []


def _ours(target: int) -> bool:
    """Whether ``target`` is our child, not yet reaped (a zombie of ours still holds its pid
    and group id, so the number names it and nothing else)."""
    try:
        stat = Path(f"/proc/{target}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid()
    except (OSError, ValueError, IndexError):
        return False


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _RECORDS and event in ("os.kill", "os.killpg"):
        target = args[0]
        if isinstance(target, int):
            with _LOCK:
                for record in _RECORDS:
                    record.append((event, target, _ours(target)))


@contextlib.contextmanager
def recorded() -> Iterator[list[tuple[str, int, bool]]]:
    """(event, target, target is our unreaped child) for each signal sent by number meanwhile,
    from any thread of this process."""
    if not _INSTALLED:  # an audit hook stays for the process's life: one, idle unless asked
        sys.addaudithook(_audit)
        _INSTALLED.append(True)
    record: list[tuple[str, int, bool]] = []
    with _LOCK:
        _RECORDS.append(record)
    try:
        yield record
    finally:
        with _LOCK:
            _RECORDS.remove(record)


def only_to_our_groups(sent: list[tuple[str, int, bool]]) -> bool:
    """No signal to a pid by number, and a group only while its leader is our unreaped child."""
    return all(event == "os.killpg" and ours for event, _, ours in sent)
