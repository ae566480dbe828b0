"""Credentials in the environment: which names count, and hiding them from ``/proc``.

A process started by the server (a command, a hook) runs as the same user, so without a
sandbox it could read ``/proc/<server pid>/environ`` (the environment block the server was
started with) or ``/proc/<server pid>/mem``. ``conceal_from_proc`` wipes the values of secret
variables from that block (Python keeps its own copy in ``os.environ``, which the providers
read, and libc's copy is put back on the heap) and marks the process non-dumpable, which
makes its ``/proc`` files and memory unreadable to other processes of the user (ptrace rules),
as ssh-agent does.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys

_WITHHELD = frozenset({"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"})  # may carry credentials
_SECRET_NAME = re.compile(
    r"(^|_)(API_?KEY|KEY|KEY_ID|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
_PR_SET_DUMPABLE = 4


_CONFIGURED: set[str] = set()  # key variables named in the config (``api_key_env``)
_VALUES: set[str] = set()  # the configured keys themselves, redacted from tool output
MIN_REDACTED = 8  # shorter values would redact ordinary words
REDACTED = "[redacted: a configured API key]"


def is_secret_name(name: str) -> bool:
    """Whether an environment variable is a credential that tool processes never see."""
    return name in _WITHHELD or name in _CONFIGURED or bool(_SECRET_NAME.search(name))


def withhold(name: str) -> None:
    """Treat a variable the config names as holding a key as a credential from now on: no
    command gets it, ``/proc/<our pid>/environ`` shows it blank, its value is redacted."""
    remember_value(os.environ.get(name, ""))
    if is_secret_name(name):
        return
    _CONFIGURED.add(name)
    if sys.platform.startswith("linux") and name in os.environ:
        for wiped in wipe_env_block():
            if wiped in os.environ:
                os.putenv(wiped, os.environ[wiped])


def remember_value(value: str) -> None:
    """Redact this key from every tool output from now on (``redact``)."""
    value = value.strip()
    if len(value) >= MIN_REDACTED:
        _VALUES.add(value)


def partial_tail(text: str) -> int:
    """How many characters at the end of ``text`` could be the start of a configured key
    (what a stream must hold back until more comes; 0 almost always)."""
    longest = 0
    for value in _VALUES:
        for k in range(min(len(value) - 1, len(text)), longest, -1):
            if text.endswith(value[:k]):
                longest = k
                break
    return longest


def redact(text: str) -> str:
    """``text`` with every configured key's value replaced by ``REDACTED``."""
    if not _VALUES or not text:
        return text
    for value in sorted(_VALUES, key=len, reverse=True):
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def _env_block() -> tuple[int, int] | None:
    """Address range of this process's initial environment (``env_start``, ``env_end``)."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rpartition(b")")[2].split()  # fields[0] is the state
        start, end = int(fields[47]), int(fields[48])
        with open("/proc/self/environ", "rb") as fh:
            expected = fh.read()
    except (OSError, ValueError, IndexError):
        return None
    if not 0 < start < end or ctypes.string_at(start, end - start) != expected:
        return None  # not the layout this code knows: touch nothing
    return start, end


def wipe_env_block() -> list[str]:
    """Overwrite secret values in the initial environment block; returns the names wiped."""
    block = _env_block()
    if block is None:
        return []
    start, end = block
    raw = ctypes.string_at(start, end - start)
    wiped: list[str] = []
    offset = 0
    for entry in raw.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        if eq and value and is_secret_name(name.decode("latin-1")):
            ctypes.memset(start + offset + len(name) + 1, 0, len(value))
            wiped.append(name.decode("latin-1"))
        offset += len(entry) + 1
    return wiped


def conceal_from_proc() -> list[str]:
    """Hide the server's credentials from other processes of the user (Linux; else no-op)."""
    if not sys.platform.startswith("linux"):
        return []
    wiped = wipe_env_block()
    for name in wiped:  # libc's copy again (on the heap): children started without env= are
        if name in os.environ:  # unchanged; only /proc's view of the block is blank
            os.putenv(name, os.environ[name])
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    return wiped


def secret_names() -> list[str]:
    """Names of the credential variables in the current environment."""
    return sorted(k for k in os.environ if is_secret_name(k))
