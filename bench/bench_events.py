"""Event bus: emit to 10 subscribers vs 10 plain function calls (target ratio <= 3).

Timed A B A B ... in the same run, median of 9 pairs of 20,000 emits each.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import interleaved, report
from openprogram_lsp.events.bus import Event, EventBus

N = 20_000


def main() -> None:
    bus = EventBus()
    sink: list[int] = []

    def handler(ev: Event) -> None:
        sink.append(1)

    handlers = [handler] * 10
    for h in handlers:
        bus.subscribe(h)
    ev = Event("text.delta", {"text": "x"})

    def with_bus() -> None:
        for _ in range(N):
            bus.emit(ev)
        sink.clear()

    def plain() -> None:
        for _ in range(N):
            for h in handlers:
                h(ev)
        sink.clear()

    figure, baseline = interleaved(with_bus, plain, pairs=9)
    figure, baseline = figure / N, baseline / N
    report("emit to 10 subscribers (per emit)", figure, baseline, unit="us", target="ratio <= 3")


if __name__ == "__main__":
    main()
