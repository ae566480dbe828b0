"""Race-proof file access under a root directory.

Every path is walked one component at a time from a descriptor of the root, each directory
opened with ``O_NOFOLLOW | O_DIRECTORY``; temp files are created and renamed relative to the
parent's descriptor. A component swapped for a symlink mid-call makes the call fail instead of
escaping the root. Only regular files are opened for reading, checked on the open descriptor,
so a FIFO, socket or device never blocks the caller.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from openprogram_lsp.core.control_files import check_write
from openprogram_lsp.core.errors import ToolError, WorkspaceEscape
from openprogram_lsp.core.fsutil import current_umask
from openprogram_lsp.core.turn_root import check_root

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC




def split(rel: str) -> list[str]:
    """The components of a root-relative path; refuses ``..``, absolute paths and ``.git``."""
    if "\x00" in rel:
        raise WorkspaceEscape(f"path {rel!r} contains a NUL byte")
    if rel.startswith("/"):
        raise WorkspaceEscape(f"path {rel!r} is absolute")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise WorkspaceEscape(f"path {rel!r} leads outside the workspace")
    if any(is_git_name(p) for p in parts):
        raise WorkspaceEscape(f"path {rel!r} is inside a .git directory, which tools never touch")
    return parts


def is_git_name(name: str) -> bool:
    """Whether a path component names ``.git`` as git and file systems see it: in any case (a
    case-insensitive file system opens ``.GIT/hooks`` as ``.git/hooks``; git itself refuses to
    track ``.GIT``), trailing dots and spaces dropped (Windows)."""
    return name.lower().rstrip(". ") == ".git"


def kind_of(mode: int) -> str:
    """A word for a file type, for messages."""
    for test, word in ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symlink"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return word
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def _escape(rel: str) -> WorkspaceEscape:
    return WorkspaceEscape(f"path {rel!r} leads outside the workspace (a component is a symlink "
                           "or was replaced during the call)")


def _step(fd: int, name: str, rel: str) -> int:
    try:
        return os.open(name, _DIR, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _escape(rel) from None
        if exc.errno == errno.ENOTDIR:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise _escape(rel) from None
            raise ToolError(f"{rel}: {name!r} is {kind_of(st.st_mode)}, not a directory") \
                from None
        raise


@contextlib.contextmanager
def open_dir(root: Path, parts: list[str], *, create: bool = False,
             rel: str = "") -> Iterator[int]:
    """A descriptor of ``root/parts...``, walked without following links (made if ``create``)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        check_root(root, fd)  # still the directory the turn's path checks resolved
        for name in parts:
            try:
                nfd = _step(fd, name, rel or "/".join(parts))
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                nfd = _step(fd, name, rel or "/".join(parts))
            os.close(fd)
            fd = nfd
        yield fd
    finally:
        os.close(fd)


