"""The model table: windows, output limits, images and reasoning per model, overridable in
config, and used for the budget and the max_tokens each request asks for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.providers.models import OUTPUT_CAP, model_info, table

from .conftest import SECRET
from .loopback import LoopbackServer, Reply
from .wire import AnthropicStream, OpenAIStream


@pytest.mark.parametrize("kind, model, context, max_output, images, reasoning, send", [
    ("anthropic", "claude-opus-4-7", 1_000_000, 128_000, True, "adaptive", False),
    ("anthropic", "claude-sonnet-5", 1_000_000, 128_000, True, "adaptive", False),
    ("anthropic", "claude-sonnet-4-5-20250929", 200_000, 64_000, True, "budget", False),
    ("anthropic", "claude-sonnet-4-20250514", 200_000, 64_000, True, "budget", False),
    ("anthropic", "claude-3-5-haiku-20241022", 200_000, 8_192, True, "none", False),
    ("openai", "anthropic/claude-sonnet-4.5", 200_000, 64_000, True, "budget", False),
    ("openai", "anthropic/claude-opus-4.6", 1_000_000, 128_000, True, "adaptive", False),
    ("openai", "gpt-5.5", 1_050_000, 128_000, True, "effort", False),
    ("openai", "gpt-5-mini", 400_000, 128_000, True, "effort", False),
    ("openai", "gpt-5-chat-latest", 128_000, 16_384, True, "none", False),
    ("openai", "gpt-4o-mini", 128_000, 16_384, True, "none", False),
    ("openai", "o3-mini", 200_000, 100_000, True, "effort", False),
    ("openai", "deepseek-v4-pro", 1_000_000, 384_000, False, "field", True),
    ("openai", "deepseek-flash", 1_000_000, 384_000, True, "field", True),
    ("openai", "deepseek-reasoner", 65_536, 32_768, False, "field", False),
    ("openai", "deepseek-r1:14b", 65_536, 32_768, False, "field", False),
    ("openai", "qwen3-coder:30b", 262_144, 65_536, False, "none", False),
    ("openai", "Qwen/Qwen3-32B", 32_768, 32_768, False, "field", False),
    ("openai", "qwen2.5-coder:7b", 32_768, 8_192, False, "none", False),
    ("openai", "meta-llama/Llama-3.1-8B-Instruct", 131_072, 8_192, False, "none", False),
    ("openai", "gemini-2.5-pro", 1_048_576, 65_536, True, "effort", False),
    ("openai", "my-local-model", 32_768, 4_096, False, "none", False),
    ("anthropic", "some-future-model", 200_000, 8_192, True, "none", False),
])
def test_known_models(kind: str, model: str, context: int, max_output: int, images: bool,
                      reasoning: str, send: bool) -> None:
    info = model_info(kind, model)
    assert (info.context, info.max_output, info.images, info.reasoning, info.send_reasoning) == (
        context, max_output, images, reasoning, send)
    assert info.output_tokens == min(max_output, OUTPUT_CAP)


def test_every_entry_is_sane() -> None:
    for entry in table():
        info = entry.info
        assert 1024 <= info.max_output <= info.context, entry.pattern.pattern
        assert info.reasoning != "none" or not (info.thinking or info.send_reasoning)


def test_overrides_exact_name_after_globs() -> None:
    info = model_info("openai", "my-model", {
        "my-*": {"context": 64_000, "images": True}, "my-model": {"context": 48_000},
        "other": {"context": 2048}})
    assert (info.context, info.images) == (48_000, True)


def write_config(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "xdg" / "openprogram-lsp" / "config.toml"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(text)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_a_bad_override_is_one_clear_error(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, '[models."x"]\nreasoning = "lots"\n', monkeypatch)
    with pytest.raises(ConfigError, match=r"models\.x\.reasoning = 'lots': must be"):
        load_settings(user_file=True)
    write_config(tmp_path, '[models."x"]\ncontext = 5\n', monkeypatch)
    with pytest.raises(ConfigError, match=r"unknown setting 'models\.x\.context'"):
        load_settings(user_file=True)


async def test_the_table_sets_max_tokens_and_the_budget(
        server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    server.queue(Reply(chunks=AnthropicStream(text=["ok"]).events()))
    result = await make_dispatcher("anthropic:claude-3-5-haiku-20241022").run_turn(
        TurnRequest(text="hi", workspace=str(workspace)))
    assert result.status == "done", result.error
    assert server.received[0].json["max_tokens"] == 8_192
    node = make_dispatcher().services.store.get_node(result.session_id,
                                                     result.assistant_node_id)
    assert node.metadata["context"]["contextWindow"] == 200_000


async def test_a_configured_window_and_output_are_used(
        server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, workspace: Path,
        tmp_path: Path, make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    write_config(tmp_path, '[models."local-*"]\ncontext_window = "64k"\nmax_output = 6000\n',
                 monkeypatch)
    server.queue(Reply(chunks=OpenAIStream(text=["ok"]).events()))
    dispatcher = make_dispatcher("openai:local-coder", settings=load_settings(user_file=True))
    result = await dispatcher.run_turn(TurnRequest(text="hi", workspace=str(workspace)))
    assert result.status == "done", result.error
    assert server.received[0].json["max_tokens"] == 6000
    node = dispatcher.services.store.get_node(result.session_id, result.assistant_node_id)
    assert node.metadata["context"]["contextWindow"] == 64_000
