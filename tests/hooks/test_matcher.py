"""Matchers: Claude Code's semantics, over our names and Claude Code's."""

from __future__ import annotations

import pytest

from openprogram_lsp.hooks.matcher import matches, matches_tool


@pytest.mark.parametrize(("matcher", "tool", "hit"), [
    ("", "run_command", True), ("*", "grep", True),
    ("Bash", "run_command", True), ("run_command", "run_command", True),
    ("Edit|Write", "edit_file", True), ("Edit|Write", "write_file", True),
    ("Edit|Write", "read_file", False), ("Edit", "write_file", False),
    ("Edit", "MultiEdit", False),  # exact names are not substrings
    (".*_file", "write_file", True), ("Notebook.*", "read_file", False),
    ("mcp__.*", "mcp__github__issue", True), ("(", "run_command", False),
])
def test_tool_matchers(matcher: str, tool: str, hit: bool) -> None:
    assert matches_tool(matcher, tool) is hit


def test_subject_matchers() -> None:
    assert matches("auto", "auto") and not matches("manual", "auto")
    assert matches("startup|resume", "resume")


@pytest.mark.parametrize(("matcher", "tool"), [
    ("Glob", "find_files"), ("MultiEdit", "multi_edit"), ("TodoWrite", "todo_write"),
    ("WebFetch", "web_fetch"), ("BashOutput", "command_output"), ("KillShell", "command_stop"),
    ("TaskOutput", "command_output"), ("TaskStop", "command_stop"), ("LS", "list_dir"),
])
def test_the_new_tools_match_their_claude_code_names(matcher: str, tool: str) -> None:
    assert matches_tool(matcher, tool)
    assert not matches_tool(matcher, "run_command")
