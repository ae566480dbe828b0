"""Where a small tool write may run inline: a local filesystem, no mount on the way, a bound."""

from __future__ import annotations

import os
import select
from pathlib import Path

import pytest
from tests.tooling import missing

from openprogram_lsp.core import localfs
from openprogram_lsp.core.localfs import (
    INLINE_BYTES,
    parse_mountinfo,
    root_layout,
    small_write_inline,
)


@pytest.fixture
def _mountinfo() -> None:
    """The kernel's mount table (Linux): a skip elsewhere, a failure in CI."""
    if not os.path.exists("/proc/self/mountinfo"):
        missing("/proc/self/mountinfo (Linux) is not there")


_TABLE = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 0:50 / /home/u/net rw - nfs4 srv:/export rw
41 27 0:51 / /home/u/my\\040project rw - ext4 /dev/vdb rw
42 41 0:52 / /home/u/my\\040project/mnt/fuse rw - fuse.sshfs host: rw
43 27 0:53 / /srv rw - xfs /dev/vdc rw
44 27 0:54 / /srv rw - nfs srv:/srv rw
garbage line without the separator
"""


def test_the_mount_table_is_parsed_with_escapes() -> None:
    table = parse_mountinfo(_TABLE)
    assert ("/home/u/my project", "ext4") in table
    assert ("/home/u/my project/mnt/fuse", "fuse.sshfs") in table
    assert len(table) == 7


def test_the_deepest_and_the_topmost_mount_holds_a_root() -> None:
    table = parse_mountinfo(_TABLE)
    assert root_layout(table, "/home/u/code") == ("ext4", [])
    assert root_layout(table, "/home/u") == ("ext4", ["/home/u/net",
                                                          "/home/u/my project",
                                                          "/home/u/my project/mnt/fuse"])
    assert root_layout(table, "/home/u/net/ws") == ("nfs4", [])
    assert root_layout(table, "/home/u/my project") == ("ext4", ["/home/u/my project/mnt/fuse"])
    assert root_layout(table, "/srv/ws") == ("nfs", [])  # mounted over the xfs one
    assert root_layout(table, "/srvx") == ("ext4", [])  # a name prefix is no parent


def _table(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    mounts = localfs._Mounts()
    mounts._table = parse_mountinfo(text)
    monkeypatch.setattr(mounts, "_refresh", lambda: None)
    monkeypatch.setattr(localfs, "_mounts", mounts)


def test_inline_only_on_a_local_filesystem_off_other_mounts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _table(monkeypatch, _TABLE)
    ws = "/home/u/my project"
    assert small_write_inline(ws, "src/a.py", 10)
    assert small_write_inline(ws, "mnt/a.py", 10)  # beside the mount, not in it
    assert not small_write_inline(ws, "mnt/fuse/a.py", 10)  # through an sshfs mount
    assert not small_write_inline(ws, "mnt//./fuse/a.py", 10)  # however it is spelled
    assert not small_write_inline(ws, "src/a.py", INLINE_BYTES + 1)
    assert not small_write_inline("/home/u/net/ws", "a.py", 10)  # NFS
    assert not small_write_inline("/srv/ws", "a.py", 10)
    assert small_write_inline("/home/u/code", "a.py", INLINE_BYTES)


def test_no_mount_table_means_a_thread(monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path) -> None:
    mounts = localfs._Mounts()
    monkeypatch.setattr(localfs, "_MOUNTINFO", str(tmp_path / "missing"))
    monkeypatch.setattr(localfs, "_mounts", mounts)
    assert not small_write_inline(str(tmp_path), "a.py", 10)
    assert not small_write_inline(str(tmp_path), "a.py", 10)  # (not tried again)


@pytest.mark.usefixtures("_mountinfo")
def test_the_table_is_read_again_only_when_the_kernel_says_it_changed(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    mounts = localfs._Mounts()
    reads: list[int] = []
    real_read = os.read

    def counted(fd: int, n: int) -> bytes:
        reads.append(fd)
        return real_read(fd, n)

    monkeypatch.setattr(localfs, "_mounts", mounts)
    small_write_inline(str(tmp_path), "a.py", 10)  # the table read once
    monkeypatch.setattr(os, "read", counted)
    for _ in range(3):
        small_write_inline(str(tmp_path), "a.py", 10)
    assert reads == []  # no change reported: the table held is used

    class Changed:
        def poll(self, timeout: int) -> list[tuple[int, int]]:
            return [(0, select.POLLPRI)]

    mounts._poll = Changed()  # type: ignore[assignment]
    small_write_inline(str(tmp_path), "a.py", 10)
    assert reads  # read again


@pytest.mark.usefixtures("_mountinfo")
def test_a_forked_child_reads_through_its_own_file(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    mounts = localfs._Mounts()
    monkeypatch.setattr(localfs, "_mounts", mounts)
    small_write_inline(str(tmp_path), "a.py", 10)
    parent_fd = mounts._fd
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            small_write_inline(str(tmp_path), "a.py", 10)
            mine = mounts._pid == os.getpid() and mounts._table is not None
            os.write(write, b"1" if mine else b"0")
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    os.close(read)
    assert mounts._fd == parent_fd and mounts._pid == os.getpid()  # the parent's, untouched
    os.fstat(parent_fd)
