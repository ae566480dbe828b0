"""One whole offline turn in process vs one bare `git commit` of one file (target ratio <= 2)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import median_time, report
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.store.git import git_env


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        d = build_dispatcher(AppConfig(workspace=ws, home=root / "home", model="offline"))
        first = d.process_user_turn(TurnRequest(text="hello"))
        sid = first.session_id
        turn_time = median_time(
            lambda: d.process_user_turn(TurnRequest(text="hello", session_id=sid)), repeat=15)
        counter = iter(range(1_000_000))
        env = git_env()

        def bare_commit() -> None:
            repo = root / f"repo{next(counter)}"
            subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
            (repo / "f.txt").write_text("x")
            subprocess.run(["git", "-C", str(repo), "add", "f.txt"], check=True, env=env)
            subprocess.run(["git", "-C", str(repo), "-c", "user.name=b", "-c",
                            "user.email=b@b", "commit", "-qm", "m"], check=True, env=env)

        def commit_only() -> None:
            repo = root / "repo_fixed"
            if not repo.exists():
                subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
            (repo / "f.txt").write_text(str(next(counter)))
            subprocess.run(["git", "-C", str(repo), "add", "f.txt"], check=True, env=env)
            subprocess.run(["git", "-C", str(repo), "-c", "user.name=b", "-c",
                            "user.email=b@b", "commit", "-qm", "m"], check=True, env=env)

        baseline = median_time(bare_commit, repeat=15)
        report("offline turn in process (no tools)", turn_time, baseline,
               target="ratio <= 2; baseline = git init + add + commit of one file")
        report("offline turn in process (no tools)", turn_time, median_time(commit_only,
                                                                             repeat=15),
               target="reference only: git add + commit in an existing repo")


if __name__ == "__main__":
    main()
