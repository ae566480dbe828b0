"""Bringing the private index up to date: the whole tree, or only paths known to have changed.

Known paths go through ``git update-index`` (it hashes exactly the named files); new files are
first checked against the ignore rules with ``git check-ignore``; directories and full scans use
one ``git status`` walk, which the index's stat cache keeps cheap (the untracked cache is off:
it trusts directory mtimes, which a fast sequence of writes within one clock tick defeats).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.core.fdfs import writing
from openprogram_lsp.store.checkpoints.extras import UNREADABLE
from openprogram_lsp.store.checkpoints.objects import GITLINK_MODE, ZERO_SHA, TreeChange, diff_trees
from openprogram_lsp.store.checkpoints.shadow import ShadowRepo

# A full scan with more changed paths than this is hashed in process into one pack
# (``bulk.bulk_stage``) instead of one loose object per file.
BULK_ADD = 2000


def _nul(paths: Iterable[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


class TooManyFiles(CheckpointError):
    """A walk found more files than ``max_files``: checkpoints stay off for this process."""


@dataclass(slots=True)
class Plan:
    files: list[str] = field(default_factory=list)    # to hash (exist, regular or symlink)
    missing: list[str] = field(default_factory=list)  # gone from disk: drop from the index
    drop: list[str] = field(default_factory=list)     # on disk but not to be recorded
    dirs: list[str] = field(default_factory=list)     # to walk with git status
    sizes: dict[str, int] = field(default_factory=dict)  # of ``files``, as lstat saw them
    state_changed: bool = False


class Stager:
    """Stages workspace changes into the private index, skipping nested repos and big files."""

    def __init__(self, repo: ShadowRepo) -> None:
        self.repo = repo
        self.tracked: set[str] | None = None  # paths in the head tree, when known
        # Index entries the fast path recorded in the head tree but has not yet written to the
        # index; written before any git command that reads the index (see ``flush``).
        self.pending: dict[str, tuple[str, str] | None] = {}

    def forget(self) -> None:
        """Drop what this process believes about the index (another process changed it).

        Pending entries are dropped, not written: they may be older than the other process's;
        the walk that follows re-stages whatever differs from the disk.
        """
        self.tracked = None
        self.pending.clear()

    def defer(self, entries: dict[str, tuple[str, str] | None]) -> None:
        """Remember index entries (mode, sha; None to remove) to write before the next git use."""
        self.pending.update(entries)

    def flush(self) -> None:
        """Write the deferred entries with one ``git update-index --index-info``."""
        if not self.pending:
            return
        lines = [f"0 {ZERO_SHA}\t{path}" if leaf is None else f"{leaf[0]} {leaf[1]}\t{path}"
                 for path, leaf in sorted(self.pending.items())]
        self.repo.git(["update-index", "-z", "--index-info"], input=_nul(lines))
        self.pending.clear()

    def refresh(self) -> None:
        """Flush, then let git fill in the stat data of entries written without it (so the
        next walk does not hash those files again)."""
        self.flush()
        rc, _out, err = self.repo.git_rc(["update-index", "-q", "--ignore-missing", "--refresh"])
        if rc not in (0, 1):
            raise CheckpointError(f"git update-index --refresh failed ({rc}): {err.strip()}")

    # -- scans ------------------------------------------------------------------------------

    def modified(self, pathspecs: Iterable[str] | None = None) -> list[str]:
        """Recorded files that differ on disk from the index (edited or deleted), by stat data
        and, where that is unsure, content: what the watcher may not have reported yet."""
        self.refresh()
        args = ["diff-files", "--name-only", "-z", "--ignore-submodules=all"]
        specs = list(pathspecs or ())
        if specs:
            args += ["--", *specs]
        return [_decode(p) for p in self.repo.git(args).split(b"\0") if p]


    def scan(self) -> list[str]:
        """Walk the tree with ``git status``; returns the paths that differ from the head (more
        than ``BULK_ADD`` of them go to ``bulk.bulk_stage``)."""
        self.flush()
        self._recheck_state()
        self.repo.write_excludes()
        todo = self._status(None)
        if len(todo) > self.repo.config.max_files:
            raise TooManyFiles(
                f"{len(todo)} files to record in {self.repo.workspace} (limit "
                f"{self.repo.config.max_files}); exclude build output or vendored trees with "
                "OPENPROGRAM_CHECKPOINT_EXCLUDES or .gitignore")
        return todo

    def paths(self, paths: Iterable[str], *, scanned: bool = False) -> None:
        """Stage only the given workspace-relative paths (files or directories).

        ``scanned`` paths come from ``git status``: a directory among them is a tracked file
        that became a directory, so its old entry is removed rather than walked again.
        """
        self.flush()
        plan = self.plan(paths, scanned=scanned)
        self.commit_state(plan)
        tracked = self._tracked()

        def under(path: str) -> set[str]:
            if path in tracked:
                return {path}
            prefix = path + "/"
            return {t for t in tracked if t.startswith(prefix)}

        gone = set().union(*(under(p) for p in plan.missing))
        dropped = set().union(*(under(p) for p in plan.drop))
        files = plan.files
        new = [] if scanned else [p for p in files if p not in tracked]  # status hides ignored
        if new:
            skip = {p for p in new if self.nested_root(p) is not None}
            skip |= self.ignored([p for p in new if p not in skip])
            files = [p for p in files if p not in skip]
        if dropped:
            self.repo.git(["update-index", "--force-remove", "-z", "--stdin"],
                          input=_nul(sorted(dropped)))
        if files or gone:
            self.repo.git(["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
                          input=_nul(files + sorted(gone)))
        tracked.difference_update(gone | dropped)
        tracked.update(files)
        for directory in plan.dirs:
            todo = self._status([directory])
            if todo:
                self.paths(todo, scanned=True)

    # -- pieces ----------------------------------------------------------------------------

    def plan(self, paths: Iterable[str], *, scanned: bool) -> Plan:
        """Sort paths into files to hash, missing ones, ones to drop and directories."""
        plan = Plan()
        limit = self.repo.config.max_file_bytes
        for path in sorted(set(paths)):
            if self.in_nested(path) or (not scanned and self.beyond_symlink(path)):
                continue
            full = os.path.join(self.repo.workspace, path)
            try:
                st = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                plan.missing.append(path)
                if path in self.repo.large:
                    self.repo.large.discard(path)
                    plan.state_changed = True
                continue
            if path in self.repo.large and self._recordable(full, st):
                # shrunk (or readable again): recorded from now on, so no longer excluded
                self.repo.large.discard(path)
                plan.state_changed = True
            if stat.S_ISDIR(st.st_mode):
                if os.path.lexists(os.path.join(full, ".git")):
                    self.repo.nested.add(path)
                    plan.drop.append(path)
                    plan.state_changed = True
                elif scanned:
                    plan.drop.append(path)
                else:
                    plan.dirs.append(path)
            elif stat.S_ISREG(st.st_mode) and st.st_size > limit:
                plan.state_changed |= path not in self.repo.large
                self.repo.large.add(path)
                self.repo.why.pop(path, None)
                plan.drop.append(path)
            elif stat.S_ISREG(st.st_mode) and not os.access(full, os.R_OK):
                plan.state_changed |= path not in self.repo.large
                self.repo.large.add(path)
                self.repo.why[path] = UNREADABLE
                plan.drop.append(path)
            elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                plan.files.append(path)
                plan.sizes[path] = st.st_size
        return plan

    def beyond_symlink(self, path: str) -> bool:
        """Whether a parent directory of the path is a symlink (git records the link only)."""
        parts = path.split("/")
        return any(os.path.islink(os.path.join(self.repo.workspace, *parts[:n]))
                   for n in range(1, len(parts)))

    def nested_root(self, path: str) -> str | None:
        """The nearest enclosing directory of a new path that is a repository (remembered)."""
        parts = path.split("/")
        for n in range(1, len(parts)):
            ancestor = "/".join(parts[:n])
            if os.path.lexists(os.path.join(self.repo.workspace, ancestor, ".git")):
                self.repo.nested.add(ancestor)
                self.repo.save_state()
                self.repo.write_excludes()
                return ancestor
        return None

    def commit_state(self, plan: Plan) -> None:
        """Persist what a plan found out (nested repositories, big files)."""
        if plan.state_changed:
            self.repo.save_state()
            self.repo.write_excludes()

    def _tracked(self) -> set[str]:
        if self.tracked is None:
            out = self.repo.git(["ls-files", "-z", "--cached"])
            self.tracked = {_decode(p) for p in out.split(b"\0") if p}
        return self.tracked

    def ignored(self, paths: list[str]) -> set[str]:
        """Which of these untracked paths the ignore rules exclude (``--no-index``: git does
        not read the index, whose size follows the workspace's, only to skip tracked paths,
        which the callers never ask about; a turn writing one new file in a 100,000-file
        workspace spent ~0.1 s here reading it)."""
        rc, out, err = self.repo.git_rc(["check-ignore", "--no-index", "-z", "--stdin"],
                                        input=_nul(paths), literal=False)
        if rc not in (0, 1):
            raise CheckpointError(f"git check-ignore failed ({rc}): {err.strip()}")
        return {_decode(p) for p in out.split(b"\0") if p}

    def _status(self, pathspecs: list[str] | None) -> list[str]:
        """Paths whose worktree or index differs from the head (untracked in, ignored out)."""
        args = ["-c", "core.untrackedCache=false",  # stores made before it was turned off
                "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all",
                "--ignore-submodules=all"]
        if pathspecs:
            args += ["--", *pathspecs]
        out = self.repo.git(args)
        todo: list[str] = []
        nested_found = False
        for entry in out.split(b"\0"):
            if len(entry) < 4:
                continue
            path = _decode(entry[3:])
            if writing(path.rpartition("/")[2]):  # a write of ours in progress: never a file
                continue  # of the workspace (listed, it is still there: it is left out)
            if path.endswith("/"):  # an untracked directory git would not enter: a nested repo
                self.repo.nested.add(path.rstrip("/"))
                nested_found = True
            else:  # changed on disk, or staged but never committed (a crash mid-checkpoint)
                todo.append(path)
        if nested_found:
            self.repo.save_state()
            self.repo.write_excludes()
        return todo

    def _recordable(self, full: str, st: os.stat_result) -> bool:
        """Whether a regular file can be recorded: not too large, and readable."""
        return st.st_size <= self.repo.config.max_file_bytes and os.access(full, os.R_OK)

    def in_nested(self, path: str) -> bool:
        """Whether a path is, or lies in, a nested repository already known."""
        return any(path == n or path.startswith(n + "/") for n in self.repo.nested)

    def _recheck_state(self) -> None:
        """Forget big files that shrank or vanished and nested repos that are gone."""
        ws = self.repo.workspace
        before = (set(self.repo.large), set(self.repo.nested))
        keep_large = set()
        for path in self.repo.large:
            full = os.path.join(ws, path)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and not self._recordable(full, st):
                keep_large.add(path)
        self.repo.large = keep_large
        self.repo.nested = {p for p in self.repo.nested
                            if os.path.lexists(os.path.join(ws, p, ".git"))}
        if before != (self.repo.large, self.repo.nested):
            self.repo.save_state()

    # -- reading the staged result ---------------------------------------------------------

    def write_tree(self, parent_tree: str | None) -> tuple[str, list[TreeChange]]:
        """Write the index as a tree; returns it and its changes against ``parent_tree``."""
        self.flush()
        for _ in range(3):
            tree = self.repo.git(["write-tree"]).decode().strip()
            if parent_tree is None:  # a root checkpoint lists no changes
                return tree, []
            changes = diff_trees(self.repo, parent_tree, tree) if parent_tree != tree else []
            gitlinks = [c.path for c in changes if c.new_mode == GITLINK_MODE]
            if not gitlinks:
                return tree, [c for c in changes if c.old_mode != GITLINK_MODE]
            self.repo.nested.update(gitlinks)
            self.repo.save_state()
            self.repo.write_excludes()
            self.repo.git(["update-index", "--force-remove", "-z", "--stdin"],
                          input=_nul(gitlinks))
            if self.tracked is not None:
                self.tracked.difference_update(gitlinks)
        raise CheckpointError("could not keep nested repositories out of the checkpoint")
