"""Image blobs follow the sessions that name them: deleting a session removes the pictures no
other session names (a shared one stays), a crash part way only delays that, and sessions
older than the record are read instead."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.imagefiles import png

from openprogram_lsp.core.types import ImagePart, Node, ToolCallRecord
from openprogram_lsp.store import image_refs
from openprogram_lsp.store.session_store import SessionStore


def _age(store: SessionStore, *parts: ImagePart) -> None:
    old = time.time() - 2 * image_refs.GRACE
    for p in parts:
        os.utime(store.images.path(p.sha256), (old, old))


def _user(nid: str, part: ImagePart) -> Node:
    return Node(id=nid, role="user", text="look",
                metadata={"context": [{"kind": "image", "uri": "clipboard:x", "path": "x",
                                       **part.wire()}]})


def test_deleting_a_session_removes_only_the_images_no_other_session_names(
        tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    shared, mine, tools = (store.images.put(png(5, 5, seed=i), f"{i}.png") for i in range(3))
    one, two = store.create_session(), store.create_session()
    store.append(one, _user("u1", shared))
    store.append(one, _user("u2", mine))
    store.append(two, _user("u1", shared))
    # a tool's image reaches a reply through a rewrite of the node (update_node)
    store.append(one, Node(id="a1", role="assistant", predecessor="u2"))
    call = ToolCallRecord(id="c", name="read_file", status="completed", images=[tools])
    store.update_node(one, "a1", tool_calls=[call])
    refs = (store.session_dir(one) / ".git" / image_refs.REFS).read_text().split()
    assert sorted(refs) == sorted({shared.sha256, mine.sha256, tools.sha256})
    _age(store, shared, mine, tools)
    store.delete_session(one)
    assert store.images.path(shared.sha256).exists()  # session two still shows it
    assert not store.images.path(mine.sha256).exists()
    assert not store.images.path(tools.sha256).exists()
    store.delete_session(two)
    assert store.images.count() == 0


def test_a_picture_stored_for_a_message_not_yet_written_is_kept(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    gone = store.create_session()
    pasted = store.images.put(png(6, 6))  # stored; its message is written a moment later
    store.delete_session(gone)
    assert store.images.path(pasted.sha256).exists()


def test_a_crash_before_collecting_is_caught_up_by_the_next_delete(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    crashed, other = store.create_session(), store.create_session()
    lost = store.images.put(png(7, 7))
    store.append(crashed, _user("u1", lost))
    _age(store, lost)
    # the delete moved the session aside and died before removing it or collecting
    os.replace(store.session_dir(crashed), store.root / f".deleted-{crashed}-1")
    assert store.images.path(lost.sha256).exists()
    store.delete_session(other)
    assert not store.images.path(lost.sha256).exists()


def test_a_session_without_the_record_is_read_node_by_node(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    legacy, other = store.create_session(), store.create_session()
    old = store.images.put(png(8, 8))
    (store.session_dir(legacy) / ".git" / image_refs.REFS).unlink()  # made before the record
    store.append(legacy, _user("u1", old))
    _age(store, old)
    store.delete_session(other)
    assert store.images.path(old.sha256).exists()
