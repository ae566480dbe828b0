"""Reading git objects of the private store: loose objects in Python, anything else via git."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from dataclasses import dataclass

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.store.checkpoints.shadow import ShadowRepo

TREE_MODE = "40000"
GITLINK_MODE = "160000"


@dataclass(frozen=True, slots=True)
class TreeChange:
    """One path that differs between two trees."""

    status: str  # A, D, M or T
    path: str
    old_mode: str
    new_mode: str


def read_object(repo: ShadowRepo, sha: str) -> tuple[str, bytes]:
    """(type, body) of an object: a loose file decompressed here, else ``git cat-file``."""
    path = repo.git_dir / "objects" / sha[:2] / sha[2:]
    try:
        raw = zlib.decompress(path.read_bytes())
    except (OSError, zlib.error):
        kind = repo.git(["cat-file", "-t", sha]).decode().strip()
        return kind, repo.git(["cat-file", kind, sha])
    header, _, body = raw.partition(b"\0")
    return header.split(b" ", 1)[0].decode(), body


def commit_tree(repo: ShadowRepo, commit: str) -> str:
    """The tree a commit points at."""
    kind, body = read_object(repo, commit)
    if kind != "commit" or not body.startswith(b"tree "):
        raise CheckpointError(f"{commit} is not a commit")
    return body[5:45].decode()


def read_tree(repo: ShadowRepo, sha: str) -> dict[str, tuple[str, str]]:
    """name -> (mode, sha) of a tree object."""
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


def _all(repo: ShadowRepo, sha: str, prefix: str, status: str, old: bool,
         out: list[TreeChange]) -> None:
    for name, (mode, child) in sorted(read_tree(repo, sha).items()):
        path = prefix + name
        if mode == TREE_MODE:
            _all(repo, child, path + "/", status, old, out)
        else:
            out.append(TreeChange(status, path, mode if old else "000000",
                                  "000000" if old else mode))


def diff_trees(repo: ShadowRepo, old: str | None, new: str, prefix: str = "") -> list[TreeChange]:
    """Files that differ between two trees (``old`` None: everything is added)."""
    out: list[TreeChange] = []
    if old is None:
        _all(repo, new, prefix, "A", False, out)
        return out
    if old == new:
        return out
    a, b = read_tree(repo, old), read_tree(repo, new)
    for name in sorted(a.keys() | b.keys()):
        path = prefix + name
        before, after = a.get(name), b.get(name)
        if before == after:
            continue
        if before is not None and after is not None and before[0] == after[0] == TREE_MODE:
            out += diff_trees(repo, before[1], after[1], path + "/")
            continue
        if before is not None:
            if before[0] == TREE_MODE:
                _all(repo, before[1], path + "/", "D", True, out)
            elif after is None or after[0] == TREE_MODE:
                out.append(TreeChange("D", path, before[0], "000000"))
        if after is not None:
            if after[0] == TREE_MODE:
                _all(repo, after[1], path + "/", "A", False, out)
            elif before is None or before[0] == TREE_MODE:
                out.append(TreeChange("A", path, "000000", after[0]))
            else:
                link = "120000"
                status = "T" if (before[0] == link) != (after[0] == link) else "M"
                out.append(TreeChange(status, path, before[0], after[0]))
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
    return write_object(repo, "commit", "\n".join(lines).encode())
