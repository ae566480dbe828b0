"""Hook settings: Claude Code's shape, what is skipped (with a warning), and the files read."""

from __future__ import annotations

import json
from pathlib import Path

from openprogram_lsp.hooks.config import HookSpec, parse_hooks
from openprogram_lsp.hooks.sources import load_config


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
        ("PreToolUse", "Bash", "log.sh", 600.0, False),
        ("Stop", "", "tests.sh", 600.0, False)]


def test_what_cannot_be_used_is_skipped_with_a_warning() -> None:
    warnings: list[str] = []
    hooks = parse_hooks({"Bogus": [], "PreToolUse": [
        {"matcher": 3, "hooks": []}, {"hooks": [{"type": "mcp_tool", "tool": "x"},
                                                {"command": ""},
                                                {"command": "ok", "timeout": -1},
                                                {"type": "http", "url": "file:///etc/passwd"},
                                                {"type": "http", "url": "http://127.0.0.1:9",
                                                 "headers": {"A": 1}},
                                                {"type": "prompt", "prompt": "  "}]}],
        "SessionStart": [{"hooks": [{"type": "prompt", "prompt": "say hi"}]}],
        "Stop": "nope"}, source="s.json", scope="user", warnings=warnings)
    assert [h.command for h in hooks] == ["ok"] and hooks[0].timeout == 600.0
    text = "\n".join(warnings)
    for expected in ("'Bogus' is not supported", "matcher must be a string",
                     "type 'mcp_tool' is not supported", "command must be a non-empty",
                     "timeout must be a positive", "hooks.Stop must be a list",
                     "url must be an http:// or https:// URL", "headers must be an object",
                     "prompt must be a non-empty", "a 'prompt' hook cannot answer SessionStart"):
        assert expected in text


def test_http_prompt_agent_and_async_hooks_are_read_as_claude_code_writes_them() -> None:
    warnings: list[str] = []
    hooks = parse_hooks({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "http", "url": "http://127.0.0.1:8080/check", "timeout": 5,
         "headers": {"Authorization": "Bearer $TOKEN"}, "allowedEnvVars": ["TOKEN"]},
        {"type": "prompt", "prompt": "Is $ARGUMENTS safe?", "model": "haiku"}]}],
        "Stop": [{"hooks": [{"type": "agent", "prompt": "Did tests run?"}]}],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "log", "async": True},
                                   {"type": "http", "url": "https://x.test/", "async": True}]}]},
        source="s.json", scope="user", warnings=warnings)
    http, prompt, agent, logger, late = hooks
    assert (http.type, http.command, http.timeout) == ("http", "http://127.0.0.1:8080/check", 5)
    assert http.headers == (("Authorization", "Bearer $TOKEN"),) and http.allowed_env == (
        "TOKEN",)
    assert (prompt.type, prompt.model, prompt.timeout) == ("prompt", "haiku", 30.0)
    assert (agent.type, agent.timeout) == ("agent", 60.0)
    assert logger.background and not late.background
    assert warnings == ["s.json: hooks.PostToolUse[0].hooks[1]: `async` is for command hooks; "
                        "this http hook runs synchronously"]
    assert http.describe()["headers"] == {"Authorization": "Bearer $TOKEN"}  # never the value
    # a command hook's id is what it was before hooks had types; another type is another id
    assert HookSpec("Stop", "x").id != HookSpec("Stop", "x", type="prompt").id
    assert HookSpec("Stop", "x").id == "h" + __import__("hashlib").sha256(
        b'["user", "", "Stop", "", "x", 600.0, false]').hexdigest()[:15]


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


def _claude_home(tmp_path: Path, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    """A fake HOME whose ~/.claude Claude Code would read (never the real one)."""
    home = tmp_path / "fakehome"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


def test_claude_codes_user_settings_are_a_user_file(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from openprogram_lsp.hooks.config import claude_dir, user_files

    home = _claude_home(tmp_path, monkeypatch)
    settings = home / ".claude" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "validate.py"}]}]}}))
    assert claude_dir() == home / ".claude" and settings in user_files()
    ws = tmp_path / "ws"
    ws.mkdir()
    [hook] = load_config(ws).hooks
    assert (hook.command, hook.scope, hook.source) == ("validate.py", "user", str(settings))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    assert load_config(ws).hooks == []  # CLAUDE_CONFIG_DIR moves it, as in Claude Code


