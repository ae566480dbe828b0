"""After an edit, the model hears of the errors the user's own language server reports (pylsp)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.editors.nvim import runner
from tests.tooling import require

pytestmark = [pytest.mark.usefixtures("require_nvim"), pytest.mark.timeout(180)]

APP = "def main():\n    print(already_broken)\n    return 0\n"


def _tool_results(log: Path) -> list[str]:
    calls = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    return [str(m.get("content")) for m in calls[-1]["messages"] if m.get("role") == "tool"]


def test_an_edit_that_breaks_the_file_is_followed_by_its_new_error(env: dict[str, Path]) -> None:
    """The edit that breaks the file is told its new error, and the one that fixes it again is
    told it fixed it: the buffer reloaded from disk makes pylsp publish an empty set first (as
    the document closes), which must not pass for the answer to the breaking edit."""
    require(Path(runner.nvim_binary() or "nvim").with_name("pylsp").exists()
            or None, "pylsp is not installed (the test extras)")
    (env["ws"] / "app.py").write_text(APP, "utf-8")
    (env["ws"] / "other.py").write_text("x = 1\n", "utf-8")
    log = env["tmp"] / "model.jsonl"
    runner.run_scripted(env, "edit_diagnostics", [
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "app.py", "old_text": "return 0", "new_text": "return missing_name"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "app.py", "old_text": "return missing_name", "new_text": "return 1"}}]},
        {"text": "Done."}], extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    assert (env["ws"] / "app.py").read_text("utf-8").endswith("return 1\n")
    broke, fixed = _tool_results(log)
    assert "new problem(s) in app.py" in broke, broke
    assert "line 3: error: undefined name 'missing_name' [pyflakes]" in broke
    assert "already_broken" not in broke  # there before the edit: not the agent's doing
    assert "It fixed 1 problem(s) reported before in app.py." in fixed, fixed
    assert "new problem" not in fixed and "already_broken" not in fixed


def test_off_asks_nothing(env: dict[str, Path]) -> None:
    (env["ws"] / "app.py").write_text(APP, "utf-8")
    (env["ws"] / "other.py").write_text("x = 1\n", "utf-8")
    log = env["tmp"] / "model.jsonl"
    runner.run_scripted(env, "edit_diagnostics", [
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "app.py", "old_text": "return 0", "new_text": "return missing_name"}}]},
        {"text": "Done."}], extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log),
                                       "OPENPROGRAM_DIAGNOSTICS_AFTER_EDITS": "off"})
    (result,) = _tool_results(log)
    assert "missing_name" not in result and "problem" not in result


def test_an_edit_of_an_unsaved_buffer_is_checked_in_the_buffer(env: dict[str, Path]) -> None:
    (env["ws"] / "app.py").write_text(APP, "utf-8")
    log = env["tmp"] / "model.jsonl"
    out = runner.run_scripted(env, "edit_diagnostics_buffer", [
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "app.py", "old_text": "return 0", "new_text": "return missing_name"}}]},
        {"text": "Done."}], extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    assert out["modified"] and out["buffer"][-1] == "    return missing_name"
    assert (env["ws"] / "app.py").read_text("utf-8") == APP  # the disk keeps the saved text
    (result,) = _tool_results(log)
    assert "line 4: error: undefined name 'missing_name' [pyflakes]" in result, result
    assert "already_broken" not in result
