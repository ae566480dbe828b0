"""Neovim plugin: one chat turn through the panel vs a plain vim.lsp request, same run.

The panel turn includes streaming into the buffer, the history redraw and the title fetch; the
baseline is the bare `openprogram/chat` request from a plugin-less client to its own server.
Both use the scripted model (replies of 200 characters streamed in deltas); the turns
alternate between the two clients so machine load falls on both alike.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import report

RUNNER = Path(__file__).resolve().parents[1] / "tests" / "editors" / "nvim" / "runner.py"


def main(turns: int = 30) -> None:
    """Run the scenario and print the medians."""
    spec = importlib.util.spec_from_file_location("openprogram_nvim_runner", RUNNER)
    assert spec and spec.loader
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    with tempfile.TemporaryDirectory() as tmp:
        ws, home = Path(tmp) / "ws", Path(tmp) / "home"
        ws.mkdir()
        home.mkdir()
        reply = {"text": "word " * 40}
        model = runner.write_script(Path(tmp) / "script.json", [reply] * (2 * turns + 2))
        os.environ["OP_BENCH_TURNS"] = str(turns)
        out = runner.run_scenario("bench_turns", ws, model=model, home=home, timeout=600)
    panel = statistics.median(out["panel_ms"][1:]) / 1e3
    plain = statistics.median(out["plain_ms"][1:]) / 1e3
    report(f"nvim panel turn (median of {turns - 1})", panel, plain, target="ratio <= 2")


if __name__ == "__main__":
    main()
