"""Subagent overhead: a spawned child and a message round trip vs plain turns (offline model)."""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import offline_dispatcher, report
from openprogram_lsp.collab.send_message import send_message
from openprogram_lsp.core.types import TurnRequest


def paired(fn: Callable[[], object], base: Callable[[], object],
           repeat: int) -> tuple[float, float]:
    """Medians of a figure and its baseline timed alternately (machine load hits both)."""
    fn()
    base()
    a, b = [], []
    for _ in range(max(7, repeat)):
        t0 = time.perf_counter()
        fn()
        a.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        base()
        b.append(time.perf_counter() - t0)
    return statistics.median(a), statistics.median(b)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        d, _ = offline_dispatcher(root, extra={"agent.max_messages": 1_000_000})
        sid = d.process_user_turn(TurnRequest(text="hello")).session_id
        counter = iter(range(1_000_000))

        def plain_turn() -> None:
            d.process_user_turn(TurnRequest(text="hello", session_id=sid))

        def spawn_child() -> None:
            job = d.agents.spawn(sid, "hello", label=f"c{next(counter)}")
            job.wait(60)

        report("spawned child turn, submit -> done", *paired(spawn_child, plain_turn, 15),
               target="ratio <= 1.5; baseline = one plain offline turn")

        d.agents.spawn(sid, "be b", label="b").wait(60)

        def round_trip() -> None:
            send_message(d.agents, "hello", "b", session_id=sid)
            d.agents.runner.wait_idle(60)

        def two_turns() -> None:
            plain_turn()
            plain_turn()

        report("send_message round trip (delivery + follow-up)",
               *paired(round_trip, two_turns, 10),
               target="ratio <= 1.5; baseline = two plain offline turns")

        def inbox_of_ten() -> None:
            for _ in range(10):
                send_message(d.agents, "hello", "b", session_id=sid)
            d.agents.runner.wait_idle(120)

        def twenty_turns() -> None:
            for _ in range(20):
                plain_turn()

        report("10 queued messages delivered in order + replies",
               *paired(inbox_of_ten, twenty_turns, 7),
               target="ratio <= 1.5; baseline = twenty plain offline turns")
        d.agents.close()


if __name__ == "__main__":
    main()
