"""Images as context: checked from their bytes, fitted to the APIs' limits, stored once by
content, counted in tokens by each API's rule.

An image is accepted only when its bytes say PNG, JPEG, GIF or WebP (a name or a claimed media
type is never trusted) and its dimensions can be read. One over the per-image limits every API
we speak shares (:data:`STORE_SIDE`, :data:`STORE_BYTES`) is downscaled on the way in (Pillow),
its record naming what it was (``original``); only what cannot be decoded is refused. Its bytes
go to a content-addressed blob directory (``<state>/images/<sha256[:2]>/<sha256>``): the same
picture attached in many turns, re-sent or carried into forks is one file. Nodes keep only the
:class:`ImagePart` record.

A provider reads the bytes back by hash from any registered blob directory (the name is the
content's hash, checked on read, so which directory holds it does not matter).
"""

from __future__ import annotations

import base64
import binascii
import contextvars
import hashlib
import io
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.core.filetypes import sniff
from openprogram_lsp.core.types import ImagePart, ImageSize

FORMATS = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 64 * 1024 * 1024
"""Largest image taken at all (read, decoded and downscaled when over a limit)."""
MAX_PIXELS = 89_478_485
"""Most pixels decoded (Pillow's decompression-bomb bound: ~360 MB of RGBA while scaling)."""
STORE_SIDE = 8000
"""Largest width or height stored (Anthropic and OpenAI take at most 8000 pixels a side)."""
STORE_BYTES = 5 * 1024 * 1024 * 3 // 4
"""Largest image stored (Anthropic's 5 MB of base64, the smaller of the two APIs' limits)."""
MAX_SIDE = STORE_SIDE

class ImageError(OpenProgramError):
    """An image that cannot be used: not one of the formats, or one that cannot be decoded."""

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


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.3g} MB"


_SAVE_AS = {"image/png": ("PNG", "image/png"), "image/jpeg": ("JPEG", "image/jpeg"),
            "image/webp": ("WEBP", "image/webp"), "image/gif": ("PNG", "image/png")}
"""How a downscaled image is written: its own format, a GIF as a PNG of its first frame (what
the models look at)."""


