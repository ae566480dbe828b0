"""grep through the real ripgrep: linear time, bounded memory, confined, cancellable."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ToolError, WorkspaceEscape
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin.search import MAX_MATCHES, Grep, rg_binary


async def grep(ws: Path, pattern: str, path: str = ".") -> str:
    tool = Grep()
    out = await tool.run(tool.parse({"pattern": pattern, "path": path}), ToolContext(workspace=ws))
    return out.text


def test_ripgrep_is_installed() -> None:
    assert rg_binary() is not None, "the ripgrep package ships rg: reinstall the project"


async def test_gitignore_binary_and_hidden(workspace: Path) -> None:
    (workspace / ".gitignore").write_text("ignored/\n*.log\n")
    (workspace / "ignored").mkdir()
    (workspace / "ignored" / "a.txt").write_text("needle\n")
    (workspace / "x.log").write_text("needle\n")
    (workspace / "bin.dat").write_bytes(b"\0\1needle\0")
    (workspace / ".hidden.txt").write_text("needle here\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "m.py").write_text("a\nneedle = 1\n")
    assert await grep(workspace, "needle") == ".hidden.txt:1: needle here\nsrc/m.py:2: needle = 1"
    assert await grep(workspace, "needle", "src") == "src/m.py:2: needle = 1"
    assert await grep(workspace, "needle", "src/m.py") == "src/m.py:2: needle = 1"
    assert await grep(workspace, "nothing-like-this") == "no matches"


async def test_links_into_git_or_out_are_never_followed(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("url = https://token@host/secret\n")
    os.symlink(".git/config", workspace / "gitcfg")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret outside\n")
    os.symlink(outside, workspace / "out.txt")
    os.symlink(tmp_path, workspace / "outdir")
    assert await grep(workspace, "secret") == "no matches"
    with pytest.raises(WorkspaceEscape):
        await grep(workspace, "secret", "gitcfg")
    with pytest.raises(WorkspaceEscape):
        await grep(workspace, "secret", "outdir")


async def test_odd_file_names_and_long_lines(workspace: Path) -> None:
    (workspace / "new\nline:7: fake.txt").write_text("needle\n")
    (workspace / "long.txt").write_text("a" * 100_000 + "needle\n")
    out = (await grep(workspace, "needle")).splitlines()
    assert "new\\nline:7: fake.txt:1: needle" in out
    [long] = [x for x in out if x.startswith("long.txt:1: ")]
    assert len(long) < 400


async def test_match_cap_and_invalid_pattern(workspace: Path) -> None:
    (workspace / "many.txt").write_text("hit\n" * 5000)
    out = await grep(workspace, "hit")
    assert out.count("\n") == MAX_MATCHES and "stopped at 200 matches" in out
    with pytest.raises(ToolError, match="regex parse error"):
        await grep(workspace, "(unclosed")


async def test_catastrophic_pattern_is_linear(workspace: Path) -> None:
    (workspace / "a.txt").write_text(("a" * 5000 + "!\n") * 200)
    started = time.monotonic()
    assert await grep(workspace, "(a+)+$") == "no matches"
    assert time.monotonic() - started < 5  # exponential backtracking would never finish


async def test_fifo_in_tree_is_skipped(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "a.txt").write_text("needle\n")
    assert await asyncio.wait_for(grep(workspace, "needle"), 5) == "a.txt:1: needle"
    with pytest.raises(ToolError, match="FIFO"):
        await grep(workspace, "needle", "pipe")


def _rss() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_200_mb_file_in_bounded_memory(workspace: Path) -> None:
    line = b"the quick brown fox jumps over the lazy dog 0123456789\n"
    with open(workspace / "huge.log", "wb") as fh:
        chunk = line * (1024 * 1024 // len(line) + 1)
        for _ in range(200):
            fh.write(chunk)
    base, peak, stop = _rss(), [0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _rss())
            stop.wait(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        assert await grep(workspace, "NOPE") == "no matches"
        assert (await grep(workspace, "lazy dog")).count("\n") == MAX_MATCHES
    finally:
        stop.set()
        sampler.join()
    assert peak[0] - base < 50 * 1024 * 1024


def _rg_running(marker: str) -> bool:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    return True
        except OSError:
            continue
    return False


async def test_cancel_stops_ripgrep(workspace: Path) -> None:
    text = b" ".join(b"alpha beta gamma delta" for _ in range(200_000)) + b"\n"
    for i in range(10):
        (workspace / f"f{i}.txt").write_bytes(text)
    marker = r"[\w\s]{800}\d"  # defeats the literal and DFA shortcuts: rg takes a while
    task = asyncio.create_task(grep(workspace, marker))
    for _ in range(1000):
        if _rg_running(marker):
            break
        await asyncio.sleep(0.005)
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _rg_running(marker)


class _Dirty:
    """Open editor buffers with unsaved text (the LSP server's DocumentBuffers port)."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = {Path(os.path.realpath(p)): t for p, t in texts.items()}

    def unsaved(self, session_id: str, path: Path) -> str | None:
        return self.texts.get(Path(os.path.realpath(path)))

    def unsaved_under(self, session_id: str, root: Path) -> dict[Path, str]:
        base = Path(os.path.realpath(root))
        return {p: t for p, t in self.texts.items() if p == base or base in p.parents}

    async def apply(self, session_id: str, path: Path, old_text: str, new_text: str) -> str:
        return "not here"


async def test_dirty_buffers_are_searched_as_the_user_sees_them(workspace: Path) -> None:
    (workspace / ".gitignore").write_text("ignored/\n")
    (workspace / "ignored").mkdir()
    (workspace / "ignored" / "c.txt").write_text("old\n")
    (workspace / "a.py").write_text("needle on disk\n")
    (workspace / "b.py").write_text("needle\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "odd [*]{x}.py").write_text("old\n")
    dirty = _Dirty({workspace / "a.py": "x = 1\nneedle = 2\n",
                    workspace / "ignored" / "c.txt": "needle\n",
                    workspace / "sub" / "odd [*]{x}.py": "needle\n",
                    workspace / "new.py": "needle, not saved yet\n"})
    tool = Grep()

    async def run(path: str) -> list[str]:
        ctx = ToolContext(workspace=workspace, buffers=dirty)
        out = await tool.run(tool.parse({"pattern": "needle", "path": path}), ctx)
        return out.text.splitlines()

    head, *hits = await run(".")
    assert head == ("[unsaved changes in the editor: a.py, new.py, sub/odd [*]{x}.py searched "
                    "as the editor's buffer, which differs from the file on disk]")
    assert sorted(hits) == ["a.py:2: needle = 2", "b.py:1: needle",
                            "new.py:1: needle, not saved yet", "sub/odd [*]{x}.py:1: needle"]
    head, *hits = await run("sub")
    assert "sub/odd [*]{x}.py searched" in head and hits == ["sub/odd [*]{x}.py:1: needle"]
    assert (await run("a.py"))[1:] == ["a.py:2: needle = 2"]
    assert (await run("new.py"))[1:] == ["new.py:1: needle, not saved yet"]
    assert await run("b.py") == ["b.py:1: needle"]  # clean: no note
