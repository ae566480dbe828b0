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
