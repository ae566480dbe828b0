"""Helpers for the hook tests: settings files, hook scripts, scripted tool calls."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def user_settings(data: dict[str, Any]) -> Path:
    """Write the user-level settings file (under the test's XDG_CONFIG_HOME)."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "openprogram-lsp" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def workspace_settings(workspace: Path, data: dict[str, Any],
                       rel: str = ".openprogram/settings.json") -> Path:
    """Write a workspace settings file."""
    path = workspace / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def script_hook(directory: Path, name: str, body: str) -> str:
    """A Python hook script; returns the command that runs it."""
    path = directory / f"{name}.py"
    path.write_text("import json, os, sys\n" + body)
    return f"{sys.executable} {path}"


def on(event: str, command: str, matcher: str = "", **extra: Any) -> dict[str, Any]:
    """A ``hooks`` table with one command hook."""
    entry: dict[str, Any] = {"type": "command", "command": command, **extra}
    group: dict[str, Any] = {"hooks": [entry]}
    if matcher:
        group["matcher"] = matcher
    return {"hooks": {event: [group]}}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A scripted response making one tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def text(value: str) -> dict[str, Any]:
    """A scripted text response."""
    return {"text": value}


class _Endpoint(BaseHTTPRequestHandler):
    """A loopback http hook: records each POST; denies a call whose input says "deploy"."""

    seen: list[tuple[dict[str, str], dict[str, Any]]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append((dict(self.headers), body))
        answer = b""
        if "deploy" in json.dumps(body.get("tool_input")):
            answer = json.dumps({"hookSpecificOutput": {
                "hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "deploys need a ticket"}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def hook_endpoint() -> Iterator[tuple[str, list[tuple[dict[str, str], dict[str, Any]]]]]:
    """A loopback server for http hooks: its URL and what it received (headers, JSON)."""
    seen: list[tuple[dict[str, str], dict[str, Any]]] = []
    handler = type("Endpoint", (_Endpoint,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", seen
    finally:
        server.shutdown()
        server.server_close()
