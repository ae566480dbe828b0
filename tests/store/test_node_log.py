"""Appends to a node log go through a descriptor kept open, never into a replaced file."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_lines_with_and_without_json_strings_parse_back_to_their_rows() -> None:
    rows = [(1, "n1", "user", None, None, False, None),
            (2, "n2", "assistant", "n1", None, True, "000/00000/0000002-n2.json"),
            (3, "n3", "tool", "n2", "n2", False, ""),  # written as a JSON string
            (4, 'odd"id', "user", "tab\tpred", None, False, None),
            (5, "n5", "system", None, '"quoted', True, "x y.json")]
    for row in rows:
        line = node_log.encode(row).decode().rstrip("\n")
        assert node_log.parse(line) == row, line
    # an empty field is None, quoted or not
    assert node_log.parse("7\tn7\tuser\t\t\t0\t") == (7, "n7", "user", None, None, False, None)
    for line in ["1\t\tuser\t\t\t0", "1\tn1\t\t\t\t0", "x\tn\tu\t\t\t0",
                 "1\tn1\tuser\t\t\t2", "1\tn1\tuser\t\t"]:
        with pytest.raises(ValueError):
            node_log.parse(line)
