"""Session store: get_branch on a 10,000-node chain (<= 5 ms); index rebuild (<= 1 s)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import interleaved, report
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.index import SessionIndex
from openprogram_lsp.store.session_store import SessionStore

N = 10_000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp))
        sid = store.create_session()
        pred = None
        t0 = time.perf_counter()
        for i in range(N):
            role = "user" if i % 2 == 0 else "assistant"
            pred = store.append(sid, Node(id=f"n{i}", role=role, text=f"message {i} " * 8,
                                          predecessor=pred), advance_head=i == N - 1).id
        build = time.perf_counter() - t0
        store.commit_turn(sid, "bench")
        report(f"append {N} nodes (setup)", build, unit="s")
        chain_len = len(store.get_branch(sid))
        assert chain_len == N
        links = {n.id: n.predecessor for n in store.index(sid).nodes.values()}
        head = store.head(sid)

        def bare_walk() -> list[str]:
            out, cur = [], head
            while cur is not None:
                out.append(cur)
                cur = links[cur]
            out.reverse()
            return out

        figure, baseline = interleaved(lambda: store.get_branch(sid), bare_walk, pairs=15)
        report(f"get_branch on a {N}-node chain", figure, baseline,
               target="<= 5 ms; baseline = bare dict walk")
        root = store.session_dir(sid)
        rebuild, listing = interleaved(lambda: SessionIndex.load(root), lambda: [
            p.read_bytes() for p in (root / "nodes").rglob("*.json")], pairs=7)
        report(f"rebuild index of {N} nodes from disk", rebuild, listing,
               target="<= 1000 ms; baseline = reading the files")


if __name__ == "__main__":
    main()
