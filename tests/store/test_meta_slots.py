"""A session's meta in two checked slots written in place: a torn, stale or foreign slot is
never read as the meta; the previous one is."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from openprogram_lsp.store import meta_slots
from openprogram_lsp.store.git import run_git
from openprogram_lsp.store.meta_slots import PAGE, MetaWriter, newest, slots_path
from openprogram_lsp.store.session_store import SessionStore


def _session(tmp_path: Path) -> tuple[SessionStore, str, Path]:
    store = SessionStore(tmp_path / "home")
    sid = store.create_session(title="t")
    return store, sid, store.session_dir(sid)


def test_writes_go_in_place_alternating_slots_and_leave_meta_json_alone(tmp_path: Path) -> None:
    store, sid, root = _session(tmp_path)
    created = (root / "meta.json").read_bytes()
    store.update_meta(sid, title="one")  # first write: the slot file is made whole
    ino = os.stat(slots_path(root)).st_ino
    for title in ("two", "three", "four"):
        store.update_meta(sid, title=title)
        assert os.stat(slots_path(root)).st_ino == ino  # written in place, no rename
        assert meta_slots.read(root)["title"] == title
        assert SessionStore(tmp_path / "home").meta(sid)["title"] == title  # another process
    assert (root / "meta.json").read_bytes() == created
    data = Path(slots_path(root)).read_bytes()
    gen, payload = newest(data)  # type: ignore[misc]
    assert json.loads(payload)["title"] == "four"
    cap = len(data) // 2
    other = data[:cap] + bytes(cap) if gen % 2 else bytes(cap) + data[cap:]
    assert newest(other) == (gen - 1, newest(other)[1])  # type: ignore[index]
    assert json.loads(newest(other)[1])["title"] == "three"  # type: ignore[index]


@pytest.mark.parametrize("damage", ["torn", "crc", "magic", "length", "parity"])
def test_a_damaged_newest_slot_reads_as_the_one_before(tmp_path: Path, damage: str) -> None:
    store, sid, root = _session(tmp_path)
    store.update_meta(sid, title="older")
    store.update_meta(sid, title="newer")
    path = Path(slots_path(root))
    data = bytearray(path.read_bytes())
    gen, _ = newest(bytes(data))  # type: ignore[misc]
    at = gen % 2 * (len(data) // 2)
    head = meta_slots._HEAD.size
    if damage == "torn":  # the end of the payload still the slot's older bytes
        good = meta_slots.encode_slot(gen, json.dumps({"title": "x" * 40}).encode())
        data[at:at + len(good) - 10] = good[:-10]
    elif damage == "crc":
        data[at + head + 3] ^= 1
    elif damage == "magic":
        data[at] ^= 1
    elif damage == "length":
        data[at + 12:at + 16] = (len(data)).to_bytes(4, "big")
    else:  # a slot whose generation belongs in the other slot
        data[at + 4:at + 12] = (gen + 1).to_bytes(8, "big")
    path.write_bytes(bytes(data))
    assert meta_slots.read(root)["title"] == "older"
    assert SessionStore(tmp_path / "home").meta(sid)["title"] == "older"


def test_no_valid_slot_falls_back_to_meta_json_and_the_next_write_mends(tmp_path: Path) -> None:
    store, sid, root = _session(tmp_path)
    store.update_meta(sid, title="lost")
    path = Path(slots_path(root))
    path.write_bytes(bytes(path.stat().st_size))  # zeros: e.g. a power cut on a new file
    assert meta_slots.read(root)["title"] == "t"
    path.write_bytes(b"not ours")  # a size no slot file has
    assert meta_slots.read(root)["title"] == "t"
    fresh = SessionStore(tmp_path / "home")
    fresh.update_meta(sid, title="mended")
    assert meta_slots.read(root)["title"] == "mended"
    assert newest(path.read_bytes()) is not None


def test_a_meta_outgrowing_its_slot_is_written_whole(tmp_path: Path) -> None:
    store, sid, root = _session(tmp_path)
    store.update_meta(sid, title="small")
    assert os.stat(slots_path(root)).st_size == 2 * PAGE
    big = "b" * (3 * PAGE)
    store.update_meta(sid, title=big)
    assert os.stat(slots_path(root)).st_size == 2 * 4 * PAGE
    assert SessionStore(tmp_path / "home").meta(sid)["title"] == big
    store.update_meta(sid, title="small again")  # in place in the bigger slot
    assert os.stat(slots_path(root)).st_size == 2 * 4 * PAGE
    assert meta_slots.read(root)["title"] == "small again"


def test_a_writer_whose_file_was_replaced_writes_the_new_one(tmp_path: Path) -> None:
    _, _, root = _session(tmp_path)
    one, two = MetaWriter(root), MetaWriter(root)
    one.write(b'{"title": "a"}')
    two.write(b'{"title": "b"}')
    one.write(b'{"title": "c"}')  # its kept descriptor still names the file
    meta_slots.write_whole(root, b'{"title": "d"}', 7)  # replaced under both
    two.write(b'{"title": "e"}')
    assert meta_slots.read(root) == {"title": "e"}
    assert newest(Path(slots_path(root)).read_bytes())[0] == 8  # type: ignore[index]
    one.close()
    two.close()


def test_a_missing_session_is_missing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        meta_slots.read(tmp_path)


def test_a_commit_records_the_current_meta(tmp_path: Path) -> None:
    store, sid, root = _session(tmp_path)
    store.update_meta(sid, title="committed")
    store.commit_turn(sid, "m")
    assert json.loads(run_git(["show", "HEAD:meta.json"], cwd=root))["title"] == "committed"
    assert json.loads((root / "meta.json").read_bytes())["title"] == "t"


def test_a_reader_racing_a_writer_reads_whole_metas_only(tmp_path: Path) -> None:
    _, _, root = _session(tmp_path)
    writer = MetaWriter(root)
    writer.write(json.dumps({"n": 0, "pad": ""}).encode())
    stop = threading.Event()

    def write() -> None:
        for n in range(1, 3000):  # payloads of several lengths, spanning most of a slot
            writer.write(json.dumps({"n": n, "pad": chr(97 + n % 26) * (n * 37 % 3000)}).encode())
        stop.set()

    thread = threading.Thread(target=write)
    thread.start()
    seen = 0
    last = -1
    try:
        while not stop.is_set() and seen < 100_000:
            meta = meta_slots.read(root)
            n = meta["n"]
            assert meta["pad"] == (chr(97 + n % 26) * (n * 37 % 3000) if n else "")
            assert n >= last  # never an older meta than one already read
            last = n
            seen += 1
    finally:
        thread.join(30)
        writer.close()
    assert seen > 0 and meta_slots.read(root)["n"] == 2999


def test_a_meta_no_reader_would_accept_is_refused(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    store, sid, root = _session(tmp_path)
    store.update_meta(sid, title="kept")
    monkeypatch.setattr(meta_slots, "MAX_CAPACITY", 4 * PAGE)
    with pytest.raises(ValueError, match="too large"):
        store.update_meta(sid, title="x" * (8 * PAGE))
    assert meta_slots.read(root)["title"] == "kept"
