"""The protocol's JSON Schema: every request's params and result, server requests, and events."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openprogram_lsp import __version__
from openprogram_lsp.lsp import methods
from openprogram_lsp.lsp.wire import EVENT_DATA, NOTIFICATIONS, REQUESTS, SERVER_REQUESTS


def _schema(model: type[BaseModel], mode: str) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True, mode=mode,  # type: ignore[arg-type]
                                   ref_template="#/$defs/{model}")


def protocol_json_schema() -> dict[str, Any]:
    """A JSON document: {methods, requests, serverRequests, notifications, events}."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"openprogram-lsp wire protocol v1 (server {__version__})",
        "methods": methods.as_table(),
        "requests": {name: {"params": _schema(p, "validation"),
                            "result": _schema(r, "serialization")}
                     for name, (p, r) in REQUESTS.items()},
        "serverRequests": {name: {"params": _schema(p, "serialization"),
                                  "result": _schema(r, "validation")}
                           for name, (p, r) in SERVER_REQUESTS.items()},
        "notifications": {name: _schema(model, "serialization")
                          for name, model in NOTIFICATIONS.items()},
        "events": {name: _schema(model, "serialization") for name, model in EVENT_DATA.items()},
    }
