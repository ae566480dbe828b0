"""Many workspace files hashed into one new pack, in a child process (a big first walk).

Hashing 100,000 small files is interpreter work: per file a stat, an open, a read, a hash
and a deflate; then a tree per directory and the pack's index. Done on threads of the
server's process it held the GIL for seconds against the event loop, so a turn's edit during
the first walk waited for the interpreter at each of its system calls (issue 33: first edits
of 100-400 ms against 10-20 ms). ``pack_files`` runs ``python -m
openprogram_lsp.store.gitobj.filepack`` instead, which does all of that (on worker threads of
its own, file reads and zlib releasing its GIL) and answers with the new tree, what it did not
record, the non-default permission bits and the private index's new entries; the calling
thread only reads its progress lines and that answer. Where no child can be started (no
interpreter path, a failed start) the same work runs in process, as before.

The child's protocol, on its stdout: one ``<done> <total>`` line per ``PROGRESS_EVERY`` files,
then ``R <json bytes> <index bytes>`` and those two blocks. Its input: the arguments as one
JSON value in argv, the paths on stdin, each ended by a NUL.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import signal
import stat
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.store.gitobj.odb import ObjectDB
from openprogram_lsp.store.gitobj.packwrite import PackWriter, pack_record
from openprogram_lsp.store.gitobj.trees import Leaf, TreeConflict, update_tree

log = logging.getLogger(__name__)

CHUNK_FILES = 128
"""Files per worker batch."""
KEEP_BYTES = 256 << 10
"""Files above this size are read by the packing thread, so batches in flight stay small."""
PROGRESS_EVERY = 1000
"""Files between progress reports."""
NICE = 10
"""How much the child lowers its own CPU priority: on a busy machine the server's event loop
(a turn's edit) runs before its hashing."""
EXEC, PLAIN, LINK = "100755", "100644", "120000"
ZERO_SHA = "0" * 40

Progress = Callable[[int, int], None]
"""Called with (files done, files in all) as the pack fills."""


@dataclass(slots=True)
class Packed:
    """What a packing found: ``tree`` None when the caller's general path must run instead (a
    directory among the paths, a file/directory swap; with a base tree, anything not a file)."""

    tree: str | None
    odd: dict[str, str] = field(default_factory=dict)
    """Paths not recorded as files, by kind: gone, other (a socket or fifo), nested (a
    directory holding ``.git``), large, unreadable, dir."""
    perms: dict[str, int] = field(default_factory=dict)
    """Permission bits of recorded regular files that differ from their mode's default."""
    index_info: bytes = b""
    """The new index entries, as ``git update-index -z --index-info`` reads them."""


@dataclass(slots=True)
class _Hashed:
    path: str
    kind: str  # file, or one of Packed.odd's kinds
    leaf: Leaf = None
    binsha: bytes = b""
    record: bytes = b""  # empty for a file too big to keep in a worker's batch
    perm: int | None = None  # permission bits of a regular file


def _hash_one(root: str, path: str, limit: int, keep: int) -> _Hashed:
    full = os.path.join(root, path)
    try:
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            mode, perm, data = LINK, None, os.fsencode(os.readlink(full))
        elif stat.S_ISREG(st.st_mode):
            if st.st_size > limit:
                return _Hashed(path, "large")
            if st.st_size > keep:
                return _Hashed(path, "file")  # the packing thread reads it (bounded memory)
            mode = EXEC if st.st_mode & 0o100 else PLAIN
            perm = stat.S_IMODE(st.st_mode)
            got = _read_regular(full, limit)
            if isinstance(got, str):
                return _Hashed(path, got)
            data = got
        elif stat.S_ISDIR(st.st_mode):
            nested = os.path.lexists(os.path.join(full, ".git"))
            return _Hashed(path, "nested" if nested else "dir")
        else:
            return _Hashed(path, "other")
    except (FileNotFoundError, NotADirectoryError):
        return _Hashed(path, "gone")
    except PermissionError:
        return _Hashed(path, "unreadable")
    binsha, record = pack_record("blob", data)
    return _Hashed(path, "file", (mode, binsha.hex()), binsha, record, perm)


def _read_regular(full: str, limit: int) -> bytes | str:
    """The bytes of a file the walk saw as a regular one, or the kind it is now: another
    process may have put a fifo (whose open would wait forever), a symlink or a bigger file
    in its place since (``other``, ``large``); the walk after this one records it."""
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink now
            return "other"
        raise
    with open(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "other"
        # sized by the file: ``read(limit + 1)`` allocated the limit for every file, a fresh
        # mapping each time in the hashing child (two thirds of a 100,000-file walk's time
        # went to the kernel)
        data = fh.read(min(st.st_size, limit) + 1)
        if len(data) > st.st_size:  # it grew since: on up to the limit
            data += fh.read(limit + 1 - len(data))
    return "large" if len(data) > limit else data


def _workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def _hashed(root: str, files: list[str], limit: int) -> Iterator[_Hashed]:
    """Every path hashed by the workers, in order, with a bounded number of batches in flight
    (files above ``KEEP_BYTES`` are read here, one at a time)."""
    workers = _workers()

    def batch(chunk: list[str]) -> list[_Hashed]:
        return [_hash_one(root, p, limit, KEEP_BYTES) for p in chunk]

    def finish(items: list[_Hashed]) -> Iterator[_Hashed]:
        for item in items:
            yield _hash_one(root, item.path, limit, limit) \
                if item.kind == "file" and item.leaf is None else item

    with ThreadPoolExecutor(workers, thread_name_prefix="checkpoint-hash") as pool:
        pending: deque[Future[list[_Hashed]]] = deque()
        try:
            for start in range(0, len(files), CHUNK_FILES):
                pending.append(pool.submit(batch, files[start:start + CHUNK_FILES]))
                while len(pending) > 2 * workers:
                    yield from finish(pending.popleft().result())
            while pending:
                yield from finish(pending.popleft().result())
        finally:
            for future in pending:
                future.cancel()


def pack_here(odb: ObjectDB, root: str, base: str | None, files: list[str], limit: int,
              defaults: dict[str, int], progress: Progress | None = None) -> Packed:
    """Hash ``files`` (workspace paths, sorted) into one new pack of ``odb`` with the tree
    ``base`` updated by them, in this process. ``defaults``: the permission bits each git
    mode gets by default (others are returned in ``perms``)."""
    leaves: dict[str, Leaf] = {}
    packed = Packed(None)
    pack = PackWriter(odb)
    try:
        for done, item in enumerate(_hashed(root, files, limit), 1):
            if item.kind == "file":
                assert item.leaf is not None
                leaves[item.path] = item.leaf
                pack.add_record(item.binsha, item.record)
                if item.perm is not None and item.perm != defaults.get(item.leaf[0]):
                    packed.perms[item.path] = item.perm
            else:
                packed.odd[item.path] = item.kind
                if item.kind in ("gone", "other"):
                    leaves[item.path] = None
                elif item.kind == "dir" or base is not None:
                    pack.abort()
                    return packed
            if progress is not None and (done % PROGRESS_EVERY == 0 or done == len(files)):
                progress(done, len(files))
        packed.tree = update_tree(pack, base, leaves)
        pack.finish()
    except TreeConflict:
        pack.abort()
        packed.tree = None
        return packed
    except BaseException:
        pack.abort()
        raise
    packed.index_info = b"".join(
        (f"0 {ZERO_SHA}" if leaf is None else f"{leaf[0]} {leaf[1]}").encode()
        + b"\t" + path.encode("utf-8", "surrogateescape") + b"\0"
        for path, leaf in leaves.items())
    return packed


class _Unavailable(Exception):
    """No child process could do it (the caller packs in process)."""


def pack_files(odb: ObjectDB, root: str, base: str | None, files: list[str], limit: int,
               defaults: dict[str, int], progress: Progress | None = None) -> Packed:
    """``pack_here`` in a child process (see the module's docstring), else in process. An
    exception raised by ``progress`` stops the child (its pack is dropped) and is raised."""
    try:
        return _in_child(odb, root, base, files, limit, defaults, progress)
    except _Unavailable as exc:
        log.warning("hashing %d files in process: %s", len(files), exc)
        return pack_here(odb, root, base, files, limit, defaults, progress)


def _in_child(odb: ObjectDB, root: str, base: str | None, files: list[str], limit: int,
              defaults: dict[str, int], progress: Progress | None) -> Packed:
    args = json.dumps({"git_dir": str(odb.git_dir), "root": root, "base": base,
                       "limit": limit, "defaults": defaults})
    package = str(Path(__file__).resolve().parents[3])  # where openprogram_lsp is imported from
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package, env.get("PYTHONPATH")) if p)
    if not sys.executable:
        raise _Unavailable("no interpreter path")
    with tempfile.TemporaryFile() as errors:  # (a pipe left unread could fill up)
        try:
            # -P and a cwd of our own: ``-m`` would put the current directory (often the
            # workspace, whose files may be hostile) first on the module path
            proc = subprocess.Popen([sys.executable, "-P", "-m", __name__, args], env=env,
                                    cwd=odb.git_dir, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=errors)
        except OSError as exc:
            raise _Unavailable(f"cannot start the hashing process: {exc}") from None
        return _answer(proc, odb, files, progress, errors)


