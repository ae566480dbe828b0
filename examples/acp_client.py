"""Run one prompt through openprogram-lsp's ACP agent with the ACP SDK's client side.

    python examples/acp_client.py --workspace DIR "write notes.txt
    hello"

Starts ``openprogram-lsp acp`` (this interpreter's ``-m openprogram_lsp acp``) as a child
process, initialises it, opens a session in the workspace, sends the prompt and prints the
agent's message chunks and tool calls as ``session/update`` notifications arrive, then the
stop reason. Permission requests are answered with the "allow once" option (``--deny``: the
"reject once" one). See docs/acp.md for what the agent offers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    RequestPermissionResponse,
)
from acp.stdio import spawn_agent_process

from acp import PROTOCOL_VERSION, text_block

AGENT = [sys.executable, "-m", "openprogram_lsp", "acp"]


class PrintingClient:
    """The client side: print updates, answer permission requests."""

    def __init__(self, deny: bool) -> None:
        self.kind = "reject_once" if deny else "allow_once"

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        kind = update.session_update
        if kind == "agent_message_chunk":
            print(getattr(update.content, "text", ""), end="", flush=True)
        elif kind == "tool_call":
            print(f"\n[tool] {update.title}", flush=True)
        elif kind == "tool_call_update" and update.status in ("completed", "failed"):
            print(f"[tool {update.status}]", flush=True)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        chosen = next((o for o in options if o.kind == self.kind), None)
        print(f"\n[approval] {tool_call.title}: {chosen.name if chosen else 'cancelled'}",
              flush=True)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=chosen.option_id))


async def run(text: str, workspace: Path, deny: bool) -> int:
    env = {**os.environ, "OPENPROGRAM_MODEL": os.environ.get("OPENPROGRAM_MODEL", "offline")}
    client = PrintingClient(deny)
    # acp.Client is a Protocol of every client method; this client offers no file system or
    # terminal capability, so the agent never calls those and they are left out
    async with spawn_agent_process(client, AGENT[0], *AGENT[1:], env=env,  # type: ignore[arg-type]
                                   cwd=workspace) as (conn, _proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION,
                              client_capabilities=ClientCapabilities(),
                              client_info=Implementation(name="example", version="0"))
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
        print(f"\n[stop {response.stop_reason}] session {session.session_id}")
        return 0 if response.stop_reason == "end_turn" else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text", help="the prompt")
    parser.add_argument("--workspace", type=Path, default=Path.cwd(), help="default: cwd")
    parser.add_argument("--deny", action="store_true", help="reject every approval")
    args = parser.parse_args()
    return asyncio.run(run(args.text, args.workspace.resolve(), args.deny))


if __name__ == "__main__":
    sys.exit(main())
