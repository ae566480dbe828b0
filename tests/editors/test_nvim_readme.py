"""The README's minimal init.lua works as written (plugin path and model swapped for the test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.editors.nvim import runner

README = Path(__file__).resolve().parents[2] / "editors" / "nvim" / "README.md"


def _minimal_init() -> str:
    text = README.read_text("utf-8")
    after = text[text.index("A minimal `init.lua`"):]
    block = re.search(r"```lua\n(.*?)```", after, re.S)
    assert block, "the README lost its minimal init.lua"
    return block.group(1)


@pytest.mark.usefixtures("require_nvim")
@pytest.mark.timeout(180)
def test_readme_minimal_init_runs_a_turn(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    model = runner.write_script(tmp_path / "script.json", [{"text": "Hello from the model."}])
    init = _minimal_init()
    assert "~/src/openprogram-lsp/editors/nvim" in init and "'openai:gpt-4o'" in init
    init = init.replace("~/src/openprogram-lsp/editors/nvim", str(runner.PLUGIN))
    init = init.replace("'openai:gpt-4o'", repr(model).replace('"', "'"))
    (tmp_path / "init.lua").write_text(init, "utf-8")
    # exec_server: the README's default cmd, `openprogram-lsp` found on PATH as a user has it
    out = runner.run_scenario("readme_turn", ws, model=model, home=home,
                              init=tmp_path / "init.lua", exec_server=True)
    assert out["enabled"] is True
    text = "\n".join(out["lines"])
    assert "hello from the README" in text and "Hello from the model." in text
    assert out["help"] == 1


def _lazy_spec(marker: str) -> str:
    """The README's lazy.nvim spec in the first ```lua block after ``marker``."""
    text = README.read_text("utf-8")
    block = re.search(r"```lua\n(\{.*?\})\n```", text[text.index(marker):], re.S)
    assert block, f"the README lost its lazy.nvim spec after {marker!r}"
    return block.group(1)


# What lazy.nvim does with a spec, for the parts these specs use: a `dir` goes on the runtime
# path and its plugin/ files are sourced; a `url` is cloned (here: the checkout is the clone)
# and its root goes on the runtime path; then `config(plugin, opts)`, or without one
# `require(<name>).setup(opts)`. The test's model goes into `opts`.
LAZY = """
local spec = {spec}
local plugin = {{ name = spec.name, dir = spec.dir or {clone!r} }}
vim.opt.rtp:append(plugin.dir)
if spec.dir then
  for _, file in ipairs(vim.fn.glob(plugin.dir .. '/plugin/*.lua', false, true)) do
    vim.cmd.source(file)
  end
end
local opts = vim.tbl_extend('force', spec.opts or {{}}, {{ model = {model!r} }})
if spec.config then spec.config(plugin, opts) else require(spec.name).setup(opts) end
"""


@pytest.mark.usefixtures("require_nvim")
@pytest.mark.timeout(180)
@pytest.mark.parametrize("marker", ["Without a clone:", "From the repository URL"])
def test_readme_lazy_specs_run_a_turn(tmp_path: Path, marker: str) -> None:
    """The spec for an install without a clone (the plugin's directory from `openprogram-lsp
    editor nvim`, run as the user's PATH has it) and the one from the repository URL (the
    plugin is its editors/nvim folder), each loaded as lazy.nvim loads it, run a turn."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    model = runner.write_script(tmp_path / "script.json", [{"text": "Hello from the model."}])
    spec = _lazy_spec(marker)
    init = LAZY.format(spec=spec, clone=str(README.parents[2]), model=model)
    (tmp_path / "init.lua").write_text(init, "utf-8")
    out = runner.run_scenario("readme_turn", ws, model=model, home=home,
                              init=tmp_path / "init.lua", exec_server=True)
    text = "\n".join(out["lines"])
    assert "hello from the README" in text and "Hello from the model." in text
    assert out["help"] == 1
