"""Which before-states a turn's edit records on the loop (``small_reads``): absent paths,
symlinks and small regular files on a local disk; anything else (a big file, a fifo, a
directory) goes to a thread."""

from __future__ import annotations

import os
from pathlib import Path

from openprogram_lsp.core.localfs import INLINE_BYTES
from openprogram_lsp.dispatcher.turn_checkpoints import small_reads


def test_small_reads_are_absent_paths_links_and_small_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x = 1\n")
    (ws / "big.bin").write_bytes(b"b" * (INLINE_BYTES + 1))
    os.symlink("src/a.py", ws / "link")
    os.mkfifo(ws / "fifo")
    assert small_reads(ws, ["src/a.py", "new/deep/file.txt", "link", "src/new.py"])
    assert small_reads(ws, [])
    for other in ("big.bin", "fifo", "src"):
        assert not small_reads(ws, ["src/a.py", other]), other
