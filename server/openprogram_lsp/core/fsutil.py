"""Small filesystem helpers: atomic writes and the state root."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def state_root() -> Path:
    """Return ``$OPENPROGRAM_HOME`` or ``${XDG_DATA_HOME:-~/.local/share}/openprogram-lsp``."""
    explicit = os.environ.get("OPENPROGRAM_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "openprogram-lsp"


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


_UMASK = _umask()  # read once at import: os.umask is process-wide, not thread-safe


def current_umask() -> int:
    """The process umask, as read at import."""
    return _UMASK


def atomic_write(path: Path, data: bytes | str, *, fsync: bool = False) -> None:
    """Write a file through a temp file and rename, so readers never see half of it."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = os.stat(path).st_mode & 0o7777  # keep an existing file's permissions
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
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
