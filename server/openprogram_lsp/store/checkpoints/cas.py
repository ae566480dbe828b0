"""Compare-and-swap file writes for restores: a file is replaced only if it still holds what
the safety checkpoint recorded, so an edit racing the restore is never lost.

Each replaced or deleted file is first renamed aside (one atomic step: later writes by path
create a new file instead of landing in the old one), hashed, and compared with the expected
``(mode, sha)``; the new content then enters by a no-replace hard link, so a file another
process created meanwhile is kept. A file some process still holds open for writing (an editor
that truncated it and has not written yet) is put back at once: its pending write must land in
the file the user sees, not in one we are about to remove. That is asked of the kernel with a
read lease (``F_SETLEASE``), which is refused while anyone else has the file open for writing;
where leases are unavailable the hashes alone decide. The moved-aside file is hashed again just
before it is removed, under the lease: a write through a descriptor opened earlier is caught
there and put back. Anything that does not match is left in place and reported as a conflict.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from openprogram_lsp.core import fdfs
from openprogram_lsp.store.checkpoints.objects import blob_id

Leaf = tuple[str, str] | None
"""(git mode, blob sha) of a path, or None when it must not exist."""

_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
LINK = "120000"


class Conflict(Exception):
    """The path no longer holds what the restore expected; it was left as it is."""


@contextlib.contextmanager
def _unwritten(dfd: int, name: str) -> Iterator[bool]:
    """While held, no other descriptor can open ``name`` for writing; yields False when one
    already has it open (the lease is refused). True when leases are unsupported here."""
    try:
        fd = os.open(name, _READ, dir_fd=dfd)
    except OSError as exc:
        yield exc.errno == errno.ELOOP  # a symlink: nothing writes through it
        return
    try:
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        except OSError as exc:
            yield exc.errno not in (errno.EAGAIN, errno.EBUSY)
            return
        try:
            yield True
        finally:
            with contextlib.suppress(OSError):
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    finally:
        os.close(fd)


def _aside_name(name: str) -> str:
    return f".{name[:180]}.{secrets.token_hex(6)}.openprogram-aside"


def leaf_at(dfd: int, name: str) -> Leaf:
    """(git mode, sha) of an entry in a directory; None when absent; Conflict when it is
    neither a regular file nor a symlink (a directory, a FIFO...)."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return LINK, blob_id(os.fsencode(os.readlink(name, dir_fd=dfd)))
    if not stat.S_ISREG(st.st_mode):
        raise Conflict(name)
    fd = os.open(name, _READ, dir_fd=dfd)
    try:
        cur = os.fstat(fd)
        if not stat.S_ISREG(cur.st_mode):
            raise Conflict(name)
        with open(fd, "rb", closefd=False) as fh:
            data = fh.read()
    finally:
        os.close(fd)
    return ("100755" if cur.st_mode & 0o100 else "100644"), blob_id(data)


def _link_new(dfd: int, name: str, mode: str, data: bytes, perm: int) -> None:
    """Create ``name`` with ``data``; FileExistsError when something is there already."""
    if mode == LINK:
        os.symlink(os.fsdecode(data), name, dir_fd=dfd)
        return
    tmp = f".{name[:180]}.{secrets.token_hex(6)}.tmp"
    tfd = os.open(tmp, _TEMP, 0o600, dir_fd=dfd)
    try:
        with open(tfd, "wb") as fh:
            fh.write(data)
            os.fchmod(fh.fileno(), perm)
        try:
            os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno in (errno.EEXIST,):
                raise FileExistsError(name) from None
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise
            # no hard links here (some network and FUSE file systems): exclusive create
            fd = os.open(name, _TEMP, perm, dir_fd=dfd)
            with open(fd, "wb") as out:
                out.write(data)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)


def _put_back(dfd: int, aside: str, name: str) -> None:
    """Return a moved-aside file to its name; if something new is there, keep both."""
    try:
        os.link(aside, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
    except FileExistsError:
        keep = f"{name[:180]}.openprogram-conflict-{secrets.token_hex(3)}"
        os.rename(aside, keep, src_dir_fd=dfd, dst_dir_fd=dfd)
        return
    except OSError:
        os.rename(aside, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        return
    os.unlink(aside, dir_fd=dfd)


def swap(root: Path, rel: str, expect: Leaf, new: tuple[str, bytes] | None,
         perm: int) -> None:
    """Make ``rel`` hold ``new`` ((git mode, bytes); None deletes) if it still holds ``expect``.

    Raises Conflict (the path left as another process made it) when it does not, and
    WorkspaceEscape or ToolError when the path leads out of the workspace.
    """
    parts = fdfs.split(rel)
    try:
        with fdfs.open_dir(root, parts[:-1], create=new is not None, rel=rel) as dfd:
            _swap_in(dfd, parts[-1], rel, expect, new, perm)
    except FileNotFoundError:
        if new is not None:
            raise
        # the directory is gone, so is the file: nothing left to delete


def _swap_in(dfd: int, name: str, rel: str, expect: Leaf, new: tuple[str, bytes] | None,
             perm: int) -> None:
    aside = None
    if expect is not None:
        aside = _aside_name(name)
        try:
            os.rename(name, aside, src_dir_fd=dfd, dst_dir_fd=dfd)
        except FileNotFoundError:
            aside = None  # deleted meanwhile: nothing of value to keep
            if new is None:
                return
        else:
            with _unwritten(dfd, aside) as quiet:
                same = quiet and _leaf_or_odd(dfd, aside) == expect
            if not same:
                _put_back(dfd, aside, name)
                raise Conflict(rel)
    elif new is not None and _exists(dfd, name):
        if _same(dfd, name, new):
            return
        raise Conflict(rel)
    if new is not None:
        try:
            _link_new(dfd, name, new[0], new[1], perm)
        except FileExistsError:  # created by another process after we moved ours aside
            if aside is not None:
                _drop_aside(dfd, aside, name, rel, expect, ours=False)
            if _same(dfd, name, new):
                return
            raise Conflict(rel) from None
    if aside is not None:
        _drop_aside(dfd, aside, name, rel, expect, ours=True)


def _leaf_or_odd(dfd: int, name: str) -> Leaf | tuple[str, str]:
    try:
        return leaf_at(dfd, name)
    except Conflict:
        return ("", "")


def _exists(dfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _same(dfd: int, name: str, new: tuple[str, bytes]) -> bool:
    return _leaf_or_odd(dfd, name) == (new[0], blob_id(new[1]))


def _drop_aside(dfd: int, aside: str, name: str, rel: str, expect: Leaf, *,
                ours: bool) -> None:
    """Remove the moved-aside file unless someone wrote to it through an open descriptor.

    ``ours``: ``name`` now holds the restored content, which such a write replaces (the target
    checkpoint still holds it); else ``name`` is another process's new file and both are kept.
    """
    with _unwritten(dfd, aside) as quiet:
        if quiet and _leaf_or_odd(dfd, aside) == expect:
            os.unlink(aside, dir_fd=dfd)
            return
    # written after we looked: that edit wins over the restored content, and the caller
    # reports the path as a conflict
    if ours:
        os.rename(aside, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    else:
        _put_back(dfd, aside, name)
    raise Conflict(rel)
