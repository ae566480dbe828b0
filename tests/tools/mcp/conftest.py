"""Fixtures: the demo MCP server's definition, hubs, and an HTTP demo server on loopback."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.tools.mcp.demo import DEMO


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    d = tmp_path / "notes"
    d.mkdir()
    return d


@pytest.fixture
def http_demo(notes: Path) -> Iterator[Callable[[], str]]:
    """Start the demo server over streamable HTTP on 127.0.0.1; yields a URL getter."""
    procs: list[subprocess.Popen[str]] = []

    def start() -> str:
        proc = subprocess.Popen([sys.executable, str(DEMO), "--http"], text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={"DEMO_DIR": str(notes), "PATH": "/usr/bin:/bin"})
        procs.append(proc)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "the HTTP demo server did not start within 60 s"
        line = proc.stdout.readline()  # the server prints its port before serving
        assert line.startswith("PORT "), line
        return f"http://127.0.0.1:{int(line.split()[1])}/mcp"

    yield start
    for proc in procs:
        proc.kill()
        proc.wait(10)
