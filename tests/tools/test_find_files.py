"""find_files through the real ripgrep: glob patterns, ignore rules, newest first, capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ToolError, WorkspaceEscape
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin.find import FindFiles


async def find(ws: Path, **args: object) -> list[str]:
    tool = FindFiles()
    out = await tool.run(tool.parse(args), ToolContext(workspace=ws))
    return out.text.splitlines()


def touch(ws: Path, rel: str, age: int) -> None:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    os.utime(path, (1_700_000_000 - age, 1_700_000_000 - age))


async def test_patterns_newest_first(workspace: Path) -> None:
    touch(workspace, "src/old.py", 300)
    touch(workspace, "src/pkg/new.py", 10)
    touch(workspace, "top.py", 100)
    touch(workspace, "src/notes.md", 5)
    touch(workspace, "docs/a.rst", 50)
    assert await find(workspace, pattern="**/*.py") == ["src/pkg/new.py", "top.py",
                                                        "src/old.py"]
    assert await find(workspace, pattern="*.py") == ["src/pkg/new.py", "top.py", "src/old.py"]
    assert await find(workspace, pattern="src/**/*.py") == ["src/pkg/new.py", "src/old.py"]
    assert await find(workspace, pattern="*.{md,rst}") == ["src/notes.md", "docs/a.rst"]
    assert await find(workspace, pattern="*.py", path="src") == ["src/pkg/new.py",
                                                                 "src/old.py"]
    assert await find(workspace, pattern="*.java") == ["no files match '*.java'"]


async def test_ignore_rules_and_our_state(workspace: Path) -> None:
    touch(workspace, ".gitignore", 0)
    (workspace / ".gitignore").write_text("build/\n")
    touch(workspace, "build/out.py", 1)
    touch(workspace, "node_modules/lib/x.py", 1)
    touch(workspace, ".git/hooks/h.py", 1)
    touch(workspace, ".hidden/ok.py", 2)
    touch(workspace, "a.py", 3)
    assert await find(workspace, pattern="**/*.py") == [".hidden/ok.py", "a.py"]
    assert await find(workspace, pattern=".git/**") == ["no files match '.git/**'"]


async def test_capped_with_a_note(workspace: Path) -> None:
    for i in range(30):
        touch(workspace, f"f{i:02}.txt", i)
    out = await find(workspace, pattern="*.txt", limit=5)
    assert out == ["f00.txt", "f01.txt", "f02.txt", "f03.txt", "f04.txt",
                   "[25 more files left out (newest first was kept); narrow the pattern or "
                   "path]"]


async def test_bad_input(workspace: Path, tmp_path: Path) -> None:
    touch(workspace, "a.txt", 0)
    with pytest.raises(ToolError, match="not a directory"):
        await find(workspace, pattern="*", path="a.txt")
    with pytest.raises(ToolError, match="no such directory"):
        await find(workspace, pattern="*", path="nope")
    with pytest.raises(WorkspaceEscape):
        await find(workspace, pattern="*", path="..")
    os.symlink(tmp_path, workspace / "out")
    with pytest.raises(WorkspaceEscape):
        await find(workspace, pattern="*", path="out")
    assert await find(workspace, pattern="*.txt") == ["a.txt"]  # the link is not walked
    with pytest.raises(ToolError, match="not which"):
        await find(workspace, pattern="!*.txt")
    with pytest.raises(ToolError, match="find_files failed"):
        await find(workspace, pattern="a{")
