"""Cancel ``run_command`` at every point of its start and count what outlives the cancel.

Each round starts ``sleep M & sleep M`` (a marker ``M`` unique to the round), cancels it after
``round % steps`` event-loop turns plus ``round % 7`` ms, and 0.5 s after the cancel looks in
``/proc`` for any process still carrying the marker (bwrap, sh or a sleep); whatever it finds is
a leak, counted and then killed. Sandboxed and unsandboxed rounds alternate. Run it beside some
load (``--burn N`` starts N busy loops) to widen the windows:

    .venv/bin/python bench/stress_kill.py --rounds 200 --burn 2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from openprogram_lsp.config import load_settings
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin.command import RunCommand


def _with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def _burn(stop: float) -> None:
    while time.monotonic() < stop:
        pass


async def _round(tool: RunCommand, ctx: ToolContext, marker: str, turns: int,
                 ms: int) -> list[int]:
    task = asyncio.create_task(tool.run(tool.parse({"command": f"sleep {marker} & sleep {marker}",
                                                    "timeout": 60}), ctx))
    for _ in range(turns):
        await asyncio.sleep(0)
    if ms:
        await asyncio.sleep(ms / 1000)
    task.cancel()
    try:
        async with asyncio.timeout(20):
            await task
        print(f"{marker}: the cancel was ignored (the call ran to its end)", flush=True)
    except asyncio.CancelledError:
        pass
    except TimeoutError:
        print(f"{marker}: the cancelled call had not ended 20 s later", flush=True)
    left: list[int] = []
    for _ in range(50):  # bounded: 0.5 s for the kernel to finish the kills
        left = _with(marker)
        if not left:
            break
        await asyncio.sleep(0.01)
    for pid in left:  # clean up after a leak (this machine is shared)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


async def main(rounds: int, steps: int, burn: int) -> None:
    stop = time.monotonic() + 3600
    burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True)
               for _ in range(burn)]
    for b in burners:
        b.start()
    leaks = {"required": 0, "off": 0}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp)
            tool = RunCommand()
            ctxs = {m: ToolContext(workspace=ws, settings=load_settings(
                env={"OPENPROGRAM_SANDBOX": m}, user_file=False)) for m in leaks}
            for i in range(rounds):
                mode = "required" if i % 2 == 0 else "off"
                marker = f"{900 + i % 97}.{os.getpid()}{i:04d}"
                left = await _round(tool, ctxs[mode], marker, i // 2 % steps, i % 7)
                if left:
                    leaks[mode] += 1
                    print(f"round {i} ({mode}, {i // 2 % steps} turns, {i % 7} ms): "
                          f"{len(left)} processes outlived the cancel", flush=True)
    finally:
        for b in burners:
            b.terminate()
    print(f"load {os.getloadavg()[0]:.1f}; leaks: sandboxed {leaks['required']}/"
          f"{(rounds + 1) // 2}, unsandboxed {leaks['off']}/{rounds // 2}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--steps", type=int, default=12, help="event-loop turns to vary over")
    ap.add_argument("--burn", type=int, default=0, help="busy processes to add load")
    a = ap.parse_args()
    asyncio.run(main(a.rounds, a.steps, a.burn))