def downscale(data: bytes, mime: str, width: int, height: int, max_side: int,
              max_bytes: int) -> tuple[bytes, str, int, int]:
    """The image made to fit ``max_side`` pixels a side and ``max_bytes`` bytes (aspect ratio
    kept, EXIF orientation applied): its bytes, media type and dimensions. Each pass that is
    still too big shrinks by the square root of the overshoot (at most 8 passes); ImageError
    when the bytes cannot be decoded."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    if width * height > MAX_PIXELS:
        raise ImageError(f"the image is {width}x{height} pixels; more than "
                         f"{MAX_PIXELS // 1_000_000} megapixels cannot be decoded safely")
    fmt, out_mime = _SAVE_AS[mime]
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.load()
            im = ImageOps.exif_transpose(opened)
    except (OSError, ValueError, SyntaxError, UnidentifiedImageError,
            Image.DecompressionBombError) as exc:
        raise ImageError(f"the {mime} cannot be decoded ({exc})") from None
    keep = ("RGB", "L") if fmt == "JPEG" else ("RGB", "RGBA", "L", "LA")
    if im.mode not in keep:  # palette, CMYK, 16-bit: what resizing and the format take
        im = im.convert("RGB" if fmt == "JPEG" else "RGBA")
    w, h = im.size
    scale = min(1.0, max_side / max(w, h), math.sqrt(max_bytes / len(data)))
    for _ in range(8):
        size = (max(1, int(w * scale)), max(1, int(h * scale)))
        small = im.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0) \
            if size != (w, h) else im
        buf = io.BytesIO()
        small.save(buf, fmt, **({"quality": 85} if fmt in ("JPEG", "WEBP") else
                                {"compress_level": 6}))
        if buf.tell() <= max_bytes:
            return buf.getvalue(), out_mime, size[0], size[1]
        scale *= max(0.25, min(0.9, math.sqrt(max_bytes / buf.tell()) * 0.95))
    raise ImageError(f"the image could not be made smaller than {_mb(max_bytes)}")


def fit(data: bytes, max_side: int | None = None, max_bytes: int | None = None
        ) -> tuple[bytes, str, int, int, ImageSize | None]:
    """An image checked and, when over ``max_side`` or ``max_bytes`` (default: the stored
    limits), downscaled: its bytes, media type, dimensions and, when downscaled, what it was
    (ImageError: not an image, not decodable, or over :data:`MAX_IMAGE_BYTES` as given)."""
    max_side = max_side or STORE_SIDE
    max_bytes = max_bytes or STORE_BYTES
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(f"the image is {len(data):,} bytes; the limit is "
                         f"{MAX_IMAGE_BYTES // (1024 * 1024)} MB")
    mime, w, h = sniff_image(data)
    if len(data) <= max_bytes and max(w, h) <= max_side:
        return data, mime, w, h, None
    small, mime2, w2, h2 = downscale(data, mime, w, h, max_side, max_bytes)
    return small, mime2, w2, h2, ImageSize(width=w, height=h, size=len(data))


def downscaled_note(part: ImagePart) -> str | None:
    """One line telling the user an image was downscaled on the way in (None: it was not)."""
    o = part.original
    if o is None:
        return None
    return (f"image {part.name or part.sha256[:12]} ({o.width}x{o.height}, {_mb(o.size)}) was "
            f"downscaled to {part.width}x{part.height} ({_mb(part.size)}) to fit the models' "
            "limits")


def decode_base64(text: str, field: str) -> bytes:
    """Strict base64 (a ``data:`` URL prefix allowed); ImageError naming ``field`` otherwise."""
    if text.startswith("data:") and "," in text[:200]:
        text = text.split(",", 1)[1]
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError(f"{field}: not valid base64") from None


# --- tokens -----------------------------------------------------------------------------------
# Each API's documented rule (verified against their vision guides, December 2026):
# Anthropic: tokens = width*height/750, after scaling down an image whose long edge is over 1568
#   pixels or that would be over ~1,600 tokens (1,200,000 pixels), aspect kept; 1092x1092 is the
#   largest square sent as it is (~1,590 tokens).
# OpenAI (image_url parts, GPT-4o family): ``detail: low`` is 85 tokens; ``high`` (and ``auto``,
#   the default we send, counted as high) fits the image in 2048x2048, then scales it down so its
#   short side is at most 768, and counts 170 per 512-pixel tile plus 85 (1024x1024: 765;
#   2048x4096: 1,105).

ImageRule = Literal["anthropic", "openai", "any"]
image_rule: contextvars.ContextVar[ImageRule] = contextvars.ContextVar("image_rule",
                                                                      default="any")
"""Whose rule counts an image in the context budget: set for a turn once its provider is known
(``dispatcher/loop_runner``); ``any`` (the larger of the two) where it is not."""


def anthropic_tokens(width: int, height: int) -> int:
    """Anthropic's rule: width*height/750 (rounded up) after the scaling its guide describes."""
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_200_000 / (width * height)))
    return max(1, math.ceil(int(width * scale) * int(height * scale) / 750))


def openai_tokens(width: int, height: int, detail: str = "high") -> int:
    """OpenAI's rule for ``detail`` (low: 85; high or auto: 85 + 170 per 512-pixel tile after
    fitting in 2048x2048 and the short side scaled down to 768)."""
    if detail == "low":
        return 85
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    tiles = math.ceil(int(w) / 512) * math.ceil(int(h) / 512)
    return 85 + 170 * tiles


def rule_for(provider: str) -> ImageRule:
    """The token rule of a provider's API by its name (``any`` for the others)."""
    return provider if provider in ("anthropic", "openai") else "any"  # type: ignore[return-value]


def image_tokens(width: int, height: int, rule: ImageRule | None = None) -> int:
    """What an image counts in the context budget under ``rule`` (default: this turn's,
    :data:`image_rule`); ``any`` takes the larger of the two APIs' rules."""
    rule = rule or image_rule.get()
    if rule == "anthropic":
        return anthropic_tokens(width, height)
    if rule == "openai":
        return openai_tokens(width, height)
    return max(anthropic_tokens(width, height), openai_tokens(width, height))


