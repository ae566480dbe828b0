"""core.turn_root: a turn's workspace resolved once, and a re-pointed workspace refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.errors import WorkspaceEscape
from openprogram_lsp.core.turn_root import real_path, resolved


def _linked(tmp_path: Path) -> tuple[Path, Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    link = tmp_path / "ws"
    link.symlink_to(first)
    return link, first, second


def _repoint(link: Path, target: Path) -> None:
    tmp = link.with_name("ws.new")
    tmp.symlink_to(target)
    os.replace(tmp, link)


def test_the_real_path_is_resolved_once_per_block(tmp_path: Path) -> None:
    link, first, second = _linked(tmp_path)
    with resolved(link) as real:
        assert real == str(first)
        _repoint(link, second)
        assert real_path(link) == str(first)  # the turn's own answer, not a new one
        assert real_path(tmp_path) == str(tmp_path)  # other paths resolve as before
    assert real_path(link) == str(second)


def test_a_workspace_repointed_mid_turn_is_refused_where_files_are_opened(
        tmp_path: Path) -> None:
    link, first, second = _linked(tmp_path)
    with resolved(link):
        fdfs.write_atomic(link, "a.txt", b"1")
        _repoint(link, second)
        with pytest.raises(WorkspaceEscape, match="re-pointed"):
            fdfs.write_atomic(link, "b.txt", b"2")
        with pytest.raises(WorkspaceEscape, match="re-pointed"):
            fdfs.read_bytes(link, "a.txt", 10)
    assert (first / "a.txt").read_bytes() == b"1"
    assert not (first / "b.txt").exists() and not (second / "b.txt").exists()
    fdfs.write_atomic(link, "c.txt", b"3")  # outside a turn: the link as it is now
    assert (second / "c.txt").read_bytes() == b"3"


def test_a_replaced_workspace_directory_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    with resolved(ws):
        ws.rename(tmp_path / "old")
        ws.mkdir()
        with pytest.raises(WorkspaceEscape):
            fdfs.write_atomic(ws, "x.txt", b"x")
    assert not (ws / "x.txt").exists()
