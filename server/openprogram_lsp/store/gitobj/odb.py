"""Reading and writing the objects of one git directory in process, on gitdb.

Loose objects are written through ``gitdb.LooseObjectDB`` and packs through
``gitdb.pack.PackEntity``; packed objects (deltas included) are read through
``gitdb.PackedDB``. A loose object is read with one ``zlib.decompress`` of its file: gitdb's
stream reader is about three times slower there, and that read is on every turn's path (figures
in ``docs/decisions/gitobj.md``).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from gitdb import IStream, LooseObjectDB, OStream, PackedDB
from gitdb.exc import BadObject
from gitdb.pack import PackEntity

KINDS = frozenset({"blob", "tree", "commit", "tag"})


class MissingObject(KeyError):
    """An object id the database does not hold."""

    def __init__(self, sha: str) -> None:
        super().__init__(sha)
        self.sha = sha

    def __str__(self) -> str:
        return f"missing git object {self.sha}"


def object_id(kind: str, body: bytes) -> str:
    """The id git gives an object of this kind and body."""
    return hashlib.sha1(f"{kind} {len(body)}".encode() + b"\0" + body).hexdigest()


class Sink(Protocol):
    """Where a thread's object writes go instead of loose files (``batch.batched``)."""

    def write(self, kind: str, body: bytes) -> str: ...

    def held(self, sha: str) -> tuple[str, bytes] | None: ...


