"""This checkout's wheel, built once per test run for every test that needs it.

setuptools builds in the source tree (``build/``), so two workers building at once could mix
each other's files: the first caller builds it offline (no build isolation, no dependencies)
under a file lock, the others reuse it (keyed by xdist's run id; without xdist the process id).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def checkout_wheel() -> Path:
    """The path of ``openprogram_lsp-VERSION-py3-none-any.whl`` built from this checkout."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(os.getpid())
    key = hashlib.sha256(str(REPO).encode()).hexdigest()[:12]
    base = Path(tempfile.gettempdir())
    out = base / f"openprogram-wheel-{key}-{run_id}"
    with open(base / f"openprogram-wheel-{key}.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            built = sorted(out.glob("openprogram_lsp-*.whl"))
            if not built:
                subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                                "--no-build-isolation", "--disable-pip-version-check",
                                "-w", str(out), str(REPO)],
                               check=True, capture_output=True, timeout=300)
                built = sorted(out.glob("openprogram_lsp-*.whl"))
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
    (found,) = built
    return found
