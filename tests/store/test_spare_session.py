"""A new session's directory made ahead (store/spare_session.py): the session made from it is
the one made without it, byte for byte but its meta; it never shows as a session; one made by
a process that is gone is removed, and a spare that cannot be used is not."""

from __future__ import annotations

import os
from pathlib import Path

from openprogram_lsp.core.types import Node
from openprogram_lsp.store.session_store import SessionStore
from openprogram_lsp.store.spare_session import PREFIX


def _files(root: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel in ("meta.json", ".git/openprogram-meta"):
            continue  # the session's id and times
        out[rel] = None if path.is_dir() else path.read_bytes()
    return out


def test_a_session_made_from_the_spare_is_the_same_session(tmp_path: Path) -> None:
    plain = SessionStore(tmp_path / "a")
    ahead = SessionStore(tmp_path / "b")
    ahead.spare.prepare()
    spares = [p for p in ahead.root.iterdir() if p.name.startswith(PREFIX)]
    assert len(spares) == 1 and not spares[0].name.endswith(".making")
    assert ahead.list_sessions() == []  # never a session
    one, two = plain.create_session(workspace="/w"), ahead.create_session(workspace="/w")
    assert not spares[0].exists()  # moved, not copied
    assert _files(plain.session_dir(one)) == _files(ahead.session_dir(two))
    for store, sid in ((plain, one), (ahead, two)):  # and it works as one
        store.append(sid, Node(id="n1", role="user", text="hi"), advance_head=True)
        store.commit_turn(sid, "t")
        assert [n.text for n in store.nodes(sid)] == ["hi"]
    assert [s["id"] for s in ahead.list_sessions()] == [two]
    three = ahead.create_session()  # the spare was used: made as before
    assert ahead.session_dir(three).is_dir()


def test_orphans_are_removed_and_a_taken_name_falls_back(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    dead = 2 ** 22 + 12345  # above pid_max's default: no such process
    for name in (f"{PREFIX}{dead}-abc", f"{PREFIX}{dead}-def.making"):
        (store.root / name / ".git").mkdir(parents=True)
    mine = store.root / f"{PREFIX}{os.getpid()}-old"  # this process's: not an orphan
    mine.mkdir()
    store.spare.prepare()
    left = sorted(p.name for p in store.root.iterdir() if p.name.startswith(PREFIX))
    assert len(left) == 2 and mine.name in left
    # the new session's directory exists already (half made): the spare is dropped, the
    # session made in place as before
    sid = "s" + "0" * 17
    (store.session_dir(sid) / "nodes" / "junk").mkdir(parents=True)
    assert store.create_session(sid=sid) == sid
    assert (store.session_dir(sid) / ".git" / "HEAD").is_file()
    assert [p.name for p in store.root.iterdir() if p.name.startswith(PREFIX)] == [mine.name]
