"""Context-window sizes per model and the OPENPROGRAM_CONTEXT_WINDOW override."""

from __future__ import annotations

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.config.sections.context import ContextSection
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.providers.windows import context_window_for


@pytest.mark.parametrize("spec, window", [
    ("openai:gpt-4o-mini", 128_000),
    ("openai:gpt-4.1-nano", 1_047_576),
    ("openai:gpt-5-mini", 400_000),
    ("openai:gpt-4", 8_192),
    ("openai:o3-mini", 200_000),
    ("openai:o1-mini", 128_000),
    ("anthropic:claude-sonnet-4-5", 200_000),
    ("anthropic:some-future-model", 200_000),
    ("openai:llama3.1:8b", 131_072),
    ("openai:meta-llama/Llama-3.1-8B-Instruct", 131_072),
    ("openai:qwen2.5-coder:7b", 32_768),
    ("openai:my-local-model", 32_768),
    ("offline", 128_000),
])
def test_known_windows(spec: str, window: int) -> None:
    assert context_window_for(spec) == window


@pytest.mark.parametrize("raw, window", [("8192", 8192), ("32k", 32_000), ("1m", 1_000_000)])
def test_override(raw: str, window: int) -> None:
    override = load_settings(env={"OPENPROGRAM_CONTEXT_WINDOW": raw}, user_file=False).get(
        ContextSection).window
    assert context_window_for("openai:gpt-4o", override) == window


@pytest.mark.parametrize("raw", ["lots", "12"])
def test_bad_override_is_one_clear_error(raw: str) -> None:
    with pytest.raises(ConfigError, match=r"^OPENPROGRAM_CONTEXT_WINDOW=.*token count"):
        load_settings(env={"OPENPROGRAM_CONTEXT_WINDOW": raw}, user_file=False)
