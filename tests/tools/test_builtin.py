import asyncio
import os
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ToolError, WorkspaceEscape
from openprogram_lsp.events.bus import EventBus
from openprogram_lsp.events.questions import QuestionRegistry
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.builtin.ask import AskUser
from openprogram_lsp.tools.registry import ToolRegistry


@pytest.fixture
def reg() -> ToolRegistry:
    return ToolRegistry(builtin_tools())


@pytest.fixture
def touched() -> list[str]:
    return []


@pytest.fixture
def ctx(workspace: Path, touched: list[str]) -> ToolContext:
    return ToolContext(workspace=workspace, on_paths_changed=lambda p: touched.extend(p) or None)


async def call(reg: ToolRegistry, ctx: ToolContext, name: str, **args: object) -> str:
    tool = reg.get(name)
    assert tool is not None
    out = await tool.run(tool.parse(dict(args)), ctx)
    return out.text


async def test_write_read_edit_list_grep(reg: ToolRegistry, ctx: ToolContext, touched: list[str],
                                         workspace: Path) -> None:
    assert "Created" in await call(reg, ctx, "write_file", path="src/a.py", content="x = 1\n")
    assert touched == ["src/a.py"]
    assert await call(reg, ctx, "read_file", path="src/a.py") == "     1\tx = 1"
    await call(reg, ctx, "edit_file", path="src/a.py", old_text="x = 1", new_text="x = 2")
    assert (workspace / "src/a.py").read_text() == "x = 2\n"
    assert await call(reg, ctx, "list_dir", path=".") == "src/"
    assert await call(reg, ctx, "grep", pattern=r"x = \d") == "src/a.py:1: x = 2"


async def test_edit_file_errors_are_clear(reg: ToolRegistry, ctx: ToolContext,
                                          workspace: Path) -> None:
    (workspace / "f.txt").write_text("a a")
    with pytest.raises(ToolError, match="not found"):
        await call(reg, ctx, "edit_file", path="f.txt", old_text="zz", new_text="y")
    with pytest.raises(ToolError, match="occurs 2 times"):
        await call(reg, ctx, "edit_file", path="f.txt", old_text="a", new_text="y")


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../x", "~/x", ".git/config",
                                 ".GIT/hooks/pre-commit", "sub/.Git/config", ".git./config"])
async def test_paths_outside_workspace_refused(reg: ToolRegistry, ctx: ToolContext,
                                               bad: str) -> None:
    with pytest.raises(WorkspaceEscape):
        await call(reg, ctx, "write_file", path=bad, content="x")


async def test_symlink_escape_refused(reg: ToolRegistry, ctx: ToolContext, workspace: Path,
                                      tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, workspace / "link")
    with pytest.raises(WorkspaceEscape, match="symlink"):
        await call(reg, ctx, "write_file", path="link/x.txt", content="x")
    assert not (outside / "x.txt").exists()


async def test_run_command_output_exit_code_and_timeout(reg: ToolRegistry,
                                                        ctx: ToolContext) -> None:
    tool = reg.get("run_command")
    assert tool is not None
    out = await tool.run(tool.parse({"command": "echo hi; exit 3"}), ctx)
    assert out.is_error and out.text.startswith("exit code 3") and "hi" in out.text
    out = await tool.run(tool.parse({"command": "sleep 5", "timeout": 0.2}), ctx)
    assert out.is_error and "timeout" in out.text


async def test_run_command_cancel_kills_process(reg: ToolRegistry, ctx: ToolContext,
                                                workspace: Path) -> None:
    tool = reg.get("run_command")
    assert tool is not None
    task = asyncio.create_task(tool.run(tool.parse({"command": "sleep 30"}), ctx))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)


async def test_bad_arguments_name_the_field(reg: ToolRegistry) -> None:
    tool = reg.get("write_file")
    assert tool is not None
    with pytest.raises(ToolError, match="content"):
        tool.parse({"path": "a"})


async def test_ask_user_through_asker(ctx: ToolContext) -> None:
    class Asker:
        async def ask(self, q: object) -> str:
            return "blue"

    ctx.asker = Asker()
    tool = AskUser(QuestionRegistry(EventBus()))
    out = await tool.run(tool.parse({"question": "Colour?"}), ctx)
    assert out.text == "blue"


async def test_ask_user_declined_is_an_error(ctx: ToolContext) -> None:
    class Asker:
        async def ask(self, q: object) -> None:
            return None

    ctx.asker = Asker()
    tool = AskUser(QuestionRegistry(EventBus()))
    with pytest.raises(ToolError, match="declined"):
        await tool.run(tool.parse({"question": "Colour?"}), ctx)


async def test_edit_file_never_truncates_or_mangles(reg: ToolRegistry, ctx: ToolContext,
                                                    workspace: Path) -> None:
    big = "x = 1\n" + "y" * 300_000 + "\nEND\n"
    (workspace / "big.py").write_text(big)
    await call(reg, ctx, "edit_file", path="big.py", old_text="x = 1", new_text="x = 2")
    assert (workspace / "big.py").read_text() == big.replace("x = 1", "x = 2")
    (workspace / "latin1.txt").write_bytes("caf\xe9 = 1".encode("latin-1"))
    with pytest.raises(ToolError, match="not UTF-8"):
        await call(reg, ctx, "edit_file", path="latin1.txt", old_text="= 1", new_text="= 2")


async def test_writes_keep_the_file_mode(reg: ToolRegistry, ctx: ToolContext,
                                         workspace: Path) -> None:
    script = workspace / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o755)
    await call(reg, ctx, "edit_file", path="run.sh", old_text="1", new_text="2")
    assert script.stat().st_mode & 0o777 == 0o755
    await call(reg, ctx, "write_file", path="new.txt", content="x")
    assert (workspace / "new.txt").stat().st_mode & 0o044  # readable like any new file


async def test_grep_does_not_follow_links_out_of_the_workspace(
        reg: ToolRegistry, ctx: ToolContext, workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOKEN=hunter2\n")
    os.symlink(tmp_path / "secret.txt", workspace / "link.txt")
    (workspace / "inside.txt").write_text("TOKEN=fine\n")
    assert await call(reg, ctx, "grep", pattern="TOKEN") == "inside.txt:1: TOKEN=fine"


async def test_run_command_does_not_see_provider_keys(reg: ToolRegistry, ctx: ToolContext,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("SOME_API_KEY", "also-secret")
    out = await call(reg, ctx, "run_command", command="env")
    assert "sk-secret" not in out and "also-secret" not in out
    assert "OPENPROGRAM_TOOL=run_command" in out



async def test_a_dot_dot_that_stays_inside_is_refused_naming_the_plain_path(
        reg: ToolRegistry, ctx: ToolContext, workspace: Path) -> None:
    with pytest.raises(WorkspaceEscape, match=r"has a '\.\.' component; name it as '\.envrc'"):
        await call(reg, ctx, "write_file", path="sub/../.envrc", content="x")
    assert not (workspace / ".envrc").exists()
