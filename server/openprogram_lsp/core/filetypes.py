"""What a file that is not text is, from its first bytes: an image's format and dimensions, a
few well-known formats by their magic numbers, or "binary" (a NUL in the head)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

HEAD_BYTES = 64 * 1024  # enough to find a JPEG's frame header after its usual metadata


@dataclass(frozen=True, slots=True)
class Binary:
    """A file that is not text: its media type and, for an image, its size in pixels."""

    mime: str
    width: int | None = None
    height: int | None = None

    @property
    def is_image(self) -> bool:
        return self.mime.startswith("image/")

    def describe(self, size: int) -> str:
        """One line for the model, e.g. ``PNG image, 640x480 pixels, 12,345 bytes``."""
        name = self.mime.split("/", 1)[1].upper() if self.is_image else self.mime
        what = f"{name} image" if self.is_image else f"binary file ({name})"
        dims = f", {self.width}x{self.height} pixels" if self.width and self.height else ""
        return f"{what}{dims}, {size:,} bytes"


_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "application/pdf"), (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"), (b"\x7fELF", "application/x-elf"),
    (b"\xfd7zXZ\x00", "application/x-xz"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"SQLite format 3\x00", "application/vnd.sqlite3"), (b"\x00asm", "application/wasm"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
)
_BMP_HEADERS = (12, 40, 52, 56, 64, 108, 124)  # a BMP's info-header sizes


def _png(head: bytes) -> Binary:
    if len(head) >= 24 and head[12:16] == b"IHDR":
        w, h = struct.unpack(">II", head[16:24])
        return Binary("image/png", w, h)
    return Binary("image/png")


def _gif(head: bytes) -> Binary:
    if len(head) >= 10:
        w, h = struct.unpack("<HH", head[6:10])
        return Binary("image/gif", w, h)
    return Binary("image/gif")


def _webp(head: bytes) -> Binary:
    chunk = head[12:16]
    try:
        if chunk == b"VP8X":
            w = int.from_bytes(head[24:27], "little") + 1
            h = int.from_bytes(head[27:30], "little") + 1
            return Binary("image/webp", w, h)
        if chunk == b"VP8L" and head[20] == 0x2F:
            bits = int.from_bytes(head[21:25], "little")
            return Binary("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        if chunk == b"VP8 ":
            w, h = struct.unpack("<HH", head[26:30])
            return Binary("image/webp", w & 0x3FFF, h & 0x3FFF)
    except (IndexError, struct.error):
        pass
    return Binary("image/webp")


_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg(head: bytes) -> Binary:
    """Walk the segments to the first start-of-frame, which holds the dimensions."""
    i = 2
    while i + 9 <= len(head):
        if head[i] != 0xFF:
            break
        marker = head[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", head[i + 2:i + 4])[0]
        if marker in _SOF:
            h, w = struct.unpack(">HH", head[i + 5:i + 9])
            return Binary("image/jpeg", w, h)
        i += 2 + length
    return Binary("image/jpeg")


def sniff(head: bytes) -> Binary | None:
    """The kind of a file from its first bytes, or None when it looks like text."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return _png(head)
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return _gif(head)
    if head.startswith(b"\xff\xd8\xff"):
        return _jpeg(head)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp(head)
    if head[:2] == b"BM" and len(head) >= 26 \
            and struct.unpack("<I", head[14:18])[0] in _BMP_HEADERS:  # not text that says "BM"
        w, h = struct.unpack("<ii", head[18:26])
        return Binary("image/bmp", w, abs(h))
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return Binary(mime)
    if b"\x00" in head[:8192]:
        return Binary("application/octet-stream")
    return None
