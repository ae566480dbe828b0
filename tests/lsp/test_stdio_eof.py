"""A stdio server whose stdin ends (``</dev/null``, a file) exits instead of waiting forever."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("source", ["devnull", "file"])
def test_the_server_ends_with_its_stdin(tmp_path: Path, source: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env["OPENPROGRAM_HOME"] = str(tmp_path / "home")
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with open(os.devnull if source == "devnull" else empty, "rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "openprogram_lsp", "serve"], stdin=stdin,
                              capture_output=True, env=env, cwd=tmp_path, timeout=120,
                              check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert b"Traceback" not in done.stderr and b"ERROR asyncio" not in done.stderr
