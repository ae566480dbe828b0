"""A minimal MCP stdio server on the standard library alone (starts in milliseconds), for the
process-lifetime tests: it answers the handshake and an empty tool list.

``--child``: first start ``sleep <TINY_MARK>`` and write ``<server pid> <child pid>`` to
``TINY_PIDS``; ``--own-group``: that child in a process group of its own (out of reach of a
kill of the server's group). ``--hang``: ignore SIGTERM and, at the end of stdin, sleep
instead of exiting (a server that hangs on close).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def _answer(request: dict[str, object]) -> dict[str, object] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification
    if method == "initialize":
        params = request.get("params")
        version = params.get("protocolVersion") if isinstance(params, dict) else None
        result: dict[str, object] = {
            "protocolVersion": version or "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "tiny", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": []}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid,
                "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    if "--hang" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "--child" in sys.argv:
        child = subprocess.Popen(["sleep", os.environ.get("TINY_MARK", "42.0")],
                                 process_group=0 if "--own-group" in sys.argv else None,
                                 stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.environ["TINY_PIDS"] + ".tmp", "w") as fh:
            fh.write(f"{os.getpid()} {child.pid}")
        os.rename(os.environ["TINY_PIDS"] + ".tmp", os.environ["TINY_PIDS"])
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        answer = _answer(request) if isinstance(request, dict) else None
        if answer is not None:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    if "--hang" in sys.argv:
        time.sleep(600)


if __name__ == "__main__":
    main()
