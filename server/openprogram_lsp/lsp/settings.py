"""Editor settings: initializationOptions and workspace/didChangeConfiguration, validated."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from openprogram_lsp.approvals.rules import Rule
from openprogram_lsp.core.model import Model
from openprogram_lsp.core.types import PermissionMode


class RuleOption(Model):
    """A configured permission rule: tool-name pattern, optional input pattern, decision."""

    model_config = ConfigDict(extra="ignore")

    tool: str = Field(min_length=1)
    decision: Literal["allow", "deny"]
    pattern: str | None = None


class ProviderOption(Model):
    """An editor's endpoint for one provider: base URL and where the key comes from.

    Never the key itself: editors keep settings in files that are shared or synced."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    base_url: str | None = None
    api_key_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    api_key_command: str | None = None

    @field_validator("base_url")
    @classmethod
    def _http(cls, v: str | None) -> str | None:
        if v is not None and v.strip() and urlsplit(v.strip()).scheme not in ("http", "https"):
            raise ValueError(f"must be an http(s) URL, got {v!r}")
        return v.strip() or None if v is not None else None


class BlameOption(Model):
    """``blame``: agent blame (code lenses, hovers, code actions)."""

    model_config = ConfigDict(extra="ignore")

    enabled: bool = True


class EditorOptions(Model):
    """``initializationOptions`` (or the ``openprogram`` section of the configuration)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    model: str | None = None
    permission_mode: PermissionMode | None = None
    rules: list[RuleOption] | None = None
    approval_timeout: float | None = Field(None, gt=0)
    question_timeout: float | None = Field(None, gt=0)
    agent_model: str | None = None  # the model children run with (default: the parent's)
    max_messages: int | None = Field(None, ge=1, le=64)  # message budget of a chain
    mcp_servers: dict[str, Any] | None = None  # {name: {command, args, env} | {type, url}}
    disabled_tools: list[str] | None = None  # static admission: fnmatch on tool names
    allowed_tools: list[str] | None = None
    providers: dict[Literal["openai", "anthropic"], ProviderOption] | None = None
    blame: BlameOption | None = None  # openprogram.blame.enabled

    def provider_overrides(self) -> dict[str, dict[str, str]] | None:
        """``[providers]`` overrides in the config file's spelling (only the fields given)."""
        out = {name: {k: v for k, v in p.model_dump(exclude_none=True).items() if v}
               for name, p in (self.providers or {}).items()}
        return {name: fields for name, fields in out.items() if fields} or None


@dataclass(slots=True)
class ClientFeatures:
    """What the connected client declared it supports."""

    permissions: bool = False
    questions: bool = False
    work_done_progress: bool = False
    show_message_request: bool = True
    apply_edit: bool = False  # workspace.applyEdit: edits go into unsaved buffers
    panel: bool = False  # a first-party plugin (experimental.openprogram.panel) shows turns
    diagnostics: bool = False  # answers openprogram/diagnostics (its language servers' view)
    navigation: bool = False  # answers openprogram/navigate (definitions, references, …)


@dataclass(slots=True)
class Settings:
    """The effective settings: command-line flags win over editor options."""

    flag_mode: PermissionMode | None = None  # --permission-mode or OPENPROGRAM_PERMISSION_MODE
    file_mode: PermissionMode | None = None  # from config.toml: below the editor's options
    options: EditorOptions = field(default_factory=EditorOptions)
    client: ClientFeatures = field(default_factory=ClientFeatures)
    default_timeout: float = 600.0

    @property
    def permission_mode(self) -> PermissionMode:
        """The mode turns run with."""
        return self.flag_mode or self.options.permission_mode or self.file_mode or "ask"

    @property
    def approval_timeout(self) -> float:
        """Seconds an approval prompt waits before counting as a rejection."""
        return self.options.approval_timeout or self.default_timeout

    @property
    def question_timeout(self) -> float:
        """Seconds a question waits for an answer."""
        return self.options.question_timeout or self.default_timeout

    def rules(self) -> list[Rule]:
        """Configured rules as policy rules: patterns the user wrote (``fnmatch``)."""
        out = []
        for i, r in enumerate(self.options.rules or []):
            what = f"{r.tool} {r.pattern}" if r.pattern else f"every {r.tool} call"
            out.append(Rule(id=f"settings-{i + 1}", decision=r.decision, kind="pattern",
                            tool=r.tool, value=r.pattern, origin="settings",
                            description=f"{what} (pattern from settings)"))
        return out


def parse_options(raw: Any) -> tuple[EditorOptions, str | None]:
    """Options from editor JSON; on bad input the defaults and a message naming the fields."""
    if isinstance(raw, dict) and isinstance(raw.get("openprogram"), dict):
        raw = raw["openprogram"]
    if raw is None or raw == {}:
        return EditorOptions(), None
    if not isinstance(raw, dict):
        return EditorOptions(), "openprogram settings must be an object; using defaults"
    try:
        return EditorOptions.model_validate(raw), None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                             for e in exc.errors(include_url=False))
        good = {k: v for k, v in raw.items()
                if not any(e["loc"] and e["loc"][0] == k for e in exc.errors())}
        try:
            partial = EditorOptions.model_validate(good)
        except ValidationError:
            partial = EditorOptions()
        return partial, f"invalid openprogram settings ({problems}); those fields are ignored"


def client_features(capabilities: Any) -> ClientFeatures:
    """Read experimental.openprogram and window capabilities from lsprotocol capabilities."""
    exp = getattr(capabilities, "experimental", None)
    op = exp.get("openprogram") if isinstance(exp, dict) else None
    op = op if isinstance(op, dict) else {}
    window = getattr(capabilities, "window", None)
    workspace = getattr(capabilities, "workspace", None)
    return ClientFeatures(
        apply_edit=bool(getattr(workspace, "apply_edit", False)),
        panel=op.get("permissions") is True,
        permissions=op.get("permissions") is True,
        questions=op.get("questions") is True,
        diagnostics=op.get("diagnostics") is True,
        navigation=op.get("navigation") is True,
        work_done_progress=bool(getattr(window, "work_done_progress", False)),
        show_message_request=True,
    )
