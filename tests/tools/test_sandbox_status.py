"""`openprogram-lsp sandbox`: what the health check and editors show about the sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.forkserver import run_command


def _sandbox(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "OPENPROGRAM_HOME": str(tmp_path / "home"), **env}
    return run_command([sys.executable, "-m", "openprogram_lsp", "sandbox", "--json"],
                       env=full, timeout=60)


def test_status_on_missing_required_and_off(tmp_path: Path) -> None:
    on = _sandbox(tmp_path)
    assert on.returncode == 0 and json.loads(on.stdout)["sandboxed"] is True
    assert json.loads(on.stdout)["message"].startswith("sandbox on: bubblewrap at ")
    empty = tmp_path / "bin"
    empty.mkdir()
    missing = _sandbox(tmp_path, PATH=str(empty))
    assert missing.returncode == 1
    assert "commands run unsandboxed: bubblewrap (bwrap) is not installed" in \
        json.loads(missing.stdout)["message"]
    refused = _sandbox(tmp_path, PATH=str(empty), OPENPROGRAM_SANDBOX="required")
    assert refused.returncode == 1 and "refused" in json.loads(refused.stdout)["message"]
    off = _sandbox(tmp_path, OPENPROGRAM_SANDBOX="off")
    assert off.returncode == 0 and json.loads(off.stdout)["sandboxed"] is False
    bad = _sandbox(tmp_path, OPENPROGRAM_SANDBOX_NETWORK="maybe")
    # A bad setting is the CLI's one-line error (as for every OPENPROGRAM_* value), not a status.
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "OPENPROGRAM_SANDBOX_NETWORK='maybe'" in bad.stderr


def test_the_status_says_how_the_limits_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp.tools import limits, sandbox

    both = limits.Limits(processes=64, memory=256 * limits.MIB)
    assert limits.enforcement(limits.Limits()) == "no limits"
    monkeypatch.setattr(limits.Cgroup, "make", classmethod(lambda cls, lim: None))
    monkeypatch.setattr(limits, "_prlimit", lambda: "/usr/bin/prlimit")
    monkeypatch.setattr(limits.os, "geteuid", lambda: 0)
    assert "as root the process limit does not hold" in limits.enforcement(both)
    memory_only = limits.Limits(memory=256 * limits.MIB)
    assert limits.enforcement(memory_only) == "held by rlimits only (no cgroup may be made here)"
    monkeypatch.setattr(limits.os, "geteuid", lambda: 1000)
    assert limits.enforcement(both) == "held by rlimits only (no cgroup may be made here)"
    monkeypatch.setattr(limits, "_prlimit", lambda: None)
    assert limits.enforcement(both).startswith("NOT held")
    status = sandbox.status()  # the message carries it
    assert status["sandboxed"] is True
    assert str(status["message"]).endswith("per command, NOT held: no cgroup may be made here "
                                           "and prlimit is missing)")
