"""Retention after a turn: off the turn's path, one prune at a time per store, and never a
request lost while one runs."""

from __future__ import annotations

import threading

from openprogram_lsp.dispatcher.finalize import prune_later, wait_for_retention


class _Store:
    """A checkpointer whose first prune waits until released."""

    def __init__(self) -> None:
        self.calls: list[set[str]] = []
        self.running = threading.Event()
        self.release = threading.Event()

    def prune_if_due(self, keep: object) -> list[str]:
        assert callable(keep)
        self.calls.append(keep())
        if len(self.calls) == 1:
            self.running.set()
            assert self.release.wait(10)
        return []


def test_a_prune_asked_while_one_runs_runs_once_more_after_it() -> None:
    store = _Store()
    prune_later(store, lambda: {"a"})  # type: ignore[arg-type]
    assert store.running.wait(10)
    prune_later(store, lambda: {"b"})  # type: ignore[arg-type]
    prune_later(store, lambda: {"c"})  # type: ignore[arg-type]  # two asks: one more prune
    store.release.set()
    wait_for_retention()
    assert store.calls == [{"a"}, {"c"}]
    prune_later(store, lambda: {"d"})  # type: ignore[arg-type]
    wait_for_retention()
    assert store.calls == [{"a"}, {"c"}, {"d"}]
