"""Permission modes and remembered rules: whether a tool call runs, asks, or is refused."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from openprogram_lsp.core.fsutil import atomic_write
from openprogram_lsp.core.types import PermissionMode, ToolKind

Decision = Literal["allow", "ask", "deny"]
READ_KINDS: frozenset[str] = frozenset({"read", "search", "think", "fetch"})
EDIT_KINDS: frozenset[str] = frozenset({"edit", "delete", "move"})


def mode_decision(mode: PermissionMode, kind: ToolKind) -> Decision:
    """What a permission mode says about a tool kind, before rules."""
    if kind in READ_KINDS:
        return "allow"
    if mode == "bypass":
        return "allow"
    if mode == "plan":
        return "deny"
    if mode == "accept-edits" and kind in EDIT_KINDS:
        return "allow"
    return "ask"


@dataclass(frozen=True, slots=True)
class Rule:
    """A remembered decision: a tool-name pattern, an optional input pattern, allow or deny."""

    tool: str
    decision: Literal["allow", "deny"]
    pattern: str | None = None  # fnmatch against the call's primary argument (path or command)

    def matches(self, tool: str, subject: str | None) -> bool:
        """Whether the rule applies to a call."""
        if not fnmatchcase(tool, self.tool):
            return False
        return self.pattern is None or (subject is not None and fnmatchcase(subject, self.pattern))

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "decision": self.decision, "pattern": self.pattern}


def call_subject(arguments: dict[str, Any]) -> str | None:
    """The argument rules match against: a path or a command."""
    for key in ("path", "command", "to"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value
    return None


class RuleBook:
    """Rules for one workspace, persisted under ``$OPENPROGRAM_HOME/rules/``; deny beats allow."""

    def __init__(self, path: Path | None = None, rules: list[Rule] | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._rules: list[Rule] = list(rules or [])
        self._config_rules: list[Rule] = []
        if path is not None and path.exists():
            data = json.loads(path.read_text("utf-8"))
            self._rules.extend(Rule(r["tool"], r["decision"], r.get("pattern"))
                               for r in data.get("rules", []))

    @staticmethod
    def for_workspace(home: Path, workspace: Path) -> RuleBook:
        """The persisted rule book of a workspace."""
        key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
        path = home / "rules" / f"{key}.json"
        return RuleBook(path)

    @property
    def rules(self) -> list[Rule]:
        """Remembered rules, then rules from configuration."""
        with self._lock:
            return [*self._rules, *self._config_rules]

    def decide(self, tool: str, arguments: dict[str, Any]) -> Decision | None:
        """The remembered decision for a call, if any rule matches."""
        rule = self.match(tool, arguments)
        return rule.decision if rule is not None else None

    def match(self, tool: str, arguments: dict[str, Any]) -> Rule | None:
        """The rule deciding a call (a denying one first), if any matches."""
        subject = call_subject(arguments)
        hits = [r for r in self.rules if r.matches(tool, subject)]
        return next((r for r in hits if r.decision == "deny"), hits[0] if hits else None)

    def add(self, rule: Rule) -> None:
        """Remember a rule (and persist it)."""
        with self._lock:
            self._rules = [r for r in self._rules
                           if (r.tool, r.pattern) != (rule.tool, rule.pattern)]
            self._rules.append(rule)
            rules = list(self._rules)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps({"rules": [r.to_dict() for r in rules]}, indent=1))

    def replace_config_rules(self, rules: list[Rule]) -> None:
        """Set the rules that come from configuration (not persisted; replaces earlier ones)."""
        with self._lock:
            self._config_rules = list(rules)


class _ClientRules(RuleBook):
    """A workspace's rule book seen with one client's own rules after it (not persisted)."""

    def __init__(self, base: RuleBook, extra: list[Rule]) -> None:
        super().__init__(None, [])
        self.base = base
        self._extra = list(extra)

    @property
    def rules(self) -> list[Rule]:
        return [*self.base.rules, *self._extra]

    def add(self, rule: Rule) -> None:
        self.base.add(rule)


def with_client_rules(book: RuleBook, extra: list[Any]) -> RuleBook:
    """``book`` plus the rules one connection gave at ``initialize`` (only its own turns)."""
    rules = [r for r in extra if isinstance(r, Rule)]
    return _ClientRules(book, rules) if rules else book
