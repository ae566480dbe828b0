"""A streamed turn over stdio LSP against the same turn in process, interleaved A B A B.

The scripted model replies with ``BENCH_CHUNKS`` (default 5,000) deltas of 8 characters and
no tool call. Over LSP: ``openprogram-lsp serve`` on the scripted model, driven by a pygls
client that counts the ``text.delta`` notifications of the turn and joins their text; in
process: ``Dispatcher.run_turn`` on the same script. Prints the medians, their ratio (target
<= 1.3x), the notifications per turn beside the bound (one per 16 ms of the turn plus 8), and
checks the joined text is the model's text exactly.

Run: ``.venv/bin/python bench/bench_streaming.py [--rounds N]`` (median of N, default 9).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

sys.path.insert(0, str(Path(__file__).parent))
from pygls.lsp.client import BaseLanguageClient

from bench_lsp import _ClientProtocol, _env, _stop

CHUNK = 8


def _text(chunks: int) -> str:
    """``chunks`` * 8 characters of varied text (multi-byte characters included)."""
    words = ["alpha ", "beta ", "γάμμα ", "delta\n", "eps ", "ζ ", "étoile ", "{\"k\": 1} "]
    out: list[str] = []
    size = 0
    i = 0
    while size < chunks * CHUNK:
        w = words[i % len(words)]
        out.append(w)
        size += len(w)
        i += 1
    return "".join(out)[:chunks * CHUNK]


class StreamClient(BaseLanguageClient):
    """Counts and joins the ``text.delta`` notifications it receives."""

    def __init__(self) -> None:
        super().__init__("bench", "0", protocol_cls=_ClientProtocol)
        self.deltas = 0
        self.parts: list[str] = []
        self.events = 0

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def _log(params: Any) -> None:
            pass

        @self.feature("openprogram/event")
        def _event(params: Any) -> None:
            self.events += 1
            if params.get("type") == "text.delta":
                self.deltas += 1
                self.parts.append(params["data"]["text"])


async def _start(env: dict[str, str], root: Path) -> StreamClient:
    client = StreamClient()
    wrap = shlex.split(os.environ.get("BENCH_WRAP", ""))  # a profiler's command, say
    cmd = [*wrap, sys.executable, "-m", "openprogram_lsp", "serve"]
    await client.start_io(cmd[0], *cmd[1:], env=env)
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")]))
    client.initialized(types.InitializedParams())
    return client


async def main(rounds: int, chunks: int) -> None:
    from openprogram_lsp.app import AppConfig, build_dispatcher
    from openprogram_lsp.core.types import TurnRequest

    text = _text(chunks)
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        turns = rounds + 2
        lsp_script, local_script = tmp / "lsp.json", tmp / "local.json"
        for script in (lsp_script, local_script):
            script.write_text(json.dumps([{"text": text}] * (2 * turns)))
        ws = tmp / "ws"
        ws.mkdir()
        env = _env(tmp / "home_lsp")
        env["OPENPROGRAM_MODEL"] = f"scripted:{lsp_script}"
        client = await _start(env, ws)
        dispatcher = build_dispatcher(AppConfig(workspace=ws, home=tmp / "home_local",
                                                model=f"scripted:{local_script}"))
        remote_sid: str | None = None
        local_sid: str | None = None
        lsp_times: list[float] = []
        local_times: list[float] = []
        counts: list[int] = []
        for i in range(turns):
            client.deltas, client.parts = 0, []
            params: dict[str, Any] = {"text": f"stream {i}"}
            if remote_sid:
                params["sessionId"] = remote_sid
            t0 = time.perf_counter()
            result = await client.protocol.send_request_async("openprogram/chat", params)
            t1 = time.perf_counter()
            res = await dispatcher.run_turn(TurnRequest(text=f"stream {i}",
                                                        session_id=local_sid))
            t2 = time.perf_counter()
            remote_sid, local_sid = result["sessionId"], res.session_id
            joined = "".join(client.parts)
            if joined != text or result["text"] != text or res.text != text:
                raise SystemExit(f"turn {i}: the streamed text differs from the model's "
                                 f"({len(joined)} vs {len(text)} characters; LSP result "
                                 f"{len(result['text'])}, {result.get('status')}, "
                                 f"{result.get('error')}; in process {len(res.text)})")
            if i >= 2:  # two warm-up turns
                lsp_times.append(t1 - t0)
                local_times.append(t2 - t1)
                counts.append(client.deltas)
        await _stop(client)
    lsp, local = statistics.median(lsp_times), statistics.median(local_times)
    print(f"streamed turn ({chunks} chunks): over stdio LSP {lsp * 1e3:.2f} ms  |  in process "
          f"{local * 1e3:.2f} ms  |  ratio {lsp / local:.2f} (target <= 1.3)")
    bound = lsp / 0.016 + 8
    print(f"text.delta notifications per turn: median {statistics.median(counts):.0f} "
          f"(max {max(counts)})  |  bound {bound:.0f} (one per 16 ms of the turn + 8)")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--chunks", type=int, default=int(os.environ.get("BENCH_CHUNKS",
                                                                          "5000")))
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.chunks))
