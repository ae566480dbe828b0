"""Builders for conversations: chains of user and assistant nodes with tool calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.context.types import TurnPrep
from openprogram_lsp.core.types import Message, Node, ToolCallRecord, ToolSpec

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SYSTEM = "You are a coding agent. Keep answers short."
TOOLS = [ToolSpec(name="read_file", description="Read a file.",
                  input_schema={"type": "object", "properties": {"path": {"type": "string"}}}),
         ToolSpec(name="run_command", description="Run a command.",
                  input_schema={"type": "object", "properties": {"command": {"type": "string"}}})]


def iso(seconds: float) -> str:
    """An ISO time ``seconds`` after T0."""
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


@dataclass
class Call:
    """A tool call in a step: name, path argument, output, failed or not."""

    path: str
    output: str
    failed: bool = False
    name: str = "read_file"


@dataclass
class Turn:
    """One exchange: the user's text, then assistant steps (text and tool calls)."""

    user: str
    steps: list[tuple[str, list[Call]]] = field(default_factory=lambda: [("ok", [])])
    gap: float = 10.0  # seconds between the previous turn's end and this user message
    status: str = "done"


def build_chain(turns: list[Turn], *, open_last: bool = True, prefix: str = "") -> list[Node]:
    """Nodes root first; with ``open_last`` the last turn is only its user message."""
    nodes: list[Node] = []
    clock = 0.0
    pred: str | None = None
    for i, t in enumerate(turns):
        clock += t.gap
        uid = f"{prefix}u{i}"
        nodes.append(Node(id=uid, role="user", text=t.user, predecessor=pred,
                          created_at=iso(clock)))
        pred = uid
        if open_last and i == len(turns) - 1:
            break
        records: list[ToolCallRecord] = []
        for s, (_, calls) in enumerate(t.steps):
            for j, c in enumerate(calls):
                records.append(ToolCallRecord(
                    id=f"c{i}_{s}_{j}", name=c.name, kind="read", input={"path": c.path},
                    status="failed" if c.failed else "completed", output=c.output, step=s))
        clock += 5
        aid = f"{uid}_reply"
        nodes.append(Node(id=aid, role="assistant", text="\n\n".join(x for x, _ in t.steps),
                          predecessor=pred, created_at=iso(clock - 4), status=t.status,  # type: ignore[arg-type]
                          tool_calls=records or None,
                          metadata={"steps": [x for x, _ in t.steps], "finishedAt": iso(clock)}))
        pred = aid
    return nodes


def prepare(engine: ContextEngine, chain: list[Node], *, window: int = 8000,
            summaries: list[Node] | None = None, last_turn_at: str | None = None,
            now: float | None = None, max_output_tokens: int = 4096) -> TurnPrep:
    """Prepare a chain with the test system prompt and tools."""
    return engine.prepare(session_id="s_test", history=chain, system=SYSTEM, tools=TOOLS,
                          model="test-model", context_window=window,
                          max_output_tokens=max_output_tokens, last_turn_at=last_turn_at,
                          summaries=summaries, now=now if now is not None else
                          (T0 + timedelta(days=400)).timestamp())


def check_pairing(messages: list[Message]) -> None:
    """Every tool call is immediately followed by its result, and every result by its call."""
    i = 0
    while i < len(messages):
        m = messages[i]
        assert m.role != "tool", f"orphan tool result at {i}: {m.tool_call_id}"
        if m.role == "assistant" and m.tool_calls:
            ids = [c.id for c in m.tool_calls]
            results = messages[i + 1:i + 1 + len(ids)]
            assert [r.role for r in results] == ["tool"] * len(ids), f"call without result at {i}"
            assert [r.tool_call_id for r in results] == ids
            i += 1 + len(ids)
            continue
        i += 1


def chain_order(prep: TurnPrep, chain: list[Node]) -> list[int]:
    """Positions in the chain of the chain nodes the prep renders, in rendered order."""
    pos = {n.id: i for i, n in enumerate(chain)}
    return [pos[s.node_id] for s in prep.segments if s.node_id in pos]
