"""What spelling a bus event for the wire costs (lsp/dumps.event_data), beside the bare key
rename of the same payload, interleaved A B A B, median of 9 pairs.

Run: ``.venv/bin/python bench/bench_event_wire.py``.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import interleaved, report
from openprogram_lsp.core.types import Checkpoint, TurnResult, Usage
from openprogram_lsp.lsp.dumps import camel_keys, event_data

DELTA = {"text": "the next few words "}
STARTED = {"tool_call_id": "call_1", "name": "write_file", "kind": "edit", "title": "Write a.py",
           "input": {"path": "a.py", "content": "x = 1\n" * 40}}
FINISHED = TurnResult(session_id="s", user_node_id="u", assistant_node_id="u_reply",
                      head_id="u_reply", status="done", text="done " * 50,
                      usage=Usage(input_tokens=900, output_tokens=80),
                      checkpoint=Checkpoint(id="c", session_id="s", turn_id="u_reply",
                                            created_at="2026-01-01T00:00:00Z")).payload()
N = 2000


def _many(type: str, payload: dict[str, object]) -> object:
    return [event_data(type, payload) for _ in range(N)]


def _bare(payload: dict[str, object]) -> object:
    return [camel_keys(payload) for _ in range(N)]


def main() -> None:
    for type, payload in (("text.delta", DELTA), ("tool.started", STARTED),
                          ("turn.finished", FINISHED)):
        figure, baseline = interleaved(functools.partial(_many, type, payload),
                                       functools.partial(_bare, payload))
        report(f"event_data {type} (per event)", figure / N, baseline / N, unit="us")


if __name__ == "__main__":
    main()
