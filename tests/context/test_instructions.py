"""Project instructions: loaded into the system prompt, re-read on change, kept by compaction."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.context.instructions import load_instructions, render_instructions
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher

Make = Callable[..., Dispatcher]


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cfg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    return cfg / "openprogram-lsp" / "AGENTS.md"


def test_files_in_order_reread_on_change(workspace: Path, user_config: Path,
                                         tmp_path: Path) -> None:
    assert load_instructions(workspace) == []
    user_config.parent.mkdir(parents=True)
    user_config.write_text("Prefer tabs.\n", "utf-8")
    (workspace / "AGENTS.md").write_text("Run make test.\n", "utf-8")
    (workspace / ".openprogram").mkdir()
    (workspace / ".openprogram" / "instructions.md").write_text("No new deps.\n", "utf-8")
    (workspace / "CLAUDE.md").symlink_to(tmp_path / "elsewhere.md")  # a link out: not used
    (tmp_path / "elsewhere.md").write_text("secret\n", "utf-8")
    found = load_instructions(workspace)
    assert [(i.scope, i.path) for i in found] == [
        ("user", str(user_config)), ("workspace", "AGENTS.md"),
        ("workspace", ".openprogram/instructions.md")]
    text = render_instructions(found)
    assert text.index("Prefer tabs.") < text.index("Run make test.") < text.index("No new deps.")
    assert "secret" not in text
    agents = workspace / "AGENTS.md"
    agents.write_text("Run make check instead.\n", "utf-8")
    os.utime(agents, ns=(1, 1))  # a different mtime even on a coarse clock
    assert "Run make check instead." in render_instructions(load_instructions(workspace))


def test_instructions_survive_compaction(make_dispatcher: Make, script: Callable,
                                         workspace: Path, user_config: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "model.jsonl"
    (workspace / "AGENTS.md").write_text("Always answer in French.\n", "utf-8")
    replies = [{"text": f"answer {i} " + "word " * 300} for i in range(6)]
    d = make_dispatcher(script([*replies, {"text": "SUMMARY of six turns."},
                                {"text": "after"}]),
                        settings=load_settings(env={"OPENPROGRAM_SCRIPTED_LOG": str(log)},
                                               user_file=False))
    first = d.process_user_turn(TurnRequest(text="question 0 " + "detail " * 300))
    sid = first.session_id
    for i in range(1, 6):
        d.process_user_turn(TurnRequest(text=f"question {i} " + "detail " * 300, session_id=sid))
    compact = d.process_user_turn(TurnRequest(text="/compact", session_id=sid))
    assert compact.text.startswith("Context compacted")
    last = d.process_user_turn(TurnRequest(text="and now?", session_id=sid))
    calls = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    summariser, final = calls[-2], calls[-1]
    assert "Always answer in French." not in summariser["system"]  # its own prompt
    assert "Always answer in French." in final["system"]
    assert any("SUMMARY of six turns." in m["content"] for m in final["messages"])
    assert len(final["messages"]) == 2  # the summary and the new question: history compacted
    commit = d.services.store.read_context_commit(sid, last.assistant_node_id)
    assert commit is not None
    assert [i["path"] for i in commit["instructions"]] == ["AGENTS.md"]
    assert len(commit["instructions"][0]["sha256"]) == 64


def test_claude_md_imports_are_followed_inside_the_workspace_only(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "fakehome"
    (fake / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    (fake / ".claude" / "CLAUDE.md").write_text("Be brief.\n@~/.claude/extra.md\n")
    (fake / ".claude" / "extra.md").write_text("Use British spelling.\n")
    (fake / "secret.md").write_text("SECRET-CONTENT\n")
    (workspace / "docs").mkdir()
    (workspace / "CLAUDE.md").write_text(
        "See @docs/style.md and @README for more; mail me@example.com.\n"
        "Not `@docs/ignored.md`, nor:\n```\n@docs/ignored.md\n```\n"
        "Nor @~/secret.md, @../outside.md or @.git/config.\n")
    (workspace / "docs" / "style.md").write_text("Tabs, not spaces. @../CLAUDE.md @deep.md\n")
    (workspace / "docs" / "deep.md").write_text("Deep rule.\n")
    (workspace / "docs" / "ignored.md").write_text("IGNORED-CONTENT\n")
    (workspace / "README").write_text("The readme.\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("GIT-CONTENT\n")
    (tmp_path / "outside.md").write_text("OUTSIDE-CONTENT\n")
    found = load_instructions(workspace)
    assert [(i.scope, i.path) for i in found] == [
        ("user", "~/.claude/CLAUDE.md"), ("user", "~/.claude/extra.md"),
        ("workspace", "CLAUDE.md"), ("workspace", "docs/style.md"),
        ("workspace", "docs/deep.md"), ("workspace", "README")]
    text = render_instructions(found)
    for absent in ("SECRET", "OUTSIDE", "IGNORED", "GIT-CONTENT"):
        assert absent not in text
