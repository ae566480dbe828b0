"""Appends to a node log go through a descriptor kept open, never into a replaced file."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.store import node_log
from openprogram_lsp.store.node_log import Row


def _row(seq: int) -> Row:
    return (seq, f"n{seq}", "user", None, None, False, None)


def _seqs(path: Path) -> list[int]:
    return [node_log.parse(line)[0] for line in path.read_text().splitlines()]


def test_an_append_after_the_log_was_replaced_lands_in_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / node_log.NODE_LOG
    node_log.append(path, [_row(1)])
    kept = node_log._open_logs[str(path)]
    node_log.append(path, [_row(2)])
    assert node_log._open_logs[str(path)] == kept  # one descriptor for both
    node_log.rewrite(path, [_row(1), _row(2)])  # another process compacts it (a new inode)
    size, written = node_log.append(path, [_row(3)])
    assert _seqs(path) == [1, 2, 3] and size == path.stat().st_size and written > 0
    node_log.forget(path)
    assert str(path) not in node_log._open_logs
    node_log.append(path, [_row(4)])  # opened again when needed
    assert _seqs(path) == [1, 2, 3, 4]
    node_log.forget(path)
