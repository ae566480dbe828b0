"""A missing editor or tool skips on a developer's machine and fails in CI."""

from __future__ import annotations

import pytest

from tests.tooling import in_ci, missing, require


def test_missing_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    assert not in_ci()
    with pytest.raises(pytest.skip.Exception):
        missing("Neovim is not installed")


@pytest.mark.parametrize("value", ["true", "1", "TRUE", "yes"])
def test_missing_fails_in_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        missing("Neovim is not installed")
    require("/usr/bin/nvim", "never raised when found")
