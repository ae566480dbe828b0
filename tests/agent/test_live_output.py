"""A running command's output reaches the editor as tool.output events before it ends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from openprogram_lsp.agent.live_output import LIVE_LIMIT, LiveOutput
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event


def test_command_output_streams_in_order_before_the_call_ends(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[..., str],
        events: list[Event]) -> None:
    run = {"tool_calls": [{"name": "run_command", "arguments": {
        "command": "printf 'first\\n'; sleep 0.3; printf 'sécond\\n'"}}]}
    d = make_dispatcher(script([run, {"text": "done"}]), permission_mode="bypass")
    r = d.process_user_turn(TurnRequest(text="run it"))
    assert r.status == "done"
    types = [e.type for e in events]
    outs = [e for e in events if e.type == "tool.output"]
    assert len(outs) >= 2, "the first line came before the command slept"
    assert "".join(str(e.payload["text"]) for e in outs) == "first\nsécond\n"
    assert outs[0].payload["text"] == "first\n"
    call_id = next(e.payload["tool_call_id"] for e in events if e.type == "tool.started")
    assert {e.payload["tool_call_id"] for e in outs} == {call_id}
    assert all(e.turn_id == r.assistant_node_id for e in outs)
    assert types.index("tool.output") > types.index("tool.started")
    assert max(i for i, t in enumerate(types) if t == "tool.output") < types.index("tool.finished")


def test_live_output_is_batched_and_bounded() -> None:
    sent: list[dict[str, Any]] = []

    async def main() -> None:
        live = LiveOutput(lambda _type, payload: sent.append(payload), "c1")
        for _ in range(100):
            live.feed("x")
        assert sent == [], "small pieces wait for the batch"
        await asyncio.sleep(0.1)
        assert [p["text"] for p in sent] == ["x" * 100]
        live.feed("y" * (LIVE_LIMIT * 2))
        live.feed("z")
        live.close()

    asyncio.run(main())
    streamed = "".join(p["text"] for p in sent)
    assert streamed.count("x") + streamed.count("y") == LIVE_LIMIT
    assert "z" not in streamed
    assert streamed.count("live output stops here") == 1


def test_a_configured_key_split_across_pieces_is_redacted_live() -> None:
    from openprogram_lsp.core.secrets import REDACTED, remember_value
    remember_value("live-key-0a9b8c7d6e")
    sent: list[dict[str, Any]] = []

    async def main() -> None:
        live = LiveOutput(lambda _type, payload: sent.append(payload), "c1")
        live.feed("before live-key-0a9")
        live.flush()
        live.feed("b8c7d6e after\n")
        live.close()

    asyncio.run(main())
    text = "".join(p["text"] for p in sent)
    assert text == f"before {REDACTED} after\n"
    assert all("0a9" not in p["text"] for p in sent)