def _plugin(root: Path, hooks: dict, manifest: dict | None = None) -> Path:
    (root / "hooks").mkdir(parents=True)
    (root / "hooks" / "hooks.json").write_text(json.dumps({"description": "x", "hooks": hooks}))
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest or {"name": "p"}))
    return root


def _install(claude: Path, plugins: dict[str, Path]) -> None:
    (claude / "plugins").mkdir(parents=True, exist_ok=True)
    (claude / "plugins" / "installed_plugins.json").write_text(json.dumps(
        {"version": 2, "plugins": {k: [{"scope": "user", "installPath": str(v),
                                        "version": "1.0.0"}] for k, v in plugins.items()}}))


def test_plugin_hooks_only_of_enabled_installed_plugins(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    home = _claude_home(tmp_path, monkeypatch)
    claude = home / ".claude"
    cache = claude / "plugins" / "cache" / "market"
    guard = _plugin(cache / "guard" / "1.0.0", {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/g.py"}]}]})
    off = _plugin(cache / "off" / "1.0.0", {"Stop": [{"hooks": [{"command": "off.sh"}]}]})
    proj = _plugin(cache / "proj" / "1.0.0", {"Stop": [{"hooks": [{"command": "proj.sh"}]}]},
                   manifest={"name": "proj", "hooks": "./extra/hooks.json"})
    (proj / "extra").mkdir()
    (proj / "extra" / "hooks.json").write_text(json.dumps(
        {"hooks": {"SessionStart": [{"hooks": [{"command": "hello.sh"}]}]}}))
    _install(claude, {"guard@market": guard, "off@market": off, "proj@market": proj})
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {
        "guard@market": True, "off@market": True, "missing@market": True}}))
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps(
        {"enabledPlugins": {"proj@market": True, "guard@market": True}}))
    (ws / ".claude" / "settings.local.json").write_text(json.dumps(
        {"enabledPlugins": {"off@market": False}}))  # local wins over the user's file
    cfg = load_config(ws)
    got = {(h.command, h.scope, h.plugin_root) for h in cfg.hooks}
    assert got == {("python3 ${CLAUDE_PLUGIN_ROOT}/hooks/g.py", "user", str(guard)),
                   ("proj.sh", "workspace", str(proj)), ("hello.sh", "workspace", str(proj))}
    assert any("missing@market is enabled but not installed" in w for w in cfg.warnings)
    [g] = [h for h in cfg.hooks if h.plugin_root == str(guard)]
    assert g.source.startswith("plugin guard@market: ")
    assert g.describe()["pluginRoot"] == str(guard)
    assert str(claude / "plugins" / "installed_plugins.json") in cfg.files


def test_a_plugin_hooks_file_outside_the_plugin_is_refused(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    home = _claude_home(tmp_path, monkeypatch)
    claude = home / ".claude"
    evil = _plugin(claude / "plugins" / "cache" / "m" / "evil" / "1", {},
                   manifest={"name": "evil", "hooks": "../../../../../../escape.json"})
    _install(claude, {"evil@m": evil})
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"evil@m": True}}))
    ws = tmp_path / "ws"
    ws.mkdir()
    cfg = load_config(ws)
    assert cfg.hooks == [] and any("outside the plugin" in w for w in cfg.warnings)


def test_new_claude_code_events_parse(tmp_path: Path) -> None:
    warnings: list[str] = []
    hooks = parse_hooks({e: [{"hooks": [{"command": "x"}]}] for e in (
        "SessionEnd", "SubagentStart", "PostToolUseFailure")}, source="s", scope="user",
        warnings=warnings)
    assert len(hooks) == 3 and warnings == []