def lstat(root: Path, rel: str) -> os.stat_result | None:
    """The entry's own status (a link is not followed), or None when it does not exist."""
    parts = split(rel)
    if not parts:
        return os.stat(root)
    try:
        with open_dir(root, parts[:-1], rel=rel) as dfd:
            return os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _open_regular(dfd: int, name: str, rel: str) -> int:
    before = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    if stat.S_ISLNK(before.st_mode):
        raise _escape(rel)
    if not stat.S_ISREG(before.st_mode):
        raise ToolError(f"{rel}: is {kind_of(before.st_mode)}; only regular files are opened")
    try:
        fd = os.open(name, _READ, dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _escape(rel) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise ToolError(f"{rel}: was replaced while being opened")
    return fd


def read_bytes(root: Path, rel: str, limit: int) -> tuple[bytes, int]:
    """At most ``limit`` bytes of a regular file, and its size."""
    parts = split(rel)
    if not parts:
        raise ToolError(f"{rel or '.'}: is a directory")
    try:
        with open_dir(root, parts[:-1], rel=rel) as dfd:
            fd = _open_regular(dfd, parts[-1], rel)
    except FileNotFoundError:
        raise ToolError(f"{rel}: no such file") from None
    with open(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        return fh.read(limit), size


@contextlib.contextmanager
def open_regular(root: Path, rel: str) -> Iterator[int]:
    """A read descriptor of a regular file under the root (closed on exit)."""
    parts = split(rel)
    if not parts:
        raise ToolError(f"{rel or '.'}: is a directory")
    try:
        with open_dir(root, parts[:-1], rel=rel) as dfd:
            fd = _open_regular(dfd, parts[-1], rel)
    except FileNotFoundError:
        raise ToolError(f"{rel}: no such file") from None
    try:
        yield fd
    finally:
        os.close(fd)


_writing: set[str] = set()
"""Names of this process's temp files that may exist now (set before each is made, cleared
once it is renamed or removed)."""


def writing(name: str) -> bool:
    """Whether ``name`` (a file name, no directory part) is the temp file of a write of this
    process still in progress: a checkpoint walk that meets it leaves it out (it is never a
    file of the workspace, and a walk running during a turn's write recorded it, to be
    brought back by a restore). Its 48 random bits make another file of that name moot."""
    return name in _writing


@contextlib.contextmanager
def _temp_name(name: str) -> Iterator[str]:
    """A fresh temp file name next to ``name``, marked as being written for the block (which
    removes the file, whatever happens, before it ends)."""
    tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
    _writing.add(tmp)
    try:
        yield tmp
    finally:
        _writing.discard(tmp)


def write_atomic(root: Path, rel: str, data: bytes, *, mode: int | None = None,
                 fsync: bool = False) -> bool:
    """Replace a file by temp file + rename in its parent's descriptor; True if it existed.

    Missing parent directories are created. The file keeps its permissions unless ``mode`` is
    given; a directory, FIFO, socket or device in the way is refused.
    """
    check_write(rel, rel)  # a tool call writes only the control files it was approved for
    parts = split(rel)
    if not parts:
        raise ToolError(f"{rel or '.'}: is a directory")
    name = parts[-1]
    with open_dir(root, parts[:-1], create=True, rel=rel) as dfd:
        try:
            st: os.stat_result | None = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise ToolError(f"{rel}: is {kind_of(st.st_mode)}; only regular files are written")
        if mode is None:
            mode = st.st_mode & 0o7777 if st is not None and stat.S_ISREG(st.st_mode) \
                else 0o666 & ~current_umask()
        with _temp_name(name) as tmp:
            tfd = os.open(tmp, _TEMP, 0o600, dir_fd=dfd)
            try:
                with open(tfd, "wb") as fh:
                    fh.write(data)
                    os.fchmod(fh.fileno(), mode)
                    if fsync:
                        fh.flush()
                        os.fsync(fh.fileno())
                os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
                raise
    return st is not None


def write_symlink(root: Path, rel: str, target: str) -> None:
    """Create or replace a symlink (the link itself, inside the root) atomically."""
    check_write(rel, rel)  # a tool call writes only the control files it was approved for
    parts = split(rel)
    if not parts:
        raise ToolError("cannot replace the workspace root")
    with open_dir(root, parts[:-1], create=True, rel=rel) as dfd:
        st = None
        with contextlib.suppress(FileNotFoundError):
            st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{rel}: is a directory")
        with _temp_name(parts[-1]) as tmp:
            os.symlink(target, tmp, dir_fd=dfd)
            try:
                os.rename(tmp, parts[-1], src_dir_fd=dfd, dst_dir_fd=dfd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
                raise


def chmod(root: Path, rel: str, mode: int) -> None:
    """Set a regular file's permissions through its descriptor."""
    check_write(rel, rel)  # a tool call writes only the control files it was approved for
    parts = split(rel)
    with open_dir(root, parts[:-1], rel=rel) as dfd:
        fd = _open_regular(dfd, parts[-1], rel)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def unlink(root: Path, rel: str) -> bool:
    """Remove a file or symlink (never a directory); False when it was already gone."""
    check_write(rel, rel)  # a tool call writes only the control files it was approved for
    parts = split(rel)
    if not parts:
        raise ToolError("cannot delete the workspace root")
    try:
        with open_dir(root, parts[:-1], rel=rel) as dfd:
            st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                raise ToolError(f"{rel}: is a directory")
            os.unlink(parts[-1], dir_fd=dfd)
    except FileNotFoundError:
        return False
    return True


def prune_empty_dirs(root: Path, rel_dir: str) -> None:
    """Remove ``rel_dir`` and its parents while they are empty, never the root itself."""
    parts = split(rel_dir)
    while parts:
        try:
            with open_dir(root, parts[:-1], rel=rel_dir) as dfd:
                os.rmdir(parts[-1], dir_fd=dfd)
        except (OSError, WorkspaceEscape, ToolError):
            return
        parts = parts[:-1]
