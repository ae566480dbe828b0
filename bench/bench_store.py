"""Session store on a 10,000-node session, each figure beside a baseline timed A B A B:

- ``get_branch`` of the whole chain, bodies in memory (<= 5 ms) vs a bare dict walk;
- opening the session's index from its node log vs reading every node file;
- rebuilding the index from the node files alone (``SessionIndex.scan``, <= 1 s) vs reading them.
"""

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
        def read_files() -> list[bytes]:
            return [p.read_bytes() for p in (root / "nodes").rglob("*.json")]

        opened, listing = interleaved(lambda: SessionIndex.load(root), read_files, pairs=7)
        report(f"open the index of {N} nodes (node log)", opened, listing,
               target="baseline = reading every node file")
        rebuild, listing = interleaved(lambda: SessionIndex.scan(root), read_files, pairs=7)
        report(f"rebuild the index of {N} nodes from the files", rebuild, listing,
               target="<= 1000 ms; baseline = reading the files")


if __name__ == "__main__":
    main()
