"""Remembered permission rules and what each one covers.

A rule made from a prompt covers exactly what the prompt showed: one simple command (a compound
command is allowed only when every part has its rule), edits to one file, to one folder or to
the whole workspace, one exact call of another tool, or every call of one MCP server's tool.
Only rules the user writes in settings use patterns (``fnmatch``).

MCP tools are the server's, not ours: edit and command rules never cover them (an edit rule
made for ``write_file`` says nothing about ``mcp__git__git_reset``), and a tool the server
marks ``destructiveHint`` is allowed only by a rule naming that very tool. Every rule has a
scope (this session or this workspace) and records its origin: when, and for which call, it
was made.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from openprogram_lsp.core.types import ToolKind, Wire

Verdict = Literal["allow", "deny"]
RuleKind = Literal["command", "edit", "call", "tool", "pattern", "host"]
EditScope = Literal["file", "folder", "workspace"]
RuleScope = Literal["session", "workspace"]
RuleOrigin = Literal["prompt", "settings", "legacy"]
EDIT_KINDS: frozenset[str] = frozenset({"edit", "delete", "move"})


class Rule(Wire):
    """One standing decision.

    ``value`` is, by ``kind``: the exact text of a simple command; the workspace-relative path
    of a file or folder (``edit_scope``); the canonical JSON input of a call; a host (and
    port, when not the scheme's) a fetch may reach; None for a ``tool`` rule (every call of
    exactly ``tool``, an MCP tool); or, for settings rules, an fnmatch pattern over the command
    part, path or URL (None: every call of ``tool``).
    """

    id: str
    decision: Verdict
    kind: RuleKind
    tool: str
    value: str | None = None
    edit_scope: EditScope | None = None
    scope: RuleScope = "workspace"
    session_id: str | None = None
    branch: str | None = None  # a session rule made on a reset fork: that fork's first node
    origin: RuleOrigin = "prompt"
    created_at: str = ""
    tool_call_id: str | None = None
    turn_id: str | None = None
    description: str = ""

    def applies_in(self, session_id: str | None, branch: str | None = None) -> bool:
        """Whether the rule's scope includes a call of this session, on a branch whose rules
        scope is ``branch`` (the nearest reset fork above it; None: the session's own)."""
        return self.scope == "workspace" or (session_id is not None
                                             and self.session_id == session_id
                                             and self.branch == branch)

    def same_coverage(self, other: Rule) -> bool:
        """Whether two rules cover the same calls (a new one replaces the old)."""
        return (self.kind, self.tool, self.value, self.edit_scope, self.scope,
                self.session_id, self.branch) == (other.kind, other.tool, other.value,
                                                  other.edit_scope, other.scope,
                                                  other.session_id, other.branch)


@dataclass(frozen=True, slots=True)
class CallFacts:
    """What rules look at in a call."""

    tool: str
    kind: ToolKind
    arguments: dict[str, Any]
    session_id: str | None = None
    parts: tuple[str, ...] = ()  # simple commands, for execute calls
    path: str | None = None  # resolved workspace-relative path, for edits
    host: str | None = None  # the URL's host (``host:port`` off the default port), for fetches
    rules_branch: str | None = None  # the call's rules scope in its session (Rule.branch)
    mcp: tuple[str, str] | None = None  # (server, tool) of an MCP server's tool
    destructive: bool = False  # an MCP tool marked destructiveHint

    @property
    def command(self) -> str | None:
        """The whole command text of an execute call."""
        value = self.arguments.get("command")
        return value.strip() if isinstance(value, str) else None


def canonical_input(arguments: dict[str, Any]) -> str:
    """The exact input of a call as one string (what a ``call`` rule compares)."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)


def in_folder(path: str, folder: str) -> bool:
    """Whether a workspace-relative path lies in a folder ("." is the workspace)."""
    folder = posixpath.normpath(folder)
    return folder == "." or path == folder or path.startswith(folder + "/")


def _subject(facts: CallFacts) -> str | None:
    for key in ("path", "command", "to", "url"):
        value = facts.arguments.get(key)
        if isinstance(value, str):
            return value
    return None


def covers(rule: Rule, facts: CallFacts, part: str | None = None) -> bool:
    """Whether a rule covers a call (for execute calls: one ``part`` of it)."""
    if not rule.applies_in(facts.session_id, facts.rules_branch):
        return False
    if facts.mcp is not None and rule.kind in ("command", "edit"):
        return False  # our edit and command rules say nothing about a server's tools
    if facts.destructive and rule.decision == "allow" and rule.tool != facts.tool:
        return False  # only a rule naming the destructive tool itself allows it
    if rule.kind == "tool":
        return rule.tool == facts.tool
    if rule.kind == "command":
        if facts.kind != "execute" or rule.tool != facts.tool:
            return False
        if part is not None:
            return part == rule.value
        return rule.value == facts.command
    if rule.kind == "edit":
        if facts.kind not in EDIT_KINDS:
            return False
        if rule.edit_scope == "workspace":
            return True
        if facts.path is None or rule.value is None:
            return False
        if rule.edit_scope == "file":
            return facts.path == rule.value
        return in_folder(facts.path, rule.value)
    if rule.kind == "call":
        return rule.tool == facts.tool and rule.value == canonical_input(facts.arguments)
    if rule.kind == "host":
        return rule.tool == facts.tool and facts.host is not None and rule.value == facts.host
    # a pattern the user wrote in settings
    if not fnmatchcase(facts.tool, rule.tool):
        return False
    if rule.value is None:
        return True
    subject = part if part is not None else (facts.path or _subject(facts))
    return subject is not None and fnmatchcase(subject, rule.value)


def decide(rules: list[Rule], facts: CallFacts) -> Verdict | None:
    """Deny when a deny rule covers the call or any part of it; allow when allow rules cover
    the call (every part of a command); else None (the mode decides, usually: ask)."""
    denies = [r for r in rules if r.decision == "deny"]
    allows = [r for r in rules if r.decision == "allow"]
    if facts.kind == "execute" and facts.parts:
        if any(covers(r, facts) or any(covers(r, facts, p) for p in facts.parts)
               for r in denies):
            return "deny"
        if all(any(covers(r, facts, p) for r in allows) for p in facts.parts):
            return "allow"
        return None
    if any(covers(r, facts) for r in denies):
        return "deny"
    return "allow" if any(covers(r, facts) for r in allows) else None


def deciding(rules: list[Rule], facts: CallFacts) -> list[Rule]:
    """The rules behind ``decide``: the first deny that covers the call (or a part), else the
    first allow covering the call, or each part of a command (empty when no rule decides)."""
    verdict = decide(rules, facts)
    if verdict is None:
        return []
    parts: list[str | None] = list(facts.parts) if facts.kind == "execute" and facts.parts \
        else [None]
    if verdict == "deny":
        for r in rules:
            if r.decision == "deny" and (covers(r, facts) or any(
                    p is not None and covers(r, facts, p) for p in parts)):
                return [r]
        return []
    out: list[Rule] = []
    for part in parts:
        hit = next((r for r in rules if r.decision == "allow" and covers(r, facts, part)), None)
        if hit is not None and hit not in out:
            out.append(hit)
    return out


def uncovered_parts(rules: list[Rule], facts: CallFacts) -> list[str]:
    """The parts of a command no allow rule covers yet (what a prompt asks about)."""
    allows = [r for r in rules if r.decision == "allow"]
    return [p for p in facts.parts if not any(covers(r, facts, p) for r in allows)]
