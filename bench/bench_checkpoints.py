"""Checkpoints on a 20,000-file workspace, one file changed per turn; and the first
checkpoint of a 100,000-file tree.

Figures (same run, same tree): checkpoint commit median (target <= 30 ms) beside
``git add -A && git commit`` with a shadow ``--git-dir`` (target >= 3x faster); restore of one
file (target <= 30 ms); the baseline checkpoint; a full-scan commit (after ``run_command``).

``first``: the first checkpoint of a ``BENCH_FIRST_FILES`` (100,000) file tree in a fresh store,
interleaved with a plain ``git add -A`` on a fresh index and a fresh repository, median of
``BENCH_PAIRS`` (7) pairs; target <= 1.0x. The tree is made once in a temp dir (about 400 MB on
ext4 at 100,000 files) and removed afterwards.

``background``: the first edit's wait for its baseline ``BENCH_EDIT_AFTER`` (2) seconds after
the walk started in the background (``CheckpointStore.prepare``, as the server does once the
editor names the folder), beside the same baseline with no walk before it, on a
``BENCH_FILES`` tree; fresh stores, interleaved, median of ``BENCH_PAIRS`` (7) pairs.

    python bench/bench_checkpoints.py [turns] [first] [background]    # all when none is named
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from openprogram_lsp.store.checkpoints import CheckpointConfig, CheckpointStore
from openprogram_lsp.store.git import git_env

FILES = int(os.environ.get("BENCH_FILES", "20000"))
TURNS = max(7, int(os.environ.get("BENCH_TURNS", "30")))
"""Turns per figure (at least 7: every figure is a median of 7 or more pairs)."""
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

    def head(self) -> str:
        """The shadow repository's current commit."""
        return subprocess.run(["git", "rev-parse", "HEAD"], check=True, env=self.env,
                              capture_output=True, text=True).stdout.strip()


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def disk_usage(path: Path) -> int:
    """Bytes the files under a path take on disk (``du``)."""
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) * 1024


def first_checkpoint() -> None:
    """The first checkpoint of a big tree vs a plain ``git add -A`` on a fresh index."""
    files = int(os.environ.get("BENCH_FIRST_FILES", "100000"))
    pairs = max(7, int(os.environ.get("BENCH_PAIRS", "7")))
    global FILES
    FILES = files
    with tempfile.TemporaryDirectory(prefix="bench-first-") as tmp:
        root = Path(tmp)
        ws = root / "ws"
        t0 = time.perf_counter()
        make_tree(ws)
        print(f"tree of {files} files made in {time.perf_counter() - t0:.1f} s, "
              f"{disk_usage(ws) / 1e6:.0f} MB on disk", flush=True)
        ours: list[float] = []
        theirs: list[float] = []
        sizes: dict[str, int] = {}
        for n in range(pairs + 1):  # the first pair warms the page cache for both
            home = root / f"home{n}"
            store = CheckpointStore(ws, home=home, config=CheckpointConfig())
            t0 = time.perf_counter()
            cp = store.ensure_baseline("bench")
            took = time.perf_counter() - t0
            assert cp is not None
            plain = root / f"plain{n}.git"
            env = git_env({"GIT_DIR": str(plain), "GIT_WORK_TREE": str(ws),
                           "GIT_INDEX_FILE": str(root / f"plain{n}.index")})
            subprocess.run(["git", "init", "-q", "--bare", str(plain)], check=True, env=git_env())
            t0 = time.perf_counter()
            subprocess.run(["git", "add", "-A"], check=True, env=env)
            plain_took = time.perf_counter() - t0
            if n:
                ours.append(took)
                theirs.append(plain_took)
            print(f"  pair {n}: checkpoint {took:.2f} s, git add -A {plain_took:.2f} s"
                  + (" (warm-up)" if not n else ""), flush=True)
            sizes = {"store": disk_usage(home), "plain": disk_usage(plain)}
            shutil.rmtree(home)
            shutil.rmtree(plain)
            os.unlink(root / f"plain{n}.index")
        report(f"first checkpoint of {files} files (median)", statistics.median(ours),
               statistics.median(theirs), unit="s",
               target="<= 1.0x; baseline = plain git add -A on a fresh index")
        print(f"  on disk: checkpoint store {sizes['store'] / 1e6:.1f} MB, plain repository "
              f"{sizes['plain'] / 1e6:.1f} MB", flush=True)


