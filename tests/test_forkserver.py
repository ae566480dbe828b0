"""The tests' fork server starts processes that behave as the real command does."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from tests import forkserver

CLI = [sys.executable, "-m", "openprogram_lsp"]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")},
            "OPENPROGRAM_HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "x"),
            **extra}


@pytest.mark.parametrize("args", [["config", "--json"], ["nosuch"], ["chat"]])
def test_a_forked_run_answers_as_an_executed_one(tmp_path: Path, args: list[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    env = _env(tmp_path, OPENPROGRAM_MAX_ITERATIONS="7")
    forked = forkserver.run_command([*CLI, *args], env=env, cwd=tmp_path)
    monkeypatch.setenv(forkserver.EXEC_ENV, "1")
    assert forkserver.forkable([*CLI, *args]) is None
    executed = forkserver.run_command([*CLI, *args], env=env, cwd=tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        executed.returncode, executed.stdout, executed.stderr)
    if args[0] == "config":  # the child read the caller's environment and cwd, not its own
        assert "env OPENPROGRAM_MAX_ITERATIONS" in forked.stdout
        assert f'"workspace": "{tmp_path.resolve()}"' in forked.stdout


def test_only_the_command_itself_is_forked() -> None:
    assert forkserver.forkable([*CLI, "serve"]) == ["serve"]
    assert forkserver.forkable([sys.executable, "-m", "openprogram_lsp.cli", "acp"]) == ["acp"]
    assert forkserver.forkable([sys.executable, "-c", "pass"]) is None
    assert forkserver.forkable(["openprogram-lsp", "serve"]) is None


async def test_a_forked_server_is_a_real_process_that_can_be_killed(tmp_path: Path) -> None:
    proc = await forkserver.start_async(["serve"], env=_env(tmp_path), cwd=str(tmp_path))
    assert proc.stdin is not None and proc.stdout is not None
    os.kill(proc.pid, 0)  # the pid is the server's own
    assert Path(f"/proc/{proc.pid}/cwd").resolve() == tmp_path.resolve()
    proc.kill()
    assert await asyncio.wait_for(proc.wait(), 30) == -signal.SIGKILL
    assert proc.returncode == -signal.SIGKILL


async def test_a_forked_server_ends_with_its_stdin(tmp_path: Path) -> None:
    proc = await forkserver.start_async(["serve"], env=_env(tmp_path), cwd=str(tmp_path))
    assert proc.stdin is not None
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
