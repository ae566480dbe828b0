"""Git tree and commit objects: parsing, writing, updating by path, and diffing."""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from openprogram_lsp.store.gitobj.odb import ObjectDB

TREE_MODE = "40000"
GITLINK_MODE = "160000"
ZERO_SHA = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_CACHE_MAX = 8192

Entries = dict[str, tuple[str, str]]
Leaf = tuple[str, str] | None  # (mode, sha) to set, or None to delete


class ObjectStore(Protocol):
    """Where trees are read from and written to: an ``ObjectDB`` or a ``PackWriter``."""

    def read(self, sha: str) -> tuple[str, bytes]: ...

    def write(self, kind: str, body: bytes) -> str: ...


class TreeConflict(Exception):
    """A file where a directory is (or the reverse) in an update."""


@dataclass(frozen=True, slots=True)
class TreeChange:
    """One path that differs between two trees."""

    status: str  # A, D, M or T
    path: str
    old_mode: str
    new_mode: str
    old_sha: str = ZERO_SHA
    new_sha: str = ZERO_SHA


_trees: dict[str, Entries] = {}
_trees_lock = threading.Lock()


def parse_tree(body: bytes) -> Entries:
    """name -> (mode, sha) of a tree object's body."""
    out: Entries = {}
    pos = 0
    while pos < len(body):
        space = body.index(b" ", pos)
        nul = body.index(b"\0", space)
        name = body[space + 1:nul].decode("utf-8", "surrogateescape")
        out[name] = (body[pos:space].decode(), body[nul + 1:nul + 21].hex())
        pos = nul + 21
    return out


def format_tree(entries: Entries) -> bytes:
    """The body of a tree object, entries in git's order (directories sort as ``name/``)."""
    rows = [(name.encode("utf-8", "surrogateescape"), mode, sha)
            for name, (mode, sha) in entries.items()]
    rows.sort(key=lambda r: r[0] + b"/" if r[1] == TREE_MODE else r[0])
    return b"".join(b"%s %s\0%s" % (mode.encode(), raw, bytes.fromhex(sha))
                    for raw, mode, sha in rows)


def read_tree(odb: ObjectStore, sha: str) -> Entries:
    """The entries of a tree (trees are immutable, so they are cached by id)."""
    cached = _trees.get(sha)
    if cached is not None:
        return cached
    kind, body = odb.read(sha)
    if kind != "tree":
        raise ValueError(f"{sha} is not a tree")
    entries = parse_tree(body)
    with _trees_lock:
        if len(_trees) >= _CACHE_MAX:
            _trees.clear()
        _trees[sha] = entries
    return entries


def write_tree(odb: ObjectStore, entries: Entries) -> str:
    """Store a tree and return its id."""
    sha = odb.write("tree", format_tree(entries))
    with _trees_lock:
        if len(_trees) < _CACHE_MAX:
            _trees[sha] = dict(entries)
    return sha


def update_tree(odb: ObjectStore, base: str | None, changes: dict[str, Leaf]) -> str:
    """A new tree: ``base`` with each path set to its leaf (None removes it).

    Only the trees on the changed paths are read and written, so the cost follows the change,
    not the size of the tree. Raises TreeConflict when a file would replace a directory (or
    the reverse) on the way. Directories left empty disappear, as in git.
    """
    trie: dict[str, Any] = {}
    for path, leaf in changes.items():
        node = trie
        parts = path.split("/")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise TreeConflict(path)
            node = child
        if isinstance(node.get(parts[-1]), dict):
            raise TreeConflict(path)
        node[parts[-1]] = leaf
    return _rebuild(odb, base, trie) or write_tree(odb, {})


Row = tuple[bytes, bytes]  # (git's sort key of an entry, the entry as the tree holds it)
_rows: dict[str, list[Row]] = {}  # rows of trees this process wrote, in git's order


def _row(name: str, mode: str, sha: str) -> Row:
    raw = name.encode("utf-8", "surrogateescape")
    return (raw + b"/" if mode == TREE_MODE else raw,
            b"%s %s\0%s" % (mode.encode(), raw, bytes.fromhex(sha)))


def _patched(rows: list[Row], base: Entries, entries: Entries, names: list[str]) -> list[Row]:
    """``rows`` (the rows of ``base``) with the entries named changed to what ``entries``
    holds: the tree's body is not built again from every entry (a session's leaf tree holds
    up to 200 files and a turn changes a few)."""
    out = list(rows)
    for name in names:
        old, new = base.get(name), entries.get(name)
        if old == new:
            continue
        if old is not None:
            key = _row(name, *old)[0]
            at = bisect.bisect_left(out, key, key=lambda r: r[0])
            del out[at]
        if new is not None:
            row = _row(name, *new)
            bisect.insort(out, row, key=lambda r: r[0])
    return out


def _write_rows(odb: ObjectStore, rows: list[Row], entries: Entries) -> str:
    sha = odb.write("tree", b"".join(r[1] for r in rows))
    with _trees_lock:
        if len(_trees) < _CACHE_MAX:
            _trees[sha] = dict(entries)
        if len(_rows) >= _CACHE_MAX // 8:
            _rows.clear()
        _rows[sha] = rows
    return sha


