"""Sessions are listed from ``sessions/.listing``: no meta file is read once it is current,
other processes' writes and deletes show, and sessions it lacks are found."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from openprogram_lsp.core.types import Node
from openprogram_lsp.store import meta_slots, session_listing
from openprogram_lsp.store.session_listing import LISTING
from openprogram_lsp.store.session_store import SessionStore


@pytest.fixture
def meta_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every session meta the store reads (``meta_slots.read_bytes``, whatever reads it)."""
    seen: list[str] = []
    real = meta_slots.read_bytes

    def counting(root: Path | str) -> bytes:
        seen.append(Path(root).name)
        return real(root)

    monkeypatch.setattr(meta_slots, "read_bytes", counting)
    return seen


def _ids(store: SessionStore, **kw: object) -> list[str]:
    return [m["id"] for m in store.list_sessions(**kw)]  # type: ignore[arg-type]


def test_a_listing_reads_no_meta_and_follows_other_processes(tmp_path: Path,
                                                             meta_reads: list[str]) -> None:
    a = SessionStore(tmp_path)
    made = [a.create_session(title=f"s{n}", workspace=str(tmp_path)) for n in range(4)]
    b = SessionStore(tmp_path)  # another process
    meta_reads.clear()
    assert sorted(_ids(b)) == sorted(made)
    a.update_meta(made[0], title="renamed")
    a.delete_session(made[2])
    meta_reads.clear()  # a read the metas of the sessions it opened; b opens none
    rows = b.list_sessions()
    listed = {m["id"]: m for m in rows}
    assert sorted(listed) == sorted([made[0], made[1], made[3]])
    assert listed[made[0]]["title"] == "renamed"
    stamps = [m["updatedAt"] for m in rows]
    assert stamps == sorted(stamps, reverse=True)
    assert meta_reads == []
    page = _ids(b, workspace=str(tmp_path), offset=1, limit=1)
    assert page == [m["id"] for m in rows][1:2]
    assert _ids(b, workspace=str(tmp_path / "elsewhere")) == []


def test_sessions_the_listing_lacks_are_found_and_vanished_ones_dropped(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    made = [store.create_session(title=f"s{n}") for n in range(3)]
    listing = tmp_path / "sessions" / LISTING
    listing.unlink()  # a home from before the listing
    assert sorted(_ids(SessionStore(tmp_path))) == sorted(made)
    assert listing.exists()
    lines = listing.read_bytes().splitlines()
    listing.write_bytes(b"".join(ln + b"\n" for ln in lines[:-1]) + b"{broken\n")
    shutil.rmtree(tmp_path / "sessions" / made[1])  # gone without a tombstone
    assert sorted(_ids(SessionStore(tmp_path))) == sorted([made[0], made[2]])


def test_superseded_lines_are_rewritten_away(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_listing, "SLACK", 3)
    store = SessionStore(tmp_path)
    sid = store.create_session()
    other = store.create_session()
    for n in range(12):
        store.append(sid, Node(id=f"n{n}", role="user", predecessor=f"n{n - 1}" if n else None),
                     advance_head=True)
    lines = (tmp_path / "sessions" / LISTING).read_bytes().splitlines()
    assert len(lines) <= 2 * 2 + 3 + 1
    rows = {json.loads(ln)["id"]: json.loads(ln) for ln in lines}
    assert rows[sid]["headId"] == "n11" and other in rows
    assert SessionStore(tmp_path).list_sessions()[0]["headId"] == "n11"


def test_own_lines_are_taken_as_written_and_a_line_in_between_is_still_read(
        tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    mine, other = session_listing.SessionListing(root), session_listing.SessionListing(root)
    mine.current()
    mine.record({"id": "s1", "title": "one"})
    mine.record({"id": "s1", "title": "one, renamed"})  # nothing in between: not read back
    assert mine.rows == {"s1": {"id": "s1", "title": "one, renamed"}}
    other.record({"id": "s2", "title": "two"})  # another process's line...
    mine.record({"id": "s3", "title": "three"})  # ...lands before this one: read back
    assert set(mine.rows) == {"s1", "s2", "s3"} and mine.rows["s2"]["title"] == "two"
    assert len((root / LISTING).read_bytes().splitlines()) == 4


def test_damaged_lines_are_skipped_and_every_whole_line_is_read(
        tmp_path: Path, meta_reads: list[str]) -> None:
    a = SessionStore(tmp_path)
    made = [a.create_session(title=f"s{n}", workspace=str(tmp_path)) for n in range(5)]
    path = tmp_path / "sessions" / LISTING
    lines = path.read_bytes().splitlines()
    row = json.loads(lines[1])
    damaged = [lines[0], b'{"id": "torn", "title": "x', b"1,2", b"", b"  ",
               json.dumps({**row, "title": "renamed"}).encode(), *lines[2:]]
    path.write_bytes(b"\n".join(damaged) + b"\n")
    meta_reads.clear()
    listed = {m["id"]: m for m in SessionStore(tmp_path).list_sessions()}
    assert sorted(listed) == sorted(made) and meta_reads == []
    assert listed[row["id"]]["title"] == "renamed"
    assert session_listing._parsed([b'{"a": 1}', b"[2]", b"3"]) == [{"a": 1}, [2], 3]
