"""Per-hunk approval of an edit: only the accepted hunks are written, the model is told which,
and an approval never reaches text the user was not shown (real store, scripted model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import RecordingApprover

from openprogram_lsp.core.types import PermissionOutcome, PermissionRequest, TurnRequest
from openprogram_lsp.dispatcher import Dispatcher

Make = Callable[..., Dispatcher]
DONE = {"text": "All done."}
BEFORE = "".join(f"line {i}\n" for i in range(1, 31))
EDITS = [{"old_text": "line 2\n", "new_text": "LINE TWO\n"},
         {"old_text": "line 15\n", "new_text": "LINE FIFTEEN\nand more\n"},
         {"old_text": "line 28\n", "new_text": ""}]
MULTI = {"text": "Editing.", "tool_calls": [
    {"name": "multi_edit", "arguments": {"path": "a.txt", "edits": EDITS}}]}


class HunkApprover(RecordingApprover):
    """Allows with ``accepted`` hunks (and runs ``meanwhile`` while the prompt is open)."""

    def __init__(self, accepted: list[int] | None, kind: str = "allow_once",
                 meanwhile: Callable[[], None] | None = None) -> None:
        super().__init__(kind)
        self.accepted, self.meanwhile = accepted, meanwhile

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        self.requests.append(request)
        if self.meanwhile is not None:
            self.meanwhile()
        return PermissionOutcome(outcome="selected", option_id=self.kind,
                                 kind=self.kind,  # type: ignore[arg-type]
                                 accepted_hunks=self.accepted)


def _call(d: Dispatcher, r: Any) -> Any:
    [call] = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls or []
    return call


def test_only_the_accepted_hunks_are_written_and_the_model_is_told_which(
        make_dispatcher: Make, script: Callable, workspace: Path) -> None:
    (workspace / "a.txt").write_text(BEFORE)
    approver = HunkApprover([0, 2])
    d = make_dispatcher(script([MULTI, DONE]), approver=approver)
    r = d.process_user_turn(TurnRequest(text="edit it"))
    diff = approver.requests[0].tool_call.diff
    assert diff is not None and diff.old_text == BEFORE
    shown = [(h.index, h.old_start, h.old_lines, h.new_start, h.new_lines, h.header)
             for h in diff.hunks or []]
    assert shown == [(0, 2, 1, 2, 1, "@@ -2,1 +2,1 @@"), (1, 15, 1, 15, 2, "@@ -15,1 +15,2 @@"),
                     (2, 28, 1, 28, 0, "@@ -28,1 +28,0 @@")]
    after = (workspace / "a.txt").read_text()
    assert after == BEFORE.replace("line 2\n", "LINE TWO\n").replace("line 28\n", "")
    call = _call(d, r)
    assert call.status == "completed"
    assert "accepted 2 of 3 hunks: applied hunks 0, 2; rejected hunks 1" in call.output
    assert "@@ -15,1 +15,2 @@\n-line 15\n+LINE FIFTEEN\n+and more" in call.output
    assert call.approval["acceptedHunks"] == [0, 2] and call.approval["hunks"] == 3
    assert r.status == "done"  # type: ignore[attr-defined]


def test_every_hunk_accepted_is_the_whole_edit(make_dispatcher: Make, script: Callable,
                                               workspace: Path) -> None:
    (workspace / "a.txt").write_text(BEFORE)
    d = make_dispatcher(script([MULTI, DONE]), approver=HunkApprover([2, 1, 0]))
    r = d.process_user_turn(TurnRequest(text="edit it"))
    assert (workspace / "a.txt").read_text() == \
        BEFORE.replace("line 2\n", "LINE TWO\n").replace("line 15\n", "LINE FIFTEEN\nand more\n") \
        .replace("line 28\n", "")
    call = _call(d, r)
    assert call.output == "Edited a.txt (3 edits applied)"
    assert call.approval["acceptedHunks"] == [0, 1, 2]


def test_no_hunk_accepted_rejects_the_edit_and_makes_no_rule(
        make_dispatcher: Make, script: Callable, workspace: Path) -> None:
    (workspace / "a.txt").write_text(BEFORE)
    approver = HunkApprover([], kind="allow_always")
    d = make_dispatcher(script([MULTI, MULTI, DONE]), approver=approver)
    r = d.process_user_turn(TurnRequest(text="edit it"))
    assert (workspace / "a.txt").read_text() == BEFORE
    calls = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls or []
    assert [c.status for c in calls] == ["failed", "failed"]  # asked again: no rule was made
    assert "rejected every hunk" in (calls[0].output or "")
    assert len(approver.requests) == 2


def test_hunks_the_edit_does_not_have_are_an_invalid_answer(
        make_dispatcher: Make, script: Callable, workspace: Path) -> None:
    (workspace / "a.txt").write_text(BEFORE)
    for accepted in ([3], [0, 0], [-1]):
        d = make_dispatcher(script([MULTI, DONE]), approver=HunkApprover(accepted))
        r = d.process_user_turn(TurnRequest(text="edit it"))
        call = _call(d, r)
        assert call.status == "failed" and "approval answer was invalid" in call.output
        assert (workspace / "a.txt").read_text() == BEFORE


def test_a_file_changed_during_the_prompt_is_refused_whole_or_by_hunk(
        make_dispatcher: Make, script: Callable, workspace: Path) -> None:
    target = workspace / "a.txt"
    theirs = BEFORE.replace("line 3\n", "user's line 3\n")
    for accepted in (None, [1]):
        target.write_text(BEFORE)
        d = make_dispatcher(script([MULTI, DONE]),
                            approver=HunkApprover(accepted, meanwhile=lambda: target.write_text(
                                theirs)))
        r = d.process_user_turn(TurnRequest(text="edit it"))
        call = _call(d, r)
        assert call.status == "failed", call.output
        assert "changed after the user was shown this edit" in call.output
        assert target.read_text() == theirs  # their change kept, nothing approved applied


def test_a_write_over_a_file_shown_as_a_stand_in_is_approved_whole(
        make_dispatcher: Make, script: Callable, workspace: Path) -> None:
    (workspace / "big.bin").write_bytes(b"\xff\xfe" * 10)
    write = {"text": "Writing.", "tool_calls": [
        {"name": "write_file", "arguments": {"path": "big.bin", "content": "text now\n"}}]}
    approver = HunkApprover([0])
    d = make_dispatcher(script([write, DONE]), approver=approver)
    r = d.process_user_turn(TurnRequest(text="write it"))
    diff = approver.requests[0].tool_call.diff
    assert diff is not None and diff.hunks is None and "not shown" in diff.old_text
    assert "not offered by hunk" in _call(d, r).output
    assert (workspace / "big.bin").read_bytes() == b"\xff\xfe" * 10


def test_a_new_file_by_hunk(make_dispatcher: Make, script: Callable, workspace: Path) -> None:
    write = {"text": "Writing.", "tool_calls": [
        {"name": "write_file", "arguments": {"path": "n.txt", "content": "a\nb\n"}}]}
    d = make_dispatcher(script([write, DONE]), approver=HunkApprover([0]))
    r = d.process_user_turn(TurnRequest(text="write it"))
    assert (workspace / "n.txt").read_text() == "a\nb\n"
    assert _call(d, r).output == "Created n.txt (4 bytes)"
