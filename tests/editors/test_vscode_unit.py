"""The VS Code extension's TypeScript unit tests and type check, under node's test runner."""

from __future__ import annotations

import json
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from openprogram_lsp import __version__
from tests.editors.vscode_support import EXT, forked_server, node_modules, run, tail
from tests.wheel import checkout_wheel

REPO = Path(__file__).resolve().parents[2]
INSTALL_TEST = "a real install from a local wheel into the storage, found and run"


@pytest.mark.timeout(300)
def test_vscode_unit_tests(tmp_path: Path) -> None:
    """Reducer, markdown, settings and method-table tests under node's test runner; the
    controller, subagent and withdrawn-approval tests against the real server (forked); the
    server install the extension offers, run for real from this checkout's wheel into a
    temporary storage (pip --no-index; the dependencies from this venv's site-packages). The
    type check runs beside them (the real-server tests mostly wait on their servers)."""
    node_modules()
    with ThreadPoolExecutor(1) as pool:
        typecheck = pool.submit(run, ["npm", "run", "typecheck"], EXT, 240)
        env = forked_server() | {"OPENPROGRAM_TEST_WHEEL": str(checkout_wheel()),
                                 "OPENPROGRAM_TEST_SITE": sysconfig.get_paths()["purelib"]}
        proc = run(["npm", "test"], EXT, timeout=240, extra_env=env)
    assert proc.returncode == 0, _failures(proc)
    ran = [line for line in proc.stdout.splitlines() if INSTALL_TEST in line]
    assert ran and all("# SKIP" not in line for line in ran), tail(proc, 80)
    assert typecheck.result().returncode == 0, tail(typecheck.result())


def _failures(proc: subprocess.CompletedProcess[str]) -> str:
    """The failed tests of node's runner (each ``not ok`` with the lines after it), else the
    end of its output; then the end of stderr (esbuild's warnings would hide them in one tail)."""
    out = proc.stdout.splitlines()
    failed = [i for i, line in enumerate(out) if line.lstrip().startswith("not ok")]
    shown = [ln for i in failed[:5] for ln in out[i:i + 30]] or out[-60:]
    return "\n".join([*shown, "-- stderr:", *proc.stderr.splitlines()[-20:]])


def test_the_extension_version_is_the_server_version() -> None:
    """The extension installs and expects the server of its own version (src/install.ts)."""
    package = json.loads((EXT / "package.json").read_text())
    assert package["version"] == __version__
