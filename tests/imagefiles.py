"""Small real image files for tests: a valid PNG of any size (zlib rows), and the headers of
GIF, JPEG and WebP files as their formats define them."""

from __future__ import annotations

import random
import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png_header(width: int, height: int) -> bytes:
    """A PNG's first 33 bytes: the signature and an 8-bit greyscale IHDR of this size (a file
    that claims the size without the cost of pixels)."""
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0,
                                                                 0, 0, 0))


def png(width: int = 4, height: int = 3, seed: int = 0, noise: bool = False) -> bytes:
    """A valid greyscale PNG; ``seed`` changes its pixels (so its hash); with ``noise`` they
    are pseudo-random from the seed (a photo-like size, not a gradient's)."""
    if noise:
        rng = random.Random(seed)
        rows = b"".join(b"\x00" + rng.randbytes(width) for _ in range(height))
    else:
        rows = b"".join(b"\x00" + bytes((seed + x + y) % 256 for x in range(width))
                        for y in range(height))
    return (png_header(width, height) + _chunk(b"IDAT", zlib.compress(rows))
            + _chunk(b"IEND", b""))


def gif(width: int = 2, height: int = 2) -> bytes:
    """A GIF89a: header, screen descriptor, one black pixel image, trailer."""
    return (b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\x00" * 6
            + b",\x00\x00\x00\x00" + struct.pack("<HH", width, height) + b"\x00\x02\x02D\x01\x00;")


def jpeg(width: int = 5, height: int = 7) -> bytes:
    """A JPEG's markers up to its frame header (SOI, APP0, SOF0), then EOI."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def webp(width: int = 9, height: int = 6) -> bytes:
    """A WebP with a VP8X header naming its canvas size."""
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00" \
        + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x
