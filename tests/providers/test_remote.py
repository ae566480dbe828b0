"""Selecting and configuring remote models from the environment."""

from __future__ import annotations

import pytest

from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.providers.anthropic import AnthropicProvider
from openprogram_lsp.providers.factory import make_provider
from openprogram_lsp.providers.openai import OpenAIProvider

from .conftest import SECRET


@pytest.mark.parametrize("spec, var", [("openai:gpt-4o", "OPENAI_API_KEY"),
                                       ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY")])
def test_missing_key_for_the_official_endpoint_names_the_variable(spec: str, var: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{var} is not set"):
        make_provider(spec, {})


def test_local_servers_need_no_key() -> None:
    p = make_provider("openai:qwen2.5-coder:7b", {"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"})
    assert isinstance(p, OpenAIProvider)
    assert (p.model, p.base_url, p.context_window) == (
        "qwen2.5-coder:7b", "http://127.0.0.1:11434/v1", 32_768)


def test_env_configures_the_provider() -> None:
    p = make_provider("anthropic:claude-x", {"ANTHROPIC_API_KEY": SECRET,
                                             "OPENPROGRAM_CONTEXT_WINDOW": "50000",
                                             "OPENPROGRAM_MAX_RETRIES": "1"})
    assert isinstance(p, AnthropicProvider)
    assert (p.name, p.context_window, p.settings.max_retries) == ("anthropic", 50_000, 1)
    assert p.url == "https://api.anthropic.com/v1/messages"
    assert SECRET not in repr(p)


def test_bad_base_url() -> None:
    with pytest.raises(ConfigError, match=r"OPENAI_BASE_URL=.*must be an http"):
        make_provider("openai:m", {"OPENAI_BASE_URL": "localhost:8000"})
