"""The wire as the generators see it: named types (JSON Schema) and the method table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openprogram_lsp.lsp import methods
from openprogram_lsp.lsp.schema import protocol_json_schema
from openprogram_lsp.lsp.wire import EVENT

Schema = dict[str, Any]


@dataclass(slots=True)
class Wire:
    """Named object types (by model name), and which type each method and event carries."""

    types: dict[str, Schema] = field(default_factory=dict)
    requests: dict[str, tuple[str, str]] = field(default_factory=dict)  # method -> params, result
    server_requests: dict[str, tuple[str, str]] = field(default_factory=dict)
    events: dict[str, str] = field(default_factory=dict)  # event type -> data type
    table: dict[str, list[str]] = field(default_factory=dict)


def _collect(wire: Wire, schema: Schema) -> str:
    """Register a top-level schema and its $defs; return its type name."""
    for name, sub in schema.get("$defs", {}).items():
        _add(wire, name, sub)
    top = {k: v for k, v in schema.items() if k != "$defs"}
    name = str(top["title"])
    _add(wire, name, top)
    return name


def _add(wire: Wire, name: str, schema: Schema) -> None:
    known = wire.types.get(name)
    if known is not None and known != schema:
        raise ValueError(f"two different schemas are both named {name}")
    wire.types[name] = schema


def load() -> Wire:
    """The wire of this server."""
    doc = protocol_json_schema()
    wire = Wire(table=methods.as_table())
    for method, pair in doc["requests"].items():
        wire.requests[method] = (_collect(wire, pair["params"]), _collect(wire, pair["result"]))
    for method, pair in doc["serverRequests"].items():
        wire.server_requests[method] = (_collect(wire, pair["params"]),
                                        _collect(wire, pair["result"]))
    for event, schema in doc["events"].items():
        wire.events[event] = _collect(wire, schema)
    _collect(wire, doc["notifications"][EVENT])
    return wire


def ref_name(ref: str) -> str:
    """``#/$defs/Name`` -> ``Name``."""
    return ref.rsplit("/", 1)[-1]


def method_key(method: str) -> str:
    """``openprogram/checkpointDiff`` -> ``checkpointDiff``."""
    return method.split("/", 1)[1]


def constant_key(name: str) -> str:
    """``checkpointDiff`` or ``turn.started`` -> ``CHECKPOINT_DIFF`` / ``TURN_STARTED``."""
    out = []
    for ch in name:
        if ch.isupper():
            out.append("_")
        out.append("_" if ch == "." else ch.upper())
    return "".join(out)
