"""Hook definitions in Claude Code's settings shape, and the files they are read from.

``{"hooks": {Event: [{"matcher": str, "hooks": [{"type": "command", "command": str,
"timeout": seconds, "critical": bool, "async": bool}]}]}}`` (or ``"type": "http"`` with ``url``,
``headers``, ``allowedEnvVars``; ``"prompt"`` / ``"agent"`` with ``prompt``, ``model``) -- the
same in ``.openprogram/settings.json``,
``.claude/settings.json``, ``.claude/settings.local.json``, the user's ``settings.json`` (ours
and Claude Code's ``~/.claude/settings.json``), the ``hooks`` table of the TOML config files
and the ``hooks/hooks.json`` of enabled Claude Code plugins (``plugins.py``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from openprogram_lsp.core.types import DefinitionScope

EVENTS: tuple[str, ...] = ("PreToolUse", "PermissionRequest", "PostToolUse",
                           "PostToolUseFailure",
                           "UserPromptSubmit", "Stop", "StopFailure", "SubagentStart",
                           "SubagentStop", "SessionStart", "SessionEnd", "PreCompact",
                           "PostCompact", "Notification")
# events Claude Code documents for parts we do not have (agent teams, worktrees, its setup
# flags, auto mode's classifier, MCP elicitation, a changing cwd...): read, never fired
NEVER_FIRED: frozenset[str] = frozenset({
    "Setup", "PermissionDenied", "UserPromptExpansion", "PostToolBatch", "TaskCreated",
    "TaskCompleted", "TeammateIdle", "Elicitation", "ElicitationResult", "WorktreeCreate",
    "WorktreeRemove", "ConfigChange", "InstructionsLoaded", "CwdChanged", "FileChanged"})
DEFAULT_TIMEOUT = 600.0  # a command hook's, as Claude Code's (10 minutes)
MAX_TIMEOUT = 3600.0
HOOK_TYPES: tuple[str, ...] = ("command", "http", "prompt", "agent")
# a model's judgement (prompt, agent hooks) only where Claude Code offers it: a yes / no answer
MODEL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
                          "UserPromptSubmit", "Stop", "SubagentStop"})
DEFAULT_TIMEOUTS = {"command": DEFAULT_TIMEOUT, "http": 30.0, "prompt": 30.0, "agent": 60.0}
Scope = DefinitionScope

WORKSPACE_FILES: tuple[str, ...] = (".openprogram/settings.json", ".openprogram/config.toml",
                                    ".claude/settings.json", ".claude/settings.local.json")


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One hook: on which event, for which matcher, from which file, and what it runs.

    ``command`` is what the hook is: a shell command, an ``http`` hook's URL, or a ``prompt``
    / ``agent`` hook's prompt (``$ARGUMENTS`` stands for the event's JSON)."""

    event: str
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    critical: bool = False
    source: str = ""
    scope: Scope = "user"
    plugin_root: str = ""  # a Claude Code plugin's directory (``CLAUDE_PLUGIN_ROOT``)
    type: str = "command"  # command, http, prompt, agent
    headers: tuple[tuple[str, str], ...] = ()  # an http hook's (``$VAR`` of allowed_env only)
    allowed_env: tuple[str, ...] = ()
    model: str = ""  # a prompt / agent hook's model ("": the turn's)
    background: bool = False  # ``async``: runs without holding the turn up
    condition: str = ""  # ``if``: a permission rule narrowing the tool calls (condition.py)
    once: bool = False  # runs once per session, later events skip it

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two hooks the same hook (identical ones of an event run once)."""
        return (self.type, self.command, self.timeout, self.headers, self.model,
                self.condition)

    @property
    def id(self) -> str:
        """A fingerprint of everything that decides what the hook does (trust is per id)."""
        fields: list[Any] = [self.scope, self.source, self.event, self.matcher, self.command,
                             self.timeout, self.critical]
        if self.plugin_root:
            fields.append(self.plugin_root)
        if self.type != "command" or self.background:  # (a command hook's id is as it was)
            fields.append([self.type, list(map(list, self.headers)), list(self.allowed_env),
                           self.model, self.background])
        if self.condition:
            fields.append({"if": self.condition})
        if self.once:
            fields.append({"once": True})
        blob = json.dumps(fields)
        return "h" + hashlib.sha256(blob.encode()).hexdigest()[:15]

    def describe(self) -> dict[str, Any]:
        """The definition as shown to the user (wire, trust prompts)."""
        out: dict[str, Any] = {"id": self.id, "event": self.event, "matcher": self.matcher,
                               "command": self.command, "timeout": self.timeout,
                               "critical": self.critical, "source": self.source,
                               "scope": self.scope}
        if self.type != "command":
            out["type"] = self.type
        if self.headers:
            out["headers"] = dict(self.headers)  # as written: ``$VAR``, never its value
        if self.allowed_env:
            out["allowedEnvVars"] = list(self.allowed_env)
        if self.model:
            out["model"] = self.model
        if self.background:
            out["async"] = True
        if self.condition:
            out["if"] = self.condition
        if self.once:
            out["once"] = True
        if self.plugin_root:
            out["pluginRoot"] = self.plugin_root
        return out


@dataclass(slots=True)
class Policies:
    """Switches of the built-in policies (user-level config only can turn them off)."""

    destructive_commands: bool = True
    untested_edits: bool = True


@dataclass(slots=True)
class HookConfig:
    """Every hook that applies to a workspace, the policy switches, and what was wrong."""

    hooks: list[HookSpec] = field(default_factory=list)
    policies: Policies = field(default_factory=Policies)
    warnings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # plugin files read (a change re-reads)


def parse_hooks(raw: Any, *, source: str, scope: Scope, warnings: list[str],
                plugin_root: str = "") -> list[HookSpec]:
    """The hooks of one ``hooks`` table; what cannot be used is skipped with a warning."""
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        warnings.append(f"{source}: `hooks` must be an object of events; ignored")
        return []
    out: list[HookSpec] = []
    for event, groups in raw.items():
        if event in NEVER_FIRED:
            warnings.append(f"{source}: Claude Code's {event} event has no counterpart here "
                            "(it never fires); its hooks are ignored")
            continue
        if event not in EVENTS:
            warnings.append(f"{source}: hook event {event!r} is not supported here (supported: "
                            f"{', '.join(EVENTS)}); ignored")
            continue
        if not isinstance(groups, list):
            warnings.append(f"{source}: hooks.{event} must be a list; ignored")
            continue
        for i, group in enumerate(groups):
            where = f"{source}: hooks.{event}[{i}]"
            if not isinstance(group, Mapping):
                warnings.append(f"{where} must be an object; ignored")
                continue
            matcher = group.get("matcher") or ""
            if not isinstance(matcher, str):
                warnings.append(f"{where}.matcher must be a string; ignored")
                continue
            entries = group.get("hooks")
            if not isinstance(entries, list):
                warnings.append(f"{where}.hooks must be a list; ignored")
                continue
            for j, entry in enumerate(entries):
                spec = _parse_entry(entry, event=event, matcher=matcher, source=source,
                                    scope=scope, where=f"{where}.hooks[{j}]", warnings=warnings)
                if spec is not None:
                    out.append(replace(spec, plugin_root=plugin_root) if plugin_root else spec)
    return out


def _parse_entry(entry: Any, *, event: str, matcher: str, source: str, scope: Scope,
                 where: str, warnings: list[str]) -> HookSpec | None:
    if not isinstance(entry, Mapping):
        warnings.append(f"{where} must be an object; ignored")
        return None
    kind = entry.get("type", "command")
    if kind not in HOOK_TYPES:
        warnings.append(f"{where}: hook type {kind!r} is not supported (supported: "
                        f"{', '.join(HOOK_TYPES)}); ignored")
        return None
    if kind in ("prompt", "agent") and event not in MODEL_EVENTS:
        warnings.append(f"{where}: a {kind!r} hook cannot answer {event} (only "
                        f"{', '.join(sorted(MODEL_EVENTS))}); ignored")
        return None
    field_name = {"command": "command", "http": "url"}.get(kind, "prompt")
    text = entry.get(field_name)
    if not isinstance(text, str) or not text.strip():
        warnings.append(f"{where}.{field_name} must be a non-empty string; ignored")
        return None
    headers: tuple[tuple[str, str], ...] = ()
    allowed: tuple[str, ...] = ()
    if kind == "http":
        if not text.startswith(("http://", "https://")) or not _valid_url(text):
            warnings.append(f"{where}.url must be an http:// or https:// URL; ignored")
            return None
        raw_headers = entry.get("headers") or {}
        raw_allowed = entry.get("allowedEnvVars") or []
        if not isinstance(raw_headers, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in raw_headers.items()):
            warnings.append(f"{where}.headers must be an object of strings; ignored")
            return None
        if not isinstance(raw_allowed, list) or not all(isinstance(v, str) for v in raw_allowed):
            warnings.append(f"{where}.allowedEnvVars must be a list of names; ignored")
            return None
        headers, allowed = tuple(sorted(raw_headers.items())), tuple(raw_allowed)
    model = entry.get("model") or ""
    if not isinstance(model, str):
        warnings.append(f"{where}.model must be a string; using the turn's model")
        model = ""
    condition = entry.get("if") or ""
    if not isinstance(condition, str):
        warnings.append(f"{where}.if must be a permission rule such as \"Bash(git *)\"; "
                        "ignored")
        return None
    background = entry.get("async") is True
    if background and kind != "command":
        warnings.append(f"{where}: `async` is for command hooks; this {kind} hook runs "
                        "synchronously")
        background = False
    default = DEFAULT_TIMEOUTS[kind]
    timeout = entry.get("timeout", default)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        warnings.append(f"{where}.timeout must be a positive number of seconds; using "
                        f"{default:g}")
        timeout = default
    critical = entry.get("critical", False)
    if not isinstance(critical, bool):
        warnings.append(f"{where}.critical must be true or false; using false")
        critical = False
    return HookSpec(event=event, command=text, matcher=matcher,
                    timeout=min(float(timeout), MAX_TIMEOUT), critical=critical, source=source,
                    scope=scope, type=kind, headers=headers, allowed_env=allowed,
                    model=model if kind in ("prompt", "agent") else "", background=background,
                    condition=condition.strip(), once=entry.get("once") is True)


def _valid_url(url: str) -> bool:
    try:
        return bool(urlsplit(url).hostname)
    except ValueError:
        return False


def read_settings_file(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    """A JSON or TOML settings file as a dict; None when absent or unusable (with a warning)."""
    try:
        if path.is_symlink():
            warnings.append(f"{path}: a settings file must not be a symlink; ignored")
            return None
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        warnings.append(f"{path}: cannot be read ({exc.strerror}); ignored")
        return None
    try:
        parsed: Any = (tomllib.loads(data.decode("utf-8")) if path.suffix == ".toml"
                       else json.loads(data))
    except (ValueError, UnicodeDecodeError) as exc:
        warnings.append(f"{path}: not valid {path.suffix.lstrip('.').upper()} ({exc}); ignored")
        return None
    if not isinstance(parsed, dict):
        warnings.append(f"{path}: must hold an object; ignored")
        return None
    return parsed


def user_files(env: Mapping[str, str] | None = None) -> list[Path]:
    """The user-level files: ``$XDG_CONFIG_HOME/openprogram-lsp/{settings.json,config.toml}``
    and Claude Code's ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR/settings.json``)."""
    env = os.environ if env is None else env
    return list(_user_files(env.get("XDG_CONFIG_HOME") or "", env.get("HOME"),
                            env.get("CLAUDE_CONFIG_DIR") or ""))


