"""Consume ``openprogram-lsp chat --json``: one JSON event per line, the turn's result last.

    python examples/chat_json.py --workspace DIR --permission-mode accept-edits "write notes.txt
    hello"

Runs one turn with this interpreter's ``-m openprogram_lsp chat --json`` and reads its standard
output line by line as the turn runs: the reply's ``text.delta`` pieces are joined, each tool
call is matched with its outcome (``tool.started`` / ``tool.finished``), and the last line
(``{"type": "result", "data": TurnResult}``) gives the status. A script has no terminal to
approve on, so calls that need approval are refused (exit code 3) unless a permission mode
allows them. The event types are those of ``openprogram/event`` (docs/protocol.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text", help="the message")
    parser.add_argument("--workspace", type=Path, default=Path.cwd(), help="default: cwd")
    parser.add_argument("--permission-mode", default="ask",
                        help="ask (default), accept-edits, plan or bypass")
    args = parser.parse_args()
    command = [sys.executable, "-m", "openprogram_lsp", "chat", "--json",
               "--workspace", str(args.workspace), "--permission-mode", args.permission_mode,
               args.text]
    env = {**os.environ, "OPENPROGRAM_MODEL": os.environ.get("OPENPROGRAM_MODEL", "offline")}
    pieces = 0
    tools: dict[str, dict[str, Any]] = {}
    result: dict[str, Any] = {}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                          env=env) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            kind, data = event["type"], event.get("data", {})
            if kind == "text.delta":  # a piece of the reply as it streams
                pieces += 1
            elif kind == "tool.started":
                tools[data["toolCallId"]] = {"name": data["name"], "title": data["title"]}
            elif kind == "tool.finished":
                tools[data["toolCallId"]].update(status=data["status"], output=data["output"])
            elif kind == "result":
                result = data
    for call in tools.values():
        print(f"tool {call['name']} ({call['title']}): {call.get('status')}: "
              f"{str(call.get('output', ''))[:200]}")
    print(f"reply ({pieces} streamed pieces): {result.get('text', '')!r}")
    print(f"status: {result.get('status')}, session {result.get('sessionId')}, "
          f"exit code {proc.returncode}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
