"""Helpers for the hook tests: settings files, hook scripts, scripted tool calls."""

from __future__ import annotations

import json
import os
import sys
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
