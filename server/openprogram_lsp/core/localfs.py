"""Whether a file under a root lies on a local filesystem: where a small write may run inline.

A tool's file write hands its few system calls to a worker thread so a slow filesystem (NFS,
SMB, FUSE, a stalled automount) never stalls the event loop; on a local disk that hop costs
more than the write (two thread wake-ups, each waiting for a CPU on a loaded machine).
``small_write_inline`` says a write of ``size`` bytes to ``root/rel`` can run on the loop: the
size is under ``INLINE_BYTES``, the root's filesystem is a local one (``LOCAL_TYPES``) and no
other mount lies on the path from the root to the file's directory (``core.fdfs`` walks it
without following links, so the path as written is the path taken). The mount table comes
from ``/proc/self/mountinfo``, read again only when the kernel says it changed (``poll``
reports ``POLLPRI`` on the open file after a mount or unmount). Without ``/proc`` (not
Linux) the answer is no. This decides where a write runs, never whether it is allowed.
"""

from __future__ import annotations

import os
import posixpath
import re
import select
import threading

INLINE_BYTES = 256 * 1024
"""Largest write made inline: copying it into the page cache takes microseconds."""

LOCAL_TYPES = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "bcachefs",
                         "jfs", "reiserfs", "tmpfs", "ramfs", "overlay"})
"""Filesystems whose operations finish without waiting on a network or a user-space daemon."""

_MOUNTINFO = "/proc/self/mountinfo"
_OCTAL = re.compile(r"\\([0-7]{3})")


def _unescape(field: str) -> str:
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[tuple[str, str]]:
    """(mount point, filesystem type) of each line of a mountinfo file, in order."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        head, sep, tail = line.partition(" - ")
        fields = head.split(" ")
        if not sep or len(fields) < 5 or not tail:
            continue
        out.append((_unescape(fields[4]), tail.split(" ", 1)[0]))
    return out


def root_layout(mounts: list[tuple[str, str]], root: str) -> tuple[str | None, list[str]]:
    """The type of the filesystem holding ``root`` (a real path), and the mount points
    beneath it. The deepest mount point at or above ``root`` holds it; of two at the same
    point the one listed last (mounted on top)."""
    kind: str | None = None
    depth = -1
    below: list[str] = []
    for point, fstype in mounts:
        if point == root or point == "/" or root.startswith(point + "/"):
            if len(point) >= depth:
                kind, depth = fstype, len(point)
        elif point.startswith(root.rstrip("/") + "/"):
            below.append(point)
    return kind, below


class _Mounts:
    """The mount table of this process, re-read when the kernel reports a change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pid = os.getpid()
        self._poll: select.poll | None = None
        self._table: list[tuple[str, str]] | None = None
        self._roots: dict[str, tuple[bool, tuple[str, ...]]] = {}
        self._broken = False

    def root(self, root: str) -> tuple[bool, tuple[str, ...]] | None:
        """(root on a local filesystem, mount points beneath it), or None without a table."""
        with self._lock:
            if self._broken:
                return None
            try:
                self._refresh()
            except OSError:
                self._broken = True
                return None
            held = self._roots.get(root)
            if held is None:
                assert self._table is not None
                kind, below = root_layout(self._table, root)
                held = (kind in LOCAL_TYPES, tuple(below))
                if len(self._roots) > 64:
                    self._roots.clear()
                self._roots[root] = held
            return held

    def _refresh(self) -> None:
        if self._fd is not None and self._pid != os.getpid():
            # a forked child shares the parent's open file (its offset and its change mark):
            # it reads through its own, so neither takes the other's news of a mount
            os.close(self._fd)
            self._fd, self._table = None, None
        if self._fd is None:
            self._pid = os.getpid()
            self._fd = os.open(_MOUNTINFO, os.O_RDONLY | os.O_CLOEXEC)
            self._poll = select.poll()
            self._poll.register(self._fd, select.POLLPRI)
        else:
            assert self._poll is not None
            if self._table is not None and not self._poll.poll(0):
                return
        # (the poll above took the change; one made while reading is reported next time)
        os.lseek(self._fd, 0, os.SEEK_SET)
        chunks: list[bytes] = []
        while chunk := os.read(self._fd, 65536):
            chunks.append(chunk)
        self._table = parse_mountinfo(b"".join(chunks).decode("utf-8", "surrogateescape"))
        self._roots.clear()


_mounts = _Mounts()


def small_write_inline(root: str, rel: str, size: int) -> bool:
    """Whether writing ``size`` bytes to ``root/rel`` (``root`` a real path, ``rel`` a
    root-relative posix path) may run on the event loop (module docstring)."""
    if size > INLINE_BYTES:
        return False
    layout = _mounts.root(root)
    if layout is None or not layout[0]:
        return False
    if layout[1]:
        parent = posixpath.dirname(posixpath.normpath(f"{root}/{rel}"))
        if any(parent == p or parent.startswith(p + "/") for p in layout[1]):
            return False
    return True
