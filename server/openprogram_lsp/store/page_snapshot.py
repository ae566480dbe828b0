"""A session's first history page kept as the bytes the history handler sends, checked before
it is served (``.git/openprogram-page``, derived, never committed).

A fresh process's first ``openprogram/history`` of a long session read the log's tail and the
page's 200 node files and validated and dumped them (``cold_page``): 4-6 ms of CPU. A snapshot
written off every request's and turn's path (``write``) holds that answer's JSON; serving it
(``read``) is a few ``stat`` calls, one read and one parse of the JSON (so no byte that is not
one JSON value is ever framed).

It is checked, not trusted. It records the stamp (device, inode, size, mtime, ctime) of every
file and directory the page was read from: the meta, the node log (every node write appends a
line), the session journal (every file write appends to it before the file is replaced), the
``nodes/`` directory and each shard directory from the page's oldest node to the newest seq.
A node file is written through a temporary file in its shard and a rename, so a writer killed
between a file and its line still changes that directory's stamp. ``read`` answers only when
every stamp is unchanged; anything else (a missing, torn, foreign or hostile file, a page that
is not the session's) returns None and the caller reads the page as before.

Stamps are trusted only once they are older than ``MARGIN_NS``: file times come from a coarse
clock, so a change in the same tick as a recorded time could leave it equal. ``write`` reads
the page twice, from fresh views, between two equal stamp readings taken when everything was
older than the margin: the page it keeps is the one on disk for the whole time in between, and
any later change moves some stamp.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openprogram_lsp.core.fsutil import atomic_write, read_rest
from openprogram_lsp.store.cold_page import ColdView, HistoryPage
from openprogram_lsp.store.index import SHARD
from openprogram_lsp.store.meta_slots import SLOTS
from openprogram_lsp.store.node_log import NODE_LOG
from openprogram_lsp.store.reply_calls import has_open_calls
from openprogram_lsp.store.session_repo import JOURNAL

SNAPSHOT = "openprogram-page"
VERSION = 1
MARGIN_NS = 1_000_000_000
"""How old every stamp must be before a snapshot relies on it (file times tick coarsely)."""
MAX_BYTES = 8 << 20
"""The largest page kept (a bigger one is read the ordinary way)."""
MAX_LEAVES = 256
"""Shard directories one snapshot may watch (a page spread wider is not kept)."""
MIN_NODES = 50
"""Pages shorter than this are cheap to read: no snapshot is written for them."""
MIN_LINE = len("0\ta\tuser\t\t\t0\n")
"""The shortest node log line."""
REPLY_ROLE = "system"
"""The callees a history page carries (what the history handler asks for)."""

FIXED = ("meta.json", f".git/{NODE_LOG}", f".git/{JOURNAL}", "nodes", f".git/{SLOTS}")

Stamp = tuple[int, int, int, int, int] | None
"""(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns), or None for a missing path."""

Render = Callable[[HistoryPage], bytes | None]
"""The history handler's answer for a page, as JSON bytes (None: not one to keep)."""


