"""Running the real ``openprogram-lsp`` command in a process of its own, isolated from the user
(forked from tests/forkserver.py; tests about the process itself start it with subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.forkserver import run_command


def cli_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "OPENPROGRAM_HOME": str(tmp / "home"),
           "XDG_CONFIG_HOME": str(tmp / "xdg"), **extra}
    env.pop("OPENPROGRAM_MODEL", None)
    return env


def run(args: list[str], tmp: Path, cwd: Path | None = None, *, stdin: Any = subprocess.DEVNULL,
        timeout: float = 60, **extra: str) -> subprocess.CompletedProcess[str]:
    return run_command([sys.executable, "-m", "openprogram_lsp", *args], cwd=cwd or tmp,
                       env=cli_env(tmp, **extra), timeout=timeout, stdin=stdin)


def one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed command (asserting there is exactly one)."""
    assert r.returncode != 0, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("openprogram-lsp: error: "), lines[0]
    return lines[0]


def sessions(tmp: Path) -> list[dict[str, Any]]:
    r = run(["sessions", "--json"], tmp)
    assert r.returncode == 0, r.stderr
    out: list[dict[str, Any]] = json.loads(r.stdout)
    return out


def chat_json(args: list[str], tmp: Path, cwd: Path | None = None) -> dict[str, Any]:
    r = run(["chat", "--json", *args], tmp, cwd)
    assert r.returncode == 0, r.stderr
    result: dict[str, Any] = json.loads(r.stdout.splitlines()[-1])["data"]
    return result
