"""A commit's new objects, kept in memory and written as one small pack (``.pack`` + ``.idx``).

A turn's session commit makes about ten objects (node blobs, the trees on their paths, the
commit); as loose objects that is ten files created and renamed, plus a fan-out directory now
and then. ``ObjectBatch`` holds them until ``flush``, which writes two files: the
index under its final name, then the pack through a temporary name and one rename. No reader
ever sees part of one (git lists indexes and skips one without its pack; gitdb lists packs):
until the pack is in place the batch's objects do not exist, afterwards all of them do. A crash
before the rename leaves at most an index without its pack, which nothing reads and
``remove_orphans`` deletes.

No ``fsync``, as for the loose objects it replaces (and as ``git commit`` does for loose
objects): the stores promise to survive a killed process, which page-cache writes do, not a
power cut. Background maintenance (``store.pack_maintenance``) merges the small packs.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from openprogram_lsp.core.fsutil import write_all
from openprogram_lsp.store.gitobj.odb import KINDS, ObjectDB
from openprogram_lsp.store.gitobj.packwrite import index_v2, pack_record

_HEADER = struct.Struct(">4sLL")
_counter = itertools.count()
ORPHAN_AGE = 600.0
"""Seconds after which a pack without an index (a writer killed between its two files) goes."""


class ObjectBatch:
    """New objects of one commit; reads see them before ``flush`` (``trees.ObjectStore``)."""

    def __init__(self, odb: ObjectDB) -> None:
        self.odb = odb
        self._objects: dict[bytes, tuple[str, bytes, bytes]] = {}  # binsha -> kind, body, record

    def __len__(self) -> int:
        return len(self._objects)

    def write(self, kind: str, body: bytes) -> str:
        """Add an object (stored once however often it is added); returns its id."""
        if kind not in KINDS:
            raise ValueError(f"unknown git object kind {kind!r}")
        binsha, record = pack_record(kind, body)
        self._objects.setdefault(binsha, (kind, body, record))
        return binsha.hex()

    def held(self, sha: str) -> tuple[str, bytes] | None:
        """(kind, body) of an object of this batch, or None."""
        try:
            held = self._objects.get(bytes.fromhex(sha))
        except ValueError:
            return None
        return (held[0], held[1]) if held is not None else None

    def read(self, sha: str) -> tuple[str, bytes]:
        """(kind, body) of an object of this batch or of the database."""
        return self.held(sha) or self.odb.read(sha)

    def flush(self) -> Path | None:
        """Write the objects as one pack and its index; the pack's path (None when empty).

        Objects the database holds already are written again: a duplicate in a second pack is
        valid git, and checking for each would cost a lookup per object.
        """
        if not self._objects:
            return None
        entries = sorted(self._objects.items())
        body = [_HEADER.pack(b"PACK", 2, len(entries))]
        index: list[tuple[bytes, int, int]] = []
        offset = _HEADER.size
        for binsha, (_kind, _body, record) in entries:
            body.append(record)
            index.append((binsha, zlib.crc32(record), offset))
            offset += len(record)
        data = b"".join(body)
        pack_sha = hashlib.sha1(data).digest()
        pack_dir = f"{self.odb.objects}/pack"  # plain strings: this runs twice a turn
        stem = f"{pack_dir}/pack-{pack_sha.hex()}"
        pack, idx = stem + ".pack", stem + ".idx"
        # the index first, under its own name: nothing reads an index without its pack (git
        # lists indexes and checks for the pack, gitdb lists packs); the pack then appears
        # whole, with one rename, and with it every object of the batch
        index_data = index_v2(index, pack_sha)
        try:
            _create(idx, index_data)
        except FileNotFoundError:
            os.makedirs(pack_dir, exist_ok=True)
            _create(idx, index_data)
        except FileExistsError:  # the same objects again (maybe a killed writer's half)
            _put(pack_dir, idx, index_data)
        _put(pack_dir, pack, data + pack_sha)
        self._objects.clear()
        self.odb.note_pack()
        return Path(pack)


@contextlib.contextmanager
def batched(odb: ObjectDB) -> Iterator[ObjectBatch]:
    """Every object this thread writes to ``odb`` inside the block goes into one batch, read
    back from it, and is written as one pack when the block ends (dropped if it raises)."""
    batch = ObjectBatch(odb)
    previous = odb.redirect(batch)
    try:
        yield batch
    finally:
        odb.redirect(previous)
    batch.flush()


def _put(pack_dir: str, path: str, data: bytes) -> None:
    """Write a file whole under a temporary name, then rename it to ``path``."""
    tmp = f"{pack_dir}/tmp_pack_{os.getpid()}_{next(_counter)}"
    try:
        _create(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def remove_orphans(odb: ObjectDB, *, age: float = ORPHAN_AGE) -> int:
    """Delete indexes without their pack (and packs without their index), and temporary
    files, older than ``age`` seconds (left by a killed writer); returns how many went."""
    pack_dir = odb.objects / "pack"
    try:
        names = os.listdir(pack_dir)
    except OSError:
        return 0
    have = set(names)
    cutoff = time.time() - age
    removed = 0
    for name in names:
        orphan = (name.endswith(".pack") and name[:-5] + ".idx" not in have) or \
            (name.endswith(".idx") and name[:-4] + ".pack" not in have) or \
            name.startswith(("tmp_idx_", "tmp_pack_"))
        if not orphan:
            continue
        path = pack_dir / name
        with contextlib.suppress(OSError):
            if os.stat(path).st_mtime < cutoff:
                os.unlink(path)
                removed += 1
    return removed
