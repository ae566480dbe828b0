"""Definitions in the Claude-Code shape from every source, names, and the tool names they give."""

from __future__ import annotations

import json
from pathlib import Path

from openprogram_lsp.tools.mcp.catalog import ToolInfo
from openprogram_lsp.tools.mcp.config import (
    HttpServer,
    StdioServer,
    expand_vars,
    merge,
    parse_acp_servers,
    parse_servers,
    read_json_servers,
    read_user_servers,
)
from openprogram_lsp.tools.mcp.tool import full_name
from openprogram_lsp.tools.registry import ToolRegistry, admit

CLAUDE_CODE_FILE = {
    "mcpServers": {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_TOKEN": "${GH_TOKEN}"}},
        "docs": {"type": "http", "url": "https://mcp.example.com/mcp",
                 "headers": {"Authorization": "Bearer ${DOCS_KEY:-none}"}},
        "legacy": {"type": "sse", "url": "https://old.example.com/sse"},
        "broken": {"args": ["x"]},
    }
}


def test_an_existing_mcp_json_reads_unchanged(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps(CLAUDE_CODE_FILE))
    defs, problems = read_json_servers(path, "workspace")
    by = {d.name: d for d in defs}
    gh = by["github"].config
    assert isinstance(gh, StdioServer) and gh.command == "npx" and gh.args[0] == "-y"
    assert isinstance(by["docs"].config, HttpServer)
    assert by["legacy"].config is None and "sse" in (by["legacy"].problem or "")
    assert by["broken"].config is None and "command" in (by["broken"].problem or "")
    assert len(problems) == 2 and all(d.needs_trust for d in defs)


def test_variables_expand_like_claude_code() -> None:
    env = {"GH_TOKEN": "t0k"}
    assert expand_vars("${GH_TOKEN}", env) == "t0k"
    assert expand_vars("Bearer ${DOCS_KEY:-none}", env) == "Bearer none"
    assert expand_vars("${MISSING}", env) == ""
    defs, _ = parse_servers(CLAUDE_CODE_FILE, "editor", env=env)
    by = {d.name: d for d in defs}
    assert isinstance(by["github"].config, StdioServer)
    assert by["github"].config.env == {"GITHUB_TOKEN": "t0k"}
    assert by["github"].raw["env"] == {"GITHUB_TOKEN": "${GH_TOKEN}"}  # trust sees the source


def test_fingerprints_change_with_the_definition() -> None:
    a, _ = parse_servers({"s": {"command": "x", "args": ["1"]}}, "workspace")
    b, _ = parse_servers({"s": {"command": "x", "args": ["2"]}}, "workspace")
    c, _ = parse_servers({"s": {"args": ["1"], "command": "x"}}, "workspace")
    assert a[0].fingerprint != b[0].fingerprint
    assert a[0].fingerprint == c[0].fingerprint


def test_acp_servers_and_user_file(tmp_path: Path) -> None:
    defs, problems = parse_acp_servers([
        {"name": "fs", "command": "/bin/srv", "args": [], "env": [{"name": "A", "value": "1"}]},
        {"name": "web", "type": "http", "url": "http://127.0.0.1:9/mcp",
         "headers": [{"name": "X", "value": "y"}]},
        {"command": "nameless"}])
    assert [d.name for d in defs] == ["fs", "web"] and len(problems) == 1
    assert isinstance(defs[0].config, StdioServer) and defs[0].config.env == {"A": "1"}
    assert isinstance(defs[1].config, HttpServer) and defs[1].config.headers == {"X": "y"}
    assert not any(d.needs_trust for d in defs)
    user = tmp_path / "config.toml"
    user.write_text('[mcpServers.fs]\ncommand = "/usr/bin/fs-server"\nargs = ["--ro"]\n')
    udefs, uproblems = read_user_servers(user)
    assert uproblems == [] and udefs[0].origin == "user"
    merged = merge(udefs, defs)
    assert merged["fs"].origin == "acp"  # later origins replace earlier ones


def test_tool_names_are_safe_for_model_apis() -> None:
    assert full_name("github", "create_issue") == "mcp__github__create_issue"
    assert full_name("my server", "tool.v2") == "mcp__my_server__tool_v2"
    long = full_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long.startswith("mcp__")
    assert full_name("s" * 40, "t" * 40) == long != full_name("s" * 40, "t" * 39 + "u")


def test_static_admission_matches_the_full_name() -> None:
    assert not admit("mcp__github__create_issue", "mcp", disabled=["mcp__github__*"])
    assert admit("mcp__docs__search", "mcp", disabled=["mcp__github__*"])
    assert ToolInfo("a", "", {}, read_only=True).kind == "read"
    registry = ToolRegistry().admitted(disabled=["x"])
    assert not registry.refused("mcp__a__b")


def test_the_config_file_takes_mcp_tables_and_a_workspace_file_may_not(tmp_path: Path) -> None:
    import pytest

    from openprogram_lsp.config import load_settings
    from openprogram_lsp.config.sections.mcp import McpSection, ToolsSection
    from openprogram_lsp.core.errors import ConfigError

    user = tmp_path / "xdg" / "openprogram-lsp" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[mcp]\ntool_timeout = 5\n[tools]\ndisabled = ["mcp__gh__*"]\n'
                    '[mcpServers.gh]\ncommand = "gh-mcp"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "OPENPROGRAM_MCP_STARTUP_TIMEOUT": "7"}
    settings = load_settings(env=env)
    assert settings.get(McpSection).tool_timeout == 5
    assert settings.get(McpSection).startup_timeout == 7
    assert settings.get(ToolsSection).disabled == ["mcp__gh__*"]
    ws = tmp_path / "ws"
    (ws / ".openprogram").mkdir(parents=True)
    (ws / ".openprogram" / "config.toml").write_text('[mcpServers.evil]\ncommand = "sh"\n')
    with pytest.raises(ConfigError, match="mcpServers"):
        load_settings(env=env, workspace=ws)
