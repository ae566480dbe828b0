"""``[context]``: the context window override and when to recommend and run compaction."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator

from openprogram_lsp.config.section import EnvVar, Section
from openprogram_lsp.core.units import parse_window


class ContextSection(Section):
    """Window size and compaction thresholds (shares of the window)."""

    name: ClassVar[str] = "context"
    env: ClassVar[dict[str, EnvVar]] = {
        "window": EnvVar("OPENPROGRAM_CONTEXT_WINDOW", "context window in tokens (e.g. 32k)"),
        "recommend": EnvVar("OPENPROGRAM_CONTEXT_RECOMMEND", "share at which /compact is advised"),
        "auto_compact": EnvVar("OPENPROGRAM_CONTEXT_AUTO_COMPACT",
                               "share at which a turn compacts first"),
        "target": EnvVar("OPENPROGRAM_CONTEXT_TARGET",
                         "share a compaction brings the context down to, at most"),
        "cooldown_turns": EnvVar("OPENPROGRAM_CONTEXT_COOLDOWN_TURNS",
                                 "turns after a compaction before the next (unless over)"),
        "gap_seconds": EnvVar("OPENPROGRAM_CONTEXT_GAP_SECONDS",
                              "idle seconds after which old tool output is cleared"),
    }

    window: int | None = None
    recommend: float = Field(0.70, gt=0, le=1)
    auto_compact: float = Field(0.85, gt=0, le=1)
    target: float = Field(0.50, gt=0, lt=1)
    cooldown_turns: int = Field(4, ge=0, le=1000)
    gap_seconds: float = Field(3600.0, ge=0)

    @field_validator("window", mode="before")
    @classmethod
    def _tokens(cls, v: Any) -> int | None:
        if v is None:
            return None
        parsed = parse_window(str(v))
        if parsed is None:
            raise ValueError("must be a token count of at least 1024 (e.g. 32768 or 32k)")
        return parsed

    @model_validator(mode="after")
    def _below_trigger(self) -> ContextSection:
        """A set target must be below auto_compact; the default one follows a lower trigger."""
        if self.target < self.auto_compact:
            return self
        if "target" in self.model_fields_set:
            raise ValueError(f"target ({self.target}) must be below auto_compact "
                             f"({self.auto_compact}): a compaction must leave room to grow")
        return self.model_copy(update={"target": round(self.auto_compact * 0.625, 4)})
