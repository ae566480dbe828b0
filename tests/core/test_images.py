"""Images fitted to the APIs' limits (real Pillow decoding), each API's token rule against the
examples of its documentation, and the collection of blobs no session names."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest
from PIL import Image
from tests.imagefiles import png, png_header

from openprogram_lsp.core import images
from openprogram_lsp.core.images import (
    ImageBlobs,
    ImageError,
    anthropic_tokens,
    fit,
    fitted,
    image_rule,
    image_tokens,
    openai_tokens,
)


def _encode(im: Image.Image, fmt: str, **kw: object) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def _photo(w: int, h: int, fmt: str) -> bytes:
    """A noisy picture (so its bytes do not shrink to nothing) in ``fmt``."""
    im = Image.frombytes("RGB", (w, h), os.urandom(w * h * 3))
    return _encode(im, fmt, **({"quality": 95} if fmt in ("JPEG", "WEBP") else {}))


@pytest.mark.parametrize(("fmt", "mime"), [("PNG", "image/png"), ("JPEG", "image/jpeg"),
                                           ("WEBP", "image/webp"), ("GIF", "image/png")])
def test_an_image_over_the_side_limit_is_downscaled_in_its_own_format(fmt: str,
                                                                      mime: str) -> None:
    data = _photo(300, 120, fmt)
    out, got, w, h, original = fit(data, max_side=100, max_bytes=len(data) * 2)
    assert (got, w, h) == (mime, 100, 40)  # aspect kept; a GIF becomes a PNG of its frame
    assert original is not None and (original.width, original.height) == (300, 120)
    with Image.open(io.BytesIO(out)) as im:  # decodable, and what the record says
        assert im.size == (100, 40) and Image.MIME[im.format or ""] == mime


def test_an_image_over_the_byte_limit_shrinks_until_it_fits() -> None:
    data = _photo(400, 300, "PNG")
    out, mime, w, h, original = fit(data, max_side=8000, max_bytes=len(data) // 4)
    assert len(out) <= len(data) // 4 and mime == "image/png"
    assert w < 400 and abs(w / h - 4 / 3) < 0.02
    assert original is not None and original.size == len(data)


def test_an_image_within_the_limits_is_kept_byte_for_byte() -> None:
    data = png(40, 30)
    assert fit(data) == (data, "image/png", 40, 30, None)


def test_exif_orientation_is_applied_before_scaling() -> None:
    im = Image.frombytes("RGB", (200, 100), os.urandom(200 * 100 * 3))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotated 90 degrees: shown 100 wide, 200 high
    data = _encode(im, "JPEG", exif=exif)
    _out, _mime, w, h, _ = fit(data, max_side=50, max_bytes=10**7)
    assert (w, h) == (25, 50)


def test_what_cannot_be_decoded_is_refused_in_one_line() -> None:
    header_only = png_header(3000, 3000) + b"\x00" * 5000  # IHDR says 3000x3000, no pixels
    with pytest.raises(ImageError, match="cannot be decoded") as err:
        fit(header_only, max_side=100)
    assert "\n" not in err.value.message
    with pytest.raises(ImageError, match="megapixels"):  # never decoded at all
        fit(png_header(20000, 20000), max_side=100)


def test_token_rules_match_the_documented_examples() -> None:
    # Anthropic's vision guide: ~54 tokens for 200x200, ~1,334 for 1000x1000, 1092x1092 the
    # largest square sent as it is (~1,590); larger ones are scaled down first
    assert [anthropic_tokens(s, s) for s in (200, 1000, 1092)] == [54, 1334, 1590]
    assert anthropic_tokens(4000, 4000) == anthropic_tokens(1095, 1095)
    assert anthropic_tokens(3000, 1000) <= 1600  # the long edge over 1568 is scaled
    # OpenAI's vision guide: 1024x1024 high is 765, 2048x4096 high is 1,105, low is 85
    assert openai_tokens(1024, 1024) == 765
    assert openai_tokens(2048, 4096) == 1105
    assert openai_tokens(4096, 8192, "low") == 85
    assert openai_tokens(500, 500) == 255  # small images are not scaled up


def test_the_budget_counts_by_this_turns_rule() -> None:
    assert image_tokens(1000, 1000) == 1334  # no rule known: the larger of the two
    token = image_rule.set("openai")
    try:
        assert image_tokens(1000, 1000) == 765
    finally:
        image_rule.reset(token)
    assert image_tokens(1000, 1000, "anthropic") == 1334


def test_a_fitted_copy_is_stored_once_and_made_again_after_collection(tmp_path: Path) -> None:
    blobs = ImageBlobs(tmp_path / "images")
    part = blobs.put(_photo(300, 200, "PNG"), "wide.png")
    small = fitted(part, 150, 10**7)
    assert (small.width, small.height, small.name) == (150, 100, "wide.png")
    assert small.original is not None and small.original.width == 300
    assert fitted(part, 150, 10**7) == small and blobs.count() == 2
    assert fitted(part, 8000, 10**7) is part  # within the limits: itself
    os.unlink(blobs.path(small.sha256))  # collected: made again, the same bytes
    assert fitted(part, 150, 10**7).sha256 == small.sha256
    assert blobs.path(small.sha256).exists()


def test_collect_removes_only_unnamed_blobs_past_the_grace(tmp_path: Path) -> None:
    blobs = ImageBlobs(tmp_path / "images")
    keep, drop, fresh = (blobs.put(png(13, 11, seed=i)) for i in range(3))
    images.load_base64(drop.sha256)  # kept in memory too
    old = time.time() - 7200
    for p in (keep, drop):
        os.utime(blobs.path(p.sha256), (old, old))
    torn = blobs.path(drop.sha256).with_name(".torn.1.2")  # a crashed write's temporary
    torn.write_bytes(b"x")
    os.utime(torn, (old, old))
    assert blobs.collect({keep.sha256}, grace=3600) == 2
    assert blobs.path(keep.sha256).exists() and blobs.path(fresh.sha256).exists()
    assert not blobs.path(drop.sha256).exists() and not torn.exists()
    assert drop.sha256 not in images._cache
    # storing the same picture again touches it: a new reference is never collected early
    os.utime(blobs.path(keep.sha256), (old, old))
    blobs.put(png(13, 11, seed=0))
    assert blobs.collect(set(), grace=3600) == 0