def _answer(proc: subprocess.Popen[bytes], odb: ObjectDB, files: list[str],
            progress: Progress | None, errors: Any) -> Packed:
    """Feed the child its paths, relay its progress, read its answer."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        try:
            proc.stdin.write(b"".join(p.encode("utf-8", "surrogateescape") + b"\0"
                                      for p in files))
            proc.stdin.close()
        except BrokenPipeError:
            pass  # it ended at once: said below
        while line := proc.stdout.readline():
            if line.startswith(b"R "):
                meta_size, info_size = map(int, line.split()[1:])
                meta = json.loads(proc.stdout.read(meta_size))
                info = proc.stdout.read(info_size)
                if len(info) != info_size or proc.wait() != 0:
                    break
                odb.refresh()
                return Packed(meta["tree"], meta["odd"], meta["perms"], info)
            if progress is not None:
                done, total = map(int, line.split())
                progress(done, total)
        proc.wait()
        errors.seek(0)
        error = errors.read().decode("utf-8", "replace").strip().splitlines()
        raise _Unavailable(f"the hashing process failed ({proc.returncode}): "
                           f"{error[-1] if error else 'no message'}")
    finally:
        if proc.poll() is None:  # stopped by progress (a cancel): its pack is dropped
            proc.terminate()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def _main() -> None:
    """The child: arguments in argv, paths on stdin; progress and the answer on stdout."""

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(1)  # unwinds through pack_here, which drops its pack

    signal.signal(signal.SIGTERM, stop)
    with contextlib.suppress(OSError):  # the editor's requests first, wherever the CPU is short
        os.nice(NICE)
    args = json.loads(sys.argv[1])
    files = [p.decode("utf-8", "surrogateescape")
             for p in sys.stdin.buffer.read().split(b"\0") if p]
    out = sys.stdout.buffer

    def report(done: int, total: int) -> None:
        out.write(b"%d %d\n" % (done, total))
        out.flush()

    packed = pack_here(ObjectDB(Path(args["git_dir"])), args["root"], args["base"], files,
                       args["limit"], args["defaults"], report)
    meta = json.dumps({"tree": packed.tree, "odd": packed.odd, "perms": packed.perms}).encode()
    out.write(b"R %d %d\n" % (len(meta), len(packed.index_info)) + meta + packed.index_info)
    out.flush()


if __name__ == "__main__":
    _main()
