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


NAV = ["lsp_definition", "lsp_references", "lsp_hover", "lsp_document_symbols",
       "lsp_workspace_symbols"]


def test_the_model_is_told_once_what_the_editor_s_language_servers_give() -> None:
    """Without an editor that answers (ACP, a plain LSP client, the CLI) the prompt says so
    plainly; with one, it says how the diagnostics come back and offers the lsp_* guidance."""
    blind = system_prompt("/w", ALL)  # "none": nothing can answer
    assert blind.count("No language-server diagnostics reach you here") == 1
    assert blind.count("There is no definition, references or symbol lookup here") == 1
    assert "lsp_definition" not in blind
    seeing = system_prompt("/w", [*ALL, *NAV], diagnostics="errors")
    assert "its result lists the errors the editor's language servers report" in seeing
    assert "prefer lsp_definition and lsp_references" in seeing
    assert "No language-server" not in seeing and "no definition" not in seeing
    assert "errors and warnings the" in system_prompt("/w", ALL, diagnostics="errors_and_warnings")
    off = system_prompt("/w", [*ALL, *NAV], diagnostics="off")
    assert 'after_edits = "off"' in off and "{" not in off
    # nothing to say of diagnostics where the model cannot edit
    reading = system_prompt("/w", ["read_file", "grep"])
    assert "diagnostics" not in reading and "no definition, references" in reading
    brief = system_prompt("/w", ALL, 16_000)
    assert "No language-server diagnostics reach you here" in brief and "{" not in brief
