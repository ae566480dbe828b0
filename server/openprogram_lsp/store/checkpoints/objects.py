"""Reading git objects of the private store: loose objects in Python, anything else via git."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from dataclasses import dataclass

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.store.checkpoints.packs import read_packed
from openprogram_lsp.store.checkpoints.shadow import ShadowRepo

TREE_MODE = "40000"
ZERO_SHA = "0" * 40
_TREE_CACHE_MAX = 8192
GITLINK_MODE = "160000"


@dataclass(frozen=True, slots=True)
class TreeChange:
    """One path that differs between two trees."""

    status: str  # A, D, M or T
    path: str
    old_mode: str
    new_mode: str
    old_sha: str = ZERO_SHA
    new_sha: str = ZERO_SHA


def read_object(repo: ShadowRepo, sha: str) -> tuple[str, bytes]:
    """(type, body) of an object: a loose file decompressed here, else ``git cat-file``."""
    path = repo.git_dir / "objects" / sha[:2] / sha[2:]
    try:
        raw = zlib.decompress(path.read_bytes())
    except (OSError, zlib.error):  # packed: read whole objects here, deltas via git
        packed = read_packed(repo.git_dir, sha)
        if packed is not None:
            return packed
        out = repo.git(["cat-file", "--batch"], input=sha.encode() + b"\n")
        header, _, rest = out.partition(b"\n")
        fields = header.decode().split()
        if len(fields) < 3 or fields[1] == "missing":
            raise CheckpointError(f"checkpoint store is missing object {sha}") from None
        return fields[1], rest[:int(fields[2])]
    header, _, body = raw.partition(b"\0")
    return header.split(b" ", 1)[0].decode(), body


def commit_tree(repo: ShadowRepo, commit: str) -> str:
    """The tree a commit points at."""
    kind, body = read_object(repo, commit)
    if kind != "commit" or not body.startswith(b"tree "):
        raise CheckpointError(f"{commit} is not a commit")
    return body[5:45].decode()


_trees: dict[str, dict[str, tuple[str, str]]] = {}


def read_tree(repo: ShadowRepo, sha: str) -> dict[str, tuple[str, str]]:
    """name -> (mode, sha) of a tree object (trees are immutable, so they are cached)."""
    cached = _trees.get(sha)
    if cached is not None:
        return cached
    entries = _parse_tree(repo, sha)
    if len(_trees) >= _TREE_CACHE_MAX:
        _trees.clear()
    _trees[sha] = entries
    return entries


def _parse_tree(repo: ShadowRepo, sha: str) -> dict[str, tuple[str, str]]:
    kind, body = read_object(repo, sha)
    if kind != "tree":
        raise CheckpointError(f"{sha} is not a tree")
    out: dict[str, tuple[str, str]] = {}
    pos = 0
    while pos < len(body):
        space = body.index(b" ", pos)
        nul = body.index(b"\0", space)
        mode = body[pos:space].decode()
        name = body[space + 1:nul].decode("utf-8", "surrogateescape")
        out[name] = (mode, body[nul + 1:nul + 21].hex())
        pos = nul + 21
    return out


Wanted = tuple[str, ...] | None


def _selected(path: str, wanted: Wanted) -> bool:
    return wanted is None or any(path == w or path.startswith(w + "/") for w in wanted)


def _enter(directory: str, wanted: Wanted) -> bool:
    return wanted is None or any(
        w == directory or w.startswith(directory + "/") or directory.startswith(w + "/")
        for w in wanted)


def _all(repo: ShadowRepo, sha: str, prefix: str, status: str, old: bool, wanted: Wanted,
         out: list[TreeChange]) -> None:
    for name, (mode, child) in sorted(read_tree(repo, sha).items()):
        path = prefix + name
        if mode == TREE_MODE:
            if _enter(path, wanted):
                _all(repo, child, path + "/", status, old, wanted, out)
        elif _selected(path, wanted):
            out.append(TreeChange(status, path, mode if old else "000000",
                                  "000000" if old else mode, child if old else ZERO_SHA,
                                  ZERO_SHA if old else child))


def diff_trees(repo: ShadowRepo, old: str | None, new: str, prefix: str = "",
               wanted: Wanted = None) -> list[TreeChange]:
    """Files that differ between two trees (``old`` None: everything is added), optionally
    only those equal to or under the ``wanted`` paths."""
    out: list[TreeChange] = []
    if old is None:
        _all(repo, new, prefix, "A", False, wanted, out)
        return out
    if old == new:
        return out
    a, b = read_tree(repo, old), read_tree(repo, new)
    for name in sorted(a.keys() | b.keys()):
        path = prefix + name
        before, after = a.get(name), b.get(name)
        if before == after:
            continue
        is_dir = (before is not None and before[0] == TREE_MODE) or (
            after is not None and after[0] == TREE_MODE)
        if not (_enter(path, wanted) if is_dir else _selected(path, wanted)):
            continue
        if before is not None and after is not None and before[0] == after[0] == TREE_MODE:
            out += diff_trees(repo, before[1], after[1], path + "/", wanted)
            continue
        if before is not None:
            if before[0] == TREE_MODE:
                _all(repo, before[1], path + "/", "D", True, wanted, out)
            elif (after is None or after[0] == TREE_MODE) and _selected(path, wanted):
                out.append(TreeChange("D", path, before[0], "000000", before[1]))
        if after is not None:
            if after[0] == TREE_MODE:
                _all(repo, after[1], path + "/", "A", False, wanted, out)
            elif before is not None and before[0] != TREE_MODE:
                link = "120000"
                status = "T" if (before[0] == link) != (after[0] == link) else "M"
                out.append(TreeChange(status, path, before[0], after[0], before[1], after[1]))
            elif _selected(path, wanted):
                out.append(TreeChange("A", path, "000000", after[0], ZERO_SHA, after[1]))
    return out


def lookup(repo: ShadowRepo, tree: str, path: str) -> tuple[str, str] | None:
    """(mode, sha) of a path in a tree, or None."""
    parts = path.split("/")
    current = tree
    for n, part in enumerate(parts):
        entry = read_tree(repo, current).get(part)
        if entry is None:
            return None
        if n == len(parts) - 1:
            return entry
        if entry[0] != TREE_MODE:
            return None
        current = entry[1]
    return None


def blob_id(data: bytes) -> str:
    """The object id git gives a blob with this content."""
    return hashlib.sha1(f"blob {len(data)}".encode() + b"\0" + data).hexdigest()


def read_blobs(repo: ShadowRepo, shas: list[str]) -> dict[str, bytes]:
    """Blob contents: loose ones read here, the rest with one ``git cat-file --batch``."""
    out: dict[str, bytes] = {}
    rest = []
    for sha in dict.fromkeys(shas):
        path = repo.git_dir / "objects" / sha[:2] / sha[2:]
        try:
            raw = zlib.decompress(path.read_bytes())
        except (OSError, zlib.error):
            packed = read_packed(repo.git_dir, sha)
            if packed is None:
                rest.append(sha)
            else:
                out[sha] = packed[1]
            continue
        out[sha] = raw.partition(b"\0")[2]
    if rest:
        out.update(repo.read_blobs(rest))
    return out


def write_object(repo: ShadowRepo, kind: str, body: bytes) -> str:
    """Store a loose object (as git would) and return its id."""
    data = f"{kind} {len(body)}".encode() + b"\0" + body
    sha = hashlib.sha1(data).hexdigest()
    path = repo.git_dir / "objects" / sha[:2] / sha[2:]
    if path.exists():
        return sha
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="tmp_obj_")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(zlib.compress(data, 1))
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return sha


def write_commit(repo: ShadowRepo, tree: str, parent: str | None, message: str,
                 epoch: int) -> str:
    """Write a commit object for a tree, with the store's fixed identity."""
    who = f"openprogram-lsp <openprogram-lsp@localhost> {epoch} +0000"
    lines = [f"tree {tree}", *([f"parent {parent}"] if parent else []),
             f"author {who}", f"committer {who}", "", message]
    # "replace": a message holding lone surrogates (odd bytes in a request) still commits
    return write_object(repo, "commit", "\n".join(lines).encode("utf-8", "replace"))
