"""The workspace file list: .gitignore-aware, fuzzy-ranked, kept current by watcher changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from openprogram_lsp.tools.filelist import FileList


def _tree(root: Path) -> None:
    for rel in ("src/app/main.py", "src/app/models.py", "docs/main.md", "README.md",
                "build/out.js", ".github/workflows/ci.yml", "odd name ü.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", "utf-8")
    (root / ".gitignore").write_text("build/\n", "utf-8")
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


def test_changes_update_the_list(tmp_path: Path) -> None:
    _tree(tmp_path)
    files = FileList(tmp_path)
    assert files.query("new")[1] == 0
    (tmp_path / "src" / "new_thing.py").write_text("", "utf-8")
    files.note_changes([{"path": "src/new_thing.py", "change": "added"},
                        {"path": "docs", "change": "deleted"}])
    assert files.query("newthing")[0][0].path == "src/new_thing.py"
    assert files.query("main.md")[1] == 0
