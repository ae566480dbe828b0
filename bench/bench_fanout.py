"""Event fan-out over ``serve --tcp``: one turn watched by 2 and 5 subscribed connections, each
printed beside the same turn watched by 1 (the driver alone), rounds interleaved 1 2 5 1 2 5 …

The figure is the time from sending ``openprogram/chat`` until every subscribed connection has
received the turn's ``turn.finished`` (all of its events before it, in order). Real loopback
sockets, a real server process, the offline model.

Run: ``.venv/bin/python bench/bench_fanout.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _util import report

LISTENING = re.compile(r"listening on 127\.0\.0\.1:(\d+); token ([^;\s]+)")


class Peer:
    """A minimal JSON-RPC client on one socket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.finished: dict[str, asyncio.Future[float]] = {}
        self.events = 0
        self.task = asyncio.ensure_future(self.pump())

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def pump(self) -> None:
        while True:
            length = 0
            while (line := await self.reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            msg = json.loads(await self.reader.readexactly(length))
            if msg.get("method") == "openprogram/event":
                self.events += 1
                ev = msg["params"]
                if ev["type"] == "turn.finished":
                    fut = self.finished.setdefault(ev["turnId"],
                                                   asyncio.get_running_loop().create_future())
                    if not fut.done():
                        fut.set_result(time.perf_counter())
            elif "id" in msg and msg["id"] in self.waiting:
                self.waiting.pop(msg["id"]).set_result(msg.get("result"))

    async def call(self, method: str, params: Any) -> Any:
        self.next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = fut
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await asyncio.wait_for(fut, 60)

    def finished_at(self, turn_id: str) -> asyncio.Future[float]:
        return self.finished.setdefault(turn_id, asyncio.get_running_loop().create_future())


async def _peer(port: int, token: str, ws: Path) -> Peer:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    peer = Peer(reader, writer)
    await peer.call("initialize", {"processId": None, "rootUri": ws.as_uri(),
                                   "capabilities": {},
                                   "initializationOptions": {"token": token,
                                                             "permissionMode": "bypass"}})
    peer.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return peer


async def main(rounds: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="op-fanout-"))
    ws = tmp / "ws"
    ws.mkdir()
    for i in range(20):
        (ws / f"f{i}.txt").write_text("x\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env["OPENPROGRAM_HOME"] = str(tmp / "home")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "openprogram_lsp", "serve", "--tcp", "0", env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE)
    assert proc.stderr is not None
    while not (m := LISTENING.search((await proc.stderr.readline()).decode())):
        pass
    port, token = int(m.group(1)), m.group(2)
    try:
        driver = await _peer(port, token, ws)
        watchers = [await _peer(port, token, ws) for _ in range(4)]
        sid = (await driver.call("openprogram/chat", {"text": "hello"}))["sessionId"]
        times: dict[int, list[float]] = {1: [], 2: [], 5: []}
        events: dict[int, int] = {}
        for r in range(rounds + 1):  # round 0 warms up
            for n in (1, 2, 5):
                for i, w in enumerate(watchers):
                    method = "openprogram/subscribe" if i < n - 1 else "openprogram/unsubscribe"
                    await w.call(method, {"sessionId": sid})
                seen = driver.events
                t0 = time.perf_counter()
                res = await driver.call("openprogram/chat", {"text": "list .",
                                                             "sessionId": sid})
                turn = res["assistantNodeId"]
                ends = [await asyncio.wait_for(p.finished_at(turn), 30)
                        for p in [driver, *watchers[:n - 1]]]
                if r:
                    times[n].append(max(ends) - t0)
                    events[n] = driver.events - seen
        base = statistics.median(times[1])
        report("turn watched by 1 connection (driver only)", base, base, unit="ms")
        for n in (2, 5):
            report(f"turn watched by {n} connections (fan-out)", statistics.median(times[n]),
                   base, unit="ms")
        print(f"{events[1]} events per turn; median of {rounds} interleaved rounds", flush=True)
    finally:
        proc.terminate()
        await proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    asyncio.run(main(max(7, parser.parse_args().rounds)))  # a median of 7 pairs at least
