"""A stdio server whose stdin is ``/dev/null`` (not pollable: epoll refuses it) ends at once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import forkserver


def test_the_server_ends_with_its_stdin(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env["OPENPROGRAM_HOME"] = str(tmp_path / "home")
    forked = forkserver.launcher()  # the fork client: the server on these very pipes
    command = [forked] if forked else [sys.executable, "-m", "openprogram_lsp"]
    done = subprocess.run([*command, "serve"],
                          stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=tmp_path,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert b"Traceback" not in done.stderr and b"ERROR asyncio" not in done.stderr
