"""Hook definitions in Claude Code's settings shape, and the files they are read from.

``{"hooks": {Event: [{"matcher": str, "hooks": [{"type": "command", "command": str,
"timeout": seconds, "critical": bool}]}]}}`` -- the same in ``.openprogram/settings.json``,
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

from openprogram_lsp.core.types import DefinitionScope

EVENTS: tuple[str, ...] = ("PreToolUse", "PermissionRequest", "PostToolUse",
                           "PostToolUseFailure",
                           "UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop",
                           "SessionStart", "SessionEnd", "PreCompact", "Notification")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
Scope = DefinitionScope

WORKSPACE_FILES: tuple[str, ...] = (".openprogram/settings.json", ".openprogram/config.toml",
                                    ".claude/settings.json", ".claude/settings.local.json")


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One command hook: on which event, for which matcher, from which file."""

    event: str
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    critical: bool = False
    source: str = ""
    scope: Scope = "user"
    plugin_root: str = ""  # a Claude Code plugin's directory (``CLAUDE_PLUGIN_ROOT``)

    @property
    def id(self) -> str:
        """A fingerprint of everything that decides what the hook does (trust is per id)."""
        fields: list[Any] = [self.scope, self.source, self.event, self.matcher, self.command,
                             self.timeout, self.critical]
        if self.plugin_root:
            fields.append(self.plugin_root)
        blob = json.dumps(fields)
        return "h" + hashlib.sha256(blob.encode()).hexdigest()[:15]

    def describe(self) -> dict[str, Any]:
        """The definition as shown to the user (wire, trust prompts)."""
        out = {"id": self.id, "event": self.event, "matcher": self.matcher,
               "command": self.command, "timeout": self.timeout, "critical": self.critical,
               "source": self.source, "scope": self.scope}
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
    if kind != "command":
        warnings.append(f"{where}: hook type {kind!r} is not supported (only \"command\"); "
                        "ignored")
        return None
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        warnings.append(f"{where}.command must be a non-empty string; ignored")
        return None
    if kind == "command" and entry.get("async") is True:
        warnings.append(f"{where}: `async` hooks run synchronously here")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        warnings.append(f"{where}.timeout must be a positive number of seconds; using "
                        f"{DEFAULT_TIMEOUT:g}")
        timeout = DEFAULT_TIMEOUT
    critical = entry.get("critical", False)
    if not isinstance(critical, bool):
        warnings.append(f"{where}.critical must be true or false; using false")
        critical = False
    return HookSpec(event=event, command=command, matcher=matcher,
                    timeout=min(float(timeout), MAX_TIMEOUT), critical=critical, source=source,
                    scope=scope)


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
