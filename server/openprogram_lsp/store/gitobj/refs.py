"""Reading a ref straight from a git directory (loose file, then ``packed-refs``)."""

from __future__ import annotations

from pathlib import Path


def read_ref(git_dir: Path, ref: str) -> str | None:
    """The commit id ``ref`` (e.g. ``refs/heads/main``) points at, or None when unset."""
    try:
        value = (git_dir / ref).read_text().strip()
        if value:
            return value
    except OSError:
        pass
    try:
        for line in (git_dir / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except OSError:
        pass
    return None
