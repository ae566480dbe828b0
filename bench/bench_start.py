"""Start-up: a server's start to its ``initialize`` answer, and the CLI ``chat`` import.

1. ``openprogram-lsp serve`` (the offline model, a fresh state root each start) against a
   bare pygls server answering ``initialize``: from spawning the process to the answer, and
   the process's CPU by then, A B A B, median of ``--pairs`` (target <= 1.3x); then, from the
   same start, to the first request answered after ``initialized`` (ours ``openprogram/sessions``,
   the bare server a no-op request). ``--before PYTHON`` adds a third server, ``PYTHON -m
   openprogram_lsp serve`` (another checkout's interpreter), interleaved A B C (it joins 2
   and 3 as well);
2. what ``openprogram-lsp chat`` imports before it runs (``cli``, ``app``, ``terminal.chat``,
   ``terminal.prompts``) against ``python -c pass``, A B A B (target <= 150 ms more), and the
   same with ``PYTHONDONTWRITEBYTECODE=1`` and the sources compiled (what the installs do);
   "as chat makes them": the same imports inside ``terminal.startup.start_up``, the
   collector paused as ``chat`` pauses it;
3. a whole ``openprogram-lsp chat --model offline "list ."`` run in a small git repository (a
   fresh state root each run: its first turn, its imports at first use included) against
   ``python -c pass``, A B A B: what a person at the terminal waits for (no target of its own).

Each process's CPU (user + system, from ``getrusage``) is given beside its wall time: on a
shared machine it moves less with the load.

Run: ``.venv/bin/python bench/bench_start.py [--pairs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from _util import report
from bench_lsp import BARE_SERVER

CHAT_IMPORTS = ("import openprogram_lsp.cli, openprogram_lsp.app, openprogram_lsp.terminal.chat,"
                " openprogram_lsp.terminal.prompts")
# the same as ``chat`` makes them: inside ``terminal.startup.start_up`` (the collector paused)
CHAT_IMPORTS_PAUSED = ("from openprogram_lsp.terminal.startup import start_up\n"
                       f"with start_up():\n    {CHAT_IMPORTS}")


def _cpu(pid: int) -> float:
    """User + system seconds of a live process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _initialize(cmd: list[str], env: dict[str, str], ws: Path,
                      first: str) -> tuple[float, float, float]:
    """Seconds to ``initialize`` answered, the server's CPU then, and seconds to ``first``
    answered (sent after ``initialized``), all from the spawn."""
    client = BaseLanguageClient("bench", "0")
    client.feature(types.WINDOW_LOG_MESSAGE)(lambda params: None)
    t0 = time.perf_counter()
    await client.start_io(cmd[0], *cmd[1:], env=env)
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
    took = time.perf_counter() - t0
    cpu = _cpu(client._server.pid)  # type: ignore[union-attr]
    client.initialized(types.InitializedParams())
    await client.protocol.send_request_async(first, {})
    ready = time.perf_counter() - t0
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return took, cpu, ready


async def bench_initialize(tmp: Path, pairs: int, before: str | None) -> None:
    bare = tmp / "bare.py"
    bare.write_text(BARE_SERVER)
    ws = tmp / "ws"
    ws.mkdir()
    pythons = {"ours": sys.executable, **({"before": before} if before else {})}
    runs: dict[str, list[tuple[float, float, float]]] = {"bare": [], **{k: [] for k in pythons}}
    for i in range(max(7, pairs) + 1):
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
        got = {}
        for name, python in pythons.items():
            env.update(OPENPROGRAM_HOME=str(tmp / f"home-{name}{i}"), OPENPROGRAM_MODEL="offline")
            got[name] = await _initialize([python, "-m", "openprogram_lsp", "serve"], env, ws,
                                          "openprogram/sessions")
        got["bare"] = await _initialize([sys.executable, str(bare)], dict(os.environ), ws,
                                        "bench/noop")
        if i:  # the first round warms the disk cache
            for name, figures in got.items():
                runs[name].append(figures)
    med = statistics.median
    base = runs["bare"]
    for name in pythons:
        ours = runs[name]
        report(f"{name}: start to initialize answered", med(a[0] for a in ours),
               med(b[0] for b in base), target="<= 1.3x; baseline = a bare pygls server")
        report(f"{name}:   the server's CPU by then", med(a[1] for a in ours),
               med(b[1] for b in base), unit="s", target="same baseline")
        report(f"{name}:   to the first request answered", med(a[2] for a in ours),
               med(b[2] for b in base), target="none; sessions vs the bare server's no-op")


