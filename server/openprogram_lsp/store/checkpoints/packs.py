"""Reading whole (non-delta) objects straight from pack files, as the baseline's pack holds them.

``git add`` with ``core.bigFileThreshold=1`` streams every blob into a pack without deltas, so
restore and review can read them here instead of starting ``git cat-file``. Anything else
(deltas after a repack, unknown layouts) returns None and the caller asks git.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
import zlib
from pathlib import Path

_TYPES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
_lock = threading.Lock()
_indexes: dict[str, tuple[int, dict[bytes, int]]] = {}


def _load_index(idx: Path) -> dict[bytes, int]:
    """sha (20 bytes) -> offset, from a version-2 ``.idx`` file (cached by mtime)."""
    stamp = idx.stat().st_mtime_ns
    key = str(idx)
    with _lock:
        cached = _indexes.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
    data = idx.read_bytes()
    if data[:8] != b"\xfftOc\x00\x00\x00\x02":
        return {}
    count = struct.unpack_from(">I", data, 8 + 255 * 4)[0]
    shas_at = 8 + 256 * 4
    offsets_at = shas_at + count * 20 + count * 4
    large_at = offsets_at + count * 4
    table: dict[bytes, int] = {}
    for n in range(count):
        sha = data[shas_at + n * 20:shas_at + n * 20 + 20]
        off = struct.unpack_from(">I", data, offsets_at + n * 4)[0]
        if off & 0x80000000:
            off = struct.unpack_from(">Q", data, large_at + (off & 0x7FFFFFFF) * 8)[0]
        table[sha] = off
    with _lock:
        _indexes[key] = (stamp, table)
    return table


def read_packed(git_dir: Path, sha: str) -> tuple[str, bytes] | None:
    """(type, body) of a whole object stored in one of the packs, else None."""
    pack_dir = git_dir / "objects" / "pack"
    try:
        names = os.listdir(pack_dir)
    except OSError:
        return None
    raw = bytes.fromhex(sha)
    for name in names:
        if not name.endswith(".idx"):
            continue
        try:
            offset = _load_index(pack_dir / name).get(raw)
            if offset is None:
                continue
            return _read_at(pack_dir / (name[:-4] + ".pack"), offset)
        except (OSError, ValueError, zlib.error, struct.error):
            return None
    return None


def _read_at(pack: Path, offset: int) -> tuple[str, bytes] | None:
    with open(pack, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        byte = mm[offset]
        kind = (byte >> 4) & 7
        size = byte & 15
        shift, pos = 4, offset + 1
        while byte & 0x80:
            byte = mm[pos]
            size |= (byte & 0x7F) << shift
            shift += 7
            pos += 1
        if kind not in _TYPES:  # a delta: let git resolve it
            return None
        inflater = zlib.decompressobj()
        body = inflater.decompress(mm[pos:pos + size + 1024 + size // 2], size)
        while len(body) < size and not inflater.eof:
            more = inflater.decompress(inflater.unconsumed_tail, size - len(body))
            if not more:
                break
            body += more
        if len(body) != size:
            return None
        return _TYPES[kind], body
