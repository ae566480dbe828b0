"""Images in a request: each API's limits, met before the call (an image over them is sent
downscaled), and the refusal of a model that does not take images (the model table's
``images``), before any HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TypeVar

from openprogram_lsp.core.errors import ProviderError
from openprogram_lsp.core.images import ImageError, fitted, is_fitted
from openprogram_lsp.core.types import ImagePart, Message

T = TypeVar("T")

OMITTED = "[image {name} not shown: this model does not take images]"
"""What a model that does not see is told in place of an image of the earlier history."""


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """What one API accepts (from its documentation, December 2026)."""

    max_bytes: int  # one image, before base64
    max_side: int  # pixels, width or height
    max_count: int  # images in one request
    max_total: int  # all images of one request, before base64
    many: int = 0  # over this many images in a request ...
    many_side: int = 0  # ... each side must be at most this


ANTHROPIC = ImageLimits(max_bytes=5 * 1024 * 1024 * 3 // 4, max_side=8000, max_count=100,
                        max_total=24 * 1024 * 1024, many=20, many_side=2000)
"""Anthropic: 5 MB of base64 per image, 8000 pixels a side (2000 over 20 images), 100 images;
a request body is limited to 32 MB."""
OPENAI = ImageLimits(max_bytes=20 * 1024 * 1024, max_side=8000, max_count=500,
                     max_total=36 * 1024 * 1024)
"""OpenAI: 20 MB per image, 500 images and 50 MB of request body (base64 included)."""


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.3g} MB"


def check_images(messages: Sequence[Message], *, provider: str, model: str, sees: bool,
                 limits: ImageLimits) -> tuple[bool, Sequence[Message]]:
    """Whether the request carries images (``sees`` true) and the messages to send: an image
    over the API's limits (pixels a side, bytes, the request's total) is sent as a downscaled
    copy (``core.images.fitted``: stored once, the same bytes every call). One clear line is
    raised instead when the newest user message has images and the model does not take them,
    or when an image cannot be decoded. Images of the earlier history are left out, a note in
    place of each, for a model that does not see, and the oldest ones beyond the number of
    images the API takes in a request."""
    parts: list[ImagePart] = [i for m in messages for i in m.images]
    if not parts:
        return False, messages
    if not sees:
        last = next((m for m in reversed(messages) if m.role == "user"), None)
        if last is not None and last.images:
            raise ProviderError(f"{model} does not take images (the model table says so); "
                                "choose a model that sees, or send the message without them",
                                provider=provider)
        return False, messages
    messages, parts, side, most = _within_count(messages, parts, limits)
    if all(i.size <= most and max(i.width, i.height) <= side for i in parts):
        return True, messages
    out: list[Message] = []
    for m in messages:
        if not m.images:
            out.append(m)
            continue
        try:
            fitted_parts = [fitted(i, side, most) for i in m.images]
        except ImageError as exc:
            raise ProviderError(f"an image of the conversation cannot be sent: {exc.message}",
                                provider=provider) from None
        out.append(m.model_copy(update={"images": fitted_parts}))
    return True, out


def _within_count(messages: Sequence[Message], parts: list[ImagePart], limits: ImageLimits
                  ) -> tuple[Sequence[Message], list[ImagePart], int, int]:
    """The messages and images a request keeps (the oldest over the API's count left out), and
    the pixels a side and bytes each image may have in it."""
    if len(parts) > limits.max_count:
        messages = _oldest_left_out(messages, len(parts) - limits.max_count, limits.max_count)
        parts = [i for m in messages for i in m.images]
    side = limits.many_side if limits.many and len(parts) > limits.many else limits.max_side
    most = limits.max_bytes
    if sum(i.size for i in parts) > limits.max_total:  # each its share of the request
        most = min(most, limits.max_total // len(parts))
    return messages, parts, side, most


def fitted_ahead(messages: Sequence[Message], *, sees: bool, limits: ImageLimits,
                 then: Callable[[], AsyncIterator[T]]) -> AsyncIterator[T] | None:
    """When the request needs downscaled copies not made yet: an iterator that makes them in a
    thread (a screenshot takes up to a second; many at once would hold the event loop), then
    yields what ``then()`` yields (the request built again, from the copies now ready). None
    when there is nothing to make."""
    parts = [i for m in messages for i in m.images]
    if not sees or not parts:
        return None
    _, parts, side, most = _within_count(messages, parts, limits)
    todo = [i for i in parts if not is_fitted(i, side, most)]
    if not todo:
        return None

    async def run() -> AsyncIterator[T]:
        def make() -> None:
            for i in todo:
                with suppress(ImageError):  # said in one line when the request is built
                    fitted(i, side, most)
        await asyncio.to_thread(make)
        async for ev in then():
            yield ev
    return run()


OVER = "[image {name} not shown: a request takes at most {count} images, and newer ones follow]"
"""What the model is told in place of an old image left out of a request with too many."""


def _oldest_left_out(messages: Sequence[Message], extra: int, count: int) -> list[Message]:
    """``messages`` without their ``extra`` oldest images, a note in place of each."""
    out: list[Message] = []
    for m in messages:
        if extra <= 0 or not m.images:
            out.append(m)
            continue
        gone, kept = m.images[:extra], m.images[extra:]
        extra -= len(gone)
        notes = [OVER.format(name=i.name or i.sha256[:12], count=count) for i in gone]
        out.append(m.model_copy(update={"images": kept,
                                        "content": "\n".join(filter(None, [m.content, *notes]))}))
    return out


def omitted(m: Message) -> str:
    """A message's text with a note for each image a model that does not see is not shown."""
    notes = [OMITTED.format(name=i.name or i.sha256[:12]) for i in m.images]
    return "\n".join([m.content, *notes]) if m.content else "\n".join(notes)