def _run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process, run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, cwd=cwd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _ab(label: str, runs: dict[str, Callable[[int], tuple[float, float]]], pairs: int,
        target: str) -> None:
    """Each of ``runs`` in turn (A B C A B C ...; one warm-up round), against ``pass``: the
    median wall and CPU of each."""
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
    for i in range(max(7, pairs) + 1):
        for name, run in runs.items():
            figures = run(i)
            if i:
                got[name].append(figures)
    med = statistics.median
    base = got["pass"]
    for name in runs:
        if name == "pass":
            continue
        wall, cpu = med(a[0] for a in got[name]), med(a[1] for a in got[name])
        bwall, bcpu = med(b[0] for b in base), med(b[1] for b in base)
        report(f"{name}: {label}", wall, bwall,
               target=f"{target}: {1e3 * (wall - bwall):.0f} ms over" if target else
               "none; baseline = python -c pass")
        report(f"{name}:   its CPU", cpu, bcpu, target="same baseline")


def bench_chat_import(pairs: int, before: str | None) -> None:
    env = dict(os.environ)
    for label, extra in (("", {}), (" (PYTHONDONTWRITEBYTECODE=1)",
                                    {"PYTHONDONTWRITEBYTECODE": "1"})):
        e = {**env, **extra}
        pythons = {"ours": sys.executable, **({"before": before} if before else {})}
        runs: dict[str, Callable[[int], tuple[float, float]]] = {
            name: (lambda i, python=python, e=e: _run([python, "-c", CHAT_IMPORTS], e))
            for name, python in pythons.items()}
        runs["ours, as chat makes them"] = lambda i, e=e: _run(
            [sys.executable, "-c", CHAT_IMPORTS_PAUSED], e)
        runs["pass"] = lambda i, e=e: _run([sys.executable, "-c", "pass"], e)
        _ab(f"CLI chat imports{label}", runs, pairs, target="<= 150 ms over python -c pass")


def bench_chat_run(tmp: Path, pairs: int, before: str | None) -> None:
    ws = tmp / "chat-ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}

    def chat(python: str, name: str) -> Callable[[int], tuple[float, float]]:
        def run(i: int) -> tuple[float, float]:
            e = {**env, "OPENPROGRAM_HOME": str(tmp / f"chat-home-{name}{i}")}
            return _run([python, "-m", "openprogram_lsp", "chat", "--workspace", str(ws),
                         "--model", "offline", "list ."], e)
        return run

    runs = {"ours": chat(sys.executable, "ours"),
            **({"before": chat(before, "before")} if before else {}),
            "pass": lambda i: _run([sys.executable, "-c", "pass"], env)}
    _ab("CLI chat run, one offline turn, whole", runs, pairs, target="")


async def main(pairs: int, before: str | None) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as d:
        await bench_initialize(Path(d), pairs, before)
    bench_chat_import(pairs, before)
    with tempfile.TemporaryDirectory() as d:
        bench_chat_run(Path(d), pairs, before)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--before", default=None, metavar="PYTHON",
                        help="also run PYTHON -m openprogram_lsp (another checkout): serve, "
                             "the chat imports and a chat run")
    parsed = parser.parse_args()
    asyncio.run(main(parsed.pairs, parsed.before))
