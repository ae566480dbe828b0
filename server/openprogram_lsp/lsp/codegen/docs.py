"""The tables of docs/protocol.md, regenerated between markers (the prose stays hand-written)."""

from __future__ import annotations

import re

from openprogram_lsp.lsp.codegen.model import Schema, Wire, ref_name


def _anchor(method: str) -> str:
    return "#" + re.sub(r"[^a-z0-9-]", "", method.lower())


def _fields(schema: Schema) -> str:
    props = schema.get("properties", {})
    if not props:
        return "`{}`"
    required = set(schema.get("required", []))
    return ", ".join(f"`{name}{'' if name in required else '?'}`" for name in props)


def _shape(wire: Wire, name: str) -> str:
    schema = wire.types[name]
    return f"`{name}` {{{_fields(schema).replace('`', '')}}}" if schema.get(
        "properties") else f"`{name}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("``", "`").replace("|", "\\|")


def requests_table(wire: Wire) -> str:
    """Every client request: params fields and the result type with its fields."""
    rows = ["| method | params | result |", "|---|---|---|"]
    for method, (params, result) in wire.requests.items():
        rows.append(f"| [`{method}`]({_anchor(method)}) | {_fields(wire.types[params])} | "
                    f"{_shape(wire, result)} |")
    return "\n".join(rows)


def server_requests_table(wire: Wire) -> str:
    """Every server request: params and the answer."""
    rows = ["| method | params | answer |", "|---|---|---|"]
    for method, (params, result) in wire.server_requests.items():
        rows.append(f"| `{method}` | {_shape(wire, params)} | {_shape(wire, result)} |")
    return "\n".join(rows)


def _type_doc(wire: Wire, name: str) -> str:
    schema = wire.types[name]
    return _cell(schema.get("description") or "")


def events_table(wire: Wire) -> str:
    """Every event type with a fixed payload: its data fields and what it means."""
    rows = ["| type | data | meaning |", "|---|---|---|"]
    for event, name in wire.events.items():
        rows.append(f"| `{event}` | {_shape(wire, name)} | {_type_doc(wire, name)} |")
    return "\n".join(rows)


def types_table(wire: Wire) -> str:
    """Every named type: each field, its JSON type and its description."""
    out: list[str] = []
    for name in sorted(wire.types):
        schema = wire.types[name]
        props = schema.get("properties", {})
        if not props:
            continue
        required = set(schema.get("required", []))
        out.append(f"**`{name}`**" + (f": {_type_doc(wire, name)}" if schema.get(
            "description") else ""))
        out.append("")
        out += ["| field | type | |", "|---|---|---|"]
        for field, prop in props.items():
            opt = "" if field in required else "?"
            out.append(f"| `{field}{opt}` | {_cell(_json_type(prop))} | "
                       f"{_cell(prop.get('description') or '')} |")
        out.append("")
    return "\n".join(out).rstrip()


def _json_type(schema: Schema) -> str:
    if "$ref" in schema:
        return ref_name(schema["$ref"])
    if "const" in schema:
        return repr(schema["const"]).replace("'", '"')
    if "enum" in schema:
        return " | ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " | ".join(_json_type(s) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind == "array":
        return _json_type(schema.get("items", {})) + "[]"
    if kind == "object":
        return "object"
    return str(kind or "any")


SECTIONS = {"requests": requests_table, "server-requests": server_requests_table,
            "events": events_table, "types": types_table}


def render(wire: Wire, current: str) -> str:
    """``current`` with each ``<!-- generated: NAME -->`` … ``<!-- end generated -->`` refilled."""
    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        return (f"<!-- generated: {name} (python -m openprogram_lsp.lsp.codegen) -->\n"
                f"{SECTIONS[name](wire)}\n<!-- end generated -->")

    return re.sub(r"<!-- generated: ([a-z-]+)[^\n]*-->\n.*?<!-- end generated -->", fill,
                  current, flags=re.S)
