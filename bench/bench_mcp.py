"""An MCP tool round trip vs the same tool's direct Python call, interleaved, same run.

Three ways to call the demo server's ``echo``: through our registry tool (``McpTool.run``: the
hop to the MCP loop, the SDK's stdio client, a real server subprocess, result conversion); the
SDK's own client calling an identical server from this loop (what the SDK alone costs); and
the tool's Python function called directly (what the work itself costs). Rounds alternate
A B C A B C ..., each round ``N`` calls; medians of ``ROUNDS`` rounds. Then a stdio server's
start to close on our transport against the SDK's ``stdio_client``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.tools.mcp.demo import DEMO, demo_def

from _util import report
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.mcp import McpHub

N = int(os.environ.get("BENCH_CALLS", "50"))
ROUNDS = max(7, int(os.environ.get("BENCH_ROUNDS", "9")))  # a median of 7 pairs at least


async def main() -> None:
    from mcp import Client, StdioServerParameters

    sys.path.insert(0, str(DEMO.parent))
    import demo_server  # the same function the server runs, called in-process

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        hub = McpHub(ws / "home", read_user_config=False)
        hub.set_editor_servers({"demo": demo_def()})
        tools = {t.name: t for t in await hub.tools_for(ws)}
        tool = tools["mcp__demo__echo"]
        ctx = ToolContext(workspace=ws)
        args = tool.parse({"text": "ping"})
        params = StdioServerParameters(command=sys.executable, args=[str(DEMO)])
        async with Client(params, cache=None) as sdk:

            async def ours() -> None:
                for _ in range(N):
                    out = await tool.run(args, ctx)
                    assert out.text == "ping", out

            async def bare_sdk() -> None:
                for _ in range(N):
                    res = await sdk.call_tool("echo", {"text": "ping"})
                    assert not res.is_error

            async def direct() -> None:
                for _ in range(N):
                    assert demo_server.echo("ping") == "ping"

            samples: dict[str, list[float]] = {"ours": [], "sdk": [], "direct": []}
            runs = {"ours": ours, "sdk": bare_sdk, "direct": direct}
            for i in range(ROUNDS + 1):  # the first round warms up
                for name, fn in runs.items():
                    t0 = time.perf_counter()
                    await fn()
                    if i:
                        samples[name].append((time.perf_counter() - t0) / N)
        await hub.aclose()
    med = {k: statistics.median(v) for k, v in samples.items()}
    report("MCP tool round trip (registry tool, stdio)", med["ours"], med["direct"], unit="us")
    report("  same call through the bare SDK client", med["sdk"], med["direct"], unit="us")
    report("  ours vs the bare SDK client", med["ours"], med["sdk"], unit="us",
           target="ratio <= 1.3")

    await starts()


async def starts() -> None:
    """A stdio server's whole life, start to handshake to close, on our transport
    (``tools.mcp.stdio``: procs.spawn, the death guard, our reap) against the SDK's
    ``stdio_client``, with the standard-library test server (it starts in milliseconds, so
    the transport's part shows); interleaved, median of ``ROUNDS * 2`` pairs."""
    from mcp import Client, StdioServerParameters

    from openprogram_lsp.tools.mcp.stdio import stdio_server

    tiny = Path(__file__).resolve().parent.parent / "tests" / "tools" / "mcp" / "tiny_server.py"
    env = dict(os.environ)

    async def ours() -> None:
        async with Client(stdio_server(sys.executable, [str(tiny)], env=env, cwd=Path.cwd(),
                                       stderr=2), cache=None) as client:
            await client.list_tools()

    async def sdk() -> None:
        params = StdioServerParameters(command=sys.executable, args=[str(tiny)], env=env)
        async with Client(params, cache=None) as client:
            await client.list_tools()

    samples: dict[str, list[float]] = {"ours": [], "sdk": []}
    for i in range(ROUNDS * 2 + 1):
        for name, fn in (("ours", ours), ("sdk", sdk))[::1 if i % 2 else -1]:
            t0 = time.perf_counter()
            await fn()
            if i:
                samples[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in samples.items()}
    report("stdio server start, handshake, close (ours)", med["ours"], med["sdk"],
           target="baseline = the SDK's stdio_client; ratio ~1")


if __name__ == "__main__":
    asyncio.run(main())
