"""Agent definitions: front matter, Claude Code's names and files, and what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprogram_lsp.agents.definitions import front_matter, load_agents, parse_agent

REVIEWER = """---
name: reviewer
description: "Reviews code: reads, never runs"
tools: Read, Grep, list_dir
disallowedTools:
  - run_command
  - "*_file"
model: inherit
permissionMode: acceptEdits
---
You review code. Report problems; change nothing.
"""


def test_parses_front_matter_and_body() -> None:
    agent = parse_agent(REVIEWER, stem="x", source=".claude/agents/x.md", scope="workspace")
    assert agent.name == "reviewer" and agent.description == "Reviews code: reads, never runs"
    assert agent.tools == ("read_file", "grep", "list_dir")
    assert agent.disallowed == ("run_command", "*_file")
    assert agent.model == "inherit" and agent.permission_mode == "accept-edits"
    assert agent.prompt == "You review code. Report problems; change nothing."


def test_flow_lists_and_no_front_matter() -> None:
    meta, body = front_matter("---\ntools: [read_file, 'grep']\n---\nbody\n")
    assert meta == {"tools": ["read_file", "grep"]} and body == "body"
    agent = parse_agent("Just a prompt.", stem="helper", source="h.md", scope="user")
    assert agent.name == "helper" and agent.tools is None and agent.prompt == "Just a prompt."


@pytest.mark.parametrize(("text", "problem"), [
    ("---\nname: bad name!\n---\n", "name"),
    ("---\npermissionMode: yolo\n---\n", "permissionMode"),
    ("---\nname: x\n", "not closed"),
    ("---\njust words\n---\n", "key: value"),
])
def test_bad_definitions_say_why(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_agent(text, stem="x", source="x.md", scope="workspace")


def test_loading_skips_bad_files_and_later_directories_win(tmp_path: Path) -> None:
    claude, ours = tmp_path / ".claude" / "agents", tmp_path / ".openprogram" / "agents"
    claude.mkdir(parents=True)
    ours.mkdir(parents=True)
    (claude / "reviewer.md").write_text(REVIEWER)
    (claude / "broken.md").write_text("---\npermissionMode: yolo\n---\n")
    (ours / "reviewer.md").write_text("---\ndescription: ours\n---\nOur reviewer.\n")
    (ours / "link.md").symlink_to(claude / "reviewer.md")
    warnings: list[str] = []
    found = load_agents([(claude, ".claude/agents", "workspace"),
                         (ours, ".openprogram/agents", "workspace")], warnings)
    assert sorted(found) == ["reviewer"]
    assert found["reviewer"].description == "ours"
    assert found["reviewer"].source == ".openprogram/agents/reviewer.md"
    assert any("broken.md" in w for w in warnings) and any("link.md" in w for w in warnings)
