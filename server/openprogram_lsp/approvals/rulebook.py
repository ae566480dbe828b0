"""The rules of one workspace: persisted under ``$OPENPROGRAM_HOME/rules/``, listed, revoked.

The file is re-read whenever its size or mtime changes, so a revoke from another process (the
CLI, a second editor) or a deleted file takes effect on the next call, with no restart. Writes
go through a lock file and an atomic rename. Rules from settings are kept apart: listed, never
written, and changed only by changing the settings.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from openprogram_lsp.approvals.rules import CallFacts, Rule, Verdict, decide, deciding
from openprogram_lsp.core.errors import NotFound, OpenProgramError
from openprogram_lsp.core.fsutil import atomic_write, protect_dir
from openprogram_lsp.core.ids import new_id, now_iso

log = logging.getLogger(__name__)
FORMAT_VERSION = 2


class RuleNotRevocable(OpenProgramError):
    """A settings rule: it goes away when the setting does."""

    code = -32602


def workspace_key(workspace: Path) -> str:
    """The file name stem of a workspace's rules."""
    return hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]


def _legacy(raw: dict[str, Any]) -> Rule | None:
    """A rule of the first file format ({tool, decision, pattern}) as it really behaved, but
    never a glob: a remembered command pattern becomes that exact command."""
    tool, decision, pattern = raw.get("tool"), raw.get("decision"), raw.get("pattern")
    if not isinstance(tool, str) or decision not in ("allow", "deny"):
        return None
    rid = "legacy-" + hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()[:10]
    if isinstance(pattern, str):
        return Rule(id=rid, decision=decision, kind="command", tool=tool, value=pattern.strip(),
                    origin="legacy", description=f"{decision} `{pattern.strip()}` (older rule)")
    edits = ("write_file", "edit_file", "multi_edit")
    what = "every edit" if tool in edits else f"every {tool} call"
    return Rule(id=rid, decision=decision, kind="pattern", tool=tool, origin="legacy",
                description=f"{decision} {what} (older rule)")


