"""Context-window sizes of known models (``context.window`` overrides them)."""

from __future__ import annotations

import logging
import re

log = logging.getLogger(__name__)

DEFAULT_WINDOW = 128_000
UNKNOWN_OPENAI_COMPATIBLE = 32_768
UNKNOWN_ANTHROPIC = 200_000

# Searched in order in the lower-cased model name; the first match wins, so specific first.
# Names from local servers vary ("qwen2.5-coder:7b", "meta-llama/Llama-3.1-8B-Instruct").
WINDOWS: tuple[tuple[str, int], ...] = (
    (r"gpt-4\.1", 1_047_576),
    (r"gpt-5(\.\d+)?-chat", 128_000),
    (r"gpt-5", 400_000),
    (r"gpt-oss", 131_072),
    (r"gpt-4o|chatgpt-4o", 128_000),
    (r"gpt-4-turbo|gpt-4-\d{4}-preview|gpt-4-vision", 128_000),
    (r"gpt-4-32k", 32_768),
    (r"gpt-4", 8_192),
    (r"gpt-3\.5-turbo", 16_385),
    (r"(^|/)o1-(mini|preview)", 128_000),
    (r"(^|/)(o1|o3|o4)(-|$)|codex-mini", 200_000),
    (r"claude-(instant|2\.0)", 100_000),
    (r"claude", 200_000),
    (r"gemini-1\.5-pro", 2_097_152),
    (r"gemini", 1_048_576),
    (r"llama-?3\.[1-4]|llama-?4", 131_072),
    (r"codellama|code-llama", 16_384),
    (r"llama-?3", 8_192),
    (r"llama-?2", 4_096),
    (r"qwen3-coder|qwen3-.*2507", 262_144),
    (r"qwen", 32_768),
    (r"deepseek", 128_000),
    (r"mistral-(large|nemo)|ministral|mistral-small-3\.[12]|pixtral", 131_072),
    (r"mistral|mixtral|codestral", 32_768),
    (r"gemma-?3", 131_072),
    (r"gemma", 8_192),
    (r"phi-?4", 16_384),
    (r"phi-?3", 4_096),
    (r"command-r", 128_000),
)
_COMPILED = tuple((re.compile(p), n) for p, n in WINDOWS)


def known_window(model: str) -> int | None:
    """The table's window for a model name, or None when the name is not recognised."""
    name = model.strip().lower()
    for pattern, size in _COMPILED:
        if pattern.search(name):
            return size
    return None


def context_window_for(spec: str, override: int | None = None) -> int:
    """The context window for a model spec: the override, else the table, else a default."""
    if override is not None:
        return override
    kind, _, model = spec.partition(":")
    if kind not in ("openai", "anthropic"):
        return DEFAULT_WINDOW
    size = known_window(model)
    if size is not None:
        return size
    return UNKNOWN_ANTHROPIC if kind == "anthropic" else UNKNOWN_OPENAI_COMPATIBLE
