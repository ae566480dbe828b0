"""Drive one turn of openprogram-lsp as a plain LSP client: raw JSON-RPC over stdio.

    python examples/lsp_client.py --workspace DIR "write notes.txt
    hello"

Starts ``openprogram-lsp serve`` (this interpreter's ``-m openprogram_lsp serve``), sends
``initialize`` declaring ``experimental.openprogram`` (so approvals come as
``openprogram/requestPermission``), sends ``openprogram/chat`` and prints the reply as the
``text.delta`` events stream in, each tool call, and the turn's status. Approvals are answered
"allow once" and printed (``--deny``: rejected). No library beyond the standard one: the
framing is LSP's ``Content-Length`` header, the messages are JSON-RPC 2.0 (docs/protocol.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "openprogram_lsp", "serve"]


class Connection:
    """One LSP connection to a server process: send requests, route what comes back."""

    def __init__(self, proc: asyncio.subprocess.Process, deny: bool) -> None:
        self.proc = proc
        self.deny = deny
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[Any]] = {}

    async def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.proc.stdin.drain()

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self.send({"id": self.next_id, "method": method, "params": params})
        return await future

    async def read_loop(self) -> None:
        reader = self.proc.stdout
        assert reader is not None
        while True:
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if not line:
                return  # the server exited
            message = json.loads(await reader.readexactly(length))
            if "method" not in message:  # a response to one of our requests
                future = self.pending.pop(message["id"])
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"]["message"]))
                else:
                    future.set_result(message.get("result"))
            elif "id" in message:  # a request from the server
                result = self.answer(message["method"], message.get("params") or {})
                await self.send({"id": message["id"], "result": result})
            elif message["method"] == "openprogram/event":
                show(message["params"])

    def answer(self, method: str, params: dict[str, Any]) -> Any:
        """What this client answers to the server's requests."""
        if method == "openprogram/requestPermission":
            choice = "reject_once" if self.deny else "allow_once"
            print(f"\n[approval] {params['toolCall']['title']}: {choice}", flush=True)
            return {"outcome": "selected", "optionId": choice}
        if method == "openprogram/askQuestion":
            options = params.get("options") or []
            print(f"\n[question] {params['question']}: {options[:1]}", flush=True)
            return {"answer": options[0]} if options else {"cancelled": True}
        return None  # nothing else is sent to a client declaring no other capability


def show(event: dict[str, Any]) -> None:
    """Print the events a reader wants to see."""
    kind, data = event["type"], event["data"]
    if kind == "text.delta":
        print(data["text"], end="", flush=True)
    elif kind == "tool.started":
        print(f"\n[tool] {data['title']}", flush=True)
    elif kind == "tool.finished":
        print(f"[tool {data['status']}] {data['output'][:200]}", flush=True)


async def run(text: str, workspace: Path, deny: bool) -> int:
    proc = await asyncio.create_subprocess_exec(
        *SERVER, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "OPENPROGRAM_MODEL": os.environ.get("OPENPROGRAM_MODEL", "offline")})
    conn = Connection(proc, deny)
    reading = asyncio.ensure_future(conn.read_loop())
    try:
        await conn.request("initialize", {
            "processId": os.getpid(), "rootUri": workspace.as_uri(),
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
            "capabilities": {"experimental": {"openprogram": {"permissions": True,
                                                              "questions": True}}}})
        await conn.send({"method": "initialized", "params": {}})
        result = await conn.request("openprogram/chat", {"text": text})
        print(f"\n[turn {result['status']}] session {result['sessionId']}")
        await conn.request("shutdown", None)
        await conn.send({"method": "exit"})
        await asyncio.wait_for(proc.wait(), 30)
        return 0 if result["status"] == "done" else 1
    finally:
        reading.cancel()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text", help="the message")
    parser.add_argument("--workspace", type=Path, default=Path.cwd(), help="default: cwd")
    parser.add_argument("--deny", action="store_true", help="reject every approval")
    args = parser.parse_args()
    return asyncio.run(run(args.text, args.workspace.resolve(), args.deny))


if __name__ == "__main__":
    sys.exit(main())
