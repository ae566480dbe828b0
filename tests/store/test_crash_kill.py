"""kill -9 of a real server and a real CLI during turns: the next process reads the truth.

A few rounds here; ``python -m tests.stress.crash --turns 200`` runs the issue's full size."""

from __future__ import annotations

from pathlib import Path

from tests.stress.crash import Round, run

# Each cut at another place: after the agent's first write (no checkpoint has it yet), after
# the checkpoint while the session store commits (git children killed with the process group),
# right after the user message was acknowledged; then a turn that must take over whatever the
# kills left and finish.
ROUNDS = [
    Round("server", "tool.finished"),
    Round("cli", "checkpoint.created"),
    Round("server", "user.prompt_submitted"),
    Round("cli", None),
]


async def test_kill_9_during_turns_loses_nothing_and_history_tells_the_truth(
        tmp_path: Path) -> None:
    ledger = await run(tmp_path / "crash", ROUNDS)
    assert ledger.kills == {"server": 2, "cli": 1}
    assert len(ledger.acked) == 4
    # the first was cut mid-turn; the third may die before its reply node exists
    assert ledger.interrupted >= 1 and "interrupted" in ledger.settled.values()
    assert {p for p, _ in ledger.versions} >= {"f0.txt", "f1.txt", "cmd.txt"}
