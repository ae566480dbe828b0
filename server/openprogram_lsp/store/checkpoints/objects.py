"""The checkpoint store's view of the git object layer (``store.gitobj``), errors as
CheckpointError."""

from __future__ import annotations

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.store.checkpoints.shadow import ShadowRepo
from openprogram_lsp.store.gitobj import MissingObject
from openprogram_lsp.store.gitobj import trees as _trees
from openprogram_lsp.store.gitobj.odb import object_id
from openprogram_lsp.store.gitobj.trees import GITLINK_MODE, TREE_MODE, ZERO_SHA, TreeChange

__all__ = ["GITLINK_MODE", "TREE_MODE", "ZERO_SHA", "TreeChange", "blob_id", "commit_tree",
           "diff_trees", "lookup", "read_blobs", "read_object", "read_tree", "write_commit",
           "write_object"]

Wanted = _trees.Wanted


def read_object(repo: ShadowRepo, sha: str) -> tuple[str, bytes]:
    """(type, body) of an object, loose or packed (deltas included), read in process."""
    try:
        return repo.odb.read(sha)
    except MissingObject:
        raise CheckpointError(f"checkpoint store is missing object {sha}") from None


def commit_tree(repo: ShadowRepo, commit: str) -> str:
    """The tree a commit points at."""
    kind, body = read_object(repo, commit)
    if kind != "commit" or not body.startswith(b"tree "):
        raise CheckpointError(f"{commit} is not a commit")
    return body[5:45].decode()


def read_tree(repo: ShadowRepo, sha: str) -> dict[str, tuple[str, str]]:
    """name -> (mode, sha) of a tree object (cached: trees are immutable)."""
    try:
        return _trees.read_tree(repo.odb, sha)
    except MissingObject:
        raise CheckpointError(f"checkpoint store is missing object {sha}") from None
    except ValueError:
        raise CheckpointError(f"{sha} is not a tree") from None


def diff_trees(repo: ShadowRepo, old: str | None, new: str, prefix: str = "",
               wanted: Wanted = None) -> list[TreeChange]:
    """Files that differ between two trees (``old`` None: everything is added)."""
    try:
        return _trees.diff_trees(repo.odb, old, new, prefix, wanted)
    except MissingObject as exc:
        raise CheckpointError(f"checkpoint store is missing object {exc.sha}") from None


def lookup(repo: ShadowRepo, tree: str, path: str) -> tuple[str, str] | None:
    """(mode, sha) of a path in a tree, or None."""
    try:
        return _trees.lookup(repo.odb, tree, path)
    except MissingObject as exc:
        raise CheckpointError(f"checkpoint store is missing object {exc.sha}") from None


def blob_id(data: bytes) -> str:
    """The object id git gives a blob with this content."""
    return object_id("blob", data)


def read_blobs(repo: ShadowRepo, shas: list[str]) -> dict[str, bytes]:
    """Blob contents by id, read in process."""
    return {sha: read_object(repo, sha)[1] for sha in dict.fromkeys(shas)}


def write_object(repo: ShadowRepo, kind: str, body: bytes) -> str:
    """Store a loose object and return its id."""
    return repo.odb.write(kind, body)


def write_commit(repo: ShadowRepo, tree: str, parent: str | None, message: str,
                 epoch: int) -> str:
    """Write a commit object for a tree, with the store's fixed identity."""
    return _trees.write_commit(repo.odb, tree, [parent] if parent else [], message, epoch)
