"""A session's baseline taken after its turn began editing (a first edit never waits, issue 33).

The first checkpoint of a process walks the whole tree (seconds on 100,000 files). A turn's
first edit used to wait for that walk, because its baseline is the tree as it was before the
edit. Instead, while the walk runs (or is still to run), each file the turn is about to write
is recorded first: its before-state (its bytes and git mode, held in memory until the
baseline is committed, its exact permission bits, or "absent" and the directories its write
will create). Nothing is written to the store before the walk (the private repository may not
exist yet, and making it is a dozen git processes). When the walk is done, the baseline is
the walked tree with the noted paths staged as usual and every recorded path set back to its
before-state; the turn's checkpoint then stages those paths from disk on top of it. So the
checkpoints recorded are the ones the waiting turn would have recorded.

Only writes whose paths are known beforehand are recorded this way (the file tools); anything
else (a command, a path that cannot be recorded) waits for the walk and settles the baseline
first, as before.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from openprogram_lsp.store.checkpoints.modes import EXEC, PLAIN

Leaf = tuple[str, str]
"""(git mode, blob id) of a recorded file."""
MAX_HELD = 64 * 1024 * 1024
"""Bytes of before-states held at most; past it the baseline is taken at once."""


class Unrecordable(Exception):
    """A path whose before-state cannot be recorded (not a file, too large, unreadable)."""


@dataclass(slots=True)
class DeferredBaseline:
    """The before-states recorded for one session's baseline, still to be committed."""

    session_id: str
    before: dict[str, tuple[str, bytes] | None] = field(default_factory=dict)
    """Workspace path -> (git mode, bytes) before the turn wrote it (None: it did not exist)."""
    held: int = 0
    perms: dict[str, int] = field(default_factory=dict)
    """Exact permission bits of the recorded files."""
    new_dirs: set[str] = field(default_factory=set)
    """Directories that did not exist before a recorded write (created by it)."""
    written: dict[str, Leaf | None] | None = None
    """The recorded paths' leaves once their blobs are written (``leaves``)."""

    def record(self, workspace: str, rel: str, max_bytes: int) -> None:
        """Record ``rel`` as it is now, unless recorded already; Unrecordable when it is not
        a regular file, symlink or nothing, or is larger than ``max_bytes`` (or than what is
        held at most)."""
        if rel in self.before:
            return
        full = os.path.join(workspace, rel)
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            self.before[rel] = None
            self._note_new_dirs(workspace, rel)
            return
        except OSError as exc:
            raise Unrecordable(f"{rel}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(st.st_mode):
            self.before[rel] = ("120000", os.fsencode(os.readlink(full)))
            return
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes \
                or self.held + st.st_size > MAX_HELD:
            raise Unrecordable(f"{rel}: not a regular file within {max_bytes} bytes")
        try:  # (no wait on a fifo, no symlink followed: put in its place since the lstat)
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with open(fd, "rb") as f:
                regular = stat.S_ISREG(os.fstat(fd).st_mode)
                data = f.read(st.st_size + 1) if regular else b""
        except OSError as exc:
            raise Unrecordable(f"{rel}: {exc.strerror or exc}") from None
        if not regular or len(data) != st.st_size:
            raise Unrecordable(f"{rel}: changed while it was read")
        self.before[rel] = (EXEC if st.st_mode & 0o100 else PLAIN, data)
        self.held += len(data)
        self.perms[rel] = stat.S_IMODE(st.st_mode)

    def leaves(self, write_blob: Callable[[bytes], str]) -> dict[str, Leaf | None]:
        """Each recorded path's tree leaf (None: absent), its blob written the first time."""
        written = self.written if self.written is not None else {}
        for rel, got in list(self.before.items()):  # (a turn may record more meanwhile)
            if rel not in written:
                written[rel] = None if got is None else (got[0], write_blob(got[1]))
        self.written = written
        return written

    def _note_new_dirs(self, workspace: str, rel: str) -> None:
        parent = os.path.dirname(rel)
        while parent and parent not in self.new_dirs \
                and not os.path.lexists(os.path.join(workspace, parent)):
            self.new_dirs.add(parent)
            parent = os.path.dirname(parent)
