"""A thin, fast wrapper over the git CLI for repositories the project owns."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

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
            input: bytes | None = None, check: bool = True, timeout: float = 60.0) -> bytes:
    """Run ``git`` with safe settings and return stdout; raises GitError on failure."""
    proc = subprocess.run(
        ["git", *_SAFE_CONFIG, *args], cwd=cwd, env=git_env(env), input=input,
        capture_output=True, timeout=timeout, check=False,
    )
    if check and proc.returncode != 0:
        raise GitError(args, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc.stdout


def run_git_proc(args: Sequence[str], *, cwd: Path | None = None,
                 env: Mapping[str, str] | None = None, input: bytes | None = None,
                 timeout: float = 60.0) -> subprocess.CompletedProcess[bytes]:
    """Run ``git`` with safe settings and return the finished process, whatever its exit code."""
    return subprocess.run(
        ["git", *_SAFE_CONFIG, *args], cwd=cwd, env=git_env(env), input=input,
        capture_output=True, timeout=timeout, check=False,
    )
