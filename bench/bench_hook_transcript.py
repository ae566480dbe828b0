"""The transcript hooks read (``transcript_path``): writing a 4,000-node branch at a hook call
when only the running reply changed (a ``Transcript`` kept across calls reuses every other
node's lines) against rendering the whole branch afresh, interleaved A B A B, medians of 9.

The branch is 2,000 turns, each a ~50-word prompt and a ~80-word reply with one read_file call
and its 500-character result (~4.9 MB of JSONL).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import interleaved, report
from openprogram_lsp.core.types import Node, ToolCallRecord
from openprogram_lsp.hooks.transcript import Transcript, write

TURNS = 2_000


def _chain() -> list[Node]:
    chain: list[Node] = []
    prev = None
    for i in range(TURNS):
        user = Node(id=f"u{i}", role="user", text=f"question {i} " + "detail " * 50,
                    predecessor=prev)
        reply = Node(id=f"a{i}", role="assistant", text=f"answer {i} " + "word " * 80,
                     predecessor=user.id, status="done",
                     tool_calls=[ToolCallRecord(id=f"c{i}", name="read_file",
                                                input={"path": "a.py"}, status="completed",
                                                output="x" * 500, step=0)])
        chain += [user, reply]
        prev = reply.id
    return chain


def main() -> None:
    chain = _chain()
    tmp = Path(tempfile.mkdtemp(prefix="bench-transcript-"))
    kept = Transcript(tmp / "kept.jsonl", session_id="s", cwd="/ws")
    kept.write(chain)
    step = [0]

    def incremental() -> None:  # the running reply is a new object at each hook call
        step[0] += 1
        chain[-1] = chain[-1].model_copy(update={"text": f"step {step[0]}"})
        kept.write(chain)

    def fresh() -> None:
        write(tmp / "fresh.jsonl", chain, session_id="s", cwd="/ws")

    figure, baseline = interleaved(incremental, fresh, pairs=9)
    report("transcript at a hook call, 4,000 nodes (kept)", figure, baseline)
    assert (tmp / "kept.jsonl").stat().st_size > 4_000_000


if __name__ == "__main__":
    main()
