import pytest

from openprogram_lsp.core.units import parse_window


@pytest.mark.parametrize(("raw", "expected"), [
    ("32768", 32768), ("32k", 32_000), ("1m", 1_000_000), (" 8_000 ", 8000), ("1.5k", 1500),
    ("100", None), ("lots", None), ("", None),
])
def test_parse_window(raw: str, expected: int | None) -> None:
    assert parse_window(raw) == expected
