"""The workspace file list: .gitignore-aware, fuzzy-ranked, kept current by watcher changes."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from openprogram_lsp.tools.filelist import FileList, _score, fold


def _tree(root: Path, *, git: bool = True) -> None:
    for rel in ("src/app/main.py", "src/app/models.py", "docs/main.md", "README.md",
                "build/out.js", ".github/workflows/ci.yml", "odd name ü.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", "utf-8")
    (root / ".gitignore").write_text("build/\n", "utf-8")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)


def test_fuzzy_ranking_and_gitignore(tmp_path: Path) -> None:
    _tree(tmp_path)
    files = FileList(tmp_path)
    found, total = files.query("main")
    assert [m.path for m in found][:2] == ["docs/main.md", "src/app/main.py"]
    assert total == 2
    assert [m.path for m in files.query("sapmod")[0]] == ["src/app/models.py"]
    assert files.query("out.js")[1] == 0  # ignored by .gitignore
    assert files.query("ci")[0][0].path == ".github/workflows/ci.yml"
    assert files.query("ü")[0][0].path == "odd name ü.txt"
    assert not any(m.path.startswith(".git/") for m in files.query("", limit=500)[0])
    assert files.query("(.*")[1] == 0  # query characters are literal


def test_gitignore_applies_outside_a_git_repository(tmp_path: Path) -> None:
    _tree(tmp_path, git=False)
    files = FileList(tmp_path)
    assert files.query("out.js")[1] == 0
    assert files.query("main")[1] == 2


def test_changes_update_the_list(tmp_path: Path) -> None:
    _tree(tmp_path)
    files = FileList(tmp_path)
    assert files.query("new")[1] == 0
    (tmp_path / "src" / "new_thing.py").write_text("", "utf-8")
    files.note_changes([{"path": "src/new_thing.py", "change": "added"},
                        {"path": "docs", "change": "deleted"}])
    assert files.query("newthing")[0][0].path == "src/new_thing.py"
    assert files.query("main.md")[1] == 0


def _subsequence(q: str, path: str) -> bool:
    it = iter(fold(path))  # lowercase, one character for one
    return all(c in it for c in q)


def test_matches_and_total_agree_with_a_plain_scan() -> None:
    rng = random.Random(7)
    parts = ["src", "App", "lib", "tests", "ßx", "İdir", "a.b", "web"]
    names = ["main.py", "Models.py", "util.ts", "README.md", "ünï.txt", "x", "İ.txt", "a_b-c"]
    paths = sorted({"/".join([*rng.sample(parts, rng.randint(0, 3)), rng.choice(names)])
                    for _ in range(400)})
    files = FileList(Path("/nonexistent"))
    files.note_changes([])  # before the first query: nothing to apply
    files._build(paths)
    files._built = True
    for q in ["", "m", "main", "srcmain", "s/m", "APP", "ünï", "i", "İ", "zz", "ts", "a.b/x",
              "lib/tests/util", "b-c"]:
        low = fold(q)
        want = [p for p in paths if _subsequence(low, p)]
        found, total = files.query(q, limit=500)
        assert total == len(want), q
        assert sorted(m.path for m in found) == sorted(want), q
        if want:  # the best is the one the scoring ranks first among all matches
            assert found[0].path == min(want, key=lambda p: (-_score(p, low), p)), q


def test_gitignore_changes_and_hostile_names(tmp_path: Path) -> None:
    _tree(tmp_path)
    odd = ["-rf.txt", "a\\b[1]*.md", "sp ace/tab\there.py", "$(x).sh", "--glob=x"]
    for rel in odd:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("", "utf-8")
    (tmp_path / "line\nbreak.txt").write_text("", "utf-8")  # never listed: it would split lines
    files = FileList(tmp_path)
    listed = {m.path for m in files.query("", limit=500)[0]}
    assert set(odd) <= listed
    assert not any("\n" in p or p.startswith(("build/", ".git/")) for p in listed)
    assert files.query("a\\b[1]*")[0][0].path == "a\\b[1]*.md"
    # the watcher's changes: a new file appears, a deleted one and a deleted directory go
    (tmp_path / "src" / "app" / "extra.py").write_text("", "utf-8")
    (tmp_path / "README.md").unlink()
    files.note_changes([{"path": "src/app/extra.py", "change": "added"},
                        {"path": "README.md", "change": "deleted"},
                        {"path": "sp ace", "change": "deleted"}])
    assert [m.path for m in files.query("extra")[0]] == ["src/app/extra.py"]
    assert files.query("readme")[1] == 0 and files.query("tabhere")[1] == 0
    assert files.count == len(listed) + 1 - 2
    # lost events (no paths): the next query lists the tree again
    (tmp_path / "unseen.txt").write_text("", "utf-8")
    files.note_changes([])
    assert [m.path for m in files.query("unseen")[0]] == ["unseen.txt"]
