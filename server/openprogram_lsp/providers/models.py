"""The model table (``models.toml``): window, output limit, images and reasoning per model, with
the ``[models."NAME"]`` overrides of the configuration applied."""

from __future__ import annotations

import fnmatch
import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Literal

Reasoning = Literal["none", "adaptive", "budget", "effort", "field"]
REASONING: tuple[str, ...] = ("none", "adaptive", "budget", "effort", "field")

UNKNOWN_OPENAI_COMPATIBLE = 32_768
UNKNOWN_ANTHROPIC = 200_000
DEFAULT_WINDOW = 128_000  # offline, scripted
OUTPUT_CAP = 32_000
"""What is asked for at most by default: a model's whole maximum (128k) in one response is
rarely wanted and, with the budget, takes that much room from the history."""
MIN_BUDGET = 1_024  # Anthropic's smallest thinking budget


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the agent knows of one model."""

    context: int
    max_output: int
    images: bool = False
    reasoning: Reasoning = "none"
    send_reasoning: bool = False
    thinking: bool = False
    effort: str = ""
    budget_tokens: int = 0
    interleaved: bool = False
    display: str = ""  # Anthropic thinking.display ("" leaves it to the server)
    output: int | None = None  # configured: the max_tokens to ask for
    known: bool = True  # found in the table (else the defaults of its API)

    @property
    def output_tokens(self) -> int:
        """The max_tokens each request asks for: configured, else the maximum up to 32,000."""
        return self.output if self.output is not None else min(self.max_output, OUTPUT_CAP)


@dataclass(frozen=True, slots=True)
class _Entry:
    pattern: re.Pattern[str]
    kind: str | None
    info: ModelInfo


_FIELDS = {"context", "max_output", "images", "reasoning", "send_reasoning", "thinking",
           "effort", "budget_tokens", "interleaved", "display"}
DISPLAYS = ("", "summarized", "omitted")


def _info(raw: Mapping[str, Any], where: str) -> ModelInfo:
    unknown = set(raw) - _FIELDS - {"match", "kind"}
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    if raw.get("reasoning", "none") not in REASONING:
        raise ValueError(f"{where}: reasoning must be one of {', '.join(REASONING)}")
    if raw.get("display", "") not in DISPLAYS:
        raise ValueError(f"{where}: display must be summarized or omitted")
    return ModelInfo(**{k: v for k, v in raw.items() if k in _FIELDS})


@functools.cache
def table() -> tuple[_Entry, ...]:
    """The packaged table, in order (read once)."""
    text = resources.files(__package__).joinpath("models.toml").read_text("utf-8")
    out = []
    for n, raw in enumerate(tomllib.loads(text)["model"]):
        out.append(_Entry(re.compile(raw["match"]), raw.get("kind"),
                          _info(raw, f"models.toml entry {n + 1}")))
    return tuple(out)


def known_model(kind: str, model: str) -> ModelInfo | None:
    """The table's entry for a model of an API, or None when the name is not recognised."""
    name = model.strip().lower()
    for entry in table():
        if (entry.kind is None or entry.kind == kind) and entry.pattern.search(name):
            return entry.info
    return None


def model_info(kind: str, model: str,
               overrides: Mapping[str, Mapping[str, Any]] | None = None) -> ModelInfo:
    """What is known of ``kind:model``: the table's entry (or its API's defaults), then the
    configured overrides whose name matches it (an exact name first, then glob patterns)."""
    info = known_model(kind, model)
    if info is None:
        info = (ModelInfo(UNKNOWN_ANTHROPIC, 8_192, images=True, known=False)
                if kind == "anthropic" else
                ModelInfo(UNKNOWN_OPENAI_COMPATIBLE, 4_096, known=False)
                if kind == "openai" else ModelInfo(DEFAULT_WINDOW, 4_096, known=False))
    for changes in matching_overrides(model, overrides or {}):
        info = replace(info, **changes)
    return info


def matching_overrides(model: str, overrides: Mapping[str, Mapping[str, Any]],
                       ) -> list[Mapping[str, Any]]:
    """The set values of the overrides that apply to a model, the most specific last (globs in
    the order written, then the exact name)."""
    out = [v for k, v in overrides.items() if k != model and fnmatch.fnmatchcase(model, k)]
    if model in overrides:
        out.append(overrides[model])
    return out
