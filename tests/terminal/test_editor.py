"""An install without a clone carries the Neovim plugin: the wheel holds it, ``openprogram-lsp
editor nvim`` finds it, and Neovim runs a turn with the plugin taken from the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.editors.nvim import runner
from tests.terminal.cli import one_error_line, run
from tests.tooling import require
from tests.wheel import checkout_wheel

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel() -> Path:
    return checkout_wheel()


def test_the_wheel_holds_every_file_of_the_plugin(wheel: Path) -> None:
    plugin = REPO / "editors" / "nvim"
    want = {str(p.relative_to(plugin)) for p in plugin.rglob("*") if p.is_file()
            and p.suffix in (".lua", ".md", ".txt") and p.name != "tags"}
    names = zipfile.ZipFile(wheel).namelist()
    prefix = "openprogram_lsp/editor_files/nvim/"
    held = {n.removeprefix(prefix) for n in names if n.startswith(prefix)}
    assert want and held == want
    assert "lua/openprogram/init.lua" in held and "plugin/openprogram.lua" in held


def test_the_wheel_holds_the_evaluation_tasks(wheel: Path) -> None:
    tasks = REPO / "server" / "openprogram_lsp" / "evals" / "tasks"
    want = {str(p.relative_to(tasks)) for p in tasks.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}
    prefix = "openprogram_lsp/evals/tasks/"
    held = {n.removeprefix(prefix) for n in zipfile.ZipFile(wheel).namelist()
            if n.startswith(prefix)}
    assert len(want) > 40 and held == want  # `openprogram-lsp eval` works from an install


@pytest.mark.timeout(180)
def test_neovim_runs_a_turn_with_the_plugin_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    require(runner.nvim_binary(), "Neovim is not installed")
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    found = subprocess.run([sys.executable, "-m", "openprogram_lsp", "editor", "nvim"],
                           env={"PYTHONPATH": str(unpacked), "PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, timeout=60, check=True)
    plugin = Path(found.stdout.strip())
    assert plugin == (unpacked / "openprogram_lsp" / "editor_files" / "nvim").resolve()
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    model = runner.write_script(tmp_path / "script.json", [{"text": "Hello from the model."}])
    (tmp_path / "init.lua").write_text(
        f"vim.opt.rtp:append({str(plugin)!r})\n"
        f"require('openprogram').setup({{ model = {model!r} }})\n"
        "vim.lsp.enable('openprogram')\n", "utf-8")
    out = runner.run_scenario("readme_turn", ws, model=model, home=home,
                              init=tmp_path / "init.lua")
    assert "Hello from the model." in "\n".join(out["lines"])


def test_editor_vscode_says_how_to_get_the_extension(tmp_path: Path) -> None:
    r = run(["editor", "vscode"], tmp_path)
    if (REPO / "editors" / "vscode" / "dist" / "openprogram.vsix").is_file():
        assert r.returncode == 0 and r.stdout.strip().endswith("openprogram.vsix")
    else:
        assert "npm run package" in one_error_line(r)
    assert run(["editor", "nvim"], tmp_path).stdout.strip().endswith("editors/nvim")
