"""Shared by the VS Code test files: npm dependencies and the packaged ``.vsix``.

The end-to-end scripts each get their own file so that ``pytest -n --dist loadfile`` runs them on
different workers; the steps that write into ``editors/vscode`` (``npm ci``, ``npm run package``)
take a file lock, and each caller gets its own copy of the ``.vsix``. The ``.vsix`` is built once
for the sources it is made from (a digest beside it in ``dist/``) and code-server's install is
checked once per test run.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from tests import forkserver
from tests.tooling import missing
from tests.wheel import checkout_wheel

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "editors" / "vscode"


def run(cmd: list[str], cwd: Path, timeout: float,
        extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a tool with the test environment minus ``OPENPROGRAM_HOME``, plus ``extra_env``."""
    env = {k: v for k, v in os.environ.items() if k != "OPENPROGRAM_HOME"} | (extra_env or {})
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def forked_server() -> dict[str, str]:
    """``OPENPROGRAM_LSP`` for the scripts that start the server themselves: the worker's fork
    client (tests/forkclient.py: the real server over the real pipes, without an exec's 1.5 s of
    imports), for the runs where no step checks the exec itself; nothing under
    ``OPLSP_TESTS_EXEC=1``."""
    exe = forkserver.launcher()
    return {"OPENPROGRAM_LSP": exe} if exe else {}


def tail(proc: subprocess.CompletedProcess[str], lines: int = 40) -> str:
    """The last lines of a run's output, for an assertion message."""
    return "\n".join((proc.stdout + proc.stderr).splitlines()[-lines:])


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    """One test worker at a time (a lock file beside the system's temporary files)."""
    key = hashlib.sha256(str(EXT).encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"openprogram-vscode-{key}-{name}.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def assert_server_wheel_packaged(vsix: Path) -> None:
    """The .vsix carries the server wheel of its own version (``extension/server/``), which the
    extension's Install offer installs when no server is found: a whole wheel whose metadata
    names that version."""
    version = json.loads((EXT / "package.json").read_text())["version"]
    with zipfile.ZipFile(vsix) as archive:
        wheels = [n for n in archive.namelist()
                  if n.startswith("extension/server/") and n.endswith(".whl")]
        assert wheels == [f"extension/server/openprogram_lsp-{version}-py3-none-any.whl"], wheels
        with zipfile.ZipFile(io.BytesIO(archive.read(wheels[0]))) as wheel:
            meta = wheel.read(f"openprogram_lsp-{version}.dist-info/METADATA").decode()
            assert f"\nVersion: {version}\n" in meta
            assert "openprogram_lsp/lsp/server.py" in wheel.namelist()


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


def node_modules() -> Path:
    """The extension's npm dependencies, installed from its lockfile when missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing("node and npm are not installed")
    with _locked("npm-ci"):
        marker = EXT / "node_modules" / ".package-lock.json"
        lock = EXT / "package-lock.json"
        if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
            proc = run(["npm", "ci", "--no-audit", "--no-fund"], EXT, timeout=600)
            if proc.returncode != 0:
                missing(f"npm ci failed (no registry access?):\n{tail(proc)}")
    return EXT / "node_modules"


INPUTS_SKIPPED = frozenset({"node_modules", "dist", "out", "server"})


def package_inputs() -> str:
    """A digest of what the .vsix is built from: every file of the extension but its build outputs
    and dependencies, plus the installed dependencies' lockfile (esbuild bundles them)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(EXT):
        dirs[:] = sorted(d for d in dirs if not (Path(root) == EXT and d in INPUTS_SKIPPED))
        for name in sorted(files):
            path = Path(root) / name
            digest.update(str(path.relative_to(EXT)).encode() + b"\0" + path.read_bytes() + b"\0")
    installed = EXT / "node_modules" / ".package-lock.json"
    digest.update(installed.read_bytes() if installed.exists() else b"")
    return digest.hexdigest()


def _install_e2e() -> None:
    """code-server and Chromium (install-e2e.sh), checked once per test run: every worker of a
    run sees the same stamp (xdist's run id; without xdist the process id)."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(os.getpid())
    stamp = EXT / "dist" / ".e2e-installed"
    if stamp.exists() and stamp.read_text() == run_id:
        return
    # cold, it waits for scripts/test's background install (apt's Chromium and toolchain, then
    # code-server's npm install and native builds): 1,351 s in a fresh Debian chroot at a
    # load of 15-20 (docs/decisions/fresh-machine-ci.md), so twice the 900 s of a warm machine
    install = run(["bash", str(EXT / "scripts" / "install-e2e.sh")], REPO, timeout=1800)
    if install.returncode != 0:
        missing(f"code-server/chromium could not be installed:\n{tail(install)}")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(run_id)


def _package() -> Path:
    """``npm run package``, unless dist/ holds a .vsix built from the same inputs (the three
    code-server files share one build instead of each packaging the same sources)."""
    vsix, stamp = EXT / "dist" / "openprogram.vsix", EXT / "dist" / ".vsix-inputs"
    inputs = package_inputs()
    if vsix.exists() and stamp.exists() and stamp.read_text() == inputs:
        return vsix
    stamp.unlink(missing_ok=True)
    package = run(["npm", "run", "package"], EXT, timeout=300,
                  extra_env={"OPENPROGRAM_WHEEL": str(checkout_wheel())})
    assert package.returncode == 0, tail(package)
    stamp.write_text(inputs)
    return vsix


def packaged(into: Path) -> Path:
    """The e2e tools installed and the .vsix built; a copy of it in ``into``."""
    node_modules()
    if not (REPO / ".venv" / "bin" / "openprogram-lsp").exists():
        missing(".venv/bin/openprogram-lsp is missing (pip install -e '.[test]')")
    with _locked("package"):
        built = _package()  # first: scripts/test may still be installing code-server
        _install_e2e()
        into.mkdir(parents=True, exist_ok=True)
        vsix = Path(shutil.copy2(built, into / "openprogram.vsix"))
    assert_readme_images_packaged(vsix)
    assert_server_wheel_packaged(vsix)
    return vsix
