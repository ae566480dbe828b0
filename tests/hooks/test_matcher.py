"""Matchers: Claude Code's semantics, over our names and Claude Code's."""

from __future__ import annotations

import pytest

from openprogram_lsp.hooks.matcher import claude_input, matches, matches_tool


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


def test_claude_input_adds_claudes_field_names() -> None:
    out = claude_input("edit_file", {"path": "a/b.py", "old_text": "x", "new_text": "y"},
                       "/ws")
    assert out == {"path": "a/b.py", "old_text": "x", "new_text": "y",
                   "file_path": "/ws/a/b.py", "old_string": "x", "new_string": "y"}
    assert claude_input("run_command", {"command": "ls"}, "/ws") == {"command": "ls"}


@pytest.mark.parametrize(("matcher", "tool"), [
    ("Glob", "find_files"), ("MultiEdit", "multi_edit"), ("TodoWrite", "todo_write"),
    ("WebFetch", "web_fetch"), ("BashOutput", "command_output"), ("KillShell", "command_stop"),
    ("TaskOutput", "command_output"), ("TaskStop", "command_stop"), ("LS", "list_dir"),
])
def test_the_new_tools_match_their_claude_code_names(matcher: str, tool: str) -> None:
    assert matches_tool(matcher, tool)
    assert not matches_tool(matcher, "run_command")


def test_claude_input_of_multi_edit_and_background_commands() -> None:
    out = claude_input("multi_edit", {"path": "a.py", "edits": [
        {"old_text": "x", "new_text": "y", "replace_all": True}]}, "/ws")
    assert out["file_path"] == "/ws/a.py"
    assert out["edits"] == [{"old_text": "x", "new_text": "y", "replace_all": True,
                             "old_string": "x", "new_string": "y"}]
    assert claude_input("command_output", {"id": "bg1"}, "/ws")["bash_id"] == "bg1"
    assert claude_input("run_command", {"command": "make", "background": True},
                        "/ws")["run_in_background"] is True
