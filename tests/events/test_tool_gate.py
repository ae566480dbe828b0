import pytest

from openprogram_lsp.events.bus import Event
from openprogram_lsp.events.tool_gate import GateDecision, GateRegistry


@pytest.fixture
def registry() -> GateRegistry:
    return GateRegistry()


def test_no_gates_allow(registry: GateRegistry) -> None:
    assert registry.decide(Event("tool.before")).verdict == "allow"


def test_strictest_verdict_wins_and_reasons_merge(registry: GateRegistry) -> None:
    registry.register(lambda e: "allow", name="a")
    registry.register(lambda e: GateDecision("ask", ("check",)), name="b")
    registry.register(lambda e: GateDecision("deny", ("no rm",)), name="c")
    registry.register(lambda e: GateDecision("deny", ("no net",)), name="d")
    d = registry.decide(Event("tool.before"))
    assert d.verdict == "deny"
    assert set(d.reasons) == {"check", "no rm", "no net"}


def test_raising_gate_fails_open_but_critical_fails_closed(registry: GateRegistry) -> None:
    def boom(e: Event) -> None:
        raise RuntimeError("gate bug")

    registry.register(boom, name="soft")
    assert registry.decide(Event("tool.before")).verdict == "allow"
    registry.register(boom, name="hard", critical=True)
    d = registry.decide(Event("tool.before"))
    assert d.verdict == "deny" and "gate bug" in d.reasons[0]


def test_duplicate_names_refused_and_unregister(registry: GateRegistry) -> None:
    undo = registry.register(lambda e: None, name="x")
    with pytest.raises(ValueError):
        registry.register(lambda e: None, name="x")
    undo()
    assert "x" not in registry.names()


def test_unknown_verdict_fails_closed(registry: GateRegistry) -> None:
    registry.register(lambda e: "maybe", name="typo")  # type: ignore[arg-type,return-value]
    d = registry.decide(Event("tool.before"))
    assert d.verdict == "deny" and "unknown verdict" in d.reasons[0]


def test_approval_rewrites_and_context_merge() -> None:
    gates = GateRegistry()
    event = Event("tool.before")
    gates.register(lambda e: GateDecision("allow", approved=True, updated_input={"a": 1},
                                          context=("one",)), name="a")
    gates.register(lambda e: GateDecision("allow", context=("two",)), name="b")
    merged = gates.decide(event)
    assert merged.approved and merged.updated_input == {"a": 1}
    assert merged.context == ("one", "two")
    gates.register(lambda e: "ask", name="c")
    assert not gates.decide(event).approved  # an ask anywhere means the user is asked
    gates.register(lambda e: GateDecision("allow", updated_input={"a": 2}), name="d")
    split = gates.decide(event)
    assert split.verdict == "deny" and "different ways" in split.reasons[-1]
