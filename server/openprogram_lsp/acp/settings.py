"""A session's model, permission mode and reasoning effort as ACP config options, kept in
the session's meta.

The model choices are the configured models (``model``, ``model_menu``, ``agent_model`` of the
workspace's settings) and ``offline``; the effort is offered only while the model takes one. A
value outside the choices is refused, so a client can never make the agent run a model (or a
``scripted:FILE``) nobody configured. The settings are stored in the session's meta
(``settings``), so they hold after a restart and every client of the session, in any process,
runs and shows the same ones; they apply from the next prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp.schema import (
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
)

from openprogram_lsp.acp.session import MODE_INFO, AcpSession
from openprogram_lsp.config import Settings
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.config.sections.models import ModelsSection
from openprogram_lsp.core.errors import InvalidParams
from openprogram_lsp.core.types import PERMISSION_MODES, PermissionMode
from openprogram_lsp.dispatcher.turn_settings import default_model, turn_settings
from openprogram_lsp.providers.models import model_info

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher import Dispatcher

MODEL = "model"
MODE = "mode"
EFFORT = "effort"
EFFORTS = ("default", "low", "medium", "high")
EFFORT_INFO = {"default": "As configured for the model", "low": "Think briefly",
               "medium": "Think more", "high": "Think longest"}
META_KEY = "settings"
OFFLINE = "offline"


def model_choices(dispatcher: Dispatcher, sess: AcpSession) -> list[str]:
    """The models this session may run: the default (the configured model, else
    ``offline``, what a turn runs without a choice), then ``model_menu``, ``agent_model``."""
    services = dispatcher.services
    settings = _settings(dispatcher, sess)
    out: list[str] = []
    first = default_model(services, settings) or OFFLINE
    core = settings.get(CoreSettings) if settings is not None else None
    for spec in (first, *(core.model_menu if core else ()), core.agent_model if core else None,
                 OFFLINE):
        if spec and spec not in out:
            out.append(spec)
    return out


def current_model(dispatcher: Dispatcher, sess: AcpSession) -> str:
    """The model the session's next prompt runs with."""
    return sess.model or model_choices(dispatcher, sess)[0]


def _settings(dispatcher: Dispatcher, sess: AcpSession) -> Settings | None:
    services = dispatcher.services
    return turn_settings(services, sess.workspace, services.options_of(sess.store_id))


def thinks(dispatcher: Dispatcher, sess: AcpSession) -> bool:
    """Whether the session's model takes a reasoning effort (Anthropic adaptive thinking,
    OpenAI ``reasoning_effort``): only then is the effort option offered."""
    kind, _, name = current_model(dispatcher, sess).partition(":")
    settings = _settings(dispatcher, sess)
    if kind not in ("openai", "anthropic") or not name or settings is None:
        return False
    info = model_info(kind, name, settings.get(ModelsSection).overrides())
    return info.reasoning == "adaptive" if kind == "anthropic" \
        else info.reasoning in ("effort", "field")


def _label(spec: str) -> str:
    kind, _, name = spec.partition(":")
    return {"openai": f"{name} (OpenAI)", "anthropic": f"{name} (Anthropic)",
            "offline": "Offline (no model: for trying the agent)"}.get(kind, spec)


def options(dispatcher: Dispatcher, sess: AcpSession) -> list[Any]:
    """The session's config options: model and mode."""
    models = model_choices(dispatcher, sess)
    current = current_model(dispatcher, sess)
    if current not in models:  # chosen elsewhere (another client's config): still shown
        models = [current, *models]
    out: list[Any] = [
        SessionConfigOptionSelect(
            id=MODEL, name="Model", category="model", type="select", current_value=current,
            description="The model the next prompt runs with",
            options=[SessionConfigSelectOption(value=m, name=_label(m)) for m in models]),
        SessionConfigOptionSelect(
            id=MODE, name="Permission mode", category="mode", type="select",
            current_value=sess.mode, description="What runs without asking",
            options=[SessionConfigSelectOption(value=m, name=MODE_INFO[m][0],
                                               description=MODE_INFO[m][1])
                     for m in PERMISSION_MODES])]
    if thinks(dispatcher, sess):
        out.append(SessionConfigOptionSelect(
            id=EFFORT, name="Reasoning effort", category="thought_level", type="select",
            current_value=sess.effort or "default",
            description="How long the model thinks before it answers",
            options=[SessionConfigSelectOption(value=e, name=e.capitalize(),
                                               description=EFFORT_INFO[e]) for e in EFFORTS]))
    return out


def choose(dispatcher: Dispatcher, sess: AcpSession, config_id: str, value: str) -> None:
    """Set one option on the session (in memory; ``stored`` writes it); -32602 when unknown."""
    if config_id == MODEL:
        if value not in model_choices(dispatcher, sess):
            raise InvalidParams(f"value: {value[:100]!r} is not one of this session's models "
                                f"({', '.join(model_choices(dispatcher, sess))})")
        sess.model = value
    elif config_id == MODE:
        if value not in PERMISSION_MODES:
            raise InvalidParams(f"value: use one of {', '.join(PERMISSION_MODES)}")
        sess.mode = value  # type: ignore[assignment]
    elif config_id == EFFORT and thinks(dispatcher, sess):
        if value not in EFFORTS:
            raise InvalidParams(f"value: use one of {', '.join(EFFORTS)}")
        sess.effort = None if value == "default" else value
    else:
        raise InvalidParams(f"configId: unknown option {config_id[:100]!r} for this session's "
                            "model")


def record(sess: AcpSession) -> dict[str, Any]:
    """What the meta keeps (only what was chosen)."""
    out: dict[str, Any] = {"mode": sess.mode}
    if sess.model:
        out["model"] = sess.model
    if sess.effort:
        out["effort"] = sess.effort
    return out


def adopt(sess: AcpSession, meta: dict[str, Any]) -> None:
    """Take the settings stored in a session's meta (another client may have changed them)."""
    kept = meta.get(META_KEY)
    if not isinstance(kept, dict):
        return
    mode = kept.get("mode")
    if mode in PERMISSION_MODES:
        sess.mode = mode
    model = kept.get("model")
    sess.model = model if isinstance(model, str) and model else None
    effort = kept.get("effort")
    sess.effort = effort if effort in EFFORTS[1:] else None


def shown(dispatcher: Dispatcher, sess: AcpSession) -> dict[str, Any]:
    """The state a client is shown: what ``updates`` compares with ``sess.told``."""
    return {"model": current_model(dispatcher, sess), "mode": sess.mode,
            "effort": sess.effort if thinks(dispatcher, sess) else None}


def updates(dispatcher: Dispatcher, sess: AcpSession) -> list[Any]:
    """The notifications that bring this client up to date (none when it is)."""
    now = shown(dispatcher, sess)
    if now == sess.told:
        return []
    out: list[Any] = []
    if sess.told and now["mode"] != sess.told.get("mode"):
        mode: PermissionMode = now["mode"]
        out.append(CurrentModeUpdate(session_update="current_mode_update",
                                     current_mode_id=mode))
    if sess.told:
        out.append(ConfigOptionUpdate(session_update="config_option_update",
                                      config_options=options(dispatcher, sess)))
    sess.told = now
    return out
