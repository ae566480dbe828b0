"""A finished call's end is written once, as its tool node: a reader of the running turn and
the recovery of a killed one take it from there."""

from __future__ import annotations

from pathlib import Path

from tests.store._proc_helpers import dead_owner, record_of, sleeper
from tests.store._session_helpers import running_turn

from openprogram_lsp.core.types import Node, ToolCallRecord
from openprogram_lsp.store.session_store import SessionStore

APPROVAL = {"by": "user", "decidedAt": "2026-12-01T00:00:00.000Z", "mode": "ask"}


def _cut_after_a_call(home: Path, owner: dict[str, object]) -> str:
    """A session as a turn leaves it between a call's end and the next write of its reply:
    the reply lists the first call running and the second not at all; both calls' tool nodes
    are written (the second blocked by a gate)."""
    store, sid = running_turn(home, owner, "write f")
    running = ToolCallRecord(id="c1", name="write_file", kind="edit", status="in_progress",
                             input={"path": "f"}, title="Write f")
    store.update_node(sid, "u1_reply", text="I'll write it.", tool_calls=[running])
    store.append(sid, Node(id="u1_reply_t_c1", role="tool", text="wrote f", caller="u1_reply",
                           status="done", metadata={"toolCallId": "c1", "name": "write_file",
                                                    "approval": APPROVAL}))
    store.commit_turn(sid, "cut")
    return sid


def test_a_turn_killed_after_a_call_ended_reads_as_interrupted_with_the_call_done(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid = _cut_after_a_call(home, dead_owner())
    fresh = SessionStore(home)  # the next process
    user, reply = fresh.get_branch(sid)
    assert user.text == "write f"
    assert reply.status == "interrupted" and reply.text == "I'll write it.\n\n[interrupted]"
    [call] = reply.tool_calls or []
    assert (call.status, call.output, call.approval) == ("completed", "wrote f", APPROVAL)
    stored = SessionStore(home).get_node(sid, "u1_reply")  # written so, not only shown so
    assert stored.tool_calls is not None and stored.tool_calls[0].status == "completed"
    assert fresh.meta(sid)["status"] == "idle"


def test_a_reader_of_a_running_turn_sees_a_finished_call_as_finished(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = sleeper()
    try:
        sid = _cut_after_a_call(home, record_of(proc))  # its owner still runs the turn
        reader = SessionStore(home)
        page = reader.history_page(sid, None, limit=10)  # not opened yet: the cold page
        reply = page.nodes[-1]
        assert reply.status == "running"
        assert [(c.status, c.output) for c in reply.tool_calls or []] == [
            ("completed", "wrote f")]
        [*_, again] = reader.get_branch(sid)
        assert again.tool_calls is not None and again.tool_calls[0].status == "completed"
        # the stored reply is untouched: only its writer writes it
        assert reader.index(sid).get("u1_reply").tool_calls[0].status == "in_progress"  # type: ignore[index]
    finally:
        proc.kill()
        proc.wait()
