from collections.abc import Iterator

import pytest

from openprogram_lsp.events.bus import Event
from openprogram_lsp.events.tool_gate import (
    GateDecision,
    decide_tool_gate,
    register_tool_gate,
    registered_gate_names,
)


@pytest.fixture
def gates() -> Iterator[list]:
    undo: list = []
    yield undo
    for u in undo:
        u()


def test_no_gates_allow(gates: list) -> None:
    assert decide_tool_gate(Event("tool.before")).verdict == "allow"


def test_strictest_verdict_wins_and_reasons_merge(gates: list) -> None:
    gates.append(register_tool_gate(lambda e: "allow", name="a"))
    gates.append(register_tool_gate(lambda e: GateDecision("ask", ("check",)), name="b"))
    gates.append(register_tool_gate(lambda e: GateDecision("deny", ("no rm",)), name="c"))
    gates.append(register_tool_gate(lambda e: GateDecision("deny", ("no net",)), name="d"))
    d = decide_tool_gate(Event("tool.before"))
    assert d.verdict == "deny"
    assert set(d.reasons) == {"check", "no rm", "no net"}


def test_raising_gate_fails_open_but_critical_fails_closed(gates: list) -> None:
    def boom(e: Event) -> None:
        raise RuntimeError("gate bug")

    gates.append(register_tool_gate(boom, name="soft"))
    assert decide_tool_gate(Event("tool.before")).verdict == "allow"
    gates.append(register_tool_gate(boom, name="hard", critical=True))
    d = decide_tool_gate(Event("tool.before"))
    assert d.verdict == "deny" and "gate bug" in d.reasons[0]


def test_duplicate_names_refused_and_unregister(gates: list) -> None:
    undo = register_tool_gate(lambda e: None, name="x")
    with pytest.raises(ValueError):
        register_tool_gate(lambda e: None, name="x")
    undo()
    assert "x" not in registered_gate_names()


def test_unknown_verdict_fails_closed(gates: list) -> None:
    gates.append(register_tool_gate(lambda e: "maybe", name="typo"))  # type: ignore[arg-type,return-value]
    d = decide_tool_gate(Event("tool.before"))
    assert d.verdict == "deny" and "unknown verdict" in d.reasons[0]
