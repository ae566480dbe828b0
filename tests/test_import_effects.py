"""Importing every server module changes no process state (umask, gc, env, cwd, signals, ...);
below the settings loader nothing reads a setting from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = r"""
import gc, importlib, json, logging, os, pkgutil, signal, sys, threading, warnings

os.umask(0o027)

def state():
    mask = os.umask(0o027)
    os.umask(mask)
    return {
        "umask": mask, "gc": gc.isenabled(), "gc_threshold": list(gc.get_threshold()),
        "env": dict(os.environ), "cwd": os.getcwd(),
        "recursion": sys.getrecursionlimit(), "threads": threading.active_count(),
        "signals": {s.name: repr(signal.getsignal(s)) for s in
                    (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD)},
        "root_handlers": len(logging.getLogger().handlers),
        "root_level": logging.getLogger().level,
        "warnings": len(warnings.filters),
    }

before = state()
import openprogram_lsp
names = []
for mod in pkgutil.walk_packages(openprogram_lsp.__path__, "openprogram_lsp."):
    if mod.name.rsplit(".", 1)[-1] == "__main__":
        continue
    importlib.import_module(mod.name)
    names.append(mod.name)

from pydantic import BaseModel

def models(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from models(sub)

def ours(cls):  # defined here, neither a generic's parametrization nor an SDK model's subclass
    return cls.__module__.startswith("openprogram_lsp.") and "[" not in cls.__name__ and all(
        b.__module__.startswith(("openprogram_lsp.", "pydantic.")) for b in cls.__mro__
        if issubclass(b, BaseModel))

eager = sorted({f"{c.__module__}.{c.__qualname__}" for c in models(BaseModel)
                if ours(c) and not c.model_config.get("defer_build")})
print(json.dumps({"before": before, "after": state(), "count": len(names), "eager": eager}))
"""


@pytest.fixture(scope="module")
def every_module() -> dict[str, Any]:
    """Every server module imported in a fresh process: what that changed, and what it built."""
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    seen: dict[str, Any] = json.loads(out.stdout)
    assert seen["count"] > 100  # every module, not a handful
    return seen


def test_importing_every_module_changes_no_process_state(every_module: dict[str, Any]) -> None:
    seen = every_module
    before, after = seen["before"], seen["after"]
    assert {k: after[k] for k in before if after[k] != before[k]} == {}


def test_every_model_builds_its_validator_on_first_use(every_module: dict[str, Any]) -> None:
    # core.model.Model: a process builds the validators it uses, not some 70 at import
    assert every_module["eager"] == []


LAZY = r"""
import json, sys
import openprogram_lsp.cli
cli = sorted(sys.modules)
import openprogram_lsp.lsp.serve
from openprogram_lsp.lsp.early import initialize_answer  # all that `serve` runs before
initialize_answer({"jsonrpc": "2.0", "id": 1, "method": "initialize",  # initialize is answered
                   "params": {"capabilities": {}}})
early = sorted(sys.modules)
import openprogram_lsp.app, openprogram_lsp.lsp.host, openprogram_lsp.lsp.server  # the rest
import openprogram_lsp.lsp.stdio
print(json.dumps({"cli": cli, "early": early, "serve": sorted(sys.modules)}))
"""
SDKS = {"mcp", "mcp_types", "acp", "httpx", "httpx2"}


def _loaded(names: list[str], wanted: set[str]) -> set[str]:
    return {w for w in wanted if any(n == w or n.startswith(w + ".") for n in names)}


def test_commands_import_only_what_they_run() -> None:
    out = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    # --help, argument errors and light commands start without the agent, its stores or SDKs
    heavy = {"openprogram_lsp.app", "openprogram_lsp.dispatcher", "openprogram_lsp.store",
             "openprogram_lsp.lsp", "openprogram_lsp.acp", "pydantic", "gitdb", "asyncio",
             "pygls", "lsprotocol", "watchfiles", *SDKS}
    assert _loaded(seen["cli"], heavy) == set()
    # the server answers initialize with pygls and lsprotocol alone: no settings, no stores
    assert _loaded(seen["early"], heavy) == {"pygls", "lsprotocol", "asyncio",
                                             "openprogram_lsp.lsp"}
    assert _loaded(seen["early"], {"openprogram_lsp.config", "openprogram_lsp.core.types",
                                   "openprogram_lsp.lsp.wire"}) == set()
    # the language server loads the MCP and ACP SDKs and the HTTP providers' client when used
    assert _loaded(seen["serve"], {"pygls", "openprogram_lsp.dispatcher"}) == {
        "pygls", "openprogram_lsp.dispatcher"}
    assert _loaded(seen["serve"], SDKS) == set()
    # what a watcher's first run would import on the event loop, in front of the first request
    assert "anyio._backends._asyncio" in seen["serve"]


SETTINGS_READS = r"""
import json, os, sys, tempfile
from pathlib import Path

read = []

class Watched(type(os.environ)):
    def __getitem__(self, key):
        read.append(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        read.append(key)
        return super().__contains__(key)

old = os.environ
os.environ = Watched(old._data, old.encodekey, old.decodekey, old.encodevalue, old.decodevalue)
os.environ["OPENPROGRAM_HOME"] = sys.argv[1] + "/from-env"

def settings_reads():
    found = sorted({k for k in read if k.startswith("OPENPROGRAM_") or k == "XDG_DATA_HOME"})
    read.clear()
    return found

import openprogram_lsp.app as app
from openprogram_lsp.config import load_settings
from openprogram_lsp.core.fsutil import protected_dirs
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.session_store import SessionStore
from openprogram_lsp.tools.paths import resolve_in_workspace

root = Path(sys.argv[1])
ws, home = root / "ws", root / "home"
ws.mkdir()
SessionStore(home)
CheckpointStore(ws, home=home)
app.build_dispatcher(app.AppConfig(workspace=ws, home=home))
resolve_in_workspace(ws, "a.txt")
domain = settings_reads()
dirs = [str(p) for p in protected_dirs()]
entry_home = str(load_settings(workspace=ws).home)  # the entry: reads the environment, once
print(json.dumps({"domain": domain, "dirs": dirs, "entry": settings_reads(),
                  "entry_home": entry_home}))
"""


def test_the_domain_reads_no_setting_from_the_environment(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", SETTINGS_READS, str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["domain"] == []  # stores, app and the confinement check are handed the root
    home = os.path.realpath(tmp_path / "home")
    assert home in seen["dirs"]  # the state root the app was handed is protected
    assert not any("from-env" in d for d in seen["dirs"])  # not the one the variable names
    assert "OPENPROGRAM_HOME" in seen["entry"]  # the settings loader is where it is read
    assert seen["entry_home"] == str(tmp_path / "from-env")


CHAT = r"""
import json, sys
import openprogram_lsp.cli, openprogram_lsp.app, openprogram_lsp.terminal.chat
import openprogram_lsp.terminal.prompts  # all that `chat` imports before it runs
print(json.dumps(sorted(sys.modules)))
"""


def test_the_chat_command_starts_without_the_language_server() -> None:
    out = subprocess.run([sys.executable, "-c", CHAT], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout)
    assert _loaded(loaded, {"openprogram_lsp.lsp", "pygls", "lsprotocol", "openprogram_lsp.acp",
                            *SDKS}) == set()


OFFLINE_TURN_NEVER_USES = {
    "lsprotocol", "jsonschema", "watchfiles", "openprogram_lsp.providers.remote",
    "openprogram_lsp.providers.openai", "openprogram_lsp.providers.anthropic",
    "openprogram_lsp.tools.mcp.connection", "openprogram_lsp.tools.mcp.tool",
    "openprogram_lsp.tools.mcp.stdio", "openprogram_lsp.tools.mcp.catalog",
    "openprogram_lsp.tools.mcp.expand", "openprogram_lsp.evals.tasks",
}
"""Modules an offline chat turn has no use for (``bench/bench_start.py`` times its start)."""

CHAT_RUN = r"""
import gc, json, sys
from openprogram_lsp.cli import main
code = main(["chat", "--workspace", sys.argv[1], "--home", sys.argv[2], "--model", "offline",
             "list ."])
with open(sys.argv[3], "w") as f:
    json.dump([code, sorted(sys.modules), gc.isenabled(), gc.get_freeze_count()], f)
"""


def test_a_whole_chat_turn_loads_no_http_client_or_gitpython(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "add", "a.txt"], check=True)  # an index to read
    out = subprocess.run([sys.executable, "-c", CHAT_RUN, str(ws), str(tmp_path / "home"),
                          str(tmp_path / "modules.json")], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    code, loaded, collecting, frozen = json.loads((tmp_path / "modules.json").read_text())
    assert code == 0 and "a.txt" in out.stdout
    assert collecting and frozen > 10_000  # the start ran with the collector paused (startup)
    # the environment note read the index itself; no hook, provider or tool posted anything
    assert _loaded(loaded, {"git", "httpx", "openprogram_lsp.lsp", "pygls"}) == set()
    # nor did the turn load what it did not use: a remote provider, the editors' protocols,
    # MCP servers' side (none configured), the eval tasks (the parser names their folder)
    assert _loaded(loaded, {*SDKS, *OFFLINE_TURN_NEVER_USES}) == set()
