"""Which stored images the sessions still name, and the collection of the others.

Every node written that names an image (``"sha256":"<hex>"`` in its JSON: an image attachment
of a user message, a tool's image, a reply's call records) adds those hashes to its session's
``.git/openprogram-images`` before its file is written, so the record is a superset of what
the session's nodes name (a torn or extra line only keeps a blob longer). A session without the
record (made before it) has its node files read instead, every time.

:func:`collect` runs after a session is deleted: a blob no session names is removed once it has
been untouched for :data:`GRACE` seconds (an image is stored, or touched when it is stored
again, before the node naming it is written; the grace covers that gap in this process and any
other). A crash part way leaves blobs the next collection removes; nothing a session names is
ever removed.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from openprogram_lsp.core.images import ImageBlobs
from openprogram_lsp.store.meta_slots import SLOTS

log = logging.getLogger(__name__)

REFS = "openprogram-images"
"""A session's record of the image hashes its nodes name, one a line (``.git/``, derived)."""
GRACE = 3600.0
"""Seconds a blob no session names is kept after it was last stored."""
_HASH = re.compile(r'"sha256":"([0-9a-f]{64})"')


def hashes(payload: str) -> set[str]:
    """The image hashes a node's JSON names."""
    return set(_HASH.findall(payload)) if '"sha256":"' in payload else set()


def note(root: Path, payload: str, before: Callable[[], str] | None = None) -> None:
    """Add the hashes ``payload`` names (and the JSON ``before`` gives, the node's previous
    body, did not) to the session's record, when the session keeps one."""
    new = hashes(payload)
    if new and before is not None:
        new -= hashes(before())
    if not new:
        return
    try:
        fd = os.open(root / ".git" / REFS, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # a session older than the record: its nodes are read when collecting
    try:
        os.write(fd, "".join(f"{h}\n" for h in sorted(new)).encode("ascii"))
    finally:
        os.close(fd)


def _named(session: Path) -> set[str]:
    """The hashes one session names: its record, else every node file and its meta."""
    try:
        return {line for line in (session / ".git" / REFS).read_text("ascii", "replace").split()
                if len(line) == 64}
    except FileNotFoundError:
        pass
    out: set[str] = set()
    files = [session / "meta.json", session / ".git" / SLOTS]
    for dirpath, _dirs, names in os.walk(session / "nodes"):
        files += (Path(dirpath, n) for n in names if n.endswith(".json"))
    for f in files:
        with suppress(OSError):
            out |= hashes(f.read_text("utf-8", "replace"))
    return out


def named(sessions: Path) -> set[str]:
    """The hashes any session under ``sessions`` names (every directory is read, listed or
    not: one being created or forked in another process counts)."""
    out: set[str] = set()
    with os.scandir(sessions) as it:
        dirs = [Path(e.path) for e in it if not e.name.startswith(".")
                and e.is_dir(follow_symlinks=False)]
    for d in dirs:
        out |= _named(d)
    return out


def collect(sessions: Path, images: ImageBlobs, *, grace: float = GRACE) -> int:
    """Remove the stored images no session names (untouched for ``grace`` seconds); how many
    were removed. Never raises: a collection that fails is done by the next one."""
    try:
        removed = images.collect(named(sessions), grace=grace)
    except OSError as exc:
        log.warning("collecting unused images failed: %s", exc)
        return 0
    if removed:
        log.info("removed %d image(s) no session names", removed)
    return removed
