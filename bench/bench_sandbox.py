"""The sandbox's own cost: run_command of ``true`` sandboxed vs unsandboxed, interleaved.

Also the bare process starts underneath, so the tool's overhead can be told from bwrap's:
``bwrap ... sh -c true`` beside ``sh -c true``. Run: ``.venv/bin/python bench/bench_sandbox.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import report
from openprogram_lsp.config import load_settings
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin.command import RunCommand
from openprogram_lsp.tools.procs import scrubbed_env
from openprogram_lsp.tools.sandbox import availability, bwrap_argv


async def _tool_round(tool: RunCommand, ws: Path, mode: str) -> float:
    ctx = ToolContext(workspace=ws, settings=load_settings(env={"OPENPROGRAM_SANDBOX": mode},
                                                           user_file=False))
    t0 = time.perf_counter()
    out = await tool.run(tool.parse({"command": "true"}), ctx)
    elapsed = time.perf_counter() - t0
    assert out.data["sandboxed"] is (mode == "required"), out.text
    return elapsed


def _bare_round(argv: list[str], ws: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=ws, env=scrubbed_env(), check=True)
    return time.perf_counter() - t0


async def main(rounds: int) -> None:
    found = availability()
    if not found.ok or found.path is None:
        raise SystemExit(f"no sandbox here: {found.reason}")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        tool = RunCommand()
        prefix = bwrap_argv(found.path, ws, network=True)
        sandboxed, plain, bare_bwrap, bare_sh = [], [], [], []
        for i in range(rounds + 3):  # interleaved A B A B, so both see the same load
            a = await _tool_round(tool, ws, "required")
            b = await _tool_round(tool, ws, "off")
            c = _bare_round([*prefix, "/bin/sh", "-c", "true"], ws)
            d = _bare_round(["/bin/sh", "-c", "true"], ws)
            if i >= 3:  # warm-up rounds dropped
                sandboxed.append(a)
                plain.append(b)
                bare_bwrap.append(c)
                bare_sh.append(d)
    print(f"median of {rounds} interleaved rounds")
    report("run_command `true`, sandboxed (bwrap)", statistics.median(sandboxed),
           statistics.median(plain))
    report("bare bwrap sh -c true vs sh -c true", statistics.median(bare_bwrap),
           statistics.median(bare_sh))
    report("sandbox cost (sandboxed - unsandboxed tool)",
           statistics.median(sandboxed) - statistics.median(plain))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    asyncio.run(main(max(7, parser.parse_args().rounds)))  # a median of 7 pairs at least
