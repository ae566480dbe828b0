"""The top-level keys: model, permission mode, limits, state root, trusted workspaces."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, field_validator

from openprogram_lsp.config.section import EnvVar, Section
from openprogram_lsp.core.types import PERMISSION_MODES, PermissionMode

MODEL_KINDS = ("offline", "scripted", "openai", "anthropic")
LOOSER_THAN_ASK = frozenset({"accept-edits", "bypass"})


def check_model_spec(spec: str | None) -> str | None:
    """A model spec's shape: offline, scripted:FILE, openai:MODEL or anthropic:MODEL."""
    if spec is None or not spec.strip():
        return None
    spec = spec.strip()
    kind, sep, arg = spec.partition(":")
    if kind not in MODEL_KINDS or (kind != "offline" and not arg) or (kind == "offline" and sep):
        raise ValueError("unknown model; use offline, scripted:FILE, openai:MODEL "
                         "or anthropic:MODEL")
    return spec


class CoreSettings(Section):
    """Keys at the top of config.toml."""

    name: ClassVar[str] = ""
    env: ClassVar[dict[str, EnvVar]] = {
        "model": EnvVar("OPENPROGRAM_MODEL", "the model turns run with (e.g. openai:gpt-4o)"),
        "model_menu": EnvVar("OPENPROGRAM_MODEL_MENU",
                             "more models a client may switch a session to", split=True),
        "permission_mode": EnvVar("OPENPROGRAM_PERMISSION_MODE",
                                  "ask, accept-edits, plan or bypass"),
        "max_iterations": EnvVar("OPENPROGRAM_MAX_ITERATIONS", "model calls per turn, at most"),
        "home": EnvVar("OPENPROGRAM_HOME", "state root (sessions, checkpoints, rules)"),
        "session_cache_cap": EnvVar("OPENPROGRAM_SESSION_CACHE_CAP",
                                    "sessions kept open in memory"),
        "max_frame_bytes": EnvVar("OPENPROGRAM_MAX_FRAME_BYTES",
                                  "the largest LSP frame the server reads, bytes"),
        "scripted_log": EnvVar("OPENPROGRAM_SCRIPTED_LOG",
                               "scripted:FILE models append each call's input here (tests)"),
    }
    user_only: ClassVar[frozenset[str]] = frozenset({"home", "trusted_workspaces",
                                                     "scripted_log"})

    model: str | None = None
    agent_model: str | None = None  # what subagents run with (default: the parent's model)
    model_menu: list[str] = Field(default_factory=list)  # more models to pick (ACP menus)
    permission_mode: PermissionMode = "ask"
    max_iterations: int = Field(50, ge=1)
    approval_timeout: float = Field(600.0, gt=0)
    question_timeout: float = Field(600.0, gt=0)
    home: Path | None = None  # loading sets the default (``config.default_state_root``)
    session_cache_cap: int = Field(128, ge=1)
    max_frame_bytes: int = Field(64 * 1024 * 1024, ge=1024)
    trusted_workspaces: list[str] = Field(default_factory=list)
    scripted_log: Path | None = None  # where scripted:FILE models record what they were sent

    @field_validator("permission_mode", mode="before")
    @classmethod
    def _mode(cls, v: Any) -> Any:
        if v not in PERMISSION_MODES:
            raise ValueError(f"unknown permission mode; use one of {', '.join(PERMISSION_MODES)}")
        return v

    @field_validator("home")
    @classmethod
    def _home(cls, v: Path | None) -> Path | None:
        return v.expanduser() if v is not None else None

    @field_validator("model", "agent_model")
    @classmethod
    def _spec(cls, v: str | None) -> str | None:
        return check_model_spec(v)

    @field_validator("model_menu")
    @classmethod
    def _specs(cls, v: list[str]) -> list[str]:
        out: list[str] = []
        for spec in v:
            checked = check_model_spec(spec)
            if checked is not None and checked not in out:
                out.append(checked)
        return out

    @classmethod
    def untrusted_keys(cls, raw: dict[str, Any]) -> list[str]:
        """A workspace file may tighten the mode and pick a model, nothing that acts for it."""
        keys = []
        if raw.get("permission_mode") in LOOSER_THAN_ASK:
            keys.append("permission_mode")
        for key in ("model", "agent_model"):
            if isinstance(raw.get(key), str) and raw[key].strip().startswith("scripted"):
                keys.append(key)
        listed = raw.get("model_menu")
        if isinstance(listed, list) and any(isinstance(m, str) and m.strip().startswith(
                "scripted") for m in listed):
            keys.append("model_menu")
        return keys
