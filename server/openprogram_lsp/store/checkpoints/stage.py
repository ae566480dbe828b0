"""Bringing the private index up to date: the whole tree, or only paths known to have changed."""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterable

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.store.checkpoints.shadow import EMPTY_TREE, ShadowRepo

Change = tuple[str, str]  # (status letter A/M/D/T, path)


def _nul(paths: Iterable[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


class Stager:
    """Stages workspace changes into the private index, skipping nested repos and big files."""

    def __init__(self, repo: ShadowRepo) -> None:
        self.repo = repo

    # -- scans ------------------------------------------------------------------------------

    def full(self) -> None:
        """Find every changed path with one ``git status`` walk and stage those."""
        self._recheck_state()
        self.repo.write_excludes()
        self._stage_scanned(None)

    def paths(self, paths: Iterable[str], *, scanned: bool = False) -> None:
        """Stage only the given workspace-relative paths (files or directories).

        ``scanned`` paths come from ``git status``: a directory among them is a tracked file
        that became a directory, so its old entry is removed rather than scanned again.
        """
        add: list[str] = []
        remove: list[str] = []
        dirs: list[str] = []
        changed = False
        for path in sorted(set(paths)):
            if self._in_nested(path):
                continue
            full = os.path.join(self.repo.workspace, path)
            try:
                st = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                remove.append(path)
                continue
            if stat.S_ISDIR(st.st_mode):
                if os.path.lexists(os.path.join(full, ".git")):
                    self.repo.nested.add(path)
                    remove.append(path)
                    changed = True
                elif scanned:
                    remove.append(path)
                else:
                    dirs.append(path)
            elif stat.S_ISREG(st.st_mode) and st.st_size > self.repo.config.max_file_bytes:
                changed |= path not in self.repo.large
                self.repo.large.add(path)
                remove.append(path)
            else:
                add.append(path)
        if changed:
            self.repo.save_state()
            self.repo.write_excludes()
        self._remove(remove)
        self._add(add)
        if dirs:
            self._stage_scanned(dirs)

    # -- pieces ----------------------------------------------------------------------------

    def _stage_scanned(self, pathspecs: list[str] | None) -> None:
        args = ["status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all",
                "--ignore-submodules=all"]
        if pathspecs:
            args += ["--", *pathspecs]
        out = self.repo.git(args)
        todo: list[str] = []
        nested_found = False
        for entry in out.split(b"\0"):
            if len(entry) < 4:
                continue
            xy, path = _decode(entry[:2]), _decode(entry[3:])
            if path.endswith("/"):  # an untracked directory git would not enter: a nested repo
                self.repo.nested.add(path.rstrip("/"))
                nested_found = True
            elif xy == "??" or xy[1] != " ":
                todo.append(path)
        if nested_found:
            self.repo.save_state()
            self.repo.write_excludes()
        if todo:
            self.paths(todo, scanned=True)

    def _add(self, paths: list[str]) -> None:
        if not paths:
            return
        rc, _, err = self.repo.git_rc(
            ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], input=_nul(paths))
        if rc == 0 or (rc == 1 and "ignored by one of your .gitignore" in err
                       and "fatal:" not in err and "error:" not in err):
            return
        raise CheckpointError(f"git add failed ({rc}): {err.strip()}")

    def _remove(self, paths: list[str]) -> None:
        if paths:
            self.repo.git(["rm", "-r", "-q", "--cached", "--ignore-unmatch",
                           "--pathspec-from-file=-", "--pathspec-file-nul"], input=_nul(paths))

    def _in_nested(self, path: str) -> bool:
        return any(path == n or path.startswith(n + "/") for n in self.repo.nested)

    def _recheck_state(self) -> None:
        """Forget big files that shrank or vanished and nested repos that are gone."""
        ws = self.repo.workspace
        before = (set(self.repo.large), set(self.repo.nested))
        keep_large = set()
        for path in self.repo.large:
            try:
                st = os.lstat(os.path.join(ws, path))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > self.repo.config.max_file_bytes:
                keep_large.add(path)
        self.repo.large = keep_large
        self.repo.nested = {p for p in self.repo.nested
                            if os.path.lexists(os.path.join(ws, p, ".git"))}
        if before != (self.repo.large, self.repo.nested):
            self.repo.save_state()

    # -- reading the staged result ---------------------------------------------------------

    def changes(self, parent: str | None) -> list[Change]:
        """What the index changes against a commit (or the empty tree); drops gitlinks."""
        for _ in range(3):
            out = self.repo.git(["diff-index", "--cached", "--raw", "-z", "--no-renames",
                                 parent or EMPTY_TREE])
            changes, gitlinks = parse_raw(out)
            if not gitlinks:
                return changes
            self.repo.nested.update(gitlinks)
            self.repo.save_state()
            self.repo.write_excludes()
            self._remove(gitlinks)
        raise CheckpointError("could not keep nested repositories out of the checkpoint")


def parse_raw(out: bytes) -> tuple[list[Change], list[str]]:
    """Parse ``--raw -z`` output into (status, path) pairs and the paths that are gitlinks."""
    parts = out.split(b"\0")
    changes: list[Change] = []
    gitlinks: list[str] = []
    i = 0
    while i + 1 < len(parts):
        meta, path = parts[i].decode(), _decode(parts[i + 1])
        i += 2
        if not meta.startswith(":"):
            continue
        fields = meta[1:].split()
        status = fields[4][0]
        if fields[1] == "160000" or (status == "D" and fields[0] == "160000"):
            if fields[1] == "160000":
                gitlinks.append(path)
            continue
        changes.append((status, posixpath.normpath(path)))
    return changes, gitlinks
