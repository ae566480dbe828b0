"""ACP's older, unstable model API, which some clients still use instead of config options.

agent-shell (Emacs) lists models only from a session response's ``models``
(``{currentModelId, availableModels: [{modelId, name}]}``) and switches with
``session/set_model``; avante falls back to them for agents without ``configOptions``. SDK 0.12
dropped both from its schema, so the responses here add ``models`` beside ``configOptions``
(clients that know config options prefer them: acpx, avante, codecompanion, Zed), and
``routes`` routes ``session/set_model``. The list is the ``model`` option's, so both ways offer
and accept the same models.
"""

from __future__ import annotations

from typing import Annotated, Any

from acp.schema import (
    ForkSessionResponse,
    LoadSessionResponse,
    NewSessionResponse,
    ResumeSessionResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
)
from pydantic import ConfigDict, Field

from openprogram_lsp.core.model import Model


class ModelInfo(Model):
    """One model of ``availableModels``."""

    model_config = ConfigDict(populate_by_name=True)

    model_id: Annotated[str, Field(alias="modelId")]
    name: str
    description: str | None = None


class SessionModelState(Model):
    """A session response's ``models``."""

    model_config = ConfigDict(populate_by_name=True)

    current_model_id: Annotated[str, Field(alias="currentModelId")]
    available_models: Annotated[list[ModelInfo], Field(alias="availableModels")]


def model_state(config_options: list[Any]) -> SessionModelState | None:
    """The ``model`` config option as the older ``models`` field (None without one)."""
    option = next((o for o in config_options if isinstance(o, SessionConfigOptionSelect)
                   and o.id == "model"), None)
    if option is None:
        return None
    choices = [c for c in option.options if isinstance(c, SessionConfigSelectOption)]
    return SessionModelState(
        current_model_id=option.current_value,
        available_models=[ModelInfo(model_id=c.value, name=c.name, description=c.description)
                          for c in choices])


class NewSession(NewSessionResponse):
    """``session/new``'s answer with ``models``."""

    models: SessionModelState | None = None


class LoadSession(LoadSessionResponse):
    """``session/load``'s answer with ``models``."""

    models: SessionModelState | None = None


class ResumeSession(ResumeSessionResponse):
    """``session/resume``'s answer with ``models``."""

    models: SessionModelState | None = None


class ForkSession(ForkSessionResponse):
    """``session/fork``'s answer with ``models``."""

    models: SessionModelState | None = None