def _rebuild(odb: ObjectStore, tree: str | None, trie: dict[str, Any]) -> str | None:
    base = read_tree(odb, tree) if tree else {}
    entries = dict(base)
    for name, sub in trie.items():
        current = entries.get(name)
        if isinstance(sub, dict):
            if current is not None and current[0] != TREE_MODE:
                raise TreeConflict(name)
            new = _rebuild(odb, current[1] if current else None, sub)
            if new is None:
                entries.pop(name, None)
            else:
                entries[name] = (TREE_MODE, new)
        elif sub is None:
            entries.pop(name, None)
        else:
            if current is not None and current[0] == TREE_MODE:
                raise TreeConflict(name)
            entries[name] = sub
    if not entries:
        return None
    if tree and all(entries.get(name) == base.get(name) for name in trie):
        return tree  # nothing changed here (a path set to what it holds, a missing one removed)
    rows = _rows.get(tree) if tree else None
    if rows is None:
        rows = sorted(_row(name, mode, sha) for name, (mode, sha) in entries.items())
    else:
        rows = _patched(rows, base, entries, list(trie))
    return _write_rows(odb, rows, entries)


def lookup(odb: ObjectDB, tree: str, path: str) -> tuple[str, str] | None:
    """(mode, sha) of a path in a tree, or None."""
    parts = path.split("/")
    current = tree
    for n, part in enumerate(parts):
        entry = read_tree(odb, current).get(part)
        if entry is None:
            return None
        if n == len(parts) - 1:
            return entry
        if entry[0] != TREE_MODE:
            return None
        current = entry[1]
    return None


Wanted = tuple[str, ...] | None


def _selected(path: str, wanted: Wanted) -> bool:
    return wanted is None or any(path == w or path.startswith(w + "/") for w in wanted)


def _enter(directory: str, wanted: Wanted) -> bool:
    return wanted is None or any(
        w == directory or w.startswith(directory + "/") or directory.startswith(w + "/")
        for w in wanted)


def _all(odb: ObjectDB, sha: str, prefix: str, status: str, old: bool, wanted: Wanted,
         out: list[TreeChange]) -> None:
    for name, (mode, child) in sorted(read_tree(odb, sha).items()):
        path = prefix + name
        if mode == TREE_MODE:
            if _enter(path, wanted):
                _all(odb, child, path + "/", status, old, wanted, out)
        elif _selected(path, wanted):
            out.append(TreeChange(status, path, mode if old else "000000",
                                  "000000" if old else mode, child if old else ZERO_SHA,
                                  ZERO_SHA if old else child))


def diff_trees(odb: ObjectDB, old: str | None, new: str, prefix: str = "",
               wanted: Wanted = None) -> list[TreeChange]:
    """Files that differ between two trees (``old`` None: everything is added), optionally
    only those equal to or under the ``wanted`` paths. Equal subtrees are skipped unread."""
    out: list[TreeChange] = []
    if old is None:
        _all(odb, new, prefix, "A", False, wanted, out)
        return out
    if old == new:
        return out
    a, b = read_tree(odb, old), read_tree(odb, new)
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
            out += diff_trees(odb, before[1], after[1], path + "/", wanted)
            continue
        if before is not None:
            if before[0] == TREE_MODE:
                _all(odb, before[1], path + "/", "D", True, wanted, out)
            elif (after is None or after[0] == TREE_MODE) and _selected(path, wanted):
                out.append(TreeChange("D", path, before[0], "000000", before[1]))
        if after is not None:
            if after[0] == TREE_MODE:
                _all(odb, after[1], path + "/", "A", False, wanted, out)
            elif before is not None and before[0] != TREE_MODE:
                link = "120000"
                status = "T" if (before[0] == link) != (after[0] == link) else "M"
                out.append(TreeChange(status, path, before[0], after[0], before[1], after[1]))
            elif _selected(path, wanted):
                out.append(TreeChange("A", path, "000000", after[0], ZERO_SHA, after[1]))
    return out


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """The fields of a commit object the stores use."""

    tree: str
    parents: tuple[str, ...]
    message: str


def commit_body(tree: str, parents: list[str], message: str, epoch: int,
                who: str = "openprogram-lsp <openprogram-lsp@localhost>") -> bytes:
    """The body of a commit object with one identity as author and committer."""
    stamp = f"{who} {epoch} +0000"
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents),
             f"author {stamp}", f"committer {stamp}", "", message]
    # "replace": a message holding lone surrogates (odd bytes in a request) still commits
    return "\n".join(lines).encode("utf-8", "replace")


def write_commit(odb: ObjectStore, tree: str, parents: list[str], message: str,
                 epoch: int) -> str:
    """Store a commit object and return its id."""
    return odb.write("commit", commit_body(tree, parents, message, epoch))


def read_commit(odb: ObjectDB, sha: str) -> CommitInfo:
    """Tree, parents and message of a commit; ValueError if the object is not one."""
    kind, body = odb.read(sha)
    if kind != "commit":
        raise ValueError(f"{sha} is not a commit")
    header, _, message = body.partition(b"\n\n")
    tree = ""
    parents: list[str] = []
    for line in header.split(b"\n"):
        if line.startswith(b"tree "):
            tree = line[5:].decode()
        elif line.startswith(b"parent "):
            parents.append(line[7:].decode())
    return CommitInfo(tree, tuple(parents), message.decode("utf-8", "replace"))
