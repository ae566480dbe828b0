"""Rule decisions per tool call: a compound command split with bashlex and matched against
200 stored rules (the file re-checked by stat), beside the same command split by shlex.
Each round uses fresh commands (no cache hits), as a model's calls would.

Rounds interleave A B A B ...; each figure is the median of 7 rounds.
"""

from __future__ import annotations

import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from openprogram_lsp.approvals.facts import call_facts
from openprogram_lsp.approvals.rulebook import RuleBook
from openprogram_lsp.approvals.rules import Rule

N = 20
COMMAND = "cd src && ls *.py | wc -l; echo $(git rev-parse HEAD) > rev.txt"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        book = RuleBook.for_workspace(Path(tmp) / "home", ws)
        for i in range(200):
            book.add(Rule(id="", decision="allow", kind="command", tool="run_command",
                          value=f"make target{i}"))

        rounds = iter(range(10_000))

        def ours() -> None:
            r = next(rounds)
            for i in range(N):
                command = f"{COMMAND} # {r}.{i}"
                book.decide(call_facts(ws, "run_command", "execute", {"command": command},
                                       "s1"))

        def baseline() -> None:
            for i in range(N):
                shlex.split(f"{COMMAND} # {i}")

        a: list[float] = []
        b: list[float] = []
        ours()
        baseline()
        for _ in range(7):
            for fn, out in ((ours, a), (baseline, b)):
                t0 = time.perf_counter()
                fn()
                out.append((time.perf_counter() - t0) / N)
        report("rule decision per run_command call (bashlex)", statistics.median(a),
               statistics.median(b), unit="us")


if __name__ == "__main__":
    main()
