"""grep through the real ripgrep: linear time, bounded memory, confined, cancellable."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ToolError, WorkspaceEscape
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin.descriptions import GREP_HEAD_LIMIT
from openprogram_lsp.tools.builtin.search import COUNT_MORE, Grep, rg_binary


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
    assert out.count("\n") == GREP_HEAD_LIMIT
    assert out.endswith(f"\n[{5000 - GREP_HEAD_LIMIT:,} more lines left out; narrow the "
                        f"search, or read on with offset={GREP_HEAD_LIMIT}]")
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
        out = await grep(workspace, "lazy dog")
        assert out.count("\n") == GREP_HEAD_LIMIT
        assert out.endswith(f"[at least {COUNT_MORE:,} more lines left out; narrow the search, "
                            f"or read on with offset={GREP_HEAD_LIMIT}]")
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


async def rich(ws: Path, **args: object) -> str:
    tool = Grep()
    out = await tool.run(tool.parse(args), ToolContext(workspace=ws))
    return out.text


async def test_results_are_sorted_by_path_then_line(workspace: Path) -> None:
    names = [f"d{i % 4}/sub{i % 3}/f{i:02}.txt" for i in range(40)] + ["a.txt", "d1.txt", "z.py"]
    for name in names:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("x\nneedle one\nneedle two\n")
    expected = [f"{n}:{line}: needle {w}" for n in sorted(names, key=lambda n: n.split("/"))
                for line, w in ((2, "one"), (3, "two"))]
    for _ in range(3):  # ripgrep's parallel walk would shuffle these
        assert (await rich(workspace, pattern="needle", head_limit=0)).splitlines() == expected


async def test_output_modes(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("import os\nos.path\nprint(os)\n")
    (workspace / "src" / "b.ts").write_text("const os = 1;\n")
    (workspace / "README.md").write_text("no match\n")
    assert await rich(workspace, pattern="os", output_mode="files_with_matches") == \
        "src/a.py\nsrc/b.ts"
    assert await rich(workspace, pattern=r"\bos\b", output_mode="count") == \
        "src/a.py:3\nsrc/b.ts:1"
    assert await rich(workspace, pattern="os", output_mode="count", path="src/a.py") == \
        "src/a.py:3"


async def test_context_lines_and_separators(workspace: Path) -> None:
    (workspace / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    out = await rich(workspace, pattern="line (5|15)$", context=1)
    assert out.splitlines() == ["f.txt-4- line 4", "f.txt:5: line 5", "f.txt-6- line 6", "--",
                                "f.txt-14- line 14", "f.txt:15: line 15", "f.txt-16- line 16"]
    assert (await rich(workspace, pattern="line 5$", **{"-B": 2})).splitlines() == [
        "f.txt-3- line 3", "f.txt-4- line 4", "f.txt:5: line 5"]
    assert (await rich(workspace, pattern="line 20$", after=3)).splitlines() == [
        "f.txt:20: line 20"]


async def test_glob_type_and_case_filters(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("Needle\n")
    (workspace / "src" / "b.ts").write_text("needle\n")
    (workspace / "c.md").write_text("NEEDLE\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "x.py").write_text("needle\n")
    assert await rich(workspace, pattern="needle") == "src/b.ts:1: needle"
    assert await rich(workspace, pattern="needle", case_insensitive=True) == \
        "c.md:1: NEEDLE\nsrc/a.py:1: Needle\nsrc/b.ts:1: needle"
    assert await rich(workspace, pattern="needle", **{"-i": True}, glob="*.py") == \
        "src/a.py:1: Needle"
    assert await rich(workspace, pattern="needle", **{"-i": True}, glob="!*.md") == \
        "src/a.py:1: Needle\nsrc/b.ts:1: needle"
    assert await rich(workspace, pattern="needle", **{"-i": True}, type="ts") == \
        "src/b.ts:1: needle"
    # a glob cannot bring back what the walk always leaves out
    assert await rich(workspace, pattern="needle", glob=".git/**") == "no matches"
    assert await rich(workspace, pattern="needle", glob="**/*.py") == "no matches"
    with pytest.raises(ToolError, match="type"):
        Grep().parse({"pattern": "x", "type": "--pre=sh"})
    with pytest.raises(ToolError, match="grep failed"):
        await rich(workspace, pattern="x", type="nosuchtype")


async def test_head_limit_and_offset_page_through(workspace: Path) -> None:
    (workspace / "f.txt").write_text("".join(f"hit {i}\n" for i in range(1, 11)))
    first = await rich(workspace, pattern="hit", head_limit=4)
    assert first.splitlines() == ["f.txt:1: hit 1", "f.txt:2: hit 2", "f.txt:3: hit 3",
                                  "f.txt:4: hit 4",
                                  "[6 more lines left out; narrow the search, or read on with "
                                  "offset=4]"]
    last = await rich(workspace, pattern="hit", head_limit=4, offset=8)
    assert last.splitlines() == ["f.txt:9: hit 9", "f.txt:10: hit 10"]
    assert await rich(workspace, pattern="hit", offset=50) == \
        "[no results after offset 50: there are 10]"


async def test_multiline(workspace: Path) -> None:
    (workspace / "f.py").write_text("def f(\n    a,\n):\n    pass\n")
    assert await rich(workspace, pattern=r"def f\(\s*a") == "no matches"
    assert (await rich(workspace, pattern=r"def f\(\s*a", multiline=True)).splitlines() == [
        "f.py:1: def f(", "f.py:2:     a,"]


async def test_filters_apply_to_dirty_buffers(workspace: Path) -> None:
    (workspace / "a.py").write_text("old\n")
    (workspace / "b.md").write_text("old\n")
    dirty = _Dirty({workspace / "a.py": "needle\n", workspace / "b.md": "needle\n",
                    workspace / "new.py": "needle\n"})
    tool = Grep()
    ctx = ToolContext(workspace=workspace, buffers=dirty)
    out = await tool.run(tool.parse({"pattern": "needle", "glob": "*.py"}), ctx)
    assert out.text.splitlines()[1:] == ["a.py:1: needle"]  # new.py: no file to filter
    out = await tool.run(tool.parse({"pattern": "needle", "output_mode": "files_with_matches"}),
                         ctx)
    assert out.text.splitlines()[1:] == ["a.py", "b.md", "new.py"]


def make_deep(root: Path, depth: int = 2100) -> None:
    """``root/d/d/…/x.txt``, ``depth`` directories down (past PATH_MAX: made by descriptors)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open("x.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"needle deep down\n")
        os.close(out)
    finally:
        os.close(fd)


def remove_deep(root: Path) -> None:
    """Undo ``make_deep`` without recursion (pytest's rmtree recurses once per level)."""
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    while True:
        try:
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    os.unlink("x.txt", dir_fd=fds[-1])
    while len(fds) > 1:
        os.close(fds.pop())
        os.rmdir("d", dir_fd=fds[-1])
    os.close(fds[0])


@pytest.fixture
def deep(workspace: Path) -> Iterator[Path]:
    make_deep(workspace)
    yield workspace
    remove_deep(workspace)


async def test_a_path_too_deep_to_open_spoils_only_itself(deep: Path) -> None:
    workspace = deep
    (workspace / "a.txt").write_text("needle here\n")
    nothing = await grep(workspace, "nowhere to be found")
    first, note = nothing.split("\n", 1)
    assert first == "no matches", nothing
    assert note.startswith("[not searched (unreadable, or too deep to open): ./d/d/"), note
    assert "File name too long" in note and len(note) < 400, note
    found = await grep(workspace, "needle")
    assert found.startswith("a.txt:1: needle here\n[not searched"), found
    with pytest.raises(ToolError, match="grep failed"):  # an error of the search itself
        await grep(workspace, "(")
