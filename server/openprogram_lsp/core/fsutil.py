"""Small filesystem helpers: atomic writes and the directories tools never touch."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import select
import tempfile
import threading
from pathlib import Path
from typing import Any

_protected: set[Path] = set()
_protected_real: tuple[str, ...] = ()  # the same, as sorted strings (read without the lock)
_protected_lock = threading.Lock()


def protect_dir(path: Path) -> None:
    """Register a directory our own stores live in: tools refuse it, restore never writes it.

    The state root comes from the settings (``Settings.home``) and is registered by whoever
    is handed it (``app``, each store); nothing here reads the environment."""
    global _protected_real
    real = Path(os.path.realpath(path))
    with _protected_lock:
        if real not in _protected:
            _protected.add(real)
            _protected_real = tuple(sorted(str(p) for p in _protected))


def protected_dirs() -> list[Path]:
    """Every protected directory: each state root and store directory registered so far."""
    with _protected_lock:
        return sorted(_protected)


def protected_dir_of(target: Path, workspace: Path | None = None) -> Path | None:
    """The protected directory a resolved path lies in (itself included), or None.

    A directory that contains the workspace itself does not count (a project kept under the
    state root may still edit its own files); the stores inside it are registered separately.
    """
    ws = os.path.realpath(workspace) if workspace is not None else None
    found = protected_real_of(os.path.realpath(target), ws)
    return Path(found) if found is not None else None


def protected_real_of(real: str, ws: str | None = None) -> str | None:
    """``protected_dir_of`` for a target and a workspace already resolved (real paths as
    strings): no system call."""
    for top in _protected_real:
        inside = top if top.endswith(os.sep) else top + os.sep  # both sides are real paths
        if ws is not None and (ws == top or ws.startswith(inside)):
            continue
        if real == top or real.startswith(inside):
            return top
    return None


@functools.cache
def current_umask() -> int:
    """The process umask, read once on first use (never at import).

    Linux reports it in ``/proc/self/status`` without changing it; elsewhere it is read by
    setting and restoring it, once, since ``os.umask`` is process-wide and not thread-safe."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def atomic_write(path: Path, data: bytes | str, *, fsync: bool = False) -> None:
    """Write a file through a temp file and rename, so readers never see half of it."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = os.stat(path).st_mode & 0o7777  # keep an existing file's permissions
    except FileNotFoundError:
        mode = 0o666 & ~current_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a descriptor (``os.write`` may write part of it), waiting for
    room when a non-blocking one is full."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            select.select([], [fd], [])


def read_rest(fd: int) -> bytes:
    """What is left to read of an open file, with plain ``os`` calls."""
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def read_file(path: str | Path) -> bytes:
    """A small file's bytes with plain ``os`` calls (a history page reads hundreds of node
    files; a Python file object costs more system calls than the read itself)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return read_rest(fd)
    finally:
        os.close(fd)


_tmp_names = itertools.count()


def replace_file(path: str | Path, data: bytes | str) -> os.stat_result:
    """``atomic_write`` for a file of our own stores, in five system calls (create, write,
    rename, ``fstat``, close): the file gets the default mode under the umask (an existing
    file's mode is not kept) and the temporary name is ``.<name>.<pid>.<n>.tmp``, not a random
    one. Returns the new file's status as it stands after the rename (what a ``stat`` of
    ``path`` says until someone changes it)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    where, name = os.path.split(path)
    tmp = f"{where}/.{name}.{os.getpid()}.{next(_tmp_names)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o666)
    try:
        try:
            write_all(fd, payload)
            os.replace(tmp, path)
            return os.fstat(fd)  # after the rename, which sets the inode's change time
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def file_stamps(paths: list[str]) -> tuple[Any, ...]:
    """Each path's (path, mtime, size, inode), or (path, None) when it cannot be read: an edit
    (even one keeping the size within a clock tick) or a replaced file changes it."""
    out: list[Any] = []
    for p in paths:
        try:
            st = os.lstat(p)
            out.append((p, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append((p, None))
    return tuple(out)
