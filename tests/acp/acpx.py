"""Running the npm ACP client ``acpx`` (installed by scripts/install-acpx.sh) against our agent."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.tooling import wait_for_install

ROOT = Path(__file__).resolve().parents[2]
AGENT = f"{shlex.quote(sys.executable)} -m openprogram_lsp.cli acp"


def agent_command(agent_args: str, *, exec_agent: bool) -> str:
    """The agent command line acpx runs: a fork of this worker's fork server
    (tests/forkclient.py), or with ``exec_agent`` a real ``python -m openprogram_lsp.cli``."""
    forked = None if exec_agent else forkserver.launcher()
    agent = AGENT if forked is None else f"{shlex.quote(forked)} acp"
    return f"{agent} {agent_args}".strip()


def acpx_bin() -> Path:
    """The pinned acpx; its absence is a failure (scripts/test installs it, beside the tests:
    this waits for that install to end)."""
    dirs = [Path(d) for d in (os.environ.get("OPENPROGRAM_TOOLS_DIR"), str(ROOT / ".tools")) if d]
    wait_for_install(dirs[0] / ".install-acpx.lock")
    candidates = [d / "acpx" / "node_modules" / ".bin" / "acpx" for d in dirs]
    for path in candidates:
        if path.exists():
            return path
    pytest.fail("acpx is not installed (run scripts/install-acpx.sh)")


DOCUMENTED_CONFIG = {"agents": {"openprogram": {"argv": ["openprogram-lsp", "acp"]}}}
"""docs/acp.md's ``~/.acpx/config.json``, as written."""


def run_acpx(args: list[str], *, cwd: Path, home: Path, agent_args: str = "",
             timeout: float = 120, exec_agent: bool = False, named: bool = False,
             ttl: int = 1) -> tuple[int, list[dict[str, Any]], str]:
    """Run acpx with our agent; returns the exit code, the JSON-RPC frames it printed, stderr.

    acpx keeps a queue owner alive for ``--ttl`` (1 s) after a command; a command that reaches
    one while it shuts down gets acpx's retryable QUEUE_OWNER_CLOSED without anything sent to
    the agent: that command is run again (at most three times)."""
    for _ in range(3):
        code, frames, err = _run_acpx(args, cwd=cwd, home=home, agent_args=agent_args,
                                      timeout=timeout, exec_agent=exec_agent, named=named,
                                      ttl=ttl)
        if not any(f.get("error", {}).get("data", {}).get("detailCode") == "QUEUE_OWNER_CLOSED"
                   for f in frames if isinstance(f.get("error"), dict)):
            break
    return code, frames, err


def _acpx_env(home: Path) -> dict[str, str]:
    """acpx's environment: its own HOME beside ``home``, our variables from the test's store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env.update(HOME=str(home.parent / "acpx-home"), OPENPROGRAM_HOME=str(home))
    return env


def queue_socket_dir(home: Path) -> Path:
    """Where acpx puts its queue sockets for the HOME ``_acpx_env`` gives it: a fixed
    ``/tmp/acpx-<sha256 of HOME, 10 hex>`` (short for socket paths; TMPDIR is not consulted)."""
    digest = hashlib.sha256(str(home.parent / "acpx-home").encode()).hexdigest()[:10]
    return Path("/tmp") / f"acpx-{digest}"


def _run_acpx(args: list[str], *, cwd: Path, home: Path, agent_args: str, timeout: float,
              exec_agent: bool, named: bool, ttl: int) -> tuple[int, list[dict[str, Any]], str]:
    env = _acpx_env(home)
    if named:  # the documented config file, `openprogram-lsp` found on PATH (this venv's)
        config = home.parent / "acpx-home" / ".acpx" / "config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps(DOCUMENTED_CONFIG))
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        flags = [a for a in args[:next((i for i, a in enumerate(args)
                                          if not a.startswith("--")), len(args))]]
        cmd = [str(acpx_bin()), "--format", "json", "--ttl", str(ttl), *flags, "openprogram",
               *args[len(flags):]]
    else:
        cmd = [str(acpx_bin()), "--format", "json", "--ttl", str(ttl), "--agent",
               agent_command(agent_args, exec_agent=exec_agent), *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    frames = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            frames.append(json.loads(line))
    return proc.returncode, frames, proc.stderr


def updates(frames: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [f["params"]["update"] for f in frames if f.get("method") == "session/update"
            and f["params"]["update"].get("sessionUpdate") == kind]


def methods(frames: list[dict[str, Any]]) -> list[str]:
    return [str(f["method"]) for f in frames if "method" in f]


def start_acpx(args: list[str], *, cwd: Path, home: Path, agent_args: str = "",
               out: Path, exec_agent: bool = False) -> subprocess.Popen[bytes]:
    """Start acpx in the background, its stdout going to ``out``."""
    env = _acpx_env(home)
    cmd = [str(acpx_bin()), "--format", "json", "--ttl", "1", "--agent",
           agent_command(agent_args, exec_agent=exec_agent), *args]
    with out.open("wb") as fh:
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
