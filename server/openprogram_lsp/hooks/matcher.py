"""Matcher semantics of Claude Code, and our tools under Claude Code's tool names.

An empty matcher or ``*`` matches everything. A matcher of letters, digits, ``_`` and ``|``
is a list of exact names. Anything else is a regular expression searched in the name. A tool
matches under its own name and under its Claude Code name, so ``"Edit|Write"`` written for
Claude Code matches ``edit_file`` and ``write_file``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

CLAUDE_NAMES: dict[str, tuple[str, ...]] = {
    "run_command": ("Bash",),
    "write_file": ("Write",),
    "edit_file": ("Edit", "MultiEdit"),
    "read_file": ("Read",),
    "list_dir": ("LS", "Glob"),
    "grep": ("Grep",),
    "agent": ("Task", "Agent"),
    "ask_user": ("AskUserQuestion",),
}
_EXACT = re.compile(r"[A-Za-z0-9_|]+")


@lru_cache(maxsize=512)
def _compiled(matcher: str) -> re.Pattern[str] | frozenset[str] | None:
    if matcher in ("", "*"):
        return None
    if _EXACT.fullmatch(matcher):
        return frozenset(p for p in matcher.split("|") if p)
    try:
        return re.compile(matcher)
    except re.error:
        return frozenset({matcher})  # an invalid pattern matches only itself


def names_of(tool: str) -> tuple[str, ...]:
    """A tool's own name and its Claude Code names."""
    return (tool, *CLAUDE_NAMES.get(tool, ()))


def matches(matcher: str, subject: str, *, aliases: tuple[str, ...] = ()) -> bool:
    """Whether a matcher selects a subject (a tool name, a compaction trigger, a source)."""
    compiled = _compiled(matcher)
    if compiled is None:
        return True
    candidates = (subject, *aliases)
    if isinstance(compiled, frozenset):
        return any(c in compiled for c in candidates)
    return any(compiled.search(c) is not None for c in candidates)


def matches_tool(matcher: str, tool: str) -> bool:
    """Whether a matcher selects a tool, by our name or its Claude Code one."""
    return matches(matcher, tool, aliases=CLAUDE_NAMES.get(tool, ()))


def claude_input(tool: str, arguments: dict[str, Any], workspace: str) -> dict[str, Any]:
    """The tool input with Claude Code's field names added (``file_path`` absolute, ...)."""
    out = dict(arguments)
    path = arguments.get("path")
    if isinstance(path, str) and tool in ("write_file", "edit_file", "read_file"):
        out.setdefault("file_path", f"{workspace.rstrip('/')}/{path.lstrip('/')}")
    if tool == "edit_file":
        if "old_text" in arguments:
            out.setdefault("old_string", arguments["old_text"])
        if "new_text" in arguments:
            out.setdefault("new_string", arguments["new_text"])
    return out
