"""edit_file's replace_all and multi_edit: exact, all-or-nothing, one approval card."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.tools.base import Tool, ToolContext
from openprogram_lsp.tools.builtin.files import EditFile, MultiEdit
from tests.conftest import RecordingApprover


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace)


async def call(tool: Tool, ctx: ToolContext, **args: object) -> str:
    return (await tool.run(tool.parse(dict(args)), ctx)).text


async def test_replace_all_changes_every_occurrence(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.py").write_text("old = 1\nprint(old)\nold += 1\n")
    with pytest.raises(ToolError, match=r"occurs 3 times.*replace_all"):
        await call(EditFile(), ctx, path="a.py", old_text="old", new_text="new")
    out = await call(EditFile(), ctx, path="a.py", old_text="old", new_text="new",
                     replace_all=True)
    assert out == "Edited a.py (3 replacements)"
    assert (workspace / "a.py").read_text() == "new = 1\nprint(new)\nnew += 1\n"
    with pytest.raises(ToolError, match="the same"):
        await call(EditFile(), ctx, path="a.py", old_text="new", new_text="new")


async def test_multi_edit_applies_in_order(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "m.py").write_text("def f(a):\n    return a + 1\n\nx = f(1)\ny = f(2)\n")
    out = await call(MultiEdit(), ctx, path="m.py", edits=[
        {"old_text": "def f(a):", "new_text": "def g(a, b=0):"},
        {"old_text": "a + 1", "new_text": "a + b + 1"},
        {"old_text": "f(", "new_text": "g(", "replace_all": True},  # sees the edits above
    ])
    assert out == "Edited m.py (3 edits applied)"
    assert (workspace / "m.py").read_text() == \
        "def g(a, b=0):\n    return a + b + 1\n\nx = g(1)\ny = g(2)\n"


async def test_multi_edit_is_all_or_nothing(ctx: ToolContext, workspace: Path) -> None:
    before = "alpha\nbeta\ngamma\n"
    (workspace / "t.txt").write_text(before)
    with pytest.raises(ToolError, match=r"edit 3 of 3: old_text not found.*earlier edit"):
        await call(MultiEdit(), ctx, path="t.txt", edits=[
            {"old_text": "alpha", "new_text": "ALPHA"},
            {"old_text": "beta", "new_text": "BETA"},
            {"old_text": "alpha", "new_text": "again"},  # the first edit removed it
        ])
    assert (workspace / "t.txt").read_text() == before
    with pytest.raises(ToolError, match="edit 2 of 2: old_text occurs 2 times"):
        await call(MultiEdit(), ctx, path="t.txt", edits=[
            {"old_text": "gamma", "new_text": "beta"},
            {"old_text": "beta", "new_text": "x"}])
    assert (workspace / "t.txt").read_text() == before
    with pytest.raises(ToolError, match="edits"):
        MultiEdit().parse({"path": "t.txt", "edits": []})


async def test_multi_edit_in_an_unsaved_buffer(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "b.txt").write_text("disk\n")
    applied: list[tuple[str, str]] = []

    class Buffers:
        def unsaved(self, session_id: str, path: Path) -> str | None:
            return "one two\n"

        async def apply(self, session_id: str, path: Path, old: str, new: str) -> str | None:
            applied.append((old, new))
            return None

    ctx.buffers = Buffers()  # type: ignore[assignment]
    out = await call(MultiEdit(), ctx, path="b.txt", edits=[
        {"old_text": "one", "new_text": "1"}, {"old_text": "two", "new_text": "2"}])
    assert "in the editor's buffer" in out
    assert applied == [("one two\n", "1 2\n")]  # one change of the buffer
    assert (workspace / "b.txt").read_text() == "disk\n"


def test_multi_edit_turn_asks_once_with_the_combined_diff(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[[list[dict]], str],
        workspace: Path) -> None:
    (workspace / "app.py").write_text("A = 1\nB = 2\nC = 3\n")
    (workspace / "cfg.py").write_text("X = 1\n")
    approver = RecordingApprover("allow_once")
    d = make_dispatcher(script([
        {"text": "Editing.", "tool_calls": [{"name": "multi_edit", "arguments": {
            "path": "app.py", "edits": [{"old_text": "A = 1", "new_text": "A = 10"},
                                        {"old_text": "C = 3", "new_text": "C = 30"}]}}]},
        {"text": "Renaming.", "tool_calls": [{"name": "edit_file", "arguments": {
            "path": "cfg.py", "old_text": "X", "new_text": "Y", "replace_all": True}}]},
        {"text": "Done."}]), approver=approver)
    r = d.process_user_turn(TurnRequest(text="change the constants"))
    assert r.status == "done"
    assert (workspace / "app.py").read_text() == "A = 10\nB = 2\nC = 30\n"
    assert (workspace / "cfg.py").read_text() == "Y = 1\n"
    multi, single = approver.requests
    assert multi.tool_call.name == "multi_edit" and multi.tool_call.kind == "edit"
    assert multi.tool_call.title == "Edit app.py (2 edits)"
    assert multi.tool_call.diff is not None
    assert (multi.tool_call.diff.old_text, multi.tool_call.diff.new_text) == \
        ("A = 1\nB = 2\nC = 3\n", "A = 10\nB = 2\nC = 30\n")
    assert "Always allow edits to app.py" in " ".join(o.name for o in multi.options)
    assert single.tool_call.diff is not None and single.tool_call.diff.new_text == "Y = 1\n"
    node = d.services.store.get_node(r.session_id, r.assistant_node_id)
    assert [(c.name, c.status, c.output) for c in node.tool_calls or []] == [
        ("multi_edit", "completed", "Edited app.py (2 edits applied)"),
        ("edit_file", "completed", "Edited cfg.py (1 replacement)")]
    assert r.checkpoint is not None


def test_a_multi_edit_that_cannot_apply_is_refused_unasked(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[[list[dict]], str],
        workspace: Path) -> None:
    (workspace / "app.py").write_text("A = 1\n")
    approver = RecordingApprover("allow_once")
    d = make_dispatcher(script([
        {"tool_calls": [{"name": "multi_edit", "arguments": {
            "path": "app.py", "edits": [{"old_text": "A = 1", "new_text": "A = 2"},
                                        {"old_text": "Z", "new_text": "Q"}]}}]},
        {"text": "Oops."}]), approver=approver)
    r = d.process_user_turn(TurnRequest(text="go"))
    assert approver.requests == []
    assert (workspace / "app.py").read_text() == "A = 1\n"
    call_ = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls[0]
    assert call_.status == "failed" and "edit 2 of 2" in (call_.output or "")


def test_a_multi_edit_of_the_agents_settings_asks_even_in_accept_edits(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[[list[dict]], str],
        workspace: Path) -> None:
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "settings.json").write_text('{"a": 1, "b": 2}\n')
    approver = RecordingApprover("reject_once")
    d = make_dispatcher(script([
        {"tool_calls": [{"name": "multi_edit", "arguments": {
            "path": ".vscode/settings.json", "edits": [
                {"old_text": '"a": 1', "new_text": '"a": 5'}]}}]},
        {"text": "ok"}]), approver=approver, permission_mode="accept-edits")
    d.process_user_turn(TurnRequest(text="go"))
    [asked] = approver.requests
    assert "(.vscode/settings.json: " in asked.tool_call.title  # the control-file note
    assert [o.option_id for o in asked.options] == ["allow_once", "reject_once"]
    assert (workspace / ".vscode" / "settings.json").read_text() == '{"a": 1, "b": 2}\n'
