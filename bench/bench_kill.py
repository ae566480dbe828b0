"""What the kill-safe start costs: ``tools.procs.spawn`` (death guard, pidfd, our own reap, and
sandboxed bwrap's ``--info-fd``/``--block-fd`` round trip) vs the asyncio start it replaced
(``create_subprocess_exec`` under ``setpriv``, reaped by asyncio's child watcher), for ``true``
and for ``bwrap ... true``. A B A B ..., median of 15 pairs (``--pairs``); with each figure the
longest the event loop went without a turn during the start. Run:
``.venv/bin/python bench/bench_kill.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from openprogram_lsp.tools.procs import pdeathsig_prefix, scrubbed_env, spawn
from openprogram_lsp.tools.sandbox import availability, bwrap_argv

PIPE, DEVNULL, STDOUT = (asyncio.subprocess.PIPE, asyncio.subprocess.DEVNULL,
                         asyncio.subprocess.STDOUT)


async def _new(argv: list[str], sandboxed: bool) -> None:
    child = await spawn(*argv, sandboxed=sandboxed, stdin=DEVNULL, stdout=PIPE, stderr=STDOUT,
                        env=scrubbed_env())
    assert child.stdout is not None
    await child.stdout.read()
    await child.wait()
    await child.close()


async def _old(argv: list[str], _sandboxed: bool) -> None:
    prefix = pdeathsig_prefix() or ()
    proc = await asyncio.create_subprocess_exec(*prefix, *argv, start_new_session=True,
                                                stdin=DEVNULL, stdout=PIPE, stderr=STDOUT,
                                                env=scrubbed_env())
    assert proc.stdout is not None
    await proc.stdout.read()
    await proc.wait()


async def _timed(run: Callable[[list[str], bool], Awaitable[None]], argv: list[str],
                 sandboxed: bool) -> tuple[float, float]:
    """Seconds from start to closed, and the longest gap between two loop turns meanwhile."""
    gaps = [0.0]
    done = False

    async def ticker() -> None:
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    t0 = time.perf_counter()
    await run(argv, sandboxed)
    elapsed = time.perf_counter() - t0
    done = True
    await tick
    return elapsed, max(gaps)


async def main(pairs: int) -> None:
    found = availability()
    if not found.ok or found.path is None:
        raise SystemExit(f"no sandbox here: {found.reason}")
    print(f"load before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        boxed = [*bwrap_argv(found.path, Path(tmp), network=True), "/bin/true"]
        for name, argv, sandboxed in (("true", ["/bin/true"], False),
                                      ("bwrap ... true", boxed, True)):
            got: dict[str, list[tuple[float, float]]] = {"new": [], "old": []}
            for i in range(pairs + 1):  # A B A B ..., the first pair a warm-up
                for key, run in (("new", _new), ("old", _old)):
                    figure = await _timed(run, argv, sandboxed)
                    if i:
                        got[key].append(figure)
            new_end = statistics.median(x[0] for x in got["new"])
            old_end = statistics.median(x[0] for x in got["old"])
            new_gap = statistics.median(x[1] for x in got["new"])
            old_gap = statistics.median(x[1] for x in got["old"])
            report(f"{name}: start to end, spawn vs asyncio's", new_end, old_end)
            report(f"{name}: longest loop stall, spawn vs asyncio's", new_gap, old_gap)
    print(f"load after: {os.getloadavg()[0]:.2f}; median of {pairs} interleaved pairs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=15)
    asyncio.run(main(max(7, parser.parse_args().pairs)))