def claude_dir(env: Mapping[str, str] | None = None) -> Path:
    """Claude Code's user directory: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    env = os.environ if env is None else env
    return _claude_dir(env.get("HOME"), env.get("CLAUDE_CONFIG_DIR") or "")


@functools.lru_cache(maxsize=16)
def _claude_dir(home: str | None, configured: str) -> Path:
    if configured:
        return Path(configured).expanduser()
    return Path(home).expanduser() / ".claude" if home else Path.home() / ".claude"


@functools.lru_cache(maxsize=16)
def _user_files(xdg: str, home: str | None, claude: str) -> tuple[Path, Path, Path]:
    """``user_files`` for one ``XDG_CONFIG_HOME``, ``HOME`` and ``CLAUDE_CONFIG_DIR``
    (worked out once per triple: every turn asks)."""
    base = Path(xdg or (Path(home) if home else Path.home()) / ".config").expanduser()
    return (base / "openprogram-lsp" / "settings.json", base / "openprogram-lsp" / "config.toml",
            _claude_dir(home, claude) / "settings.json")


def policies_of(raw: Any, policies: Policies, source: str, warnings: list[str]) -> None:
    if raw is None:
        return
    if not isinstance(raw, Mapping):
        warnings.append(f"{source}: `policies` must be an object; ignored")
        return
    for key, attr in (("destructiveCommands", "destructive_commands"),
                      ("destructive_commands", "destructive_commands"),
                      ("untestedEdits", "untested_edits"), ("untested_edits", "untested_edits")):
        if key in raw:
            if isinstance(raw[key], bool):
                setattr(policies, attr, getattr(policies, attr) and raw[key])
            else:
                warnings.append(f"{source}: policies.{key} must be true or false; ignored")
