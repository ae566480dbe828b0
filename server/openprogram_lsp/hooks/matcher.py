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
    "edit_file": ("Edit",),
    "multi_edit": ("MultiEdit",),
    "read_file": ("Read",),
    "list_dir": ("LS",),
    "find_files": ("Glob",),
    "grep": ("Grep",),
    "todo_write": ("TodoWrite",),
    "web_fetch": ("WebFetch",),
    "command_output": ("BashOutput", "TaskOutput"),
    "command_stop": ("KillShell", "KillBash", "TaskStop"),
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
    if isinstance(path, str) and tool in ("write_file", "edit_file", "multi_edit", "read_file"):
        out.setdefault("file_path", f"{workspace.rstrip('/')}/{path.lstrip('/')}")
    if tool == "edit_file":
        for key, value in _claude_edit(arguments).items():
            out.setdefault(key, value)
    if tool == "multi_edit" and isinstance(arguments.get("edits"), list):
        out["edits"] = [{**_claude_edit(e), **e} if isinstance(e, dict) else e
                        for e in arguments["edits"]]
    if tool in ("command_output", "command_stop") and isinstance(arguments.get("id"), str):
        for key in ("bash_id", "shell_id", "task_id"):  # old and new names
            out.setdefault(key, arguments["id"])
    if tool == "run_command" and arguments.get("background") is True:
        out.setdefault("run_in_background", True)
    return out


def _claude_edit(edit: dict[str, Any]) -> dict[str, Any]:
    """One edit's fields under Claude Code's names (``old_string``, ``new_string``)."""
    out: dict[str, Any] = {}
    if "old_text" in edit:
        out["old_string"] = edit["old_text"]
    if "new_text" in edit:
        out["new_string"] = edit["new_text"]
    return out
