"""The ACP outbox: a fast text stream goes out as one chunk per interval, in order, exact."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from openprogram_lsp.acp.outbox import Outbox


async def test_a_fast_stream_is_joined_and_keeps_its_order() -> None:
    outbox = Outbox(asyncio.get_running_loop())
    outbox.start()
    sent: list[str] = []

    def make(text: str) -> Callable[[], Awaitable[None]]:
        async def send() -> None:
            sent.append(text)
        return send

    async def mark() -> None:
        sent.append("<tool>")

    pieces = [f"{i} é " for i in range(1000)]
    for n, piece in enumerate(pieces):
        outbox.put_text("s", piece, make)
        if n == 500:
            outbox.put(mark)
        await asyncio.sleep(0)
    await outbox.flush()
    await outbox.close()
    cut = sent.index("<tool>")
    assert "".join(sent[:cut]) == "".join(pieces[:501])
    assert "".join(sent[cut + 1:]) == "".join(pieces[501:])
    assert len(sent) < 100, len(sent)


async def test_a_flush_sends_waiting_text_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text waits for more of its stream only until someone flushes (a prompt's response, a
    permission request): the turn's last words never hold its answer back."""
    monkeypatch.setattr("openprogram_lsp.acp.outbox.INTERVAL", 600.0)
    outbox = Outbox(asyncio.get_running_loop())
    outbox.start()
    sent: list[str] = []

    def make(text: str) -> Callable[[], Awaitable[None]]:
        async def send() -> None:
            sent.append(text)
        return send

    for done in range(2):  # and again after the first flush: text joins and waits as before
        outbox.put_text("s", "last ", make)
        outbox.put_text("s", "words", make)
        await asyncio.sleep(0.01)
        assert sent == ["last words"] * done  # still waiting for more of its stream
        await outbox.flush(timeout=20)
    await outbox.close()
    assert sent == ["last words", "last words"]
