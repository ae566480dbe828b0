"""Event-loop time blocked by starting one tool process: with ``setpriv --pdeathsig`` (what
``tools.procs.spawn`` uses) vs the ``preexec_fn`` it replaced (A B A B ..., median of 15 pairs).

A ``preexec_fn`` makes Python fork the whole server and wait for the child to run Python code;
the loop cannot serve the editor meanwhile. The process carries ``BENCH_HEAP_MB`` of small
objects (default 200), about what a server holding a few long sessions has.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import interleaved, report
from openprogram_lsp.tools.procs import die_with_parent, pdeathsig_prefix


def main() -> None:
    prefix = pdeathsig_prefix()
    if prefix is None:
        raise SystemExit("setpriv --pdeathsig is not available here")
    heap = [bytearray(1024) for _ in range(int(os.environ.get("BENCH_HEAP_MB", "200")) * 1000)]
    loop = asyncio.new_event_loop()
    blocked: dict[bool, list[float]] = {True: [], False: []}

    async def start(fast: bool) -> None:
        t0 = time.perf_counter()
        proc = await (asyncio.create_subprocess_exec(*prefix, "/bin/true",
                                                     start_new_session=True) if fast else
                      asyncio.create_subprocess_exec("/bin/true", start_new_session=True,
                                                     preexec_fn=die_with_parent()))
        blocked[fast].append(time.perf_counter() - t0)  # Popen runs in the loop: all blocks
        await proc.wait()

    fast, slow = interleaved(lambda: loop.run_until_complete(start(True)),
                             lambda: loop.run_until_complete(start(False)), pairs=15)
    report("loop blocked per spawn: setpriv vs preexec_fn",
           statistics.median(blocked[True][1:]), statistics.median(blocked[False][1:]))
    report("spawn to exit: setpriv vs preexec_fn", fast, slow)
    loop.close()
    del heap


if __name__ == "__main__":
    main()
