"""A file system's refusal (read-only, full, a name too long, …) as a plain tool error.

Such an ``OSError`` is the machine's state, not a bug: the call fails with a sentence naming
the path the call was given (never a temporary file's name) and the reason, and the turn's
result says a tool failed (``TurnResult.warnings``)."""

from __future__ import annotations

import errno
import os
from typing import Any

_WHY: dict[int, str] = {
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "no space is left on the device",
    errno.EDQUOT: "the disk quota is used up",
    errno.ENAMETOOLONG: "a name in the path is too long (at most 255 bytes per name)",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted",
    errno.EIO: "an input/output error (the disk or the file system failed)",
    errno.EFBIG: "the file is too large for the file system",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files in the system",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ETXTBSY: "the file is a program that is running",
    errno.EMLINK: "too many links",
    errno.EBUSY: "the file or device is busy",
}
_KEYS = ("path", "to", "file")


def _shown(value: str) -> str:
    return value if len(value) <= 120 else f"{value[:60]}…{value[-40:]} ({len(value)} chars)"


def describe(tool: str, arguments: dict[str, Any], exc: OSError) -> str:
    """``write_file failed: ro/a.txt: the file system is read-only (EROFS)``."""
    target = next((arguments[k] for k in _KEYS if isinstance(arguments.get(k), str)), None)
    code = exc.errno
    why = _WHY.get(code or -1) or (os.strerror(code) if code else type(exc).__name__)
    name = f" ({errno.errorcode[code]})" if code is not None and code in errno.errorcode else ""
    where = f"{_shown(target)}: " if target else ""
    return f"{tool} failed: {where}{why}{name}"
