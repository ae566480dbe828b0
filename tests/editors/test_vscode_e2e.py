"""The VS Code extension: its TypeScript unit tests, and the end-to-end run in a real VS Code.

The end-to-end runs install code-server and Chromium (``editors/vscode/scripts/install-e2e.sh``),
package the ``.vsix``, and drive the chat panel in headless Chromium with the scripted model:
approve an edit on its card, review the checkpoint diff, restore and undo, fork and switch branch;
point the agent at code (selection, unsaved buffer, @-files, slash commands).
Screenshots land in ``artifacts/vscode-e2e*/``.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.tooling import missing

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
    """Every image of the packaged README is inline (VS Code's extension page loads only https:
    and data: images), so the .vsix page never shows a broken one."""
    with zipfile.ZipFile(vsix) as archive:
        readme = archive.read("extension/readme.md").decode()
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme)
    assert images, "the README shows no image"
    for src in images:
        assert src.startswith("data:image/png;base64,"), f"{src[:80]} will not load on the page"
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """The extension's npm dependencies, installed from its lockfile when missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing("node and npm are not installed")
    marker = EXT / "node_modules" / ".package-lock.json"
    lock = EXT / "package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        proc = _run(["npm", "ci", "--no-audit", "--no-fund"], EXT, timeout=600)
        if proc.returncode != 0:
            missing(f"npm ci failed (no registry access?):\n{_tail(proc)}")
    return EXT / "node_modules"


@pytest.mark.timeout(300)
def test_vscode_unit_tests(node_modules: Path) -> None:
    """Reducer, markdown, settings and method-table tests under node's test runner."""
    proc = _run(["npm", "test"], EXT, timeout=240)
    assert proc.returncode == 0, _tail(proc, 80)
    typecheck = _run(["npm", "run", "typecheck"], EXT, timeout=240)
    assert typecheck.returncode == 0, _tail(typecheck)


@pytest.fixture(scope="module")
def packaged(node_modules: Path) -> Path:
    """The e2e tools installed and the .vsix built, once for the module."""
    if not (REPO / ".venv" / "bin" / "openprogram-lsp").exists():
        missing(".venv/bin/openprogram-lsp is missing (pip install -e '.[test]')")
    install = _run(["bash", str(EXT / "scripts" / "install-e2e.sh")], REPO, timeout=900)
    if install.returncode != 0:
        missing(f"code-server/chromium could not be installed:\n{_tail(install)}")
    package = _run(["npm", "run", "package"], EXT, timeout=300)
    assert package.returncode == 0, _tail(package)
    vsix = EXT / "dist" / "openprogram.vsix"
    assert_readme_images_packaged(vsix)
    return vsix


@pytest.mark.timeout(1200)
def test_vscode_end_to_end(packaged: Path) -> None:
    """Chat, approve on the card, see the file, diff, restore, undo, fork and switch branch."""
    e2e = _run(["node", "test/e2e/run.mjs", "--out", str(ARTIFACTS)], EXT, timeout=900)
    assert e2e.returncode == 0, f"{_tail(e2e, 60)}\n(screenshots and logs in {ARTIFACTS})"
    assert (ARTIFACTS / "03-reply.png").exists()


@pytest.mark.timeout(600)
def test_vscode_watches_a_session_another_editor_drives(packaged: Path) -> None:
    """Attached to a shared serve --tcp: Watch Session, another editor's turn and its read-only
    approval card with the outcome, the README image on the extension page, Undo This Turn."""
    out = REPO / "artifacts" / "vscode-e2e-shared"
    e2e = _run(["node", "test/e2e/shared.mjs", "--out", str(out)], EXT, timeout=500)
    assert e2e.returncode == 0, f"{_tail(e2e, 60)}\n(screenshots in {out})"
    assert (out / "shared-02-outcome.png").exists()


@pytest.mark.timeout(600)
def test_vscode_editor_is_the_context(packaged: Path) -> None:
    """An unsaved edit, selections (Add Selection to Chat) with the diagnostics VS Code's JSON
    server reports, @-completed files and removable chips reach the model and the transcript;
    the agent reads the buffer; / completion, a custom command expanded by the server, an
    unknown command refused, /mode, the context meter."""
    out = REPO / "artifacts" / "vscode-e2e-context"
    e2e = _run(["node", "test/e2e/context.mjs", "--out", str(out)], EXT, timeout=500)
    assert e2e.returncode == 0, f"{_tail(e2e, 60)}\n(screenshots in {out})"
    assert (out / "context-02-sent.png").exists()
