"""An ACP prompt turn against the same turn over LSP, in the same run, interleaved A B A B.

Both front ends run as subprocesses on the offline model with their own state root, each
continuing one session: ``openprogram-lsp acp`` driven by the ACP SDK's client, and
``openprogram-lsp serve`` driven by a pygls client.

1. a text turn (no tools);
2. an edit turn in ``ask`` mode: the tool call, the approval round trip (the client allows),
   the write and the checkpoint.

Run: ``.venv/bin/python bench/bench_acp.py [--rounds N]`` (median of N, default 15).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acp.schema import AllowedOutcome, ClientCapabilities, RequestPermissionResponse
from acp.stdio import spawn_agent_process
from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

from acp import PROTOCOL_VERSION, text_block
from openprogram_lsp.lsp.protocol import OpenProgramProtocol, RawNotification, RawRequest


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env.update(OPENPROGRAM_HOME=str(home), OPENPROGRAM_MODEL="offline")
    return env


class AcpClient:
    """Allows every permission request; ignores updates."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id="allow_once"))

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


class _Protocol(OpenProgramProtocol):
    def get_message_type(self, method: str) -> Any:  # type: ignore[override]
        if method.startswith("openprogram/"):
            return RawNotification if method == "openprogram/event" else RawRequest
        return super(OpenProgramProtocol, self).get_message_type(method)


class LspClient(BaseLanguageClient):
    """Allows every ``openprogram/requestPermission``."""

    def __init__(self) -> None:
        super().__init__("bench", "0", protocol_cls=_Protocol)

        @self.feature("openprogram/event")
        def _event(params: Any) -> None:
            return None

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def _log(params: Any) -> None:
            return None

        @self.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            return {"outcome": "selected", "optionId": "allow_once"}


async def run(rounds: int) -> None:
    """Time both front ends turn by turn and print the medians."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ws_acp, ws_lsp = tmp / "ws_acp", tmp / "ws_lsp"
        ws_acp.mkdir()
        ws_lsp.mkdir()
        lsp = LspClient()
        await lsp.start_io(sys.executable, "-m", "openprogram_lsp", "serve",
                           env=_env(tmp / "home_lsp"))
        await lsp.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(
                experimental={"openprogram": {"permissions": True}}),
            workspace_folders=[types.WorkspaceFolder(uri=ws_lsp.as_uri(), name="ws")]))
        lsp.initialized(types.InitializedParams())
        async with spawn_agent_process(AcpClient(), sys.executable, "-m", "openprogram_lsp.cli",
                                       "acp", env=_env(tmp / "home_acp"), cwd=ws_acp) as (
                conn, _proc):
            await conn.initialize(protocol_version=PROTOCOL_VERSION,
                                  client_capabilities=ClientCapabilities())
            sid = (await conn.new_session(cwd=str(ws_acp))).session_id
            lsp_sid: str | None = None
            for label, make in (("text turn", lambda i: f"hello {i}"),
                                ("edit turn with approval",
                                 lambda i: f"write f{i}.txt\nline {i}\n")):
                acp_t, lsp_t = [], []
                for i in range(rounds + 2):  # two warm-up rounds, then interleaved
                    t0 = time.perf_counter()
                    resp = await conn.prompt(session_id=sid, prompt=[text_block(make(i))])
                    t1 = time.perf_counter()
                    params: dict[str, Any] = {"text": make(i)}
                    if lsp_sid:
                        params["sessionId"] = lsp_sid
                    result = await lsp.protocol.send_request_async("openprogram/chat", params)
                    t2 = time.perf_counter()
                    assert resp.stop_reason == "end_turn" and result["status"] == "done"
                    lsp_sid = result["sessionId"]
                    if i >= 2:
                        acp_t.append(t1 - t0)
                        lsp_t.append(t2 - t1)
                a, b = statistics.median(acp_t) * 1e3, statistics.median(lsp_t) * 1e3
                print(f"{label:<26} ACP {a:8.2f} ms   |   same turn over LSP {b:8.2f} ms   |   "
                      f"ratio {a / b:.2f}   (median of {rounds})", flush=True)
            assert (ws_acp / "f2.txt").exists() and (ws_lsp / "f2.txt").exists()
        await lsp.shutdown_async(None)
        lsp.exit(None)
        await lsp.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    asyncio.run(run(max(7, parser.parse_args().rounds)))  # a median of 7 pairs at least
