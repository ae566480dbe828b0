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


def test_retention_runs_on_one_long_lived_thread() -> None:
    idents: set[int | None] = set()

    class _Seen(_Store):
        def prune_if_due(self, keep: object) -> list[str]:
            idents.add(threading.current_thread().ident)
            return super().prune_if_due(keep)

    seen = _Seen()
    seen.release.set()
    for n in range(5):  # a request per turn: no thread started per turn
        prune_later(seen, lambda n=n: {str(n)})  # type: ignore[arg-type,misc]
        wait_for_retention()
    assert len(idents) == 1 and len(seen.calls) == 5
    workers = [t for t in threading.enumerate() if t.name == "checkpoint retention"]
    assert len(workers) == 1 and workers[0].daemon  # the exit waits for it (atexit), not a join
