"""The plugin loads cleanly: modules require, commands exist, the help tags build."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.tooling import missing

PLUGIN = Path(__file__).resolve().parents[2] / "editors" / "nvim"
MODULES = sorted(p.stem for p in (PLUGIN / "lua" / "openprogram").glob("*.lua"))
COMMANDS = ["OpenProgram", "OpenProgramCancel", "OpenProgramFork", "OpenProgramBranches",
            "OpenProgramSessions", "OpenProgramCheckpoints", "OpenProgramRestore",
            "OpenProgramToggle", "OpenProgramModel", "OpenProgramMode", "OpenProgramApproval",
            "OpenProgramBranchName", "OpenProgramMcp", "OpenProgramRules", "OpenProgramUndo",
            "OpenProgramWatch", "OpenProgramImage"]


def _nvim() -> str:
    local = Path(sys.executable).parent / "nvim"
    found = str(local) if local.exists() else shutil.which("nvim")
    if not found:
        missing("Neovim is not installed")
    return found


def _lua(code: str, *extra: str) -> str:
    proc = subprocess.run(
        [_nvim(), "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}", *extra,
         "-c", f"lua {code}", "-c", "qa!"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=True)
    return proc.stdout


def test_every_module_loads_and_commands_exist() -> None:
    names = json.dumps(MODULES)
    code = (
        f"local out = {{}} for _, m in ipairs(vim.json.decode('{names}')) do "
        "local ok, err = pcall(require, 'openprogram.' .. m) "
        "out[m] = ok and 'ok' or tostring(err) end "
        "out.commands = vim.tbl_keys(vim.api.nvim_get_commands({})) "
        "io.stdout:write(vim.json.encode(out))")
    out = json.loads(_lua(code))
    assert {m: out[m] for m in MODULES} == dict.fromkeys(MODULES, "ok")
    assert set(COMMANDS) <= set(out["commands"])


def test_lsp_config_file_is_a_valid_config() -> None:
    code = (
        "local cfg = dofile(vim.api.nvim_get_runtime_file('lsp/openprogram.lua', false)[1]) "
        "io.stdout:write(vim.json.encode({cmd = cfg.cmd, init = cfg.init_options, "
        "exp = cfg.capabilities.experimental, root = type(cfg.root_dir), "
        "handlers = vim.tbl_keys(cfg.handlers)}))")
    out = json.loads(_lua(code))
    assert out["cmd"] == ["openprogram-lsp", "serve"]
    assert out["exp"]["openprogram"] == {"permissions": True, "questions": True,
                                         "diagnostics": True, "navigation": True}
    assert out["root"] == "function"
    assert {"openprogram/event", "openprogram/requestPermission",
            "openprogram/askQuestion"} <= set(out["handlers"])


def test_help_tags_build(tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc)
    _lua(f"vim.cmd('helptags {doc}')")
    tags = (doc / "tags").read_text("utf-8")
    for tag in ["openprogram", "openprogram-setup", ":OpenProgram", ":OpenProgramRestore",
                "OpenProgramEvent", ":OpenProgramApproval", "openprogram-hunks"]:
        assert f"{tag}\topenprogram.txt" in tags


def test_help_tags_are_built_on_first_load(tmp_path: Path) -> None:
    plugin = tmp_path / "nvim"
    shutil.copytree(PLUGIN, plugin, ignore=shutil.ignore_patterns("tags"))
    subprocess.run([_nvim(), "--headless", "--clean", "--cmd", f"set rtp^={plugin}",
                    "-c", "runtime! plugin/openprogram.lua", "-c", "qa!"],
                   capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                   check=True)
    assert "openprogram\topenprogram.txt" in (plugin / "doc" / "tags").read_text("utf-8")


def test_provider_settings_reach_the_server_and_a_key_is_refused() -> None:
    code = (
        "local config = require('openprogram.config') "
        "config.setup({providers = {openai = {base_url = 'http://127.0.0.1:11434/v1', "
        "api_key_env = 'MY_KEY'}, anthropic = {api_key_command = 'pass show a'}}}) "
        "local init = config.init_options() "
        "config.setup({providers = {openai = {api_key = 'sk-live'}}}) "
        "io.stdout:write(vim.json.encode({init = init.providers, "
        "after = config.init_options().providers or vim.NIL}))")
    out = json.loads(_lua(code))
    assert out["init"] == {"openai": {"baseUrl": "http://127.0.0.1:11434/v1",
                                      "apiKeyEnv": "MY_KEY"},
                           "anthropic": {"apiKeyCommand": "pass show a"}}
    assert out["after"] is None  # the invalid block is dropped, not sent


def test_the_rules_option_reaches_the_server_and_a_malformed_one_is_refused() -> None:
    code = (
        "local config = require('openprogram.config') "
        "config.setup({rules = {{tool = 'run_command', pattern = 'npm test*', "
        "decision = 'allow'}}}) "
        "local init = config.init_options() "
        "config.setup({rules = {{tool = 'run_command', decision = 'maybe'}}}) "
        "io.stdout:write(vim.json.encode({init = init.rules, "
        "after = config.init_options().rules or vim.NIL}))")
    out = json.loads(_lua(code))
    assert out["init"] == [{"tool": "run_command", "pattern": "npm test*", "decision": "allow"}]
    assert out["after"] is None  # the invalid list is dropped, not sent
