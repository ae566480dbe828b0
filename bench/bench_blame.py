"""Agent blame of a 2,000-line file edited by 50 turns (real session store, real private git).

Figures, each beside a bare ``git blame --incremental`` of the same file in the private store,
timed A B A B in the same run (median):
1. code lenses warm (the file and the checkpoints unchanged: the cached blame plus the lens
   titles), target <= 50 ms;
2. code lenses cold (a new checkpoint, so the blame is computed again and attributed).

Run: ``.venv/bin/python bench/bench_blame.py`` (``BENCH_LINES``, ``BENCH_TURNS``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import interleaved, report
from openprogram_lsp.core.types import Node, ToolCallRecord
from openprogram_lsp.lsp.blame_features import lens_title
from openprogram_lsp.store.blame.agent import AgentBlame
from openprogram_lsp.store.checkpoints import CheckpointConfig, CheckpointStore
from openprogram_lsp.store.git import git_env
from openprogram_lsp.store.session_store import SessionStore

LINES = int(os.environ.get("BENCH_LINES", "2000"))
TURNS = int(os.environ.get("BENCH_TURNS", "50"))


def build(root: Path) -> tuple[SessionStore, CheckpointStore, Path, list[str]]:
    """A session of TURNS turns, each rewriting a different stretch of one LINES-line file."""
    ws = root / "ws"
    ws.mkdir()
    lines = [f"line {n} = compute({n})\n" for n in range(LINES)]
    (ws / "big.py").write_text("".join(lines))
    sessions = SessionStore(root / "home")
    store = CheckpointStore(ws, home=root / "home", config=CheckpointConfig())
    sid = sessions.create_session(workspace=str(ws))
    store.ensure_baseline(sid)
    prev = None
    for turn in range(TURNS):
        start = (turn * 397) % (LINES - 20)
        for k in range(start, start + 12):
            lines[k] = f"line {k} = turn{turn}({k})\n"
        (ws / "big.py").write_text("".join(lines))
        user = sessions.append(sid, Node(id=f"u{turn}", role="user", text=f"turn {turn}",
                                         predecessor=prev), advance_head=True)
        store.note_paths(["big.py"])
        cp = store.commit_turn(sid, f"u{turn}_reply", f"turn {turn}")
        assert cp is not None
        call = ToolCallRecord(id=f"c{turn}", name="edit_file", kind="edit",
                              input={"path": "big.py"}, status="completed",
                              approval={"by": "user", "option": "allow_once"})
        sessions.append(sid, Node(id=f"u{turn}_reply", role="assistant", text="done",
                                  predecessor=user.id, tool_calls=[call],
                                  metadata={"checkpointId": cp.id}), advance_head=True)
        prev = f"u{turn}_reply"
    return sessions, store, ws, lines


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sessions, store, ws, _lines = build(root)
        env = git_env(store.repo.env)
        data = (ws / "big.py").read_bytes()

        def bare() -> None:
            subprocess.run(["git", "blame", "--incremental", "--contents", "-", "--", "big.py"],
                           input=data, env=env, check=True, capture_output=True)

        engine = AgentBlame(sessions, store)

        def lenses() -> list[str]:
            hunks = engine.blame("big.py", data) or []
            return [lens_title(h) for h in hunks if h.kind == "agent"]

        assert len(lenses()) >= TURNS // 2
        warm, base = interleaved(lenses, bare)
        report(f"code lenses, {LINES} lines x {TURNS} turns, warm", warm, base, unit="ms",
               target="<= 50 ms; baseline = bare git blame --incremental")

        def cold() -> None:
            engine._cache.clear()
            engine.lines._memo.clear()
            engine.lines._restored.clear()
            lenses()

        cold_t, base = interleaved(cold, bare)
        report(f"code lenses, {LINES} lines x {TURNS} turns, cold", cold_t, base, unit="ms",
               target="reported; baseline = bare git blame --incremental")


if __name__ == "__main__":
    main()
