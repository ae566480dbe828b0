"""Reading a git index file (``.git/index``, versions 2 to 4) for the environment note.

Only what the note compares is read: each entry's path, mode, size and modification time. The
reader runs nothing and imports nothing beyond the standard library: GitPython's index reader
(what this replaced) costs its whole package on import (~600 modules' worth of a CLI run's
start, and a ``git version`` process), on the first turn of every process.

Formats it does not follow give None (the note then says the state is unknown): a split index
(its entries are in another file), a sparse index (directories as entries), an object format
other than SHA-1, a truncated or damaged file.
"""

from __future__ import annotations

import os
import struct

Entry = tuple[str, int, int, int, int]
"""(path, mode, size, mtime seconds, mtime nanoseconds)."""

_HEADER = struct.Struct(">4sLL")
_STAT = struct.Struct(">LLLLLLLLLL")  # ctime s/ns, mtime s/ns, dev, ino, mode, uid, gid, size
_FIXED = _STAT.size + 20 + 2  # stat data, object id (SHA-1), flags
_EXTENDED = 0x4000
_NAME_MASK = 0x0FFF
_SPLIT = b"link"
_SPARSE = b"sdir"
_TREE_MODE = 0o040000


class Unreadable(Exception):
    """An index this reader does not follow (damaged, or a format it does not read)."""


def read_index(data: bytes, max_entries: int) -> list[Entry] | None:
    """The entries of an index file's bytes; None when it has more than ``max_entries``.
    Raises Unreadable for anything not a whole index of a format read here."""
    try:
        sig, version, count = _HEADER.unpack_from(data, 0)
    except struct.error:
        raise Unreadable("no header") from None
    if sig != b"DIRC" or version not in (2, 3, 4):
        raise Unreadable(f"not an index of version 2 to 4 ({sig!r}, {version})")
    if count > max_entries:
        return None
    entries: list[Entry] = []
    pos = _HEADER.size
    previous = b""
    for _ in range(count):
        start = pos
        try:
            fields = _STAT.unpack_from(data, pos)
            (flags,) = struct.unpack_from(">H", data, pos + _FIXED - 2)
        except struct.error:
            raise Unreadable("truncated entry") from None
        pos += _FIXED
        if flags & _EXTENDED:
            if version < 3:
                raise Unreadable("extended flags in a version 2 index")
            pos += 2
        if version == 4:  # the path: drop N bytes of the previous one, add what follows
            drop, pos = _varint(data, pos)
            end = data.find(b"\0", pos)
            if end < 0 or drop > len(previous):
                raise Unreadable("bad path")
            path = previous[:len(previous) - drop] + data[pos:end]
            pos = end + 1
        else:
            length = flags & _NAME_MASK
            end = data.find(b"\0", pos) if length == _NAME_MASK else pos + length
            if end < 0 or end >= len(data) or data[end] != 0:
                raise Unreadable("bad path")
            path = data[pos:end]
            pos = start + ((end - start) // 8 + 1) * 8  # 1 to 8 NULs to a multiple of 8
        mode = fields[6]
        if mode & 0o170000 == _TREE_MODE:
            raise Unreadable("a sparse index")
        previous = path
        entries.append((os.fsdecode(path), mode, fields[9], fields[2], fields[3]))
    if pos > len(data) - 20:
        raise Unreadable("truncated")
    _check_extensions(data, pos)
    return entries


def _check_extensions(data: bytes, pos: int) -> None:
    """Refuse the extensions that change what the entries mean (split and sparse index)."""
    end = len(data) - 20  # the trailing checksum
    while pos + 8 <= end:
        name = data[pos:pos + 4]
        (size,) = struct.unpack_from(">L", data, pos + 4)
        if name in (_SPLIT, _SPARSE):
            raise Unreadable(f"{name.decode()} extension")
        pos += 8 + size


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset varint (``decode_varint``): each continued byte adds one before the shift."""
    try:
        byte = data[pos]
        value = byte & 0x7F
        while byte & 0x80:
            pos += 1
            byte = data[pos]
            value = ((value + 1) << 7) | (byte & 0x7F)
    except IndexError:
        raise Unreadable("truncated path") from None
    return value, pos + 1
