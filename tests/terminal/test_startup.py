"""``terminal.startup.start_up``: the collector is paused for the block and resumed after it,
whatever the block did, with the block's garbage freed and the rest frozen."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from openprogram_lsp.terminal.startup import start_up


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


@pytest.fixture(autouse=True)
def _unfreeze() -> Iterator[None]:
    yield
    gc.unfreeze()  # the test process's objects go back to the oldest generation
    gc.enable()


def test_the_collector_is_paused_inside_then_resumed_with_the_garbage_freed() -> None:
    frozen = gc.get_freeze_count()
    with start_up():
        assert not gc.isenabled()
        kept = Node()
        dropped = weakref.ref(Node())  # garbage made during the start
        assert dropped() is not None  # not collected while paused
    assert gc.isenabled()
    assert dropped() is None  # collected once at the end
    assert gc.get_freeze_count() > frozen  # what the start made and kept is frozen
    assert kept.me is kept


def test_an_error_in_the_block_still_resumes_the_collector() -> None:
    with pytest.raises(RuntimeError), start_up():
        raise RuntimeError("bad workspace")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off_and_nothing_is_frozen() -> None:
    gc.disable()
    frozen = gc.get_freeze_count()
    with start_up():
        pass
    assert not gc.isenabled()
    assert gc.get_freeze_count() == frozen
