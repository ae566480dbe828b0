"""Deleting a session collects the images no other session names: what that adds to a delete.

A state root of ``--sessions`` sessions (each with ``--nodes`` user nodes, every fifth naming an
image; the images are shared by pairs of sessions, so a delete frees about half of its own) and
their blobs, aged past the collector's grace. Side A deletes a session as the store does (the
collection included); side B, the baseline of the same run, deletes one the same way with the
collection left out. Timed A B A B (median of ``--pairs`` >= 7), one session deleted per call.

    .venv/bin/python bench/bench_image_gc.py [--sessions 300] [--nodes 40]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "server")]

from bench._util import interleaved, report  # noqa: E402
from tests.imagefiles import png  # noqa: E402

from openprogram_lsp.core.types import Node  # noqa: E402
from openprogram_lsp.store import image_refs  # noqa: E402
from openprogram_lsp.store.session_store import SessionStore  # noqa: E402


def build(home: Path, sessions: int, nodes: int) -> tuple[SessionStore, list[str]]:
    store = SessionStore(home)
    ids = []
    for s in range(sessions):
        sid = store.create_session()
        pred = None
        for n in range(nodes):
            meta = {}
            if n % 5 == 0:  # an image shared with the neighbouring session
                part = store.images.put(png(8, 8, seed=(s // 2) * nodes + n, noise=True),
                                       f"{n}.png")
                meta = {"context": [{"kind": "image", "uri": "clipboard:x", "path": "x",
                                     **part.wire()}]}
            node = store.append(sid, Node(id=f"u{n}", role="user", text=f"message {n} " * 20,
                                          predecessor=pred, metadata=meta))
            pred = node.id
        ids.append(sid)
    old = time.time() - 2 * image_refs.GRACE
    for blob in (home / "images").glob("??/*"):
        os.utime(blob, (old, old))
    return store, ids


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--nodes", type=int, default=40)
    ap.add_argument("--pairs", type=int, default=9)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store, ids = build(Path(tmp) / "home", args.sessions, args.nodes)
        blobs = store.images.count()
        real = image_refs.collect

        def with_collection() -> None:
            store.delete_session(ids.pop())

        def without() -> None:
            image_refs.collect = lambda *a, **k: 0  # type: ignore[assignment]
            try:
                store.delete_session(ids.pop())
            finally:
                image_refs.collect = real

        a, b = interleaved(with_collection, without, pairs=args.pairs)
        print(f"{args.sessions} sessions of {args.nodes} nodes, {blobs} images; "
              f"{store.images.count()} left after {args.sessions - len(ids)} deletes; "
              f"load average {os.getloadavg()[0]:.1f}")
        report("delete_session, images collected", a, b)


if __name__ == "__main__":
    main()
