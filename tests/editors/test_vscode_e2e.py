"""The VS Code extension: its TypeScript unit tests, and the end-to-end run in a real VS Code.

The end-to-end run installs code-server and Chromium (``editors/vscode/scripts/install-e2e.sh``),
packages the ``.vsix``, and drives the chat panel in headless Chromium with the scripted model:
approve an edit on its card, review the checkpoint diff, restore and undo, fork and switch branch.
Screenshots land in ``artifacts/vscode-e2e/``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "editors" / "vscode"
ARTIFACTS = REPO / "artifacts" / "vscode-e2e"


def _run(cmd: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENPROGRAM_HOME"}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def _tail(proc: subprocess.CompletedProcess[str], lines: int = 40) -> str:
    return "\n".join((proc.stdout + proc.stderr).splitlines()[-lines:])


def assert_readme_images_packaged(vsix: Path) -> None:
    """Every image the README shows is inside the .vsix (else its extension page is broken)."""
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        readme = archive.read("extension/readme.md").decode()
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme)
    assert images, "the README shows no image"
    for src in images:
        assert "://" not in src and not src.startswith(("/", "..")), src
        assert f"extension/{src}" in names, f"{src} is not packaged in the .vsix"


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """The extension's npm dependencies, installed from its lockfile when missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed")
    marker = EXT / "node_modules" / ".package-lock.json"
    lock = EXT / "package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        proc = _run(["npm", "ci", "--no-audit", "--no-fund"], EXT, timeout=600)
        if proc.returncode != 0:
            pytest.skip(f"npm ci failed (no registry access?):\n{_tail(proc)}")
    return EXT / "node_modules"


@pytest.mark.timeout(300)
def test_vscode_unit_tests(node_modules: Path) -> None:
    """Reducer, markdown, settings and method-table tests under node's test runner."""
    proc = _run(["npm", "test"], EXT, timeout=240)
    assert proc.returncode == 0, _tail(proc, 80)
    typecheck = _run(["npm", "run", "typecheck"], EXT, timeout=240)
    assert typecheck.returncode == 0, _tail(typecheck)


@pytest.mark.timeout(1200)
def test_vscode_end_to_end(node_modules: Path) -> None:
    """Chat, approve on the card, see the file, diff, restore, undo, fork and switch branch."""
    if not (REPO / ".venv" / "bin" / "openprogram-lsp").exists():
        pytest.skip(".venv/bin/openprogram-lsp is missing (pip install -e '.[test]')")
    install = _run(["bash", str(EXT / "scripts" / "install-e2e.sh")], REPO, timeout=900)
    if install.returncode != 0:
        pytest.skip(f"code-server/chromium could not be installed:\n{_tail(install)}")
    package = _run(["npm", "run", "package"], EXT, timeout=300)
    assert package.returncode == 0, _tail(package)
    assert_readme_images_packaged(EXT / "dist" / "openprogram.vsix")
    e2e = _run(["node", "test/e2e/run.mjs", "--out", str(ARTIFACTS)], EXT, timeout=900)
    assert e2e.returncode == 0, f"{_tail(e2e, 60)}\n(screenshots and logs in {ARTIFACTS})"
    assert (ARTIFACTS / "03-reply.png").exists()
