"""Start-up: a server's start to its ``initialize`` answer, and the CLI ``chat`` import.

1. ``openprogram-lsp serve`` (the offline model, a fresh state root each start) against a
   bare pygls server answering ``initialize``: from spawning the process to the answer, and
   the process's CPU by then, A B A B, median of ``--pairs`` (target <= 1.3x);
2. what ``openprogram-lsp chat`` imports before it runs (``cli``, ``app``, ``terminal.chat``,
   ``terminal.prompts``) against ``python -c pass``, A B A B (target <= 150 ms more), and the
   same with ``PYTHONDONTWRITEBYTECODE=1`` and the sources compiled (what the installs do).

Run: ``.venv/bin/python bench/bench_start.py [--pairs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from _util import report
from bench_lsp import BARE_SERVER

CHAT_IMPORTS = ("import openprogram_lsp.cli, openprogram_lsp.app, openprogram_lsp.terminal.chat,"
                " openprogram_lsp.terminal.prompts")


def _cpu(pid: int) -> float:
    """User + system seconds of a live process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _initialize(cmd: list[str], env: dict[str, str], ws: Path) -> tuple[float, float]:
    client = BaseLanguageClient("bench", "0")
    t0 = time.perf_counter()
    await client.start_io(cmd[0], *cmd[1:], env=env)
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
    took = time.perf_counter() - t0
    cpu = _cpu(client._server.pid)  # type: ignore[union-attr]
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return took, cpu


async def bench_initialize(tmp: Path, pairs: int) -> None:
    bare = tmp / "bare.py"
    bare.write_text(BARE_SERVER)
    ws = tmp / "ws"
    ws.mkdir()
    ours: list[tuple[float, float]] = []
    base: list[tuple[float, float]] = []
    for i in range(max(7, pairs) + 1):
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
        env.update(OPENPROGRAM_HOME=str(tmp / f"home{i}"), OPENPROGRAM_MODEL="offline")
        a = await _initialize([sys.executable, "-m", "openprogram_lsp", "serve"], env, ws)
        b = await _initialize([sys.executable, str(bare)], dict(os.environ), ws)
        if i:  # the first pair warms the disk cache
            ours.append(a)
            base.append(b)
    med = statistics.median
    report("start to initialize answered", med(a[0] for a in ours), med(b[0] for b in base),
           target="<= 1.3x; baseline = a bare pygls server")
    report("  the server's CPU by then", med(a[1] for a in ours), med(b[1] for b in base),
           unit="s", target="same baseline")


def _run(code: str, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - t0


def bench_chat_import(pairs: int) -> None:
    env = dict(os.environ)
    for label, extra in (("", {}), (" (PYTHONDONTWRITEBYTECODE=1)",
                                    {"PYTHONDONTWRITEBYTECODE": "1"})):
        e = {**env, **extra}
        a, b = [], []
        _run(CHAT_IMPORTS, e)
        for _ in range(max(7, pairs)):
            a.append(_run(CHAT_IMPORTS, e))
            b.append(_run("pass", e))
        ma, mb = statistics.median(a), statistics.median(b)
        report(f"CLI chat imports{label}", ma, mb,
               target=f"<= 150 ms over python -c pass: {1e3 * (ma - mb):.0f} ms over")


async def main(pairs: int) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as d:
        await bench_initialize(Path(d), pairs)
    bench_chat_import(pairs)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=9)
    asyncio.run(main(parser.parse_args().pairs))