def background() -> None:
    """How long the first edit waits for its baseline when the walk started in the background
    ``BENCH_EDIT_AFTER`` (2) seconds earlier (what the server does once the editor names the
    folder), beside the same baseline taken with no walk before it; fresh stores, A B A B."""
    after = float(os.environ.get("BENCH_EDIT_AFTER", "2"))
    pairs = max(7, int(os.environ.get("BENCH_PAIRS", "7")))
    with tempfile.TemporaryDirectory(prefix="bench-background-") as tmp:
        root = Path(tmp)
        ws = root / "ws"
        make_tree(ws)
        waits: list[float] = []
        plain: list[float] = []
        for n in range(pairs + 1):  # the first pair warms the page cache for both
            store = CheckpointStore(ws, home=root / f"bg{n}", config=CheckpointConfig())
            walker = threading.Thread(target=store.prepare)
            walker.start()
            time.sleep(after)
            waited = timed(lambda s=store: s.ensure_baseline("bench"))
            walker.join()
            cold = CheckpointStore(ws, home=root / f"cold{n}", config=CheckpointConfig())
            took = timed(lambda s=cold: s.ensure_baseline("bench"))
            if n:
                waits.append(waited)
                plain.append(took)
            print(f"  pair {n}: first edit waits {waited:.2f} s, without the walk {took:.2f} s"
                  + (" (warm-up)" if not n else ""), flush=True)
            shutil.rmtree(root / f"bg{n}")
            shutil.rmtree(root / f"cold{n}")
        report(f"first edit {after:.0f} s after the folder is known, {FILES} files",
               statistics.median(waits), statistics.median(plain), unit="s",
               target="reported; baseline = the same first baseline with no walk before it")


def main() -> None:
    sections = set(sys.argv[1:]) or {"turns", "first", "background"}
    if "turns" in sections:
        turns()
    if "first" in sections:
        first_checkpoint()
    if "background" in sections:
        background()


def turns() -> None:
    """The per-turn figures on a ``BENCH_FILES`` tree."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        paths = make_tree(ws)
        store = CheckpointStore(ws, home=root / "home", config=CheckpointConfig())
        shadow = ShadowBaseline(ws, root)
        first = timed(lambda: store.ensure_baseline("bench"))
        shadow_first = timed(lambda: shadow.commit("baseline"))
        report(f"baseline checkpoint of {FILES} files", first, shadow_first, unit="ms",
               target="reported, one pair: a tree's first checkpoint happens once "
               "(the `first` section times 7 pairs on fresh stores); baseline = first add -A "
               "&& commit")

        ours, theirs, full = [], [], []
        ids, shadow_before = [], []  # each turn's checkpoint, the shadow commit before it
        for turn in range(TURNS):
            shadow_before.append(shadow.head())
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

        created, theirs_new = [], []
        for turn in range(TURNS):
            rel = f"pkg{turn % 200:03d}/new_{turn}.py"
            (ws / rel).write_text(f"# created in turn {turn}\n")
            store.note_paths([rel])
            created.append(timed(lambda t=turn: store.commit_turn("bench", f"n{t}", "new")))
            theirs_new.append(timed(lambda t=turn: shadow.commit(f"new {t}")))
        report("checkpoint commit, one new file (+ check-ignore)", statistics.median(created),
               statistics.median(theirs_new),
               target="reported; baseline = shadow add -A && commit")

        # Ablation, same tree, A B A B: the general path (update-index --add + write-tree, no
        # Python trees) beside the fast path.
        import openprogram_lsp.store.checkpoints.store as store_mod
        fast = store_mod.fast_stage
        general, fast_again = [], []
        for turn in range(TURNS):
            for path_kind, out in (("general", general), ("fast", fast_again)):
                rel = paths[(turn * 6151 + (11 if path_kind == "general" else 29)) % len(paths)]
                with open(ws / rel, "a") as fh:
                    fh.write(f"# {path_kind} {turn}\n")
                store.note_paths([rel])
                if path_kind == "general":
                    store_mod.fast_stage = lambda *a, **k: None  # type: ignore[assignment]
                try:
                    out.append(timed(lambda t=turn, k=path_kind: store.commit_turn(
                        "bench", f"{k[0]}{t}", k)))
                finally:
                    store_mod.fast_stage = fast
        report("  ablation: general path (update-index + write-tree)", statistics.median(general),
               statistics.median(fast_again), target="reported; baseline = fast path")

        theirs_full = []
        for turn in range(max(7, TURNS // 3)):
            rel = paths[(turn * 104729) % len(paths)]
            with open(ws / rel, "a") as fh:
                fh.write(f"# shell turn {turn}\n")
            store.note_all()  # what run_command reports
            full.append(timed(lambda t=turn: store.commit_turn("bench", f"s{t}", "shell")))
            theirs_full.append(timed(lambda t=turn: shadow.commit(f"shell {t}")))
        report("checkpoint commit after run_command (full scan)", statistics.median(full),
               statistics.median(theirs_full), target="reported; baseline = shadow add -A && "
               "commit")

        restores, naive = [], []
        for n in range(max(7, TURNS // 2)):
            cp = store.get(ids[n])  # put back the version from before that turn's edit
            path = cp.files[0].path
            assert cp.parent_id is not None
            t0 = time.perf_counter()
            out = store.restore(cp.parent_id, [path])
            restores.append(time.perf_counter() - t0)
            assert out.restored == [path], out
            # the same version in the shadow repository: its commit from before that turn
            naive.append(timed(lambda r=path, rev=shadow_before[n]: subprocess.run(
                ["git", "checkout", "-q", rev, "--", r], env=shadow.env, check=True)))
        report("restore of one file (median, incl. safety checkpoint)",
               statistics.median(restores), statistics.median(naive),
               target="<= 30 ms; baseline = shadow git checkout REV -- PATH, no safety")


if __name__ == "__main__":
    main()
