"""The VS Code extension's TypeScript unit tests and type check, under node's test runner."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.editors.vscode_support import EXT, forked_server, node_modules, run, tail


@pytest.mark.timeout(300)
def test_vscode_unit_tests() -> None:
    """Reducer, markdown, settings and method-table tests under node's test runner; the
    controller, subagent and withdrawn-approval tests against the real server (forked). The type
    check runs beside them (the real-server tests mostly wait on their servers)."""
    node_modules()
    with ThreadPoolExecutor(1) as pool:
        typecheck = pool.submit(run, ["npm", "run", "typecheck"], EXT, 240)
        proc = run(["npm", "test"], EXT, timeout=240, extra_env=forked_server())
    assert proc.returncode == 0, tail(proc, 80)
    assert typecheck.result().returncode == 0, tail(typecheck.result())
