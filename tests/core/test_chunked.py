"""Chunked: versions share their chunks, and each stays what it was."""

from __future__ import annotations

import random

import pytest

from openprogram_lsp.core.chunked import CHUNK, Chunked, chunked


def test_versions_built_by_plus_and_head_equal_plain_lists() -> None:
    rng = random.Random(5)
    versions: list[tuple[Chunked[int], list[int]]] = [(Chunked(), [])]
    for _ in range(300):
        seq, plain = rng.choice(versions)
        if plain and rng.random() < 0.3:
            n = rng.randint(0, len(plain))
            seq, plain = seq.head(n), plain[:n]
        else:
            more = [rng.randint(0, 99) for _ in range(rng.choice([0, 1, 3, CHUNK + 5]))]
            seq, plain = seq.plus(more), plain + more
        versions.append((seq, plain))
    for seq, plain in versions:  # every earlier version is unchanged
        assert list(seq) == plain and len(seq) == len(plain) and seq == plain
        assert list(reversed(seq)) == plain[::-1]
        if plain:
            k = rng.randrange(len(plain))
            assert seq[k] == plain[k] and seq[-1] == plain[-1] == seq.last
            assert seq[k:] == plain[k:] and seq[:k] == plain[:k] and seq[::2] == plain[::2]


def test_edges() -> None:
    seq = Chunked(range(2 * CHUNK + 1))
    assert seq.plus([]) is seq and seq.head(len(seq)) is seq and not seq.head(0)
    assert seq.head(CHUNK) == list(range(CHUNK)) and seq.head(CHUNK).plus([7])[-1] == 7
    with pytest.raises(IndexError):
        seq[len(seq)]
    with pytest.raises(IndexError):
        _ = Chunked().last
    assert chunked(seq) is seq and chunked([1, 2]) == [1, 2] and seq != "text"
    assert repr(Chunked([1])) == "Chunked(1 items)"


def test_replaced_copies_only_the_chunks_it_changes() -> None:
    rng = random.Random(8)
    plain = list(range(3 * CHUNK + 10))
    seq = Chunked(plain)
    for _ in range(20):
        changes = {rng.randrange(len(plain)): -rng.randint(1, 9) for _ in range(rng.randint(0, 3))}
        out = seq.replaced(changes)
        want = list(plain)
        for i, v in changes.items():
            want[i] = v
        assert list(out) == want and list(seq) == plain  # the old version is unchanged
        hit = {i >> 8 for i in changes}
        for q, chunk in enumerate(out.chunks()):
            assert (chunk is seq.chunks()[q]) == (q not in hit)
        assert out.same_prefix(seq, len(seq)) == min(changes, default=len(seq))
    assert seq.replaced({}) is seq
    with pytest.raises(IndexError):
        seq.replaced({len(seq): 0})


def test_same_prefix_counts_the_very_objects() -> None:
    items = [object() for _ in range(2 * CHUNK + 3)]
    seq = Chunked(items)
    assert seq.same_prefix(seq.head(CHUNK + 1).plus(items[CHUNK + 1:]), 10**6) == len(items)
    assert seq.same_prefix(Chunked(items), 5) == 5  # equal items in other chunks count too
    assert seq.same_prefix(seq.plus([object()]), 10**6) == len(items)
    other = seq.head(CHUNK + 2).plus([object()])
    assert seq.same_prefix(other, 10**6) == CHUNK + 2 and seq.tail == tuple(items[2 * CHUNK:])
