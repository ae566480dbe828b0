"""The umask is read on first use, never at import (importing changes no process state)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import os
os.umask(0o027)
import openprogram_lsp.core.fdfs, openprogram_lsp.store.checkpoints.restore
from openprogram_lsp.core import fsutil
assert fsutil.current_umask.cache_info().currsize == 0, "read at import"
assert fsutil.current_umask() == 0o027
assert os.umask(0o027) == 0o027, "the umask changed"
print("ok")
"""


def test_umask_is_read_lazily_and_left_alone() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "ok", out.stderr
