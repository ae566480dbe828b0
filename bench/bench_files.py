"""``openprogram/files`` (@-mention completion) on a 100,000-file workspace.

Figures, each beside a bare ``os.walk`` of the same tree timed A B A B in the same run (median):
1. a warm query (the list already built, as after the first ``@``), for a few typical queries
   (broad, fuzzy, long, one letter, every file, none); target < 50 ms;
2. typing a word, one query per keystroke;
3. a query after a watcher change (a file added, then deleted);
4. the cold build (``rg --files``, .gitignore-aware) that the first query pays.

Run: ``.venv/bin/python bench/bench_files.py`` (``BENCH_FILES``, default 100000).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import interleaved, report
from openprogram_lsp.tools.filelist import FileList

FILES = int(os.environ.get("BENCH_FILES", "100000"))
WORDS = ["server", "client", "handler", "model", "view", "util", "config", "test", "api",
         "store", "index", "render", "parse", "event", "cache", "auth", "user", "session"]


def build(root: Path) -> None:
    """FILES files, 100 per directory, three levels deep, with a .gitignored build dir."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("build/\n", "utf-8")
    per_dir = 100
    for d in range(FILES // per_dir):
        a, b = WORDS[d % len(WORDS)], WORDS[(d // len(WORDS)) % len(WORDS)]
        folder = root / "src" / f"{a}_{d // 300}" / f"{b}_{d}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(per_dir):
            name = f"{WORDS[(d + f) % len(WORDS)]}_{WORDS[f % len(WORDS)]}_{f}.py"
            (folder / name).touch()
    (root / "build").mkdir()
    for i in range(1000):
        (root / "build" / f"out_{i}.js").touch()


def interleaved_cpu(figure: Callable[[], object], baseline: Callable[[], object],
                    pairs: int = 7) -> tuple[float, float]:
    """Median CPU seconds of this process, A B A B (what an idle machine's wall time is close
    to: on a shared machine other processes' load inflates the wall-clock figures)."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(pairs):
        for fn, out in ((figure, a), (baseline, b)):
            t0 = time.process_time()
            fn()
            out.append(time.process_time() - t0)
    return statistics.median(a), statistics.median(b)


def walk(root: Path) -> int:
    n = 0
    for _base, _dirs, files in os.walk(root):
        n += len(files)
    return n


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root)
        listed = FileList(root)
        found = listed.query("x")
        print(f"workspace of {FILES} files (+1000 ignored); first query listed "
              f"{listed.count} files, {found[1]} matched 'x'")
        for query in ("handler", "srvhndl", "cache_user_7", "s", "py", "zzz"):
            fig, base = interleaved(lambda q=query: listed.query(q), lambda: walk(root))
            report(f"files query {query!r} warm (limit 50)", fig, base, target="< 50 ms")
            fig, base = interleaved_cpu(lambda q=query: listed.query(q), lambda: walk(root))
            report("  the same, CPU time of this process", fig, base)

        def typing(word: str = "handlerview") -> None:
            for i in range(1, len(word) + 1):
                listed.query(word[:i])

        fig, base = interleaved(typing, lambda: walk(root))
        report("files typing 'handlerview', per keystroke", fig / 11, base, target="< 50 ms")

        def changed() -> None:  # one file added: the next query pays for the update
            (root / "src" / "fresh.py").touch()
            listed.note_changes([{"path": "src/fresh.py", "change": "added"}])
            listed.query("fresh")
            (root / "src" / "fresh.py").unlink()
            listed.note_changes([{"path": "src/fresh.py", "change": "deleted"}])
            listed.query("fresh")

        fig, base = interleaved(changed, lambda: walk(root))
        report("files add + query, delete + query, per query", fig / 2, base)

        def cold() -> None:
            FileList(root).query("handler")

        fig, base = interleaved(cold, lambda: walk(root), pairs=7)
        report("files cold build + query (rg --files)", fig, base)


if __name__ == "__main__":
    main()
