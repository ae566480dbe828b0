"""Hook settings: Claude Code's shape, what is skipped (with a warning), and the files read."""

from __future__ import annotations

import json
from pathlib import Path

from openprogram_lsp.hooks.config import HookSpec, load_config, parse_hooks


def test_parses_claude_codes_shape_with_defaults() -> None:
    warnings: list[str] = []
    hooks = parse_hooks({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "check.sh", "timeout": 5, "critical": True},
        {"command": "log.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "tests.sh"}]}]},
        source="s.json", scope="user", warnings=warnings)
    assert warnings == []
    assert [(h.event, h.matcher, h.command, h.timeout, h.critical) for h in hooks] == [
        ("PreToolUse", "Bash", "check.sh", 5.0, True),
        ("PreToolUse", "Bash", "log.sh", 60.0, False),
        ("Stop", "", "tests.sh", 60.0, False)]


def test_what_cannot_be_used_is_skipped_with_a_warning() -> None:
    warnings: list[str] = []
    hooks = parse_hooks({"SessionEnd": [], "PreToolUse": [
        {"matcher": 3, "hooks": []}, {"hooks": [{"type": "prompt", "prompt": "x"},
                                                {"command": ""},
                                                {"command": "ok", "timeout": -1}]}],
        "Stop": "nope"}, source="s.json", scope="user", warnings=warnings)
    assert [h.command for h in hooks] == ["ok"] and hooks[0].timeout == 60.0
    text = "\n".join(warnings)
    for expected in ("'SessionEnd' is not supported", "matcher must be a string",
                     "type 'prompt' is not supported", "command must be a non-empty",
                     "timeout must be a positive", "hooks.Stop must be a list"):
        assert expected in text


def test_ids_change_with_the_definition() -> None:
    a = HookSpec("PreToolUse", "x", scope="workspace", source=".claude/settings.json")
    assert a.id == HookSpec("PreToolUse", "x", scope="workspace",
                            source=".claude/settings.json").id
    assert a.id != HookSpec("PreToolUse", "y", scope="workspace",
                            source=".claude/settings.json").id
    assert a.id != HookSpec("PreToolUse", "x", matcher="Bash", scope="workspace",
                            source=".claude/settings.json").id


def test_reads_user_and_workspace_files_and_the_workspace_cannot_disable_policies(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".openprogram").mkdir()
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"command": "u"}]}]},
                                "policies": {"untestedEdits": False}}))
    (ws / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"command": "c"}]}]}}))
    (ws / ".claude" / "settings.local.json").write_text("{not json")
    (ws / ".openprogram" / "settings.json").write_text(json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"command": "o"}]}]},
         "policies": {"destructiveCommands": False}}))
    (ws / ".openprogram" / "config.toml").write_text(
        '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "t"\n')
    cfg = load_config(ws, user=[user])
    assert [(h.command, h.scope, h.source) for h in cfg.hooks] == [
        ("u", "user", str(user)), ("o", "workspace", ".openprogram/settings.json"),
        ("t", "workspace", ".openprogram/config.toml"),
        ("c", "workspace", ".claude/settings.json")]
    assert cfg.policies.untested_edits is False and cfg.policies.destructive_commands is True
    assert any("settings.local.json: not valid JSON" in w for w in cfg.warnings)
    assert any("only be set in the user's config" in w for w in cfg.warnings)


def test_disable_all_hooks_and_symlinked_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}}))
    (ws / ".claude" / "settings.json").symlink_to(target)
    (ws / ".claude" / "settings.local.json").write_text(json.dumps(
        {"disableAllHooks": True, "hooks": {"Stop": [{"hooks": [{"command": "y"}]}]}}))
    cfg = load_config(ws, user=[])
    assert cfg.hooks == []
    assert any("must not be a symlink" in w for w in cfg.warnings)


def test_config_toml_hooks_pass_the_settings_layer_and_policies_stay_the_users(
        tmp_path: Path) -> None:
    import pytest

    from openprogram_lsp.config import load_settings
    from openprogram_lsp.config.sections.hooks import HooksSection, PoliciesSection
    from openprogram_lsp.core.errors import ConfigError

    ws = tmp_path / "ws"
    (ws / ".openprogram").mkdir(parents=True)
    (ws / ".openprogram" / "config.toml").write_text(
        '[[hooks.PreToolUse]]\nmatcher = "Bash"\n[[hooks.PreToolUse.hooks]]\n'
        'type = "command"\ncommand = "guard.sh"\n')
    settings = load_settings(workspace=ws, env={"XDG_CONFIG_HOME": str(tmp_path / "x")})
    assert settings.get(HooksSection).PreToolUse[0]["matcher"] == "Bash"
    assert [h.command for h in load_config(ws, user=[]).hooks] == ["guard.sh"]
    env = {"XDG_CONFIG_HOME": str(tmp_path / "x"),
           "OPENPROGRAM_POLICY_DESTRUCTIVE_COMMANDS": "false"}
    assert load_settings(env=env).get(PoliciesSection).destructive_commands is False
    (ws / ".openprogram" / "config.toml").write_text("[policies]\ndestructive_commands = false\n")
    with pytest.raises(ConfigError, match="only be set in your own config file"):
        load_settings(workspace=ws, env={"XDG_CONFIG_HOME": str(tmp_path / "x")})
