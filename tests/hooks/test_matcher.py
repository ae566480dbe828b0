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
