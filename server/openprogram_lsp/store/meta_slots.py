"""A session's meta written in place: two checked slots in ``.git/openprogram-meta``.

``meta.json`` was replaced (a temporary file and a rename over it) twice a turn; on ext4 a
rename over an existing file starts the new file's writeback (``auto_da_alloc``): 0.2-0.7 ms
on a quiet disk, several on a busy one, the turn's dearest file operation. The meta now lives
in two slots of one file, written alternately with one ``pwrite`` each:

- a slot is ``MAGIC``, its generation (8 bytes), the payload's length (4), a CRC-32 of those
  and the payload (4), then the payload (the meta's JSON); generation ``g`` goes to slot
  ``g % 2``, at offset ``g % 2 * capacity`` (the file holds two slots of ``capacity`` bytes,
  a multiple of 4,096, so a slot starts on a page);
- a reader takes the valid slot (magic, length in bounds, CRC) of the highest generation. A
  write torn by a kill, a reader racing a writer (which reads the slot being written half
  old, half new) or a power cut in the middle of a write leaves that slot invalid and the
  other one, the previous meta, is read: never a torn meta;
- a meta too big for its slot, a first write of a session from before this file, and a file
  with no valid slot are written whole, through a temporary file and a rename (both slots
  then hold the new meta);
- ``meta.json`` is written once, when the session is created (its existence is the
  session's), and read only while the slot file is missing or holds no valid slot. A commit
  takes the meta's bytes from here (``read_bytes``), so the committed ``meta.json`` is always
  the current meta.

Writers hold the session's write lock (one writer a process) and the journal's shared lock;
two processes writing at once choose the same slot for the same generation, and ext4
serialises writes of one file, so the last writer wins whole, as a rename did. Nothing is
``fsync``ed: after a power cut the meta is the last write that reached the disk whole, or the
one before it (a rename without ``fsync`` also gave some earlier version or the new one).
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

from openprogram_lsp.core.fsutil import read_file, read_rest, replace_file

META = "meta.json"
SLOTS = "openprogram-meta"
"""The slot file, under ``.git/`` (not a file of the session's tree)."""
MAGIC = b"OPM1"
_HEAD = struct.Struct(">4sQII")  # magic, generation, length, crc
PAGE = 4096
MAX_CAPACITY = 1 << 24
"""The largest slot a reader accepts (a bigger file is not one of ours)."""


def slots_path(root: Path | str) -> str:
    """The slot file of a session directory."""
    return f"{root}/.git/{SLOTS}"


def _crc(gen: int, payload: bytes) -> int:
    return zlib.crc32(payload, zlib.crc32(struct.pack(">QI", gen, len(payload))))


def encode_slot(gen: int, payload: bytes) -> bytes:
    """One slot's bytes (header and payload, no padding)."""
    return _HEAD.pack(MAGIC, gen, len(payload), _crc(gen, payload)) + payload


def newest(data: bytes) -> tuple[int, bytes] | None:
    """(generation, payload) of the newest valid slot of a slot file's bytes, or None."""
    size = len(data)
    cap = size // 2
    if size % 2 or cap < PAGE or cap % PAGE or cap > MAX_CAPACITY:
        return None
    best: tuple[int, bytes] | None = None
    for at in (0, cap):
        magic, gen, length, crc = _HEAD.unpack_from(data, at)
        if magic != MAGIC or gen % 2 != at // cap or length > cap - _HEAD.size:
            continue
        payload = data[at + _HEAD.size:at + _HEAD.size + length]
        if _crc(gen, payload) != crc:
            continue
        if best is None or gen > best[0]:
            best = (gen, payload)
    return best


def _read_slots(root: Path | str) -> tuple[int, bytes] | None:
    try:
        fd = os.open(slots_path(root), os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        size = os.fstat(fd).st_size
        if size > 2 * MAX_CAPACITY:
            return None
        return newest(read_rest(fd))
    finally:
        os.close(fd)


def read_bytes(root: Path | str) -> bytes:
    """The session's meta as JSON bytes: the newest valid slot, else ``meta.json``.
    FileNotFoundError when the session has no ``meta.json`` (no such session)."""
    if not os.path.lexists(f"{root}/{META}"):
        raise FileNotFoundError(f"{root}/{META}")
    found = _read_slots(root)
    if found is not None:
        return found[1]
    return read_file(f"{root}/{META}")


def read(root: Path | str) -> Any:
    """The session's meta (parsed JSON; the caller checks it is an object)."""
    return json.loads(read_bytes(root))


def _capacity(payload: bytes) -> int:
    need = _HEAD.size + len(payload)
    return max(PAGE, -(-need // PAGE) * PAGE)


def write_whole(root: Path | str, payload: bytes, gen: int = 1) -> os.stat_result:
    """Write the slot file anew (a temporary file and a rename) with ``payload`` in both
    slots, the newer one of generation ``gen``. ValueError for a meta no reader would accept
    (past ``MAX_CAPACITY``): refused, not written unreadable."""
    cap = _capacity(payload)
    if cap > MAX_CAPACITY:
        raise ValueError(f"session meta of {len(payload)} bytes is too large to store")
    slots = [b"", b""]
    slots[gen % 2] = encode_slot(gen, payload)
    slots[(gen - 1) % 2] = encode_slot(gen - 1, payload)
    data = b"".join(s.ljust(cap, b"\0") for s in slots)
    return replace_file(slots_path(root), data)


class MetaWriter:
    """Writes one session's meta slots (kept open between writes by one instance)."""

    __slots__ = ("_fd", "_pid", "_root")

    def __init__(self, root: Path | str) -> None:
        self._root = str(root)
        self._fd: int | None = None
        self._pid = 0

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Drop the kept descriptor."""
        fd, self._fd = self._fd, None
        if fd is not None and self._pid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(fd)

    def _open(self) -> int | None:
        fd = self._fd
        if fd is not None and self._pid == os.getpid():
            return fd
        self._fd = None
        try:
            fd = os.open(slots_path(self._root), os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        self._fd, self._pid = fd, os.getpid()
        return fd

    def write(self, payload: bytes) -> None:
        """Make ``payload`` the session's meta: one ``pwrite`` into the slot the next
        generation goes to, or the whole file anew when that cannot be done in place."""
        fd = self._open()
        if fd is not None:
            try:
                st = os.fstat(fd)
                if st.st_nlink == 0:  # replaced or removed under us: open it afresh
                    self.close()
                    fd = self._open()
                    st = os.fstat(fd) if fd is not None else st
            except OSError:
                self.close()
                fd = None
        if fd is not None:
            data = os.pread(fd, st.st_size, 0) if st.st_size <= 2 * MAX_CAPACITY else b""
            found = newest(data)
            cap = len(data) // 2
            if found is not None and _HEAD.size + len(payload) <= cap:
                gen = found[0] + 1
                slot = encode_slot(gen, payload)
                if os.pwrite(fd, slot, gen % 2 * cap) == len(slot):
                    return
            gen = found[0] + 1 if found is not None else 1
        else:
            gen = 1
        self.close()
        write_whole(self._root, payload, gen)


def write(root: Path | str, payload: bytes) -> None:
    """Make ``payload`` a session's meta (one ``MetaWriter`` write; the caller holds the
    session's locks, as the store's writers do)."""
    writer = MetaWriter(root)
    try:
        writer.write(payload)
    finally:
        writer.close()


__all__ = ["META", "SLOTS", "MetaWriter", "newest", "read", "read_bytes", "write",
           "write_whole"]
