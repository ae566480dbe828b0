"""Id lists as runs of chain positions."""

from __future__ import annotations

import random

from openprogram_lsp.core.ranges import count_ranges, decode_ranges, encode_ranges


def test_ranges_round_trip_and_count() -> None:
    rng = random.Random(7)
    chain = [f"n{i}" for i in range(300)]
    pos = {nid: i for i, nid in enumerate(chain)}
    for _ in range(200):
        ids = sorted(rng.sample(chain, rng.randint(0, 60)), key=pos.__getitem__)
        if rng.random() < 0.5:
            ids.insert(0, "sum_x")  # off the chain: kept as an id
        enc = encode_ranges(ids, pos)
        assert decode_ranges(enc, chain) == ids
        assert count_ranges(enc) == len(ids)
    assert encode_ranges(chain[10:200], pos) == [[10, 199]]
