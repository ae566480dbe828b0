"""The Neovim panel shows the agent's to-do list (plan.updated) as a live checklist."""

from __future__ import annotations

from pathlib import Path

from tests.editors.nvim.runner import run_scripted


def test_the_plan_is_a_checklist_live_and_in_history(env: dict[str, Path]) -> None:
    first = [{"content": "Read the code", "status": "in_progress", "activeForm": "Reading"},
             {"content": "Fix the bug", "status": "pending"}]
    second = [{"content": "Read the code", "status": "completed"},
              {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing it"}]
    out = run_scripted(env, "plan", [
        {"text": "Planning.", "tool_calls": [{"name": "todo_write",
                                              "arguments": {"todos": first}}]},
        {"tool_calls": [{"name": "todo_write", "arguments": {"todos": second}}]},
        {"text": "On it."}])
    live = out["streamed"]
    assert len(live) == 2
    assert live[0][-2:] == ["  [~] Reading", "  [ ] Fix the bug"]
    assert live[1][-2:] == ["  [x] Read the code", "  [~] Fixing it"]
    lines = out["lines"]
    at = [i for i, ln in enumerate(lines) if "Plan: " in ln and "think" in ln]
    assert len(at) == 2
    assert lines[at[0] + 1:at[0] + 3] == ["  [~] Reading", "  [ ] Fix the bug"]
    assert lines[at[1] + 1:at[1] + 3] == ["  [x] Read the code", "  [~] Fixing it"]
