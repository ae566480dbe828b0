"""Images as context: checked from their bytes, stored once by content, counted in tokens.

An image is accepted only when its bytes say PNG, JPEG, GIF or WebP (a name or a claimed media
type is never trusted) and its dimensions can be read. Its bytes go to a content-addressed blob
directory (``<state>/images/<sha256[:2]>/<sha256>``): the same picture attached in many turns,
re-sent or carried into forks is one file. Nodes keep only the :class:`ImagePart` record.

A provider reads the bytes back by hash from any registered blob directory (the name is the
content's hash, checked on read, so which directory holds it does not matter).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path

from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.core.filetypes import sniff
from openprogram_lsp.core.types import ImagePart

FORMATS = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 20 * 1024 * 1024
"""Largest image accepted at all (OpenAI's per-image limit); providers may allow less."""
MAX_SIDE = 8000
"""Largest width or height accepted (Anthropic refuses more than 8000 pixels a side)."""


class ImageError(OpenProgramError):
    """An image that cannot be used: not one of the formats, unreadable, or too large."""

    code = -32602


def sniff_image(data: bytes) -> tuple[str, int, int]:
    """The media type and dimensions of an image from its bytes; ImageError otherwise."""
    kind = sniff(data[:64 * 1024])
    if kind is None or kind.mime not in FORMATS:
        what = kind.mime if kind is not None else "text"
        raise ImageError(f"not a PNG, JPEG, GIF or WebP image (its bytes say {what})")
    if not kind.width or not kind.height:
        raise ImageError(f"a {kind.mime} whose dimensions cannot be read (truncated or damaged)")
    return kind.mime, kind.width, kind.height


def check(data: bytes) -> tuple[str, int, int]:
    """:func:`sniff_image` plus the limits every provider shares (bytes, pixels a side)."""
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(f"the image is {len(data):,} bytes; the limit is "
                         f"{MAX_IMAGE_BYTES // (1024 * 1024)} MB")
    mime, w, h = sniff_image(data)
    if w > MAX_SIDE or h > MAX_SIDE:
        raise ImageError(f"the image is {w}x{h} pixels; the limit is {MAX_SIDE} pixels a side")
    return mime, w, h


def decode_base64(text: str, field: str) -> bytes:
    """Strict base64 (a ``data:`` URL prefix allowed); ImageError naming ``field`` otherwise."""
    if text.startswith("data:") and "," in text[:200]:
        text = text.split(",", 1)[1]
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError(f"{field}: not valid base64") from None


def anthropic_tokens(width: int, height: int) -> int:
    """Anthropic's rule: about width*height/750, after scaling the long side to 1568 pixels."""
    scale = min(1.0, 1568 / max(width, height), (1_150_000 / (width * height)) ** 0.5)
    return max(1, int(width * scale) * int(height * scale) // 750)


def openai_tokens(width: int, height: int) -> int:
    """OpenAI's high-detail rule: fit in 2048x2048, short side to 768, 170 per 512-pixel tile
    plus 85."""
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    tiles = -(-int(w) // 512) * -(-int(h) // 512)
    return 85 + 170 * tiles


def image_tokens(width: int, height: int) -> int:
    """What an image counts in the context budget: the larger of the two providers' rules
    (the budget is kept before the model's API is known to the renderer)."""
    return max(anthropic_tokens(width, height), openai_tokens(width, height))


class ImageBlobs:
    """The content-addressed image directory of one state root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        register(root)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes, name: str | None = None) -> ImagePart:
        """Check and store an image (once per content); its record."""
        mime, w, h = check(data)
        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = target.with_name(f".{digest}.{os.getpid()}.{threading.get_ident()}")
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        return ImagePart(sha256=digest, media_type=mime, width=w, height=h, size=len(data),
                         name=name)

    def count(self) -> int:
        """How many images are stored (a benchmark's and a test's figure)."""
        return sum(1 for p in self.root.glob("??/*") if not p.name.startswith("."))


_roots: list[Path] = []
_roots_lock = threading.Lock()
_cache: OrderedDict[str, str] = OrderedDict()  # sha256 -> base64, most recent last
_CACHE_BYTES = 64 * 1024 * 1024


def register(root: Path) -> None:
    """Make a blob directory one :func:`load_base64` looks in."""
    with _roots_lock:
        if root not in _roots:
            _roots.append(root)


def load_base64(sha256: str) -> str:
    """An image's bytes as base64, by hash (checked), from the registered blob directories;
    recently used ones are kept (a request carries the whole history's images every call)."""
    with _roots_lock:
        hit = _cache.get(sha256)
        if hit is not None:
            _cache.move_to_end(sha256)
            return hit
        roots = list(_roots)
    for root in roots:
        try:
            data = (root / sha256[:2] / sha256).read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() != sha256:
            continue
        text = base64.b64encode(data).decode("ascii")
        with _roots_lock:
            _cache[sha256] = text
            while sum(map(len, _cache.values())) > _CACHE_BYTES and len(_cache) > 1:
                _cache.popitem(last=False)
        return text
    raise ImageError(f"image {sha256[:12]} is no longer in the session store")
