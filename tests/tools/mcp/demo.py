"""Where the demo MCP server lives and how a definition of it looks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

DEMO = Path(__file__).with_name("demo_server.py")


def demo_def(*flags: str, notes: Path | None = None, **extra: Any) -> dict[str, Any]:
    """A stdio definition of the demo server."""
    env = {"DEMO_DIR": str(notes)} if notes is not None else {}
    return {"command": sys.executable, "args": [str(DEMO), *flags], "env": env, **extra}
