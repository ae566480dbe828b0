"""An MCP tool round trip vs the same tool's direct Python call, interleaved, same run.

Three ways to call the demo server's ``echo``: through our registry tool (``McpTool.run``: the
hop to the MCP loop, the SDK's stdio client, a real server subprocess, result conversion); the
SDK's own client calling an identical server from this loop (what the SDK alone costs); and
the tool's Python function called directly (what the work itself costs). Rounds alternate
A B C A B C ..., each round ``N`` calls; medians of ``ROUNDS`` rounds.
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


if __name__ == "__main__":
    asyncio.run(main())