class ObjectDB:
    """The object database of one git directory (``<git_dir>/objects``); thread-safe."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.objects = git_dir / "objects"
        self._objects = str(self.objects)
        self._lock = threading.Lock()
        self._loose: LooseObjectDB | None = None
        self._packed: PackedDB | None = None
        self._stale = False  # a pack was added since the pack list was read
        self._written = 0
        self._new_packs = 0
        self._local = threading.local()  # .sink: this thread's Sink, if any

    def redirect(self, sink: Sink | None) -> Sink | None:
        """Send this thread's writes (and its reads first) to ``sink`` (None: loose files
        again); returns the sink it replaces."""
        previous: Sink | None = getattr(self._local, "sink", None)
        self._local.sink = sink
        return previous

    # -- reading ------------------------------------------------------------------------------

    def read(self, sha: str) -> tuple[str, bytes]:
        """(kind, body) of an object, loose or packed; raises MissingObject."""
        sink: Sink | None = getattr(self._local, "sink", None)
        if sink is not None:
            held = sink.held(sha)
            if held is not None:
                return held
        try:
            with open(f"{self._objects}/{sha[:2]}/{sha[2:]}", "rb") as fh:
                raw = zlib.decompress(fh.read())
        except (OSError, zlib.error):
            return self._read_packed(sha)
        header, _, body = raw.partition(b"\0")
        return header.split(b" ", 1)[0].decode(), body

    def has(self, sha: str) -> bool:
        """Whether the database holds an object."""
        if (self.objects / sha[:2] / sha[2:]).exists():
            return True
        try:
            self._read_packed(sha, info_only=True)
        except MissingObject:
            return False
        return True

    def _read_packed(self, sha: str, *, info_only: bool = False) -> tuple[str, bytes]:
        try:
            binsha = bytes.fromhex(sha)
        except ValueError:
            raise MissingObject(sha) from None
        if len(binsha) != 20:
            raise MissingObject(sha)
        for attempt in range(3):
            try:
                packed = self._packs(refresh=attempt > 0)
            except OSError:  # a repack removed a pack between gitdb's listing and its open
                continue
            if packed is None:
                break
            try:
                with self._lock:  # gitdb's pack cache is not thread-safe
                    if info_only:
                        info = packed.info(binsha)
                        return info.type.decode(), b""
                    stream = packed.stream(binsha)
                    return stream.type.decode(), stream.read()
            except BadObject:
                continue
            except (OSError, ValueError):  # a pack removed under us: look again
                continue
        # a repack may have moved a loose object we missed a moment ago
        try:
            raw = zlib.decompress((self.objects / sha[:2] / sha[2:]).read_bytes())
        except (OSError, zlib.error):
            raise MissingObject(sha) from None
        header, _, body = raw.partition(b"\0")
        return header.split(b" ", 1)[0].decode(), body

    def _packs(self, *, refresh: bool) -> PackedDB | None:
        pack_dir = self.objects / "pack"
        with self._lock:
            if self._packed is None:
                if not pack_dir.is_dir():
                    return None
                self._packed = PackedDB(str(pack_dir))
                self._packed.update_cache(force=True)
            elif refresh or self._stale:
                self._packed.update_cache(force=True)
            self._stale = False
            return self._packed

    # -- writing ------------------------------------------------------------------------------

    def write(self, kind: str, body: bytes) -> str:
        """Store an object as a loose file (unless held already) and return its id."""
        sink: Sink | None = getattr(self._local, "sink", None)
        if sink is not None:
            return sink.write(kind, body)
        if kind not in KINDS:
            raise ValueError(f"unknown git object kind {kind!r}")
        sha = object_id(kind, body)
        path = self.objects / sha[:2] / sha[2:]
        if path.exists():
            # freshen it, as git does: a prune with an expiry never takes an object a writer
            # just counted on
            with contextlib.suppress(OSError):
                os.utime(path)
            return sha
        with self._lock:
            if self._loose is None:
                self.objects.mkdir(parents=True, exist_ok=True)
                self._loose = LooseObjectDB(str(self.objects))
            loose = self._loose
        stored = loose.store(IStream(kind.encode(), len(body), io.BytesIO(body)))
        assert stored.hexsha.decode() == sha
        self._written += 1
        return sha

    def take_written(self) -> int:
        """How many new loose objects this instance wrote since the last call."""
        written, self._written = self._written, 0
        return written

    def note_pack(self) -> None:
        """A pack was added (``batch.ObjectBatch``): read the pack list again before the next
        packed read, and count it for ``take_new_packs``."""
        self._stale = True
        self._new_packs += 1

    def take_new_packs(self) -> int:
        """How many packs this instance added since the last call."""
        added, self._new_packs = self._new_packs, 0
        return added

    def refresh(self) -> None:
        """Look at the pack directory again (after another writer added or removed packs)."""
        self._packs(refresh=True)

    def loose_ids(self) -> Iterator[str]:
        """Ids of the loose objects on disk."""
        try:
            fans = os.scandir(self.objects)
        except OSError:
            return
        with fans:
            for fan in fans:
                if len(fan.name) != 2 or not fan.is_dir():
                    continue
                try:
                    names = os.listdir(fan.path)
                except OSError:
                    continue
                for name in names:
                    if len(name) == 38:
                        yield fan.name + name

    def pack_loose(self, *, minimum: int = 1, batch: int = 5000) -> int:
        """Move the loose objects into new packs (no deltas, ``batch`` objects each); returns
        how many moved.

        Safe while others read and write: a loose file is removed only after the pack holding
        it is in place, and readers that miss a loose object look in the packs again. Objects
        are read into memory one batch at a time (gitdb's loose streams would hold one open
        file per object).
        """
        ids = sorted(set(self.loose_ids()))
        if len(ids) < minimum:
            return 0
        pack_dir = self.objects / "pack"
        pack_dir.mkdir(parents=True, exist_ok=True)
        moved = 0
        for start in range(0, len(ids), batch):
            streams = []
            for sha in ids[start:start + batch]:
                try:
                    raw = zlib.decompress((self.objects / sha[:2] / sha[2:]).read_bytes())
                except (OSError, zlib.error):
                    continue  # half-written or vanished: stays loose
                header, _, body = raw.partition(b"\0")
                kind = header.split(b" ", 1)[0]
                if kind.decode() not in KINDS or object_id(kind.decode(), body) != sha:
                    continue
                streams.append(OStream(bytes.fromhex(sha), kind, len(body), io.BytesIO(body)))
            if not streams:
                continue
            entity = PackEntity.create(streams, str(pack_dir), object_count=len(streams))
            # gitdb names them pack-b'<hex>'.pack (a bytes repr): git's name, index first
            named = pack_dir / f"pack-{entity.pack().checksum().hex()}"
            for path, suffix in ((entity.index().path(), ".idx"), (entity.pack().path(), ".pack")):
                os.chmod(path, 0o444)
                os.replace(path, named.with_suffix(suffix))
            for stream in streams:
                sha = stream.hexsha.decode()
                with contextlib.suppress(OSError):
                    os.unlink(self.objects / sha[:2] / sha[2:])
            moved += len(streams)
        self._packs(refresh=True)
        return moved
