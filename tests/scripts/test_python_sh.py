"""scripts/lib/python.sh: the .venv that quickstart and test build, repaired when half made."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "scripts" / "lib" / "python.sh"


def _ensure(cwd: Path, python: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"source {LIB} && ensure_venv"],
        # no package index: the pip upgrade ensure_venv asks for finds the bundled pip enough
        # (tests talk only to loopback addresses)
        cwd=cwd, env={"PATH": "/usr/bin:/bin", "PYTHON": python, "HOME": str(cwd),
                      "PIP_NO_INDEX": "1"},
        capture_output=True, text=True, timeout=300,
    )


def test_a_half_made_venv_is_rebuilt(tmp_path: Path) -> None:
    # what a failed first run leaves: a Python that runs, and no pip
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", ".venv"], cwd=tmp_path,
                   check=True)
    assert not (tmp_path / ".venv/bin/pip").exists()
    done = _ensure(tmp_path, sys.executable)
    assert done.returncode == 0, done.stderr
    assert "recreating it" in done.stderr
    check = subprocess.run([str(tmp_path / ".venv/bin/pip"), "--version"], capture_output=True)
    assert check.returncode == 0


def test_a_python_without_venv_names_the_package_and_leaves_nothing(tmp_path: Path) -> None:
    # a Python whose ensurepip cannot be imported, as on stock Debian without python3.X-venv
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "ensurepip.py").write_text("raise ImportError('ensurepip is not available')\n")
    fake = tmp_path / "python3"
    fake.write_text(f'#!/bin/sh\nPYTHONPATH={shadow} exec {sys.executable} "$@"\n')
    fake.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    done = _ensure(work, str(fake))
    assert done.returncode == 1
    assert "-venv" in done.stderr and "apt-get install python3." in done.stderr
    assert not (work / ".venv").exists()
