"""Language-server benchmarks, each printed beside a baseline measured in the same run.

1. ``openprogram/sessions`` round trip vs a bare pygls server answering a no-op custom request.
2. One whole ``openprogram/chat`` turn (offline model, no tools) over stdio vs the same turn in
   process (``Dispatcher.run_turn``).
3. ``file.changed`` latency: from a file write to the client's notification, median of 50,
   beside a bare ``watchfiles`` watcher in the bench process (same step), interleaved.

Run: ``.venv/bin/python bench/bench_lsp.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

from openprogram_lsp.lsp.protocol import OpenProgramProtocol, RawNotification, RawRequest

BARE_SERVER = textwrap.dedent("""
    from pygls.lsp.server import LanguageServer
    server = LanguageServer("bare", "0")

    @server.feature("bench/noop")
    def noop(ls, params):
        return {}

    server.start_io()
""")


class _ClientProtocol(OpenProgramProtocol):
    """Client side: openprogram/* payloads stay plain JSON."""

    def get_message_type(self, method: str) -> Any:  # type: ignore[override]
        if method.startswith("openprogram/"):
            return RawNotification if method == "openprogram/event" else RawRequest
        return super(OpenProgramProtocol, self).get_message_type(method)


class Client(BaseLanguageClient):
    """A minimal client recording ``openprogram/event`` arrival times."""

    def __init__(self) -> None:
        super().__init__("bench", "0", protocol_cls=_ClientProtocol)
        self.waiters: list[tuple[str, asyncio.Future[float]]] = []

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def _log(params: Any) -> None:
            pass

        @self.feature("openprogram/event")
        def _event(params: Any) -> None:
            if params.get("type") != "file.changed":
                return
            now = time.perf_counter()
            paths = {c["path"] for c in params["data"]["changes"]}
            for path, fut in list(self.waiters):
                if path in paths and not fut.done():
                    fut.set_result(now)


async def _start(cmd: list[str], env: dict[str, str], root: Path | None = None) -> Client:
    client = Client()
    await client.start_io(cmd[0], *cmd[1:], env=env)
    folders = [types.WorkspaceFolder(uri=root.as_uri(), name="ws")] if root else None
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), workspace_folders=folders))
    client.initialized(types.InitializedParams())
    return client


async def _stop(client: Client) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def _timed(client: Client, method: str) -> float:
    t0 = time.perf_counter()
    await client.protocol.send_request_async(method, {})
    return time.perf_counter() - t0


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env["OPENPROGRAM_HOME"] = str(home)
    env["OPENPROGRAM_MODEL"] = "offline"
    return env


async def bench_round_trip(tmp: Path, rounds: int) -> tuple[float, float]:
    """Median ms of openprogram/sessions and of the bare no-op."""
    script = tmp / "bare_server.py"
    script.write_text(BARE_SERVER)
    bare = await _start([sys.executable, str(script)], _env(tmp / "home"))
    ws = tmp / "ws_rt"
    ws.mkdir()
    ours = await _start([sys.executable, "-m", "openprogram_lsp", "serve"],
                        _env(tmp / "home"), ws)
    for i in range(3):  # a few sessions to list
        await ours.protocol.send_request_async("openprogram/chat", {"text": f"hello {i}"})
    mine, base = [], []
    for i in range(rounds + 20):  # interleaved, so both see the same machine load
        b = await _timed(bare, "bench/noop")
        m = await _timed(ours, "openprogram/sessions")
        if i >= 20:
            base.append(b)
            mine.append(m)
    await _stop(bare)
    await _stop(ours)
    return statistics.median(mine) * 1000, statistics.median(base) * 1000


async def bench_chat(tmp: Path, rounds: int) -> tuple[float, float]:
    """Median ms of one offline turn over stdio, and in process."""
    from openprogram_lsp.app import AppConfig, build_dispatcher
    from openprogram_lsp.core.types import TurnRequest

    ws = tmp / "ws_chat"
    ws.mkdir()
    ours = await _start([sys.executable, "-m", "openprogram_lsp", "serve"],
                        _env(tmp / "home_chat_lsp"), ws)
    dispatcher = build_dispatcher(AppConfig(workspace=ws, home=tmp / "home_chat_inproc",
                                            model="offline"))
    remote_sid: str | None = None
    local_sid: str | None = None
    lsp_times, local_times = [], []
    for i in range(rounds + 3):  # interleaved, so both see the same machine load
        params: dict[str, Any] = {"text": f"hello {i}"}
        if remote_sid:
            params["sessionId"] = remote_sid
        t0 = time.perf_counter()
        result = await ours.protocol.send_request_async("openprogram/chat", params)
        t1 = time.perf_counter()
        res = await dispatcher.run_turn(TurnRequest(text=f"hello {i}", session_id=local_sid))
        t2 = time.perf_counter()
        remote_sid, local_sid = result["sessionId"], res.session_id
        if i >= 3:
            lsp_times.append(t1 - t0)
            local_times.append(t2 - t1)
    await _stop(ours)
    return statistics.median(lsp_times) * 1000, statistics.median(local_times) * 1000


async def bench_file_changed(tmp: Path, writes: int) -> tuple[float, float, float]:
    """Median ms from a write to the file.changed notification, beside a bare ``watchfiles``
    watcher (same step) in this process seeing a write to another folder, interleaved; and
    the slowest of ours."""
    from watchfiles import awatch

    from openprogram_lsp.store.watcher import STEP_MS

    ws, bare_ws = tmp / "ws_watch", tmp / "ws_bare"
    ws.mkdir()
    bare_ws.mkdir()
    ours = await _start([sys.executable, "-m", "openprogram_lsp", "serve"],
                        _env(tmp / "home_watch"), ws)
    loop = asyncio.get_running_loop()
    bare_waiters: dict[str, asyncio.Future[float]] = {}
    stop = asyncio.Event()

    async def bare_watch() -> None:
        async for changes in awatch(bare_ws, step=STEP_MS, stop_event=stop, rust_timeout=500):
            now = time.perf_counter()
            for _change, path in changes:
                fut = bare_waiters.pop(Path(path).name, None)
                if fut is not None and not fut.done():
                    fut.set_result(now)

    watcher = asyncio.ensure_future(bare_watch())
    await asyncio.sleep(0.5)  # both watchers start (ours after ``initialized``)
    latencies: list[float] = []
    bare: list[float] = []
    for i in range(max(7, writes)):
        for root, out in ((ws, latencies), (bare_ws, bare)):
            path = f"f{i}.txt"
            fut: asyncio.Future[float] = loop.create_future()
            if root == ws:
                ours.waiters.append((path, fut))
            else:
                bare_waiters[path] = fut
            t0 = time.perf_counter()
            (root / path).write_text(f"{i}\n")
            arrived = await asyncio.wait_for(fut, 10)
            out.append((arrived - t0) * 1000)
            await asyncio.sleep(0.05)
    stop.set()
    await watcher
    await _stop(ours)
    return statistics.median(latencies), statistics.median(bare), max(latencies)


async def main(rounds: int) -> None:
    """Run every benchmark and print the figures."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        mine, base = await bench_round_trip(tmp, rounds)
        print(f"round trip: openprogram/sessions {mine:.3f} ms  |  bare pygls no-op "
              f"{base:.3f} ms  |  ratio {mine / base:.2f} (budget <= 1.5)")
        lsp, local = await bench_chat(tmp, max(10, rounds // 10))
        print(f"chat turn (offline, no tools): over stdio {lsp:.2f} ms  |  in process "
              f"{local:.2f} ms  |  ratio {lsp / local:.2f} (budget <= 1.5)")
        med, bare, hi = await bench_file_changed(tmp, 50)
        print(f"file.changed latency over 50 writes: median {med:.1f} ms  |  bare watchfiles "
              f"{bare:.1f} ms  |  ratio {med / bare:.2f} (slowest {hi:.1f} ms; budget <= 100 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    asyncio.run(main(parser.parse_args().rounds))
