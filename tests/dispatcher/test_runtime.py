"""Two runtimes in one process share nothing: no subscriber, question or gate."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.dispatcher.runtime import Runtime
from openprogram_lsp.events.bus import Event, make_event
from openprogram_lsp.events.tool_gate import GateDecision


def test_two_runtimes_are_isolated() -> None:
    a, b = Runtime.create(), Runtime.create()
    seen_a: list[Event] = []
    seen_b: list[Event] = []
    a.bus.subscribe(seen_a.append)
    b.bus.subscribe(seen_b.append)
    a.bus.emit(make_event("x.only_a"))
    assert [e.type for e in seen_a] == ["x.only_a"] and seen_b == []

    async def ask() -> None:
        q = a.questions.new_question("which?")
        fut = a.questions.open(q)
        with pytest.raises(NotFound):
            b.questions.get(q.question_id)
        assert not b.questions.answer(q.question_id, "no")  # unknown there
        assert a.questions.answer(q.question_id, "yes")
        assert await asyncio.wait_for(fut, 10) == "yes"

    asyncio.run(ask())
    assert "question.asked" not in [e.type for e in seen_b]
    a.gates.register(lambda e: GateDecision("deny", ("a only",)), name="deny-all")
    assert a.gates.decide(Event("tool.before")).verdict == "deny"
    assert b.gates.decide(Event("tool.before")).verdict == "allow"


def test_each_built_dispatcher_has_its_own_runtime(home: Path, workspace: Path) -> None:
    cfg = AppConfig(workspace=workspace, home=home)
    one, two = build_dispatcher(cfg), build_dispatcher(cfg)
    r1, r2 = one.services.runtime, two.services.runtime
    assert r1.bus is not r2.bus and r1.questions is not r2.questions
    assert r1.gates is not r2.gates
    assert r1.settings is cfg.settings
    assert r1.gates.names() == r2.gates.names() != []  # the hook and policy gates, on each
    seen: list[Event] = []
    r2.bus.subscribe(seen.append)
    r1.bus.emit(make_event("x.one"))
    assert seen == []
