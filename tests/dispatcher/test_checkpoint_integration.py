"""The dispatcher's use of the checkpoint store: serialised sessions and retention."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.core.types import TurnRequest, TurnResult
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.dispatcher.finalize import wait_for_retention


def _write(path: str, then_sleep: float = 0.0) -> list[dict]:
    calls = [{"name": "write_file", "arguments": {"path": path, "content": f"{path}\n"}}]
    steps = [{"tool_calls": calls}]
    if then_sleep:
        steps.append({"tool_calls": [{"name": "run_command",
                                      "arguments": {"command": f"sleep {then_sleep}"}}]})
    return [*steps, {"text": "done"}]


def test_two_sessions_on_one_workspace_get_their_own_changes(
        make_dispatcher: Callable[..., Dispatcher], script: Callable, workspace: Path) -> None:
    slow = make_dispatcher(script(_write("a.txt", then_sleep=0.6)), permission_mode="bypass")
    fast = make_dispatcher(script(_write("b.txt")), permission_mode="bypass")
    results: dict[str, TurnResult] = {}
    started = threading.Event()

    def run_slow() -> None:
        results["a"] = slow.process_user_turn(
            TurnRequest(text="a"),
            on_event=lambda ev: started.set() if ev.type == "tool.finished" else None)

    t = threading.Thread(target=run_slow)
    t.start()
    assert started.wait(20)  # session A has made its first edit and holds the workspace
    results["b"] = fast.process_user_turn(TurnRequest(text="b"))
    t.join(30)
    a_cp, b_cp = results["a"].checkpoint, results["b"].checkpoint
    assert a_cp is not None and b_cp is not None
    assert [f.path for f in a_cp.files] == ["a.txt"]
    assert [f.path for f in b_cp.files] == ["b.txt"]
    assert (a_cp.session_id, b_cp.session_id) == (results["a"].session_id,
                                                  results["b"].session_id)


def test_retention_keeps_checkpoints_that_nodes_reference(
        make_dispatcher: Callable[..., Dispatcher], script: Callable, workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[dict] = []
    for i in range(4):
        steps += _write(f"f{i}.txt")
    d = make_dispatcher(script(steps), permission_mode="bypass", settings=load_settings(
        env={"OPENPROGRAM_CHECKPOINT_MAX_COUNT": "2"}, user_file=False))
    first = d.process_user_turn(TurnRequest(text="0"))
    for i in range(1, 4):
        d.process_user_turn(TurnRequest(text=str(i), session_id=first.session_id))
    wait_for_retention()  # retention runs after the turn, off its path
    cp = d.checkpointer(workspace)
    assert cp is not None
    kept = {c.id for c in cp.list()}  # type: ignore[attr-defined]
    referenced = {n.metadata["checkpointId"] for n in d.services.store.nodes(first.session_id)
                  if "checkpointId" in n.metadata}
    assert len(referenced) == 4 and referenced <= kept
    # the unreferenced baseline went: the limit of 2 is honoured where it can be
    assert [c.kind for c in cp.list()].count("baseline") == 0  # type: ignore[attr-defined]