def watched(first: int, top: int, extra: list[str]) -> list[str]:
    """The paths (under the session directory) whose stamps a page from seq ``first`` up to
    ``top`` depends on; ``extra``: directories of node files not in their shard."""
    group = SHARD * SHARD
    out = [*FIXED, *(f"nodes/{g:03d}" for g in range(first // group, top // group + 1)),
           *(f"nodes/{leaf // SHARD:03d}/{leaf:05d}"
             for leaf in range(first // SHARD, top // SHARD + 1))]
    known = set(out)
    out.extend(d for d in sorted(set(extra)) if d not in known)
    return out


def stamps(root: Path, rels: list[str]) -> list[Stamp]:
    """The stamp of each path (symbolic links not followed)."""
    base = f"{root}/"
    out: list[Stamp] = []
    for rel in rels:
        try:
            st = os.stat(base + rel, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            out.append(None)
            continue
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return out


def _safe_dir(rel: str) -> bool:
    parts = rel.split("/")
    return (parts[0] == "nodes" and "\0" not in rel
            and all(p and p not in (".", "..") for p in parts))


# -- reading -----------------------------------------------------------------------------------


def read(root: Path, sid: str, *, head_id: str | None, limit: int) -> bytes | None:
    """The kept first page of session ``sid`` (the history answer's JSON, ASCII) when it was
    kept for ``limit`` nodes ending at ``head_id`` (None: the session's head) and nothing it
    was read from has changed since; else None."""
    try:
        fd = os.open(f"{root}/.git/{SNAPSHOT}", os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES + (1 << 20):
            return None
        data = read_rest(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return _check(root, sid, data, head_id, limit)
    except (ValueError, TypeError, KeyError, RecursionError):
        return None


def _int(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("not an integer")
    return value


def _not_json(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # json.loads takes NaN and Infinity; a client not


def _check(root: Path, sid: str, data: bytes, head_id: str | None, limit: int) -> bytes | None:
    nl = data.find(b"\n")
    if nl < 0:
        return None
    header = json.loads(data[:nl])
    if type(header) is not dict or header.get("v") != VERSION or header.get("sid") != sid:
        return None
    head = header["head"]
    if type(head) is not str or (head_id is not None and head_id != head):
        return None
    if _int(header["limit"]) != limit:
        return None
    first, top = _int(header["first"]), _int(header["top"])
    extra = header["extra"]
    if (not 0 <= first <= top or top // SHARD - first // SHARD >= MAX_LEAVES
            or type(extra) is not list or len(extra) > MAX_LEAVES
            or not all(type(d) is str and _safe_dir(d) for d in extra)):
        return None
    recorded = header["stamps"]
    rels = watched(first, top, extra)
    if type(recorded) is not list or len(recorded) != len(rels):
        return None
    want = [None if s is None else tuple(_int(v) for v in s) for s in recorded]
    if any(s is not None and len(s) != 5 for s in want):
        return None
    if stamps(root, rels) != want:
        return None  # something the page was read from changed
    payload = data[nl + 1:]
    if (len(payload) != _int(header["size"]) or zlib.crc32(payload) != _int(header["crc"])
            or not payload.isascii()):
        return None
    page = json.loads(payload, parse_constant=_not_json)  # exactly one JSON value
    if (type(page) is not dict or page.keys() != {"sessionId", "headId", "nodes", "hasMore"}
            or page["sessionId"] != sid or page["headId"] != head
            or type(page["nodes"]) is not list or len(page["nodes"]) > limit
            or type(page["hasMore"]) is not bool):
        return None
    return payload


# -- writing -----------------------------------------------------------------------------------


def _first_page(root: Path, limit: int) -> tuple[ColdView, HistoryPage] | None:
    view = ColdView.open(root)
    if view is None:
        return None
    page = view.page(None, limit=limit, before=None, reply_role=REPLY_ROLE)
    if page is None or page.head is None:
        return None
    return view, page


def _span(view: ColdView, page: HistoryPage) -> tuple[int, int, list[str]] | None:
    """(oldest seq, newest seq, directories of node files outside their shard) of a page, or
    None when it is too wide or names a file oddly."""
    rows = view.tail.rows
    ids = [n.id for n in page.nodes] + [n.id for kids in page.replies.values() for n in kids]
    first = min(rows[i][0] for i in ids)
    top = view.tail.top
    extra = set()
    for nid in ids:
        name = rows[nid][6]
        if name is not None:
            rel = os.path.dirname(f"nodes/{name}")
            if not _safe_dir(rel):
                return None
            extra.add(rel)
    if top // SHARD - first // SHARD >= MAX_LEAVES or len(extra) > MAX_LEAVES:
        return None
    return first, top, sorted(extra)


def write(root: Path, sid: str, render: Render, *, limit: int,
          min_nodes: int = MIN_NODES) -> float | None:
    """Keep the session's first page of ``limit`` nodes when it can be kept soundly.

    Returns None when done (kept, already kept, or not a page to keep: running turns, a hole,
    fewer than ``min_nodes`` nodes) and a delay in seconds when it should be tried again (a
    write too recent to rely on its stamps, or one that happened while reading).
    """
    try:
        if os.stat(f"{root}/.git/{NODE_LOG}").st_size < MIN_LINE * min_nodes:
            return None  # too few lines for a page that long
    except FileNotFoundError:
        return None
    if read(root, sid, head_id=None, limit=limit) is not None:
        return None  # what is kept is still right
    got = _first_page(root, limit)
    if got is None or len(got[1].nodes) < min_nodes:
        return None
    span = _span(*got)
    got = None  # the page is read again below: never two copies alive at once
    if span is None:
        return None
    rels = watched(*span)
    now = time.time_ns()
    before = stamps(root, rels)
    newest = max((max(s[3], s[4]) for s in before if s is not None), default=0)
    if now - newest < MARGIN_NS:
        return (newest + MARGIN_NS - now) / 1e9 + 0.05
    again = _first_page(root, limit)  # read all of it after the stamps were taken
    if again is None or _span(*again) != span:
        return MARGIN_NS / 1e9
    page = again[1]
    if any(has_open_calls(n) for n in page.nodes):
        return None  # a turn that lists calls still running: history settles those
    payload = render(page)
    if payload is None or len(payload) > MAX_BYTES or not payload.isascii():
        return None
    if stamps(root, rels) != before:
        return MARGIN_NS / 1e9
    first, top, extra = span
    header = {"v": VERSION, "sid": sid, "head": page.head, "limit": limit, "first": first,
              "top": top, "extra": extra, "stamps": before, "size": len(payload),
              "crc": zlib.crc32(payload)}
    atomic_write(root / ".git" / SNAPSHOT,
                 json.dumps(header, separators=(",", ":")).encode() + b"\n" + payload)
    return None


def drop(root: Path) -> None:
    """Remove a session's kept page (tests; a session going away takes it with it)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(f"{root}/.git/{SNAPSHOT}")
