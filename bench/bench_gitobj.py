"""The git object layer (gitdb) against the hand-written paths it replaced, same run, A B A B.

Figures: a loose read through gitdb's stream reader vs one ``zlib.decompress`` of the file (the
fast path kept); a loose write through ``gitdb.LooseObjectDB`` vs the hand-written writer; a
packed delta read in process vs one ``git cat-file`` (what the old code started for deltas);
pack writing vs ``git repack``; many new blobs into one pack with ``PackWriter`` (right-sized
zlib windows, one index write) vs gitdb's ``PackEntity.create``.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from gitdb import IStream, LooseObjectDB, OStream
from gitdb.pack import PackEntity

from _util import interleaved, report
from openprogram_lsp.store.git import git_env
from openprogram_lsp.store.gitobj import ObjectDB
from openprogram_lsp.store.gitobj.odb import object_id
from openprogram_lsp.store.gitobj.packwrite import PackWriter


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@b",
                           *args], env=git_env(), capture_output=True, check=True).stdout


def _hand_write(objects: Path, kind: str, body: bytes) -> str:
    data = f"{kind} {len(body)}".encode() + b"\0" + body
    sha = hashlib.sha1(data).hexdigest()
    path = objects / sha[:2] / sha[2:]
    if path.exists():
        return sha
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="tmp_obj_")
    with os.fdopen(fd, "wb") as fh:
        fh.write(zlib.compress(data, 1))
    os.chmod(tmp, 0o444)
    os.replace(tmp, path)
    return sha


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "r"
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=git_env())
        for n in range(200):
            (repo / f"f{n}.txt").write_text(f"file {n}\n" * 20)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", "m")
        objects = repo / ".git" / "objects"
        odb = ObjectDB(repo / ".git")
        loose = LooseObjectDB(str(objects))
        shas = [s for s in odb.loose_ids()][:200]

        def gitdb_read() -> None:
            for sha in shas:
                loose.stream(bytes.fromhex(sha)).read()

        def zlib_read() -> None:
            for sha in shas:
                odb.read(sha)

        a, b = interleaved(gitdb_read, zlib_read, pairs=9)
        report("read 200 loose objects: gitdb stream", a, b,
               target="baseline = zlib.decompress of the file (the fast path kept)")
        counter = iter(range(10**9))

        def gitdb_write() -> None:
            for _ in range(50):
                body = f"blob {next(counter)}\n".encode() * 10
                loose.store(IStream(b"blob", len(body), io.BytesIO(body)))

        def hand_write() -> None:
            for _ in range(50):
                _hand_write(objects, "blob", f"blob {next(counter)}\n".encode() * 10)

        a, b = interleaved(gitdb_write, hand_write, pairs=9)
        report("write 50 loose blobs: gitdb LooseObjectDB", a, b,
               target="baseline = the hand-written writer it replaced")

        text = "".join(f"line {n}\n" for n in range(2000))
        for n in range(6):
            (repo / "delta.txt").write_text(text + f"v{n}\n")
            _git(repo, "add", "delta.txt")
            _git(repo, "commit", "-qm", f"v{n}")
        _git(repo, "gc", "-q", "--aggressive")
        packed = ObjectDB(repo / ".git")
        sha = _git(repo, "rev-parse", "HEAD~3:delta.txt").decode().strip()

        def in_process() -> None:
            packed.read(sha)

        def cat_file() -> None:
            subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], input=sha.encode()
                           + b"\n", capture_output=True, check=True, env=git_env())

        a, b = interleaved(in_process, cat_file, pairs=9)
        report("read one packed delta blob in process", a, b,
               target="baseline = one git cat-file --batch (the old path for deltas)")

        def fill(db: ObjectDB) -> None:
            for _ in range(500):
                db.write("blob", f"pack me {next(counter)}\n".encode() * 8)

        work = Path(tmp) / "packs"
        n = iter(range(10**6))

        def pack_here() -> None:
            db = ObjectDB(work / f"a{next(n)}")
            fill(db)
            db.pack_loose()

        def repack_git() -> None:
            git_dir = work / f"b{next(n)}"
            subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True,
                           env=git_env())
            db = ObjectDB(git_dir)
            fill(db)
            subprocess.run(["git", "--git-dir", str(git_dir), "repack", "-d", "-q"], check=True,
                           env=git_env())

        a, b = interleaved(pack_here, repack_git, pairs=7)
        report("write 500 objects and pack them in process", a, b,
               target="baseline = the same writes and one git repack -d")

        # the first checkpoint's path: many new small blobs straight into one pack
        bodies = [f"# module {i}\n".encode() + b"def f(x):\n    return x + 1\n" * 6
                  for i in range(20_000)]

        def pack_writer() -> None:
            pack = PackWriter(ObjectDB(work / f"w{next(n)}"))
            for body in bodies:
                pack.write("blob", body)
            pack.finish()

        def gitdb_pack() -> None:
            pack_dir = work / f"g{next(n)}" / "objects" / "pack"
            pack_dir.mkdir(parents=True)
            streams = (OStream(bytes.fromhex(object_id("blob", body)), b"blob", len(body),
                               io.BytesIO(body)) for body in bodies)
            PackEntity.create(streams, str(pack_dir), object_count=len(bodies))

        a, b = interleaved(pack_writer, gitdb_pack, pairs=7)
        report("pack 20,000 new small blobs: PackWriter", a, b,
               target="baseline = gitdb PackEntity.create of the same blobs")


if __name__ == "__main__":
    main()
