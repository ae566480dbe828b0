"""A session's model and permission mode as ACP config options, kept in the session's meta.

The choices are the configured models (``model``, ``models``, ``agent_model`` of the
workspace's settings) and ``offline``; a value outside them is refused, so a client can never
make the agent run a model (or a ``scripted:FILE``) nobody configured. The settings are stored
in the session's meta (``settings``), so they hold after a restart and every client of the
session, in any process, runs and shows the same ones; they apply from the next prompt.
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
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core.errors import InvalidParams
from openprogram_lsp.core.types import PERMISSION_MODES, PermissionMode
from openprogram_lsp.dispatcher.turn_settings import default_model, turn_settings

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher import Dispatcher

MODEL = "model"
MODE = "mode"
META_KEY = "settings"
OFFLINE = "offline"


def model_choices(dispatcher: Dispatcher, sess: AcpSession) -> list[str]:
    """The models this session may run: the default (the configured model, else
    ``offline``, what a turn runs without a choice), then ``models``, ``agent_model``."""
    services = dispatcher.services
    settings = turn_settings(services, sess.workspace, services.options_of(sess.store_id))
    out: list[str] = []
    first = default_model(services, settings) or OFFLINE
    core = settings.get(CoreSettings) if settings is not None else None
    for spec in (first, *(core.models if core else ()), core.agent_model if core else None,
                 OFFLINE):
        if spec and spec not in out:
            out.append(spec)
    return out


def current_model(dispatcher: Dispatcher, sess: AcpSession) -> str:
    """The model the session's next prompt runs with."""
    return sess.model or model_choices(dispatcher, sess)[0]


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
    return [
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


def choose(dispatcher: Dispatcher, sess: AcpSession, config_id: str, value: str) -> None:
    """Set one option on the session (in memory; ``stored`` writes it); -32602 when unknown."""
    if config_id == MODEL:
        if value not in model_choices(dispatcher, sess):
            raise InvalidParams(f"value: {value!r} is not one of this session's models "
                                f"({', '.join(model_choices(dispatcher, sess))})")
        sess.model = value
    elif config_id == MODE:
        if value not in PERMISSION_MODES:
            raise InvalidParams(f"value: use one of {', '.join(PERMISSION_MODES)}")
        sess.mode = value  # type: ignore[assignment]
    else:
        raise InvalidParams(f"configId: unknown option {config_id!r} (use {MODEL} or {MODE})")


def record(sess: AcpSession) -> dict[str, Any]:
    """What the meta keeps (only what was chosen)."""
    out: dict[str, Any] = {"mode": sess.mode}
    if sess.model:
        out["model"] = sess.model
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


def shown(dispatcher: Dispatcher, sess: AcpSession) -> dict[str, Any]:
    """The state a client is shown: what ``updates`` compares with ``sess.told``."""
    return {"model": current_model(dispatcher, sess), "mode": sess.mode}


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
