"""Reading a node log backwards gives what reading it forwards gives: the newest row of each id,
at any block size, with a torn tail of any length left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprogram_lsp.store import log_tail, node_log
from openprogram_lsp.store.log_tail import LogTail
from openprogram_lsp.store.node_log import Row


def _rows() -> list[Row]:
    out: list[Row] = []
    for i in range(1, 60):
        out.append((i, f"n{i}", "user", f"n{i - 1}" if i > 1 else None, None, i % 7 == 0, None))
        if i % 5 == 0:  # a later line for an earlier node wins
            out.append((i - 3, f"n{i - 3}", "user", f"n{i - 4}", None, False, f"odd\t{i}"))
    return out


@pytest.mark.parametrize("block", [1, 7, 64, 4096])
@pytest.mark.parametrize("torn", [b"", b"12\tn1", b"x" * 300])
def test_backwards_equals_forwards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   block: int, torn: bytes) -> None:
    monkeypatch.setattr(log_tail, "FIRST_BLOCK", block)
    monkeypatch.setattr(log_tail, "MAX_BLOCK", block)
    path = tmp_path / "log"
    node_log.append(path, _rows())
    with open(path, "ab") as fh:
        fh.write(torn)
    forwards: dict[str, Row] = {}
    read = node_log.read(path, lambda r: forwards.__setitem__(r[1], r))
    assert read is not None and not read.damaged
    tail = LogTail(path)
    assert tail.row("n59") == forwards["n59"]
    assert len(tail.rows) < len(forwards) or block == 4096  # stopped early
    while tail.more():
        pass
    assert tail.rows == forwards and tail.top == 59 and not tail.damaged
    assert tail.row("absent") is None


def test_a_bad_line_stops_the_reading(tmp_path: Path) -> None:
    path = tmp_path / "log"
    node_log.append(path, _rows()[:3])
    with open(path, "ab") as fh:
        fh.write(b"garbage\n")
    node_log.append(path, _rows()[3:6])
    tail = LogTail(path)
    assert tail.row("n1") is None and tail.damaged and tail.exhausted


def test_a_line_that_is_not_ascii_stops_the_reading_after_the_newer_rows(
        tmp_path: Path) -> None:
    path = tmp_path / "log"
    node_log.append(path, _rows()[:3])
    with open(path, "ab") as fh:
        fh.write(b"4\tn\xc3\xa9\tuser\t\t\t0\n")  # a whole block is decoded at once
    node_log.append(path, _rows()[3:6])
    tail = LogTail(path)
    assert tail.row("n1") is None and tail.damaged
    assert set(tail.rows) == {r[1] for r in _rows()[3:6]}  # the rows after it were kept
