"""The system prompt: built from the packaged prompts/ files, the tool guidance of the tools
offered, the stable environment; the same bytes for the same session."""

from __future__ import annotations

import platform

from openprogram_lsp.agent.prompts import system_prompt

ALL = ["read_file", "find_files", "edit_file", "multi_edit", "write_file", "grep",
       "run_command", "command_output", "command_stop", "todo_write", "web_fetch", "list_dir",
       "ask_user", "agent"]


def test_the_prompt_says_who_how_and_where() -> None:
    text = system_prompt("/home/me/project", ALL)
    assert text.startswith("You are openprogram, a coding agent")
    for needle in ("Workspace root: /home/me/project", platform.system(), "/bin/sh -c",
                   "Read a file before you change it", "todo_write",
                   "A rejected call means the user said no", "A failed call is information",
                   "run the tests", "background: true", "web_fetch", "replace_all"):
        assert needle in text, needle
    assert "{" not in text  # every placeholder filled


def test_tool_guidance_only_for_the_tools_offered() -> None:
    few = system_prompt("/w", ["read_file", "grep", "ask_user"])
    assert "read_file shows numbered lines" in few
    assert "multi_edit call" not in few and "command_output" not in few
    assert "web_fetch gets a page" not in few
    assert len(few) < len(system_prompt("/w", ALL))


def test_the_same_inputs_give_the_same_bytes() -> None:
    assert system_prompt("/w", ALL) == system_prompt("/w", list(reversed(ALL)))


def test_a_small_window_gets_the_brief_prompt() -> None:
    brief = system_prompt("/home/me/project", ALL, 16_000)
    full = system_prompt("/home/me/project", ALL, 200_000)
    assert brief.startswith("You are openprogram")
    assert "Workspace root: /home/me/project" in brief and "{" not in brief
    assert "A rejected call" in brief and "run the relevant tests" in brief
    assert len(brief) * 3 < len(full)
    assert system_prompt("/home/me/project", ALL) == full  # no window known: the full one