class ImageBlobs:
    """The content-addressed image directory of one state root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        register(root)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes, name: str | None = None) -> ImagePart:
        """Check, fit (:func:`fit`) and store an image (once per content); its record. A blob
        already stored is touched: the collector keeps what was put recently, before a node
        names it."""
        data, mime, w, h, original = fit(data)
        return self.store(data, mime, w, h, name, original)

    def store(self, data: bytes, mime: str, w: int, h: int, name: str | None = None,
              original: ImageSize | None = None) -> ImagePart:
        """Store checked bytes under their hash; their record."""
        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        try:
            os.utime(target)
        except FileNotFoundError:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = target.with_name(f".{digest}.{os.getpid()}.{threading.get_ident()}")
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        return ImagePart(sha256=digest, media_type=mime, width=w, height=h, size=len(data),
                         name=name, original=original)

    def collect(self, used: set[str], *, grace: float) -> int:
        """Remove the blobs not in ``used`` and untouched for ``grace`` seconds (and temporary
        files a crashed write left); how many were removed. Each removal is one unlink, so a
        crash part way leaves only blobs the next collection removes."""
        cutoff = time.time() - grace
        removed = 0
        for shard in _entries(self.root):
            if len(shard.name) != 2 or not shard.is_dir(follow_symlinks=False):
                continue
            for blob in _entries(Path(shard.path)):
                if blob.name in used and not blob.name.startswith("."):
                    continue
                try:
                    if blob.stat(follow_symlinks=False).st_mtime >= cutoff:
                        continue
                    os.unlink(blob.path)
                    removed += 1
                except FileNotFoundError:
                    continue  # another process collected it first
                with _roots_lock:
                    _cache.pop(blob.name, None)
        return removed

    def count(self) -> int:
        """How many images are stored (a benchmark's and a test's figure)."""
        return sum(1 for p in self.root.glob("??/*") if not p.name.startswith("."))


def _entries(path: Path) -> Iterable[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []


_roots: list[Path] = []
_roots_lock = threading.Lock()
_cache: OrderedDict[str, str] = OrderedDict()  # sha256 -> base64, most recent last
_CACHE_BYTES = 64 * 1024 * 1024


def register(root: Path) -> None:
    """Make a blob directory one :func:`load_base64` looks in."""
    with _roots_lock:
        if root not in _roots:
            _roots.append(root)


def _read(sha256: str) -> tuple[bytes, Path]:
    """An image's bytes by hash (checked) and the blob directory holding them."""
    with _roots_lock:
        roots = list(_roots)
    for root in roots:
        try:
            data = (root / sha256[:2] / sha256).read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == sha256:
            return data, root
    raise ImageError(f"image {sha256[:12]} is no longer in the session store")


def load_base64(sha256: str) -> str:
    """An image's bytes as base64, by hash (checked), from the registered blob directories;
    recently used ones are kept (a request carries the whole history's images every call)."""
    with _roots_lock:
        hit = _cache.get(sha256)
        if hit is not None:
            _cache.move_to_end(sha256)
            return hit
    text = base64.b64encode(_read(sha256)[0]).decode("ascii")
    with _roots_lock:
        _cache[sha256] = text
        while sum(map(len, _cache.values())) > _CACHE_BYTES and len(_cache) > 1:
            _cache.popitem(last=False)
    return text


_fitted: dict[tuple[str, int, int], ImagePart] = {}


def is_fitted(part: ImagePart, max_side: int, max_bytes: int) -> bool:
    """Whether :func:`fitted` would answer at once: ``part`` is within the limits, or its copy
    for them is made and still stored."""
    if part.size <= max_bytes and max(part.width, part.height) <= max_side:
        return True
    with _roots_lock:
        hit = _fitted.get((part.sha256, max_side, max_bytes))
        roots = list(_roots)
    return hit is not None and any((r / hit.sha256[:2] / hit.sha256).exists() for r in roots)


def fitted(part: ImagePart, max_side: int, max_bytes: int) -> ImagePart:
    """``part`` when it is within ``max_side`` pixels a side and ``max_bytes``, else a
    downscaled copy stored beside it under its own hash (the same bytes every time, so a
    request's prefix stays cacheable; remembered, and made again once collected)."""
    if part.size <= max_bytes and max(part.width, part.height) <= max_side:
        return part
    key = (part.sha256, max_side, max_bytes)
    hit = _fitted.get(key) if is_fitted(part, max_side, max_bytes) else None
    if hit is not None:
        return hit
    data, root = _read(part.sha256)
    small, mime, w, h = downscale(data, part.media_type, part.width, part.height, max_side,
                                  max_bytes)
    out = ImageBlobs(root).store(small, mime, w, h, part.name, part.original or ImageSize(
        width=part.width, height=part.height, size=part.size))
    with _roots_lock:
        if len(_fitted) >= 1024:
            _fitted.clear()
        _fitted[key] = out
    return out
