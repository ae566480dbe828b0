"""OPENPROGRAM_MAX_FRAME_BYTES goes through the settings model like every other variable."""

from __future__ import annotations

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core.errors import ConfigError


def test_frame_limit_is_a_validated_setting() -> None:
    settings = load_settings(env={"OPENPROGRAM_MAX_FRAME_BYTES": "2048"}, user_file=False)
    assert settings.get(CoreSettings).max_frame_bytes == 2048
    assert settings.sources["max_frame_bytes"] == "env OPENPROGRAM_MAX_FRAME_BYTES"
    assert load_settings(env={}, user_file=False).get(CoreSettings).max_frame_bytes == 64 << 20


@pytest.mark.parametrize("bad", ["abc", "0", "12"])
def test_a_bad_frame_limit_is_one_clear_error(bad: str) -> None:
    with pytest.raises(ConfigError, match=f"OPENPROGRAM_MAX_FRAME_BYTES='{bad}'"):
        load_settings(env={"OPENPROGRAM_MAX_FRAME_BYTES": bad}, user_file=False)
