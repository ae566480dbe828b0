"""Every file hooks are read from, in order: the user's, the workspace's, enabled plugins'."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from openprogram_lsp.hooks.config import (
    WORKSPACE_FILES,
    HookConfig,
    Policies,
    Scope,
    claude_dir,
    parse_hooks,
    policies_of,
    read_settings_file,
    user_files,
)
from openprogram_lsp.hooks.plugins import plugin_hooks


def load_config(workspace: Path, *, user: list[Path] | None = None,
                policies: Policies | None = None, claude: Path | None = None) -> HookConfig:
    """Hooks of the user's files, then of the workspace's, then of enabled plugins; policy
    switches (user files only).

    ``policies`` is what the settings layer read (``[policies]`` of config.toml, environment);
    the user's ``settings.json`` may switch a policy off too. ``claude`` is Claude Code's user
    directory (its ``plugins/``), default ``claude_dir()``.
    """
    cfg = HookConfig(policies=replace(policies) if policies is not None else Policies())
    enabled: list[tuple[Mapping[str, Any], Scope, str]] = []  # lowest precedence first
    for path in user if user is not None else user_files():
        data = read_settings_file(path, cfg.warnings)
        if data is None:
            continue
        if isinstance(data.get("enabledPlugins"), Mapping):
            enabled.append((data["enabledPlugins"], "user", str(path)))
        if data.get("disableAllHooks") is True:
            continue
        cfg.hooks.extend(parse_hooks(data.get("hooks"), source=str(path), scope="user",
                                     warnings=cfg.warnings))
        if path.suffix == ".json":  # config.toml's [policies] comes through the settings layer
            policies_of(data.get("policies"), cfg.policies, str(path), cfg.warnings)
    for rel in WORKSPACE_FILES:
        data = read_settings_file(workspace / rel, cfg.warnings)
        if data is None:
            continue
        if rel.startswith(".claude/") and isinstance(data.get("enabledPlugins"), Mapping):
            enabled.append((data["enabledPlugins"], "workspace", rel))
        if data.get("disableAllHooks") is True:
            continue
        cfg.hooks.extend(parse_hooks(data.get("hooks"), source=rel, scope="workspace",
                                     warnings=cfg.warnings))
        if "policies" in data:  # a workspace may not switch off the user's safety policies
            cfg.warnings.append(f"{rel}: `policies` can only be set in the user's config; "
                                "ignored")
    if enabled:
        cfg.hooks.extend(plugin_hooks(enabled, claude if claude is not None else claude_dir(),
                                      cfg.warnings, cfg.files))
    return cfg
