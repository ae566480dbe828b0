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
