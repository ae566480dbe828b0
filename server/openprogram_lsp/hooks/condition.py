"""A hook's ``if``: Claude Code's permission-rule syntax narrowing which tool calls it runs on.

``"if": "Bash(git *)"`` runs the hook only for shell commands starting ``git ``; ``Edit(*.ts)``
only for edits of TypeScript files; ``WebFetch(domain:example.com)`` only for that host (and
its subdomains); a bare ``Bash`` for every call of the tool. The rule is read against the call
as hooks see it (Claude Code's names and fields, ``claude_tools``). ``Bash(npm test:*)`` is a
prefix, as in Claude Code's rules. Path patterns are gitignore-like: relative to the workspace
(``/src/**``, ``src/*.py``), absolute with ``//``, under home with ``~/``; a pattern without a
``/`` matches the file's name in any directory. On an event that is not about a tool call a
hook with an ``if`` never runs (as in Claude Code); an ``if`` we cannot read never matches.
"""

from __future__ import annotations

import os
import re
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from openprogram_lsp.hooks.matcher import matches_tool

TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure",
                         "PermissionRequest"})
_RULE = re.compile(r"^\s*([A-Za-z0-9_]+)\s*(?:\((.*)\))?\s*$", re.S)
_PATH_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep",
                         "LS"})


@lru_cache(maxsize=256)
def parse(rule: str) -> tuple[str, str | None] | None:
    """``(tool, pattern or None)`` of a rule, or None when it is not one."""
    m = _RULE.match(rule)
    if m is None:
        return None
    return m.group(1), m.group(2)


def _command(pattern: str, command: str) -> bool:
    if pattern.endswith(":*"):  # the legacy prefix form
        return command.strip().startswith(pattern[:-2])
    return fnmatchcase(command.strip(), pattern)


def _glob(pattern: str, path: str) -> bool:
    """gitignore-like: ``**`` any directories, ``*`` within one."""
    regex = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*\*", ".*")
    regex = regex.replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
    return re.fullmatch(regex, path) is not None


def _path(pattern: str, target: str, workspace: str) -> bool:
    if not target:
        return False
    absolute = os.path.normpath(os.path.join(workspace, target))
    if pattern.startswith("//"):
        return _glob(os.path.normpath(pattern[1:]), absolute)
    if pattern.startswith("~/"):
        return _glob(os.path.normpath(os.path.expanduser(pattern)), absolute)
    rel = os.path.relpath(absolute, workspace)
    if rel.startswith(".."):
        return False
    pattern = pattern[2:] if pattern.startswith("./") else pattern
    if pattern.startswith("/"):
        return _glob(pattern[1:], rel)
    if "/" not in pattern:  # a name: in any directory
        return _glob(pattern, PurePosixPath(rel).name) or _glob(pattern, rel)
    return _glob(pattern, rel)


def _host(pattern: str, url: str) -> bool:
    if not pattern.startswith("domain:"):
        return fnmatchcase(url, pattern)
    want = pattern[len("domain:"):].lower()
    host = (urlsplit(url).hostname or "").lower()
    return host == want or host.endswith("." + want)


def holds(rule: str, event: str, tool: str | None, claude_input: dict[str, Any],
          workspace: str) -> bool:
    """Whether a hook's ``if`` lets it run on this event (``claude_input``: the call's
    ``tool_input`` as hooks get it)."""
    if event not in TOOL_EVENTS or tool is None:
        return False
    parsed = parse(rule)
    if parsed is None:
        return False
    name, pattern = parsed
    if not matches_tool(name, tool):
        return False
    if pattern is None or pattern in ("", "*"):
        return True
    if "command" in claude_input and isinstance(claude_input["command"], str):
        return _command(pattern, claude_input["command"])
    if "url" in claude_input and isinstance(claude_input["url"], str):
        return _host(pattern, claude_input["url"])
    if name in _PATH_TOOLS or "file_path" in claude_input:
        target = claude_input.get("file_path") or claude_input.get("path") or ""
        return isinstance(target, str) and _path(pattern, target, workspace)
    return any(isinstance(v, str) and fnmatchcase(v, pattern) for v in claude_input.values())
