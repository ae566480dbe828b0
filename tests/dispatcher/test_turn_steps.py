"""A turn reads off ``run_turn``: the seven steps of docs/architecture.md in order, and the
turn's session reached only through its ``SessionHandle``."""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher, turns
from openprogram_lsp.store.session_store import SessionStore

REPO = Path(__file__).resolve().parents[2]
WRITE = {"text": "Writing.", "tool_calls": [
    {"name": "write_file", "arguments": {"path": "out.txt", "content": "hello\n"}}]}
CATALOGUE = {"exists", "create_session", "checkpoint_refs"}
"""Store methods about the store's sessions as a whole (not one session's contents)."""


def test_run_turn_is_the_documented_steps_in_order() -> None:
    text = (REPO / "docs" / "architecture.md").read_text("utf-8")
    section = text.split("## One turn", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^(\d)\. \*\*(\w[\w ]*)\*\* \(([^)]*)\)", section, re.M)
    assert [int(n) for n, _, _ in steps] == list(range(1, 8))
    source = inspect.getsource(turns.Dispatcher.run_turn)
    marks = re.findall(r"# (\d(?:-\d)?)\.", source)
    assert marks == ["1", "2", "3", "4", "5-6", "7"]
    for _, name, where in steps:  # every method the doc names exists where it says
        for ref in re.findall(r"`([\w.]+)`", where):
            owner, _, attr = ref.rpartition(".")
            if owner:
                module = sys.modules[f"openprogram_lsp.dispatcher.{owner}"]
                assert hasattr(module, attr), (name, ref)
            else:
                assert hasattr(turns.Dispatcher, attr) or hasattr(turns, attr), (name, ref)


def test_a_turn_enters_its_session_only_through_the_handle(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[..., str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    first = make_dispatcher(script([{"text": "Hi."}])).process_user_turn(
        TurnRequest(text="one"))
    callers: set[tuple[str, str]] = set()
    for name, fn in inspect.getmembers(SessionStore, inspect.isfunction):
        if name.startswith("_"):
            continue

        def spy(*args: Any, _fn: Any = fn, _name: str = name, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_globals["__name__"]
            if not caller.startswith("openprogram_lsp.store."):
                callers.add((caller, _name))
            return _fn(*args, **kwargs)

        monkeypatch.setattr(SessionStore, name, spy)
    # a new server on that session (nothing of it cached), built with the spies in place
    d = make_dispatcher(script([WRITE, {"text": "Done."}]), permission_mode="bypass")
    callers.clear()
    r = d.process_user_turn(TurnRequest(text="write it", session_id=first.session_id))
    monkeypatch.undo()
    assert r.status == "done" and r.checkpoint is not None
    assert ("openprogram_lsp.dispatcher.turns", "exists") in callers  # (the spy works)
    # dispatcher code asks the store about its sessions, never into one (the handle does)
    outside = {(m, n) for m, n in callers if n not in CATALOGUE}
    assert outside == set()
