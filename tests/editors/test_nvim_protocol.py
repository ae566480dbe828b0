"""The Lua method table (editors/nvim/lua/openprogram/protocol.lua) agrees with the server's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from openprogram_lsp.lsp import methods
from tests.tooling import missing

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"


def _lua_table(nvim: str) -> dict[str, dict[str, str]]:
    code = "io.stdout:write(vim.json.encode(require('openprogram.protocol')))"
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}", "-c", f"lua {code}",
         "-c", "qa!"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=True)
    table: dict[str, dict[str, str]] = json.loads(proc.stdout)
    return table


def test_lua_and_python_method_tables_agree() -> None:
    nvim = str(Path(sys.executable).parent / "nvim")
    if not Path(nvim).exists():
        nvim = shutil.which("nvim") or ""
    if not nvim:
        missing("Neovim is not installed")
    lua = _lua_table(nvim)
    assert sorted(lua["methods"].values()) == sorted(methods.CLIENT_REQUESTS)
    assert sorted(lua["server_methods"].values()) == sorted(
        methods.SERVER_REQUESTS + methods.SERVER_NOTIFICATIONS)
    # Every event of the server's table, plus events the wire document lists beyond it
    # (permission.withdrawn), and nothing the wire document does not name.
    events = set(lua["events"].values())
    assert set(methods.EVENT_TYPES) <= events
    doc = (REPO / "docs" / "protocol.md").read_text("utf-8")
    for extra in sorted(events - set(methods.EVENT_TYPES)):
        assert f"| `{extra}` |" in doc, extra
