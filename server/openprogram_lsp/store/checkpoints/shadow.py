"""The private git dir, index and exclude file that hold one workspace's checkpoints."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.core.fsutil import atomic_write
from openprogram_lsp.store.checkpoints.config import CheckpointConfig
from openprogram_lsp.store.git import GitError, clear_stale_git_lock, run_git, run_git_proc
from openprogram_lsp.store.gitobj import ObjectDB
from openprogram_lsp.store.gitobj.refs import read_ref
from openprogram_lsp.store.owner import OwnerRecord, pid_alive

log = logging.getLogger(__name__)

HEAD_REF = "refs/heads/checkpoints"

# Settings stored in the private repository's own config (never the user's).
_REPO_CONFIG = (
    # off: it trusts directory mtimes, and a file added within the same timestamp tick as a
    # cached directory listing, followed by an index write of ours, was missed by a walk
    ("core.untrackedCache", "false"),
    ("index.version", "4"),
    ("core.splitIndex", "true"),
    ("core.fsmonitor", "false"),
    ("core.logAllRefUpdates", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("core.precomposeUnicode", "false"),
    ("advice.addIgnoredFile", "false"),
    ("advice.addEmbeddedRepo", "false"),
    ("status.showUntrackedFiles", "all"),
)


def workspace_key(workspace: Path) -> str:
    """A directory name for a workspace: readable prefix and a hash of its real path."""
    real = str(workspace.resolve())
    name = re.sub(r"[^A-Za-z0-9._-]", "_", workspace.resolve().name)[:40] or "root"
    return f"{name}-{hashlib.sha256(real.encode()).hexdigest()[:16]}"


def escape_pattern(path: str) -> str:
    """An anchored gitignore pattern that matches exactly one workspace path."""
    out = re.sub(r"([\\*?\[\]!#])", r"\\\1", path)
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return "/" + out


MAKING_LOCK = ".making"
"""The ``flock`` the makers of a private repository take turns on (beside ``git/``; no
``.lock`` suffix: git's own lock files end so, and a left one is a fault)."""


@contextlib.contextmanager
def _making(root: Path) -> Iterator[None]:
    """Hold the making lock of the repository under ``root`` (blocks until it is free)."""
    fd = os.open(root / MAKING_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # the lock goes with the descriptor


class ShadowRepo:
    """Git plumbing over the workspace with a private ``--git-dir`` and ``GIT_INDEX_FILE``."""

    def __init__(self, workspace: Path, root: Path, config: CheckpointConfig) -> None:
        self.workspace = workspace.resolve()
        self.root = root
        self.config = config
        self.git_dir = root / "git"
        self.index_file = root / "index"
        self.state_file = root / "state.json"
        self.odb = ObjectDB(self.git_dir)
        self.env = {
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.workspace),
            "GIT_INDEX_FILE": str(self.index_file),
        }
        self.nested: set[str] = set()
        self.large: set[str] = set()  # files left out: too large, or unreadable (``why``)
        self.why: dict[str, str] = {}  # path in ``large`` -> "unreadable" (else too large)

    # -- set-up ---------------------------------------------------------------------------

    def ensure(self) -> bool:
        """Create the private repository if missing; True when it already existed.

        It is made in a temporary directory and renamed into place, so a process killed while
        making it never leaves a ``git/`` that is not a repository. One left so by an older
        version (``HEAD`` without ``objects/`` or ``refs/``) is moved aside, not deleted. Makers
        take turns (a ``flock`` beside it, across processes and threads: the first walk runs on
        a thread of its own), so none moves aside a repository another has just made.
        """
        if self._whole():
            self._load_state()
            return True
        self.root.mkdir(parents=True, exist_ok=True)
        with _making(self.root):
            if self._whole():  # made while this one waited
                self._load_state()
                return True
            self._make()
        atomic_write(self.root / "workspace", str(self.workspace) + "\n")
        self._load_state()
        self.write_excludes()
        return False

    def _whole(self) -> bool:
        git = self.git_dir
        return (git / "HEAD").exists() and (git / "objects").is_dir() and (git / "refs").is_dir()

    def _make(self) -> None:
        """Make ``git/`` (the caller holds the making lock and saw none whole)."""
        git = self.git_dir
        for left in self.root.glob(".git-new-*"):  # one a killed process was making
            pid = left.name.split("-")[2]
            if not pid.isdigit() or not pid_alive(int(pid)):
                shutil.rmtree(left, ignore_errors=True)
        if os.path.lexists(git):
            aside = self.root / f"git.broken-{os.getpid()}-{os.urandom(4).hex()}"
            log.warning("checkpoint repository %s was never finished; moved to %s", git, aside)
            os.replace(git, aside)
        tmp = self.root / f".git-new-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            run_git(["init", "-q", "--bare", "--template=", "-b", "checkpoints", str(tmp)])
            for key, value in _REPO_CONFIG:
                run_git(["config", key, value], env={"GIT_DIR": str(tmp)})
            os.rename(tmp, git)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def _load_state(self) -> None:
        try:
            data = json.loads(self.state_file.read_bytes())
        except (OSError, ValueError):
            data = {}
        self.nested = set(data.get("nested", []))
        self.large = set(data.get("large", []))
        why = data.get("why", {})
        self.why = {p: r for p, r in why.items() if p in self.large} if isinstance(why, dict) \
            else {}

    def save_state(self) -> None:
        """Persist the nested repositories and oversized files found so far."""
        self.why = {p: r for p, r in self.why.items() if p in self.large}
        data = {"nested": sorted(self.nested), "large": sorted(self.large), "why": self.why}
        atomic_write(self.state_file, json.dumps(data, indent=1))

    def write_excludes(self) -> None:
        """Write ``info/exclude`` of the private repository (the user's files stay untouched)."""
        lines = ["# written by openprogram-lsp; regenerated on every full scan"]
        lines += list(self.config.excludes)
        user_exclude = self.workspace / ".git" / "info" / "exclude"
        try:
            if user_exclude.is_file():  # read only, so the user's own excludes hold here too
                lines += user_exclude.read_text("utf-8", "replace").splitlines()
        except OSError:
            pass
        home = self.root.parent.parent.resolve()
        if self.workspace in home.parents:  # a state root inside the project is never recorded
            lines.append(escape_pattern(home.relative_to(self.workspace).as_posix()) + "/")
        lines += [escape_pattern(p) + "/" for p in sorted(self.nested)]
        lines += [escape_pattern(p) for p in sorted(self.large)]
        text = "\n".join(lines) + "\n"
        path = self.git_dir / "info" / "exclude"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if path.read_text("utf-8") == text:
                return
        except OSError:
            pass
        atomic_write(path, text)

    # -- git ------------------------------------------------------------------------------

    def git(self, args: Sequence[str], *, input: bytes | None = None,
            extra_env: dict[str, str] | None = None) -> bytes:
        """Run git on the private repository; raises CheckpointError on failure."""
        env = self.env if not extra_env else {**self.env, **extra_env}
        try:
            return run_git(["--literal-pathspecs", *args], env=env, input=input,
                           timeout=self.config.git_timeout, owned=self.root)
        except GitError as exc:
            raise CheckpointError(str(exc)) from exc

    def git_rc(self, args: Sequence[str], *, input: bytes | None = None,
               literal: bool = True) -> tuple[int, bytes, str]:
        """Run git and return (exit code, stdout, stderr)."""
        flags = ["--literal-pathspecs"] if literal else []
        proc = run_git_proc([*flags, *args], env=self.env, input=input,
                            timeout=self.config.git_timeout, owned=self.root)
        return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")

    def index_stamp(self) -> tuple[int, int, int] | None:
        """Identity of the private index file, to notice another process rewriting it."""
        try:
            st = os.stat(self.index_file)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    # -- refs -----------------------------------------------------------------------------

    def head(self) -> str | None:
        """The newest checkpoint commit, read straight from the ref file."""
        return read_ref(self.git_dir, HEAD_REF)

    def set_head(self, new: str, old: str | None) -> None:
        """Move the head ref; fails if it moved meanwhile. Callers hold the store's lock.

        Usually the new id is written over the old one in place (``_overwrite``): every writer
        of the ref holds the store's lock, so git's lock file would exclude no one, and a
        rename over the ref costs more than the rest of the checkpoint (ext4 starts the
        replacing file's writeback at the rename). A first ref, a ref of another length or
        form, or a lock file found (a killed writer's, or a git run by hand) go through git's
        lock-file protocol as before. The lock file holds its owner's record until the new
        value replaces it, so a lock left by a killed process is recognised and removed.
        """
        ref = f"{self.git_dir}/{HEAD_REF}"
        lock = ref + ".lock"
        line = f"{new}\n".encode()
        if old is not None and len(old) == len(new) and not os.path.lexists(lock) \
                and _overwrite(ref, f"{old}\n".encode(), line):
            return
        os.makedirs(os.path.dirname(ref), exist_ok=True)
        fd = self._take_ref_lock(Path(lock))
        try:
            if self.head() != old:
                raise CheckpointError("checkpoint head moved during a commit")
            # over the owner record, then cut to the line: never truncated to nothing (on ext4
            # a file truncated to zero has its blocks forced out when it is closed)
            os.pwrite(fd, line, 0)
            os.ftruncate(fd, len(line))
            os.close(fd)
            fd = -1
            os.replace(lock, ref)
        finally:
            if fd != -1:
                os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)

    def _take_ref_lock(self, lock: Path) -> int:
        for _ in range(3):
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                owner = _read_record(lock)
                if owner is not None and owner.alive() and not owner.is_self():
                    raise CheckpointError(f"checkpoint ref is locked by {owner.describe()}: "
                                          f"{lock}") from None
                if owner is None and not clear_stale_git_lock(lock, self.root):
                    raise CheckpointError(f"checkpoint ref is locked: {lock}") from None
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(lock)
                log.warning("removed a stale checkpoint ref lock of %s: %s",
                            owner.describe() if owner else "a killed process", lock)
                continue
            os.write(fd, OwnerRecord.current("checkpoint ref").to_json().encode())
            return fd
        raise CheckpointError(f"checkpoint ref is locked: {lock}")


def _overwrite(ref: str, old: bytes, line: bytes) -> bool:
    """Write ``line`` over the ref file in place when it holds exactly ``old`` (an id of the
    same length); False when it does not (the lock-file protocol then decides).

    One ``pwrite`` of 41 bytes at offset 0 is whole or not there when the process is killed
    (and one sector on a power cut): the ref names the old commit or the new one, whose
    objects were written before. A reader racing the write could in principle see a mix of
    the two ids, which names no object of the repository: readers without the store's lock
    check what they read (``CheckpointStore.head``); git's own tools fail on such a ref
    (``git log`` and ``git prune`` die on a missing object) rather than act on it.
    """
    try:
        fd = os.open(ref, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if os.pread(fd, len(old) + 1, 0) != old:
            return False
        return os.pwrite(fd, line, 0) == len(line)
    finally:
        os.close(fd)


def _read_record(path: Path) -> OwnerRecord | None:
    try:
        return OwnerRecord.parse(path.read_bytes())
    except OSError:
        return None


def is_inside(workspace: Path, path: Path) -> bool:
    """Whether a real path lies in the workspace."""
    real = Path(os.path.realpath(path))
    return real == workspace or workspace in real.parents
