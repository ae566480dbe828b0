"""The Neovim plugin's wire module: method and event tables, and ``---@class`` annotations."""

from __future__ import annotations

from openprogram_lsp.lsp.codegen.model import Schema, Wire, constant_key, method_key, ref_name

HEADER = """\
--[[
Wire names and payload shapes of the openprogram LSP extension (protocol v1).

Generated from server/openprogram_lsp/lsp/wire.py by `python -m openprogram_lsp.lsp.codegen`;
do not edit (tests/lsp/test_codegen.py checks it). The `---@class` annotations give LuaLS the
fields of every request, result and event payload.
Example: `client:request(protocol.methods.CHAT, { text = 'hi' }, cb)`.
]]
"""


def lua_type(schema: Schema) -> str:
    """The LuaLS type of a JSON Schema fragment."""
    if "$ref" in schema:
        return "openprogram." + ref_name(schema["$ref"])
    if "const" in schema:
        return _lit(schema["const"])
    if "enum" in schema:
        return "|".join(_lit(v) for v in schema["enum"])
    if "anyOf" in schema:
        return "|".join(dict.fromkeys(lua_type(s) for s in schema["anyOf"]))
    kind = schema.get("type")
    if kind == "string":
        return "string"
    if kind == "integer":
        return "integer"
    if kind == "number":
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "null":
        return "vim.NIL"
    if kind == "array":
        item = lua_type(schema.get("items", {}))
        return f"({item})[]" if "|" in item else f"{item}[]"
    if kind == "object":
        extra = schema.get("additionalProperties", True)
        value = "any" if extra is True or extra == {} or "properties" in schema else lua_type(
            extra)
        return f"table<string, {value}>"
    return "any"


def _lit(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value).lower()


def _class(name: str, schema: Schema) -> list[str]:
    lines: list[str] = []
    desc = " ".join((schema.get("description") or "").split()).replace("``", "`")
    lines.append(f"---@class openprogram.{name}" + (f" {desc}" if desc else ""))
    required = set(schema.get("required", []))
    for field, prop in schema.get("properties", {}).items():
        opt = "" if field in required else "?"
        doc = " ".join((prop.get("description") or "").split()).replace("``", "`")
        key = field if field.isidentifier() else f"['{field}']"
        lines.append(f"---@field {key}{opt} {lua_type(prop)}" + (f" {doc}" if doc else ""))
    return lines


def _enum(name: str, doc: str, entries: dict[str, str]) -> list[str]:
    lines = [f"--- {doc}", f"---@enum openprogram.{name}", f"M.{_attr(name)} = {{"]
    lines += [f"  {k} = '{v}'," for k, v in entries.items()]
    lines.append("}")
    return lines


def _attr(name: str) -> str:
    return {"Method": "methods", "ServerMethod": "server_methods", "EventType": "events"}[name]


def render(wire: Wire) -> str:
    """The whole generated module."""
    t = wire.table
    out = [HEADER, "---@class openprogram.Protocol", "local M = {}", ""]
    out += _enum("Method", "Client -> server requests.",
                 {constant_key(method_key(m)): m for m in t["clientRequests"]})
    out.append("")
    server = [*t["serverNotifications"], *t["serverRequests"]]
    out += _enum("ServerMethod", "Server -> client notifications and requests.",
                 {constant_key(method_key(m)): m for m in server})
    out.append("")
    out += _enum("EventType", "Event types carried by `openprogram/event`.",
                 {constant_key(e): e for e in t["eventTypes"]})
    out += ["", "--- The experimental client capability that turns on the custom server "
            "requests.", "M.capability = { permissions = true, questions = true, "
            "diagnostics = true, navigation = true }", ""]
    out += ["--- Params and result type of each client request (for annotations).",
            "M.request_types = {"]
    out += [f"  ['{m}'] = {{ params = 'openprogram.{p}', result = 'openprogram.{r}' }},"
            for m, (p, r) in wire.requests.items()]
    out += ["}", "", "--- The data type of each event type.", "M.event_types = {"]
    out += [f"  ['{e}'] = 'openprogram.{n}'," for e, n in wire.events.items()]
    out += ["}", ""]
    for name in sorted(wire.types):
        out += _class(name, wire.types[name])
        out.append("")
    out += ["return M", ""]
    return "\n".join(out)
