"""Where the demo MCP server lives and how a definition of it looks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests import forkserver

DEMO = Path(__file__).with_name("demo_server.py")


def python() -> str:
    """The command that runs ``DEMO``: a fork of the worker's fork server, which has imported
    the MCP SDK once (tests/forkclient.py), else this interpreter."""
    return forkserver.launcher(forkserver.SCRIPT) or sys.executable


def demo_def(*flags: str, notes: Path | None = None, exec_server: bool = False,
             **extra: Any) -> dict[str, Any]:
    """A stdio definition of the demo server; ``exec_server``: a real ``python demo_server.py``
    (for a check of the pid the client holds)."""
    env = {"DEMO_DIR": str(notes)} if notes is not None else {}
    command = sys.executable if exec_server else python()
    return {"command": command, "args": [str(DEMO), *flags], "env": env, **extra}


HOSTILE = Path(__file__).with_name("hostile_server.py")


def hostile_def(*flags: str, notes: Path | None = None) -> dict[str, Any]:
    """A stdio definition of the hostile server (``hostile_server.py``)."""
    env = {"DEMO_DIR": str(notes)} if notes is not None else {}
    return {"command": python(), "args": [str(HOSTILE), *flags], "env": env}


def trusted_editor_servers(hub: Any, block: dict[str, Any], owner: str = "editor") -> list[str]:
    """``hub.set_editor_servers`` with each definition already trusted, as the user's "allow"
    in a chat turn leaves it (editor-settings servers ask first: test_trust.py)."""
    from openprogram_lsp.tools.mcp.config import parse_servers

    problems: list[str] = hub.set_editor_servers(block, owner=owner)
    for d in parse_servers(block, "editor")[0]:
        hub.editor_trust.remember(d.name, d.fingerprint, "allow", command=d.describe(),
                                  persist=False)
    return problems
