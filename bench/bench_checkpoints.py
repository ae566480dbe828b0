"""Checkpoints on a 20,000-file workspace, one file changed per turn.

Figures (same run, same tree): checkpoint commit median (target <= 30 ms) beside
``git add -A && git commit`` with a shadow ``--git-dir`` (target >= 3x faster); restore of one
file (target <= 30 ms); the baseline checkpoint; a full-scan commit (after ``run_command``).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from openprogram_lsp.store.checkpoints import CheckpointConfig, CheckpointStore
from openprogram_lsp.store.git import git_env

FILES = int(os.environ.get("BENCH_FILES", "20000"))
TURNS = int(os.environ.get("BENCH_TURNS", "30"))
PER_DIR = 100


def make_tree(ws: Path) -> list[str]:
    """FILES small source-like files in FILES/PER_DIR directories."""
    paths = []
    for d in range(FILES // PER_DIR):
        (ws / f"pkg{d:03d}").mkdir(parents=True)
        for f in range(PER_DIR):
            rel = f"pkg{d:03d}/mod{f:03d}.py"
            (ws / rel).write_text(f"# module {d}.{f}\n" + "def f(x):\n    return x + 1\n" * 6)
            paths.append(rel)
    return paths


class ShadowBaseline:
    """The naive way: ``git add -A && git commit`` with a shadow git dir and its own index."""

    def __init__(self, ws: Path, root: Path) -> None:
        self.env = git_env({"GIT_DIR": str(root / "shadow.git"), "GIT_WORK_TREE": str(ws),
                            "GIT_INDEX_FILE": str(root / "shadow.index"),
                            "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@localhost",
                            "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@localhost"})
        subprocess.run(["git", "init", "-q", "--bare", str(root / "shadow.git")], check=True,
                       env=git_env())

    def commit(self, message: str) -> None:
        subprocess.run(f"git add -A && git commit -q --allow-empty -m '{message}'", shell=True,
                       check=True, env=self.env)


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        paths = make_tree(ws)
        store = CheckpointStore(ws, home=root / "home", config=CheckpointConfig())
        shadow = ShadowBaseline(ws, root)
        first = timed(lambda: store.ensure_baseline("bench"))
        shadow_first = timed(lambda: shadow.commit("baseline"))
        report(f"baseline checkpoint of {FILES} files", first, shadow_first, unit="ms",
               target="reported; baseline = first add -A && commit")

        ours, theirs, full = [], [], []
        ids = []
        for turn in range(TURNS):
            rel = paths[(turn * 7919) % len(paths)]
            with open(ws / rel, "a") as fh:
                fh.write(f"# turn {turn}\n")
            store.note_paths([rel])  # what write_file / edit_file report
            t0 = time.perf_counter()
            cp = store.commit_turn("bench", f"t{turn}", f"turn {turn}")
            ours.append(time.perf_counter() - t0)
            assert cp is not None and [f.path for f in cp.files] == [rel], cp
            ids.append(cp.id)
            theirs.append(timed(lambda t=turn: shadow.commit(f"turn {t}")))
        report("checkpoint commit, one changed file (median)", statistics.median(ours),
               statistics.median(theirs), target="<= 30 ms and >= 3x faster; "
               "baseline = shadow add -A && commit")

        created = []
        for turn in range(TURNS):
            rel = f"pkg{turn % 200:03d}/new_{turn}.py"
            (ws / rel).write_text(f"# created in turn {turn}\n")
            store.note_paths([rel])
            created.append(timed(lambda t=turn: store.commit_turn("bench", f"n{t}", "new")))
        report("checkpoint commit, one new file (+ check-ignore)", statistics.median(created),
               statistics.median(theirs), target="reported; baseline = shadow add -A && commit")

        # Ablation, same tree: the general path (update-index --add + write-tree), no Python trees.
        import openprogram_lsp.store.checkpoints.store as store_mod
        fast = store_mod.fast_stage
        store_mod.fast_stage = lambda *a, **k: None  # type: ignore[assignment]
        general = []
        for turn in range(TURNS):
            rel = paths[(turn * 6151 + 11) % len(paths)]
            with open(ws / rel, "a") as fh:
                fh.write(f"# general {turn}\n")
            store.note_paths([rel])
            general.append(timed(lambda t=turn: store.commit_turn("bench", f"g{t}", "general")))
        store_mod.fast_stage = fast
        report("  ablation: general path (update-index + write-tree)", statistics.median(general),
               statistics.median(ours), target="reported; baseline = fast path")

        for turn in range(TURNS // 3):
            rel = paths[(turn * 104729) % len(paths)]
            with open(ws / rel, "a") as fh:
                fh.write(f"# shell turn {turn}\n")
            store.note_all()  # what run_command reports
            full.append(timed(lambda t=turn: store.commit_turn("bench", f"s{t}", "shell")))
        report("checkpoint commit after run_command (full scan)", statistics.median(full),
               statistics.median(theirs), target="reported")

        restores = []
        for n in range(TURNS // 2):
            cp = store.get(ids[n])  # put back the version from before that turn's edit
            path = cp.files[0].path
            assert cp.parent_id is not None
            t0 = time.perf_counter()
            out = store.restore(cp.parent_id, [path])
            restores.append(time.perf_counter() - t0)
            assert out["restored"] == [path], out
        naive = []
        for n in range(TURNS // 2):
            rel = store.get(ids[n]).files[0].path
            naive.append(timed(lambda r=rel: subprocess.run(
                ["git", "checkout", "-q", "HEAD~20", "--", r], env=shadow.env, check=True)))
        report("restore of one file (median, incl. safety checkpoint)",
               statistics.median(restores), statistics.median(naive),
               target="<= 30 ms; baseline = shadow git checkout REV -- PATH, no safety")


if __name__ == "__main__":
    main()
