"""TypeScript for the VS Code extension: every wire type, method and event, from the schema."""

from __future__ import annotations

import json
from typing import Any

from openprogram_lsp.lsp.codegen.model import Schema, Wire, method_key, ref_name

HEADER = """\
// Generated from server/openprogram_lsp/lsp/wire.py by `python -m openprogram_lsp.lsp.codegen`.
// Do not edit: change the pydantic models and regenerate (tests/lsp/test_codegen.py checks it).
/* eslint-disable */
"""


def _lit(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else "'" + value.replace(
        "\\", "\\\\").replace("'", "\\'") + "'"


def type_of(schema: Schema) -> str:
    """The TypeScript type of a JSON Schema fragment."""
    if "$ref" in schema:
        return ref_name(schema["$ref"])
    if "const" in schema:
        return _lit(schema["const"])
    if "enum" in schema:
        return " | ".join(_lit(v) for v in schema["enum"])
    if "anyOf" in schema or "oneOf" in schema:
        parts = [type_of(s) for s in schema.get("anyOf") or schema.get("oneOf") or []]
        return " | ".join(dict.fromkeys(parts))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(type_of({**schema, "type": k}) for k in kind)
    if kind == "string":
        return "string"
    if kind in ("integer", "number"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "null":
        return "null"
    if kind == "array":
        item = type_of(schema.get("items", {}))
        return f"({item})[]" if " " in item else f"{item}[]"
    if kind == "object":
        if "properties" in schema:
            return _inline(schema)
        extra = schema.get("additionalProperties", True)
        value = "unknown" if extra is True or extra == {} else type_of(extra)
        return f"Record<string, {value}>"
    return "unknown"


def _key(name: str) -> str:
    return name if name.isidentifier() else _lit(name)


def _doc(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    lines = " ".join(text.split()).replace("``", "`").replace("*/", "* /")
    return [f"{indent}/** {lines} */"]


def _fields(schema: Schema, indent: str) -> list[str]:
    required = set(schema.get("required", []))
    out: list[str] = []
    for name, prop in schema.get("properties", {}).items():
        out += _doc(prop.get("description"), indent)
        opt = "" if name in required else "?"
        out.append(f"{indent}{_key(name)}{opt}: {type_of(prop)};")
    return out


def _inline(schema: Schema) -> str:
    return "{ " + " ".join(line.strip() for line in _fields(schema, "")) + " }"


def _interface(name: str, schema: Schema) -> list[str]:
    lines = _doc(schema.get("description"), "")
    if schema.get("type") == "object" and "properties" in schema:
        lines.append(f"export interface {name} {{")
        lines += _fields(schema, "  ")
        lines.append("}")
    elif schema.get("type") == "object":
        lines.append(f"export type {name} = {type_of(schema)};")
    else:
        lines.append(f"export type {name} = {type_of(schema)};")
    return lines


def _table(name: str, doc: str, entries: dict[str, str]) -> list[str]:
    lines = [f"/** {doc} */", f"export const {name} = {{"]
    lines += [f"  {_key(k)}: {_lit(v)}," for k, v in entries.items()]
    lines.append("} as const;")
    return lines


def _map(name: str, doc: str, entries: dict[str, str]) -> list[str]:
    lines = [f"/** {doc} */", f"export interface {name} {{"]
    lines += [f"  {_lit(k)}: {v};" for k, v in entries.items()]
    lines.append("}")
    return lines


def render(wire: Wire) -> str:
    """The whole generated module."""
    t = wire.table
    out = [HEADER]
    out += _table("Requests", "Client → server requests.",
                  {method_key(m): m for m in t["clientRequests"]})
    out.append("")
    out += _table("ServerRequests", "Server → client requests.",
                  {method_key(m): m for m in t["serverRequests"]})
    out.append("")
    out += _table("ServerNotifications", "Server → client notifications.",
                  {method_key(m): m for m in t["serverNotifications"]})
    out.append("")
    out += ["/** Event types carried by `openprogram/event`. */", "export const EventTypes = ["]
    out += [f"  {_lit(e)}," for e in t["eventTypes"]]
    out += ["] as const;", ""]
    for name in sorted(wire.types):
        out += _interface(name, wire.types[name])
        out.append("")
    out += _map("RequestTypes", "Params and result of each client request.",
                {m: f"{{ params: {p}; result: {r} }}" for m, (p, r) in wire.requests.items()})
    out.append("")
    out += _map("ServerRequestTypes", "Params and result of each server request.",
                {m: f"{{ params: {p}; result: {r} }}"
                 for m, (p, r) in wire.server_requests.items()})
    out.append("")
    out += _map("EventData", "The `data` of each event type.", dict(wire.events))
    out += ["", "/** One `openprogram/event` of a known type, discriminated by `type`. */",
            "export type KnownEvent = {",
            "  [K in keyof EventData]: {",
            "    type: K; sessionId: string | null; turnId?: string | null; data: EventData[K];",
            "  };",
            "}[keyof EventData];", ""]
    return "\n".join(out)
