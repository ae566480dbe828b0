"""Reading a ref straight from a git directory (loose file, then ``packed-refs``)."""

from __future__ import annotations

import os
from pathlib import Path


def read_ref(git_dir: Path, ref: str) -> str | None:
    """The commit id ``ref`` (e.g. ``refs/heads/main``) points at, or None when unset."""
    try:
        fd = os.open(f"{git_dir}/{ref}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        pass
    else:
        try:
            value = os.read(fd, 4096).decode("utf-8", "replace").strip()
        finally:
            os.close(fd)
        if value:
            return value
    try:
        for line in (git_dir / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except OSError:
        pass
    return None
