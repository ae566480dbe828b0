"""Restore takes the workspace's turn guard: refused (-32002) while any process runs a turn
there, from the store, the CLI and the language server alike."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.forkserver import run_command
from tests.store._cp_helpers import make_workspace, open_store

from openprogram_lsp.core.errors import SessionBusy


def turn_in_another_process(ws: Path, home: Path) -> subprocess.Popen[bytes]:
    """Another process (an editor's server, the CLI) in the middle of a turn's edits."""
    script = textwrap.dedent(f"""
        import pathlib, time
        from openprogram_lsp.store.checkpoints import CheckpointStore
        store = CheckpointStore(pathlib.Path({str(ws)!r}), home=pathlib.Path({str(home)!r}))
        with store.turn_lock():
            (pathlib.Path({str(ws)!r}) / "turn.txt").write_text("the turn's write\\n")
            print("held", flush=True)
            time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"held\n"
    return proc


def test_restore_is_refused_while_another_process_runs_a_turn(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    home = tmp_path / "home"
    store = open_store(ws, home)
    base = store.ensure_baseline("s")
    assert base is not None
    other = turn_in_another_process(ws, home)
    try:
        with pytest.raises(SessionBusy, match=f"pid {other.pid}"):
            store.restore(base.id)
        env = {**os.environ, "OPENPROGRAM_HOME": str(home)}
        cli = run_command([sys.executable, "-m", "openprogram_lsp", "restore", base.id],
                          cwd=ws, env=env, timeout=60)
        assert cli.returncode == 2 and "is running in this workspace" in cli.stderr
        assert (ws / "turn.txt").read_text() == "the turn's write\n"
    finally:
        other.kill()
        other.wait()
    out = store.restore(base.id)  # the turn is over (its process died): restore works
    assert out.safety_checkpoint_id
