"""The one list of control files: what it holds, that it covers every loader's files, and the
write helpers' check of a call's approval."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprogram_lsp.agents import definitions as agent_defs
from openprogram_lsp.config.files import WORKSPACE_FILE as CONFIG_FILE
from openprogram_lsp.context import commands, instructions
from openprogram_lsp.core import fdfs
from openprogram_lsp.core.control_files import (
    ANY,
    WHY,
    is_control_file,
    reason,
    writes_cleared,
)
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.hooks import config as hook_config
from openprogram_lsp.tools.mcp.hub import WORKSPACE_FILE as MCP_FILE

ISSUE_LIST = [".mcp.json", ".claude/settings.json", ".claude/settings.local.json",
              ".claude/agents/x.md", ".openprogram/settings.json", ".openprogram/config.toml",
              ".vscode/tasks.json", ".vscode/launch.json", ".vscode/settings.json",
              "team.code-workspace", "a/b.code-workspace", ".nvim.lua", ".exrc", ".envrc",
              ".gitattributes", ".gitmodules", "package.json", "sub/package.json", ".bashrc",
              ".zshrc", ".profile", ".vscode", ".VSCode/Settings.JSON", "./.envrc"]


@pytest.mark.parametrize("rel", ISSUE_LIST)
def test_the_issues_files_are_control_files(rel: str) -> None:
    assert is_control_file(rel)


@pytest.mark.parametrize("rel", ["src/settings.json", "settings.json", "package.json.bak",
                                 "vscode/tasks.json", "docs/claude.txt", "README.md",
                                 "src/envrc", "a.code-workspace.txt"])
def test_ordinary_files_are_not(rel: str) -> None:
    assert not is_control_file(rel)


def test_every_file_a_loader_reads_from_the_workspace_is_a_control_file() -> None:
    """The hooks, MCP, agent-definition, command, instruction and config loaders' files."""
    read = [*hook_config.WORKSPACE_FILES, MCP_FILE, CONFIG_FILE.as_posix(),
            *instructions.WORKSPACE_FILES,
            *(f"{d}/helper.md" for d in (*agent_defs.WORKSPACE_DIRS, *commands.WORKSPACE_DIRS))]
    assert read and [r for r in read if not is_control_file(r)] == []


def test_the_reason_names_what_reads_each_file() -> None:
    said = reason([".envrc", "package.json"])
    assert said.startswith(WHY) and "direnv" in said and "npm" in said


def test_a_write_inside_a_call_needs_the_control_file_named_by_its_approval(
        tmp_path: Path) -> None:
    fdfs.write_atomic(tmp_path, ".envrc", b"outside any call: restore, undo\n")
    with writes_cleared(frozenset({"./.mcp.json"})):
        fdfs.write_atomic(tmp_path, "notes.txt", b"ordinary\n")
        fdfs.write_atomic(tmp_path, ".mcp.json", b"{}\n")  # approved (same path, other form)
        with pytest.raises(ToolError, match="control file"):
            fdfs.write_atomic(tmp_path, ".vscode/tasks.json", b"{}\n")
        with pytest.raises(ToolError, match="control file"):
            fdfs.unlink(tmp_path, ".envrc")
    with writes_cleared(ANY):  # bypass
        fdfs.write_atomic(tmp_path, ".vscode/tasks.json", b"{}\n")
    assert (tmp_path / ".envrc").exists() and (tmp_path / ".mcp.json").read_text() == "{}\n"
