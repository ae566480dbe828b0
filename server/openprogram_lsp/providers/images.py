"""Images in a request: each API's limits, checked before the call, and the refusal of a
model that does not take images (the model table's ``images``), before any HTTP."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openprogram_lsp.core.errors import ProviderError
from openprogram_lsp.core.types import ImagePart, Message

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
                 limits: ImageLimits) -> bool:
    """Whether the request carries images (``sees`` true), else raise one clear line: the
    newest user message has images and the model does not take them, or an image is over the
    API's limits. Images of the earlier history are left out for a model that does not see."""
    parts: list[ImagePart] = [i for m in messages for i in m.images]
    if not parts:
        return False
    if not sees:
        last = next((m for m in reversed(messages) if m.role == "user"), None)
        if last is not None and last.images:
            raise ProviderError(f"{model} does not take images (the model table says so); "
                                "choose a model that sees, or send the message without them",
                                provider=provider)
        return False
    many = limits.many and len(parts) > limits.many
    for i in parts:
        label = i.name or i.sha256[:12]
        side = limits.many_side if many else limits.max_side
        if i.size > limits.max_bytes:
            raise ProviderError(f"image {label} is {_mb(i.size)}; {model} takes images up to "
                                f"{_mb(limits.max_bytes)}", provider=provider)
        if max(i.width, i.height) > side:
            extra = f" when a request has over {limits.many} images" if many else ""
            raise ProviderError(f"image {label} is {i.width}x{i.height} pixels; {model} takes "
                                f"at most {side} pixels a side{extra}", provider=provider)
    if len(parts) > limits.max_count:
        raise ProviderError(f"the conversation has {len(parts)} images; {model} takes at most "
                            f"{limits.max_count} in a request (fork before the older ones)",
                            provider=provider)
    total = sum(i.size for i in parts)
    if total > limits.max_total:
        raise ProviderError(f"the conversation's images add up to {_mb(total)}; {model} takes "
                            f"at most {_mb(limits.max_total)} in a request (fork before the "
                            "older ones)", provider=provider)
    return True


def omitted(m: Message) -> str:
    """A message's text with a note for each image a model that does not see is not shown."""
    notes = [OMITTED.format(name=i.name or i.sha256[:12]) for i in m.images]
    return "\n".join([m.content, *notes]) if m.content else "\n".join(notes)