class RuleBook:
    """Rules for one workspace; deny beats allow."""

    def __init__(self, path: Path | None = None, rules: list[Rule] | None = None,
                 workspace: Path | None = None) -> None:
        self.path = path
        self.workspace = workspace
        self._lock = threading.Lock()
        self._memory: list[Rule] = list(rules or [])
        self._stored: list[Rule] = []
        self._stamp: tuple[int, int] | None = None
        self._config_rules: list[Rule] = []
        if path is not None:
            protect_dir(path.parent)

    @staticmethod
    def for_workspace(home: Path, workspace: Path) -> RuleBook:
        """The persisted rule book of a workspace."""
        path = home / "rules" / f"{workspace_key(workspace)}.json"
        return RuleBook(path, workspace=workspace.resolve())

    # -- reading ------------------------------------------------------------------------------

    def _read(self) -> list[Rule]:
        """The stored rules, re-read when the file changed (caller holds the lock)."""
        if self.path is None:
            return []
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._stored, self._stamp = [], None
            return []
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return self._stored
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable rules file %s: %s", self.path, exc)
            data = {}
        rules: list[Rule] = []
        for raw in data.get("rules", []) if isinstance(data, dict) else []:
            if not isinstance(raw, dict):
                continue
            if "kind" not in raw:
                legacy = _legacy(raw)
                if legacy is not None:
                    rules.append(legacy)
                continue
            try:
                rules.append(Rule.model_validate(raw))
            except ValidationError:
                log.warning("ignoring a malformed rule in %s", self.path)
        self._stored, self._stamp = rules, stamp
        return rules

    @property
    def rules(self) -> list[Rule]:
        """Remembered rules, then rules from configuration."""
        with self._lock:
            return [*self._memory, *self._read(), *self._config_rules]

    def listed(self, session_id: str | None = None) -> list[Rule]:
        """The rules a user sees: workspace rules, plus session rules (of one session, if given)."""
        return [r for r in self.rules
                if r.scope == "workspace" or session_id is None or r.session_id == session_id]

    def decide(self, facts: CallFacts) -> Verdict | None:
        """The standing decision for a call, if any rule covers it."""
        return decide(self.rules, facts)

    def deciding(self, facts: CallFacts) -> list[Rule]:
        """The rules behind ``decide`` (for the call's approval record)."""
        return deciding(self.rules, facts)

    # -- writing ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self) -> Iterator[list[Rule]]:
        """Read-modify-write the stored rules under a lock shared with other processes."""
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a+b") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                with self._lock:
                    self._stamp = None
                    rules = list(self._read())
                    yield rules
                    payload = {"version": FORMAT_VERSION,
                               "workspace": str(self.workspace) if self.workspace else None,
                               "rules": [r.model_dump(mode="json") for r in rules]}
                    atomic_write(self.path, json.dumps(payload, indent=1))
                    self._stamp = None
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def add(self, rule: Rule) -> Rule:
        """Remember a rule (replacing one that covers the same calls) and return it."""
        if not rule.id:
            rule = rule.model_copy(update={"id": new_id("r")})
        if not rule.created_at:
            rule = rule.model_copy(update={"created_at": now_iso()})
        if self.path is None:
            with self._lock:
                self._memory = [r for r in self._memory if not r.same_coverage(rule)]
                self._memory.append(rule)
            return rule
        with self._writing() as rules:
            rules[:] = [r for r in rules if not r.same_coverage(rule)]
            rules.append(rule)
        return rule

    def revoke(self, rule_id: str) -> Rule:
        """Forget a rule at once; NotFound when no rule has that id."""
        if any(r.id == rule_id for r in self._config_rules):
            raise RuleNotRevocable(f"rule {rule_id} comes from the openprogram settings "
                                   "(rules); remove it there")
        with self._lock:
            hit = next((r for r in self._memory if r.id == rule_id), None)
            if hit is not None:
                self._memory.remove(hit)
                return hit
        if self.path is not None:
            found: list[Rule] = []
            with self._writing() as rules:
                found = [r for r in rules if r.id == rule_id]
                rules[:] = [r for r in rules if r.id != rule_id]
            if found:
                return found[0]
        raise NotFound(f"ruleId: no rule {rule_id!r} in this workspace")

    def replace_config_rules(self, rules: list[Rule]) -> None:
        """Set the rules that come from configuration (not persisted; replaces earlier ones)."""
        with self._lock:
            self._config_rules = list(rules)


class RuleSource(Protocol):
    """Rules someone else keeps (an editor's settings), read again at every decision."""

    def rules(self) -> list[Rule]:
        """The rules as they are now."""
        ...


class ClientRules(RuleBook):
    """A workspace's rule book seen with one connection's settings rules after it.

    The extra rules are the patterns the editor's settings carry: they apply to that
    connection's turns (and their children) only, are listed with ``origin: settings`` and are
    never written. A source is read at every decision, so a setting removed in the editor stops
    covering calls at once, even in a running turn. Adding and revoking go to the workspace's
    own book.
    """

    def __init__(self, base: RuleBook, extra: list[Rule | RuleSource]) -> None:
        super().__init__(None, [], workspace=base.workspace)
        self.base = base
        self._extra = list(extra)

    def extra(self) -> list[Rule]:
        """The connection's own rules, as they are now."""
        out: list[Rule] = []
        for item in self._extra:
            out.extend([item] if isinstance(item, Rule) else item.rules())
        return out

    @property
    def rules(self) -> list[Rule]:
        return [*self.base.rules, *self.extra()]

    def add(self, rule: Rule) -> Rule:
        return self.base.add(rule)

    def revoke(self, rule_id: str) -> Rule:
        if any(r.id == rule_id for r in self.extra()):
            raise RuleNotRevocable(f"rule {rule_id} comes from the openprogram settings "
                                   "(rules); remove it there")
        return self.base.revoke(rule_id)


def with_client_rules(book: RuleBook, extra: list[Any]) -> RuleBook:
    """``book`` plus the rules (or rule sources) one connection's settings hold."""
    own = [r for r in extra if isinstance(r, Rule) or callable(getattr(r, "rules", None))]
    return ClientRules(book, own) if own else book
