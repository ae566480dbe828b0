"""Writing many new objects straight into one pack (the first checkpoint of a big tree).

Each object is compressed with a zlib window no larger than the object needs: a default
deflate stream allocates and clears about 256 KiB of state, which costs ten times more than
compressing a small source file. Records can be built in worker threads (``pack_record``);
``PackWriter`` appends them to one buffered file, fixes up the object count and checksum at the
end, and writes the version-2 index in a few C-level calls (gitdb's ``IndexWriter`` makes
several Python calls per object: seconds at 100,000 objects). Figures in
``docs/decisions/gitobj.md``.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import struct
import tempfile
import zlib
from pathlib import Path
from typing import BinaryIO

from gitdb.fun import create_pack_object_header

from openprogram_lsp.store.gitobj.odb import KINDS, ObjectDB

TYPE_IDS = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}
_HEADER = struct.Struct(">4sLL")
_FANOUT = struct.Struct(">256L")


def pack_record(kind: str, body: bytes) -> tuple[bytes, bytes]:
    """(binary object id, pack entry: header and zlib stream) of one object."""
    size = len(body)
    binsha = hashlib.sha1(f"{kind} {size}".encode() + b"\0" + body).digest()
    wbits = max(9, min(15, (size + 262).bit_length()))  # 262: deflate's lookahead
    zstream = zlib.compressobj(1, zlib.DEFLATED, wbits, max(1, min(8, wbits - 7)))
    record = bytes(create_pack_object_header(TYPE_IDS[kind], size))
    return binsha, record + zstream.compress(body) + zstream.flush()


class PackWriter:
    """One new pack of ``odb``, filled object by object; ``finish`` puts it in place.

    Until then none of its objects can be read. Objects are not deltified (like gitdb's own
    writer); an object added twice is stored once. Also serves as the object sink of
    ``trees.update_tree`` (``write``), reading base trees from ``odb``.
    """

    def __init__(self, odb: ObjectDB) -> None:
        self.odb = odb
        self.pack_dir = odb.objects / "pack"
        self.pack_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="tmp_pack_", dir=self.pack_dir)
        self._path = Path(name)
        self._file: BinaryIO = os.fdopen(fd, "wb", buffering=1 << 20)
        self._file.write(_HEADER.pack(b"PACK", 2, 0))  # the count is fixed up in finish()
        self._offset = _HEADER.size
        self._index: list[tuple[bytes, int, int]] = []  # (binary id, crc32, offset)
        self._seen: set[bytes] = set()

    def __len__(self) -> int:
        return len(self._seen)

    def add_record(self, binsha: bytes, record: bytes) -> None:
        """Append one entry made by ``pack_record`` (a duplicate id is skipped)."""
        if binsha in self._seen:
            return
        self._seen.add(binsha)
        self._file.write(record)
        self._index.append((binsha, zlib.crc32(record), self._offset))
        self._offset += len(record)

    def write(self, kind: str, body: bytes) -> str:
        """Add an object and return its id."""
        if kind not in KINDS:
            raise ValueError(f"unknown git object kind {kind!r}")
        binsha, record = pack_record(kind, body)
        self.add_record(binsha, record)
        return binsha.hex()

    def read(self, sha: str) -> tuple[str, bytes]:
        """An object already in the database (objects of this pack are not readable yet)."""
        return self.odb.read(sha)

    def finish(self) -> Path | None:
        """Write the checksum and the index, move both into place; the pack's path (None when
        nothing was added)."""
        self._file.close()
        if not self._seen:
            self.abort()
            return None
        with open(self._path, "r+b") as fh:
            fh.write(_HEADER.pack(b"PACK", 2, len(self._seen)))
            fh.seek(0)
            digest = hashlib.sha1()
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
            pack_sha = digest.digest()
            fh.write(pack_sha)
            fh.flush()
            os.fsync(fh.fileno())
        name = f"pack-{pack_sha.hex()}"
        fd, idx_tmp = tempfile.mkstemp(prefix="tmp_idx_", dir=self.pack_dir)
        with os.fdopen(fd, "wb") as out:
            out.write(index_v2(self._index, pack_sha))
        pack_path = self.pack_dir / f"{name}.pack"
        # the index first, as gitobj.batch does: git skips an index without its pack, and
        # gitdb (our readers) finds packs by their .pack, so neither meets half of one
        for tmp, final in ((Path(idx_tmp), pack_path.with_suffix(".idx")), (self._path, pack_path)):
            os.chmod(tmp, 0o444)
            os.replace(tmp, final)
        self.odb.refresh()
        return pack_path

    def abort(self) -> None:
        """Drop the unfinished pack."""
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._path)


def index_v2(entries: list[tuple[bytes, int, int]], pack_sha: bytes) -> bytes:
    """The ``.idx`` (version 2) of a pack: (binary id, crc32, offset) of each object."""
    entries = sorted(entries)
    count = len(entries)
    counts = [0] * 256
    for binsha, _crc, _ofs in entries:
        counts[binsha[0]] += 1
    small: list[int] = []
    large: list[int] = []
    for _binsha, _crc, ofs in entries:
        if ofs < 0x80000000:
            small.append(ofs)
        else:
            small.append(0x80000000 | len(large))
            large.append(ofs)
    body = b"".join((  # (the fan-out summed in C: a small pack's index is written each turn)
        b"\377tOc", struct.pack(">L", 2), _FANOUT.pack(*itertools.accumulate(counts)),
        b"".join(e[0] for e in entries),
        struct.pack(f">{count}L", *(e[1] for e in entries)),
        struct.pack(f">{count}L", *small),
        struct.pack(f">{len(large)}Q", *large),
        pack_sha,
    ))
    return body + hashlib.sha1(body).digest()
