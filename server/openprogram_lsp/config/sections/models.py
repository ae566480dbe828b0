"""``[models."NAME"]``: what the model table says of a model, overridden (NAME is a model name
as given after ``openai:`` / ``anthropic:``, or a glob such as ``"claude-*"``)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator

from openprogram_lsp.config.section import Section
from openprogram_lsp.core.model import Model
from openprogram_lsp.core.units import parse_window


class ModelOverride(Model):
    """One model's settings; only those set override the table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context_window: int | None = None
    max_output: int | None = Field(None, ge=1, description="max_tokens asked for")
    images: bool | None = None
    reasoning: Literal["none", "adaptive", "budget", "effort", "field"] | None = None
    send_reasoning: bool | None = None
    thinking: bool | None = None
    effort: str | None = None
    budget_tokens: int | None = Field(None, ge=1024)
    interleaved: bool | None = None
    display: Literal["summarized", "omitted"] | None = None

    @field_validator("context_window", mode="before")
    @classmethod
    def _tokens(cls, v: Any) -> int | None:
        if v is None:
            return None
        parsed = parse_window(str(v))
        if parsed is None:
            raise ValueError("must be a token count of at least 1024 (e.g. 32768 or 32k)")
        return parsed

    def changes(self) -> dict[str, Any]:
        """The set values, named as the model table names them."""
        out = self.model_dump(exclude_none=True)
        if "context_window" in out:
            out["context"] = out.pop("context_window")
        if "max_output" in out:
            out["output"] = out["max_output"]
        return out


class ModelsSection(Section):
    """Per-model overrides of the model table, keyed by model name or glob."""

    name: ClassVar[str] = "models"
    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, ModelOverride] = Field(init=False)  # type: ignore[assignment]

    def overrides(self) -> dict[str, dict[str, Any]]:
        """Each configured name or glob with its changes, in the order written."""
        return {name: o.changes() for name, o in (self.__pydantic_extra__ or {}).items()}
