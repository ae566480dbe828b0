"""A thin, fast wrapper over the git CLI for repositories the project owns."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

# Identity and safety settings passed on every call, so no config file is needed and no user
# hook, signing key or global setting can interfere with the project's private repositories.
_SAFE_CONFIG = (
    "-c", "user.name=openprogram-lsp",
    "-c", "user.email=openprogram-lsp@localhost",
    "-c", "commit.gpgsign=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.autocrlf=false",
    "-c", "core.quotepath=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
)


class GitError(RuntimeError):
    """A git command failed."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        super().__init__(f"git {' '.join(args)} failed ({returncode}): {stderr.strip()}")
        self.returncode = returncode
        self.stderr = stderr


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment that isolates git from the user's global and system configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
    })
    if extra:
        env.update(extra)
    return env


def run_git(args: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
            input: bytes | None = None, check: bool = True, timeout: float = 60.0,
            owned: Path | None = None) -> bytes:
    """Run ``git`` with safe settings and return stdout; raises GitError on failure.

    ``owned``: a directory of ours whose writers hold our lock while they run git (the caller
    holds it now); a git lock file left there by a killed git is removed and git run again.
    """
    proc = run_git_proc(args, cwd=cwd, env=env, input=input, timeout=timeout, owned=owned)
    if check and proc.returncode != 0:
        raise GitError(args, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc.stdout


_LOCK_EXISTS = re.compile(rb"Unable to create '([^']+\.lock)': File exists")
LOCK_WAIT = 5.0
"""Seconds to wait for a git lock file that a live process holds open."""


def run_git_proc(args: Sequence[str], *, cwd: Path | None = None,
                 env: Mapping[str, str] | None = None, input: bytes | None = None,
                 timeout: float = 60.0,
                 owned: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git`` with safe settings and return the finished process, whatever its exit code."""
    deadline = time.monotonic() + LOCK_WAIT
    for _ in range(50):
        proc = subprocess.run(
            ["git", *_SAFE_CONFIG, *args], cwd=cwd, env=git_env(env), input=input,
            capture_output=True, timeout=timeout, check=False,
        )
        if proc.returncode == 0 or owned is None:
            return proc
        hit = _LOCK_EXISTS.search(proc.stderr)
        if hit is None:
            return proc
        lock = Path(os.fsdecode(hit.group(1)))
        if not lock.is_absolute() and cwd is not None:
            lock = cwd / lock
        if not _inside(lock, owned):
            return proc
        if not clear_stale_git_lock(lock, owned):
            if time.monotonic() >= deadline:
                return proc
            time.sleep(0.05)  # a live git holds it: wait for it to finish
    return proc


def _inside(lock: Path, owned: Path) -> bool:
    real, root = os.path.realpath(lock), os.path.realpath(owned)
    return real.startswith(root + os.sep) and real.endswith(".lock")


def clear_stale_git_lock(lock: Path, owned: Path) -> bool:
    """Remove a git lock file under ``owned`` that no live process holds; True if it is gone.

    Only called while holding the store's own lock, so the only writers that could hold the
    file are a git child of a killed process; one still running keeps the file open.
    """
    if not _inside(lock, owned):
        return False
    real = os.path.realpath(lock)
    if not os.path.lexists(real):
        return True
    held = held_open(Path(real))
    if held is None:  # no /proc: only a lock untouched for a minute counts as stale
        try:
            held = time.time() - os.lstat(real).st_mtime < 60
        except OSError:
            return True
    if held:
        return False
    try:
        os.unlink(real)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    log.warning("removed a stale git lock left by a killed process: %s", real)
    return True


def held_open(path: Path) -> bool | None:
    """Whether any process we can inspect has the file open (None: cannot tell, no /proc).

    Git's own lock files carry no owner; a git child killed with its parent leaves one that
    no process holds open any more, which is how it is told apart from a live git's.
    """
    try:
        target = os.path.realpath(path)
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") == target:
                    return True
            except OSError:
                continue
    return False
