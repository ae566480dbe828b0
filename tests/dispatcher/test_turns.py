"""process_user_turn on real temporary git stores with the scripted model."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.conftest import FixedAsker, RecordingApprover
from tests.store._session_helpers import uncommitted

from openprogram_lsp.context.render import render_node
from openprogram_lsp.core.errors import NotFound, SessionBusy
from openprogram_lsp.core.types import INHERIT, Node, TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from openprogram_lsp.events.tool_gate import GateDecision

WRITE = {"text": "Writing.", "tool_calls": [
    {"name": "write_file", "arguments": {"path": "out.txt", "content": "hello\n"}}]}
DONE = {"text": "All done."}

Make = Callable[..., Dispatcher]


def turn(d: Dispatcher, text: str = "go", **kw: object) -> object:
    return d.process_user_turn(TurnRequest(text=text, **kw))  # type: ignore[arg-type]


def test_approved_tool_call_runs_and_is_persisted(make_dispatcher: Make, script: Callable,
                                                  workspace: Path, events: list[Event]) -> None:
    approver = RecordingApprover("allow_once")
    d = make_dispatcher(script([WRITE, DONE]), approver=approver)
    r = d.process_user_turn(TurnRequest(text="write it"))
    assert r.status == "done"
    assert (workspace / "out.txt").read_text() == "hello\n"
    req = approver.requests[0]
    assert req.tool_call.name == "write_file" and req.tool_call.diff is not None
    assert req.tool_call.diff.new_text == "hello\n"
    nodes = d.services.store.get_branch(r.session_id)
    assert [n.role for n in nodes] == ["user", "assistant"]
    asst = nodes[1]
    assert asst.status == "done" and asst.text == "Writing.\n\nAll done."
    assert asst.tool_calls and asst.tool_calls[0].status == "completed"
    assert [n.role for n in d.services.store.callees(r.session_id, asst.id)] == ["tool"]
    assert d.services.store.git_log(r.session_id) == ["turn: write it"]
    types = [e.type for e in events]
    for expected in ("user.prompt_submitted", "turn.started", "text.delta", "tool.started",
                     "tool.before", "tool.after", "tool.finished", "turn.finished"):
        assert expected in types
    assert types.index("user.prompt_submitted") < types.index("tool.before") < \
        types.index("tool.after") < types.index("turn.finished")


def test_rejected_tool_call_does_not_run(make_dispatcher: Make, script: Callable,
                                         workspace: Path) -> None:
    d = make_dispatcher(script([WRITE, DONE]), approver=RecordingApprover("reject_once"))
    r = d.process_user_turn(TurnRequest(text="write it"))
    assert r.status == "done" and not (workspace / "out.txt").exists()
    call = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls[0]
    assert call.status == "failed" and "rejected" in (call.output or "")


def test_allow_always_is_remembered(make_dispatcher: Make, script: Callable,
                                    workspace: Path) -> None:
    approver = RecordingApprover("allow_always")
    d = make_dispatcher(script([WRITE, DONE, WRITE, DONE]), approver=approver)
    r = d.process_user_turn(TurnRequest(text="one"))
    d.process_user_turn(TurnRequest(text="two", session_id=r.session_id))
    assert len(approver.requests) == 1


def test_no_approver_denies_with_instructions(make_dispatcher: Make, script: Callable,
                                              workspace: Path) -> None:
    d = make_dispatcher(script([WRITE, DONE]))
    r = d.process_user_turn(TurnRequest(text="write"))
    call = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls[0]
    assert "--permission-mode" in (call.output or "")
    assert not (workspace / "out.txt").exists()


def test_gate_that_raises_allows_but_critical_denies(make_dispatcher: Make, script: Callable,
                                                    workspace: Path) -> None:
    def boom(e: Event) -> None:
        raise RuntimeError("gate bug")

    d = make_dispatcher(script([WRITE, DONE]), permission_mode="bypass")
    undo = d.services.gates.register(boom, name="soft-boom")
    try:
        assert d.process_user_turn(TurnRequest(text="w")).status == "done"
        assert (workspace / "out.txt").exists()
    finally:
        undo()
    (workspace / "out.txt").unlink()
    d = make_dispatcher(script([WRITE, DONE]), permission_mode="bypass")
    undo = d.services.gates.register(boom, name="hard-boom", critical=True)
    try:
        r = d.process_user_turn(TurnRequest(text="w"))
    finally:
        undo()
    assert not (workspace / "out.txt").exists()
    call = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls[0]
    assert "gate" in (call.output or "")


def test_gate_deny_applies_in_bypass_and_ask_goes_to_approver(
        make_dispatcher: Make, script: Callable, workspace: Path) -> None:
    d = make_dispatcher(script([WRITE, DONE]), permission_mode="bypass")
    undo = d.services.gates.register(lambda e: GateDecision("deny", ("no writes today",))
                                     if e.payload["name"] == "write_file" else None,
                                     name="nowrite")
    try:
        r = d.process_user_turn(TurnRequest(text="w"))
    finally:
        undo()
    call = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls[0]
    assert "no writes today" in (call.output or "")
    approver = RecordingApprover("allow_once")
    d = make_dispatcher(script([WRITE, DONE]), permission_mode="bypass", approver=approver)
    undo = d.services.gates.register(lambda e: GateDecision("ask", ("double-check",)),
                                     name="asker")
    try:
        d.process_user_turn(TurnRequest(text="w"))
    finally:
        undo()
    assert len(approver.requests) == 1 and "double-check" in approver.requests[0].tool_call.title


def test_error_path_keeps_head_on_failed_turn_and_next_turn_works(
        make_dispatcher: Make, script: Callable) -> None:
    d = make_dispatcher(script([{"text": "partial"}, {"error": "upstream exploded"},
                                {"text": "fine again"}]))
    first = d.process_user_turn(TurnRequest(text="one"))
    r = d.process_user_turn(TurnRequest(text="two", session_id=first.session_id))
    assert r.status == "error" and "upstream exploded" in (r.error.message if r.error else "")
    store = d.services.store
    assert store.head(r.session_id) == r.assistant_node_id
    assert store.get_node(r.session_id, r.assistant_node_id).status == "error"
    ok = d.process_user_turn(TurnRequest(text="three", session_id=r.session_id))
    assert ok.status == "done" and ok.text == "fine again"
    assert [n.text for n in store.get_branch(r.session_id) if n.role == "user"] == \
        ["one", "two", "three"]
    assert store.git_log(r.session_id)[:2] == ["turn: three", "turn (error): two"]


def test_cancel_mid_stream_keeps_partial_text(make_dispatcher: Make, script: Callable) -> None:
    d = make_dispatcher(script([{"text": "a" * 400, "delay": 0.02}]))
    cancel = threading.Event()
    seen: list[str] = []

    def on_event(ev: Event) -> None:
        if ev.type == "text.delta":
            seen.append(ev.payload["text"])
            if len(seen) == 3:
                cancel.set()

    started = time.monotonic()
    r = d.process_user_turn(TurnRequest(text="long"), on_event=on_event, cancel_event=cancel)
    assert r.status == "cancelled"
    assert time.monotonic() - started < 5
    node = d.services.store.get_node(r.session_id, r.assistant_node_id)
    assert node.status == "cancelled" and node.text.startswith("aaaaaaaa")
    assert node.text.endswith("[cancelled]") and len(node.text) < 400


def test_sibling_fork_and_root_fork(make_dispatcher: Make, script: Callable) -> None:
    d = make_dispatcher(script([{"text": "r1"}, {"text": "r2"}, {"text": "r3"},
                                {"text": "r4"}]))
    store = d.services.store
    a = d.process_user_turn(TurnRequest(text="one"))
    b = d.process_user_turn(TurnRequest(text="two", session_id=a.session_id))
    fork = d.process_user_turn(TurnRequest(text="alt", session_id=a.session_id,
                                           branch_from=a.assistant_node_id))
    assert [n.text for n in store.get_branch(a.session_id)] == ["one", "r1", "alt", "r3"]
    assert [n.text for n in store.get_branch(a.session_id, b.head_id)] == \
        ["one", "r1", "two", "r2"]
    root = d.process_user_turn(TurnRequest(text="fresh", session_id=a.session_id,
                                           branch_from=None))
    assert [n.text for n in store.get_branch(a.session_id)] == ["fresh", "r4"]
    tips = {t.head_id for t in store.list_branches(a.session_id)}
    assert tips == {b.head_id, fork.head_id, root.head_id}
    assert store.rebuild_index(a.session_id).snapshot() == store.index(a.session_id).snapshot()


def test_advance_head_false_leaves_head(make_dispatcher: Make, script: Callable) -> None:
    d = make_dispatcher(script([{"text": "r1"}, {"text": "child"}]))
    a = d.process_user_turn(TurnRequest(text="one"))
    child = d.process_user_turn(TurnRequest(text="side", session_id=a.session_id,
                                            branch_from=a.assistant_node_id,
                                            advance_head=False, source="agent_spawn",
                                            label="helper"))
    store = d.services.store
    assert store.head(a.session_id) == a.assistant_node_id
    assert child.head_id == a.assistant_node_id
    assert store.find_branch(a.session_id, "helper") == child.assistant_node_id


def test_unknown_session_and_node(make_dispatcher: Make) -> None:
    d = make_dispatcher()
    with pytest.raises(NotFound):
        d.process_user_turn(TurnRequest(text="x", session_id="snope"))
    r = d.process_user_turn(TurnRequest(text="x"))
    with pytest.raises(NotFound):
        d.process_user_turn(TurnRequest(text="x", session_id=r.session_id, branch_from="zz"))


def test_busy_session_refused(make_dispatcher: Make, script: Callable) -> None:
    d = make_dispatcher(script([{"text": "x" * 200, "delay": 0.02}, {"text": "ok"}]))
    first = d.process_user_turn(TurnRequest(text="seed"))
    del first
    holder: dict[str, object] = {}
    sid = d.services.store.list_sessions()[0]["id"]

    def run() -> None:
        holder["r"] = d.process_user_turn(TurnRequest(text="slow", session_id=sid))

    # the scripted list is consumed: "seed" took the slow response; add another turn
    d2 = make_dispatcher(script([{"text": "y" * 300, "delay": 0.02}]))
    d2._active = d._active  # share the dispatcher state (same process)
    t = threading.Thread(target=lambda: holder.update(r=d2.process_user_turn(
        TurnRequest(text="slow", session_id=sid))))
    t.start()
    deadline = time.monotonic() + 5
    while not d2.active_turns(sid) and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(SessionBusy):
        d2.process_user_turn(TurnRequest(text="again", session_id=sid))
    d2.cancel(sid)
    t.join(10)
    del run


def test_repeated_identical_failure_not_run_a_third_time(make_dispatcher: Make,
                                                         script: Callable) -> None:
    bad = {"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.txt"}}]}
    d = make_dispatcher(script([bad, bad, bad, {"text": "gave up"}]))
    r = d.process_user_turn(TurnRequest(text="read"))
    calls = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls or []
    assert [("no such file" in (c.output or "")) for c in calls] == [True, True, False]
    assert "already failed twice" in (calls[2].output or "")


def test_iteration_cap(make_dispatcher: Make, script: Callable) -> None:
    loop = {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}
    d = make_dispatcher(script([loop] * 5))
    d.services.max_iterations = 3
    r = d.process_user_turn(TurnRequest(text="spin"))
    assert r.status == "done" and "limit of 3 model calls" in r.text


def test_steering_skips_remaining_tools(make_dispatcher: Make, script: Callable,
                                        workspace: Path) -> None:
    two = {"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 0.3"}},
                          {"name": "write_file", "arguments": {"path": "skipped.txt",
                                                               "content": "x"}}]}
    d = make_dispatcher(script([two, {"text": "ok, changed course"}]),
                        permission_mode="bypass")

    def on_event(ev: Event) -> None:
        if ev.type == "tool.started" and ev.payload["name"] == "run_command":
            d.steer(ev.session_id or "", "stop, do something else")

    r = d.process_user_turn(TurnRequest(text="do two things"), on_event=on_event)
    assert not (workspace / "skipped.txt").exists()
    calls = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls or []
    assert calls[1].output and "interjected" in calls[1].output
    assert r.text.endswith("ok, changed course")
    # the interjection is part of the stored turn, so later turns see what the model saw
    node = d.services.store.get_node(r.session_id, r.assistant_node_id)
    assert node.metadata["interjections"] == [
        {"beforeStep": 1, "kind": "steer", "text": "stop, do something else"}]
    rendered = [(m.role, m.content) for m in render_node(node)]
    assert rendered[3:] == [("user", "stop, do something else"),
                            ("assistant", "ok, changed course")]


def test_question_answered_through_asker(make_dispatcher: Make, script: Callable) -> None:
    ask = {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Tabs or spaces?",
                                                             "options": ["tabs", "spaces"]}}]}
    asker = FixedAsker("spaces")
    d = make_dispatcher(script([ask, {"text": "spaces it is"}]), asker=asker)
    r = d.process_user_turn(TurnRequest(text="style?"))
    assert asker.questions[0].options == ["tabs", "spaces"]
    call = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls[0]
    assert call.output == "spaces"


def test_crash_mid_turn_leaves_user_node_and_interrupted_turn(make_dispatcher: Make,
                                                              script: Callable) -> None:
    d = make_dispatcher(script([{"text": "after crash"}]))
    store = d.services.store
    sid = store.create_session()
    # what a process killed mid-turn leaves behind: user node + running placeholder
    store.append(sid, Node(id="u1", role="user", text="hi"), advance_head=True)
    store.append(sid, Node(id="u1_reply", role="assistant", predecessor="u1",
                           status="running", text="half"), advance_head=True)
    r = d.process_user_turn(TurnRequest(text="again", session_id=sid))
    assert r.status == "done"
    chain = store.get_branch(sid)
    assert [n.status for n in chain] == [None, "interrupted", None, "done"]
    assert chain[1].text.startswith("half")


def test_two_threads_two_sessions(make_dispatcher: Make, script: Callable) -> None:
    d = make_dispatcher("offline")
    results: list[object] = []
    threads = [threading.Thread(target=lambda i=i: results.append(
        d.process_user_turn(TurnRequest(text=f"hello {i}")))) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 2
    store = d.services.store
    for r in results:
        assert r.status == "done"  # type: ignore[attr-defined]
        sid = r.session_id  # type: ignore[attr-defined]
        assert store.rebuild_index(sid).snapshot() == store.index(sid).snapshot()
        assert uncommitted(store.session_dir(sid)) == b""


def test_inherit_is_default(make_dispatcher: Make) -> None:
    assert TurnRequest(text="x").branch_from is INHERIT


def test_a_store_failure_in_finalize_is_an_error_result(make_dispatcher: Make, script: Callable,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    d = make_dispatcher(script([{"text": "r1"}, {"text": "r2"}]))
    first = d.process_user_turn(TurnRequest(text="one"))

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(type(d.services.store), "commit_turn", disk_full)
    r = d.process_user_turn(TurnRequest(text="two", session_id=first.session_id))
    assert r.status == "error" and r.error and "could not be saved" in r.error.message
    assert r.text == "r2"
    assert not d.active_turns()
    monkeypatch.undo()
    again = d.services.store.get_branch(first.session_id)
    assert [n.text for n in again if n.role == "user"] == ["one", "two"]


def test_a_live_turn_of_another_process_is_not_marked_interrupted(
        make_dispatcher: Make, script: Callable) -> None:
    import os
    import socket
    import subprocess
    import sys

    d = make_dispatcher(script([{"text": "side by side"}]))
    store = d.services.store
    sid = store.create_session()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        store.append(sid, Node(id="u1", role="user", text="hi"), advance_head=True)
        store.append(sid, Node(id="u1_reply", role="assistant", predecessor="u1",
                               status="running", metadata={"owner": {
                                   "host": socket.gethostname(), "pid": other.pid}}))
        d.process_user_turn(TurnRequest(text="fork", session_id=sid, branch_from="u1"))
        assert store.get_node(sid, "u1_reply").status == "running"
    finally:
        other.kill()
        other.wait()
    assert os.getpid() != other.pid


def test_a_running_call_and_the_reply_so_far_are_on_record(make_dispatcher: Make,
                                                           script: Callable) -> None:
    """What a crash during a tool call leaves: the text before it and the call, running."""
    look = {"text": "Looking first.", "tool_calls": [{"name": "list_dir",
                                                      "arguments": {"path": "."}}]}
    d = make_dispatcher(script([look, DONE]))
    seen: list[Node] = []

    def on_event(ev: Event) -> None:
        if ev.type == "tool.started":
            seen.append(d.services.store.get_node(ev.session_id or "", ev.turn_id or ""))

    r = d.process_user_turn(TurnRequest(text="look"), on_event=on_event)
    assert r.status == "done"
    [mid] = seen
    assert mid.status == "running" and mid.text == "Looking first."
    assert mid.metadata["steps"] == ["Looking first."]
    [call] = mid.tool_calls or []
    assert (call.name, call.status, call.kind, call.step) == ("list_dir", "in_progress", "read", 0)
    assert call.title


class _RepointingApprover(RecordingApprover):
    """Re-points the workspace symlink while its approval is asked, then allows."""

    def __init__(self, link: Path, target: Path) -> None:
        super().__init__("allow_once")
        self.link, self.target = link, target

    async def request_permission(self, request):  # type: ignore[no-untyped-def]
        tmp = self.link.with_name("ws.new")
        tmp.symlink_to(self.target)
        tmp.replace(self.link)
        return await super().request_permission(request)


def test_a_symlinked_workspace_repointed_mid_turn_is_refused(
        tmp_path: Path, home: Path, script: Callable) -> None:
    # the turn resolves its workspace once (core.turn_root); a tool must not then write
    # into the link's new target, here the state root itself, which its check never saw
    from openprogram_lsp.app import AppConfig, build_dispatcher
    first = tmp_path / "first"
    first.mkdir()
    link = tmp_path / "linked"
    link.symlink_to(first)
    write = {"text": "Writing.", "tool_calls": [
        {"name": "write_file", "arguments": {"path": "x.txt", "content": "x\n"}}]}
    approver = _RepointingApprover(link, home)
    d = build_dispatcher(AppConfig(workspace=link, home=home, model=script([write, DONE]),
                                   permission_mode="ask"), approver=approver)
    r = d.process_user_turn(TurnRequest(text="write it"))
    assert approver.requests and r.status == "done"
    [call] = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls or []
    assert call.status == "failed" and "re-pointed" in (call.output or "")
    assert not (home / "x.txt").exists() and not (first / "x.txt").exists()


class TitleSeeingApprover(RecordingApprover):
    """Records the sessions' titles as listed while a turn waits for approval."""

    def __init__(self, d: list[Dispatcher]) -> None:
        super().__init__("allow_once")
        self.d = d
        self.titles: list[str] = []

    async def request_permission(self, request):  # type: ignore[no-untyped-def]
        self.titles = [m.get("title", "") for m in self.d[0].services.store.list_sessions()]
        return await super().request_permission(request)


def test_a_new_session_is_titled_from_its_first_message_while_it_runs(
        make_dispatcher: Make, script: Callable) -> None:
    holder: list[Dispatcher] = []
    approver = TitleSeeingApprover(holder)
    d = make_dispatcher(script([WRITE, DONE]), approver=approver)
    holder.append(d)
    r = turn(d, "\n  write the greeting file\nwith details")
    assert approver.titles == ["write the greeting file"]
    assert d.services.store.meta(r.session_id)["title"] == "write the greeting file"
