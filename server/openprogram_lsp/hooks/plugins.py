"""Hooks of Claude Code plugins installed under ``~/.claude/plugins``.

Claude Code records installed plugins in ``plugins/installed_plugins.json`` (``{"plugins":
{"name@marketplace": {installPath, ...}}}``, or a list of such records per plugin in its second
format); a plugin is used only when a settings file's ``enabledPlugins`` says
``"name@marketplace": true`` (the highest-precedence file that names it decides: local, then
project, then user). Its hooks are ``hooks/hooks.json`` in the plugin's directory, or what its
manifest ``.claude-plugin/plugin.json`` names under ``hooks`` (a path, a list of paths, or an
inline table); each runs with ``CLAUDE_PLUGIN_ROOT`` set to the plugin's directory. Nothing is
fetched: a plugin not on disk is skipped with a warning. A plugin enabled only by a workspace's
file is a workspace definition (it needs the user's trust, as the workspace's own hooks do).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openprogram_lsp.hooks.config import HookSpec, Scope, parse_hooks, read_settings_file

Enabled = list[tuple[Mapping[str, Any], Scope, str]]
INDEXES = ("installed_plugins.json", "installed_plugins_v2.json")
MAX_HOOK_FILES = 16  # of one plugin's manifest


def _decided(enabled: Enabled) -> dict[str, tuple[bool, Scope, str]]:
    """Each plugin key's last word (files are given lowest precedence first); a plugin the
    user's own file enables stays the user's even when a workspace file says so too."""
    out: dict[str, tuple[bool, Scope, str]] = {}
    for table, scope, source in enabled:
        for key, value in table.items():
            if isinstance(key, str) and isinstance(value, bool):
                earlier = out.get(key)
                if value and earlier is not None and earlier[0] and earlier[1] == "user":
                    continue
                out[key] = (value, scope, source)
    return out


def installed(claude: Path, warnings: list[str], files: list[str]) -> dict[str, Path]:
    """Installed plugins by ``name@marketplace``: their directories."""
    found: dict[str, Path] = {}
    for name in INDEXES:
        path = claude / "plugins" / name
        files.append(str(path))
        data = read_settings_file(path, warnings)
        plugins = data.get("plugins") if data else None
        if not isinstance(plugins, Mapping):
            continue
        for key, record in plugins.items():
            records = record if isinstance(record, list) else [record]
            for rec in records:
                where = rec.get("installPath") if isinstance(rec, Mapping) else None
                if isinstance(key, str) and isinstance(where, str) and where:
                    found.setdefault(key, Path(where).expanduser())
    return found


def _hook_tables(root: Path, key: str, warnings: list[str],
                 files: list[str]) -> list[tuple[Any, str]]:
    """(hooks table, the file it came from) of one plugin."""
    manifest_path = root / ".claude-plugin" / "plugin.json"
    files.append(str(manifest_path))
    manifest = read_settings_file(manifest_path, warnings) or {}
    declared = manifest.get("hooks")
    paths: list[str] = []
    out: list[tuple[Any, str]] = []
    if isinstance(declared, Mapping):
        raw = declared.get("hooks", declared)
        out.append((raw, str(manifest_path)))
    elif isinstance(declared, str):
        paths.append(declared)
    elif isinstance(declared, list):
        paths.extend(p for p in declared if isinstance(p, str))
    standard = root / "hooks" / "hooks.json"
    if str(standard) not in {os.path.normpath(root / p) for p in paths}:
        paths.insert(0, "hooks/hooks.json")
    for rel in paths[:MAX_HOOK_FILES]:
        target = Path(os.path.normpath(root / rel))
        if target != root and root not in target.parents:
            warnings.append(f"plugin {key}: hooks file {rel!r} lies outside the plugin; ignored")
            continue
        files.append(str(target))
        data = read_settings_file(target, warnings)
        if data is not None:
            out.append((data.get("hooks"), str(target)))
    return out


def plugin_hooks(enabled: Enabled, claude: Path, warnings: list[str],
                 files: list[str]) -> list[HookSpec]:
    """The hooks of every enabled, installed plugin."""
    decided = {k: v for k, v in _decided(enabled).items() if v[0]}
    if not decided:
        return []
    paths = installed(claude, warnings, files)
    out: list[HookSpec] = []
    for key, (_, scope, source) in sorted(decided.items()):
        root = paths.get(key)
        if root is None or not root.is_dir():
            warnings.append(f"{source}: plugin {key} is enabled but not installed under "
                            f"{claude / 'plugins'}; its hooks are not used")
            continue
        for table, where in _hook_tables(root, key, warnings, files):
            out.extend(parse_hooks(table, source=f"plugin {key}: {where}", scope=scope,
                                   warnings=warnings, plugin_root=str(root)))
    return out
