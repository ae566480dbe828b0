"""Matcher semantics of Claude Code, and our tools under Claude Code's tool names.

An empty matcher or ``*`` matches everything. A matcher of letters, digits, ``_`` and ``|``
is a list of exact names. Anything else is a regular expression searched in the name. A tool
matches under its own name and under its Claude Code name, so ``"Edit|Write"`` written for
Claude Code matches ``edit_file`` and ``write_file`` (the names: ``claude_tools.TOOLS``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from openprogram_lsp.tools.claude_tools import names_of

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
    return matches(matcher, tool, aliases=names_of(tool)[1:])
