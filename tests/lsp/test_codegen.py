"""The generated wire files (TypeScript, Lua, docs tables) match a fresh generation from
``lsp/wire.py``, and the docs' example events match the schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema

from openprogram_lsp.lsp import methods
from openprogram_lsp.lsp.codegen import generated, stale
from openprogram_lsp.lsp.codegen.model import load
from openprogram_lsp.lsp.schema import protocol_json_schema

REPO = Path(__file__).resolve().parents[2]


def test_generated_files_are_fresh() -> None:
    assert stale(REPO) == [], "run: python -m openprogram_lsp.lsp.codegen"


def test_a_field_added_to_a_model_reaches_both_editors() -> None:
    wire = load()
    wire.types["AgentInfo"]["properties"]["newField"] = {"type": "string"}
    files = generated(REPO, wire)
    assert "  newField?: string;" in files[Path("editors/vscode/src/wire.ts")]
    assert "---@field newField? string" in files[Path("editors/nvim/lua/openprogram/protocol.lua")]
    assert "`newField?`" in files[Path("docs/protocol.md")]


def test_output_schemas_say_what_wire_sends() -> None:
    schema = protocol_json_schema()
    restore = schema["requests"]["openprogram/restore"]["result"]
    assert "safetyCheckpointId" in restore["required"]  # always sent, maybe null
    assert "checkpointId" not in restore["required"]  # left out when there is none
    assert restore["properties"]["checkpointId"] == {
        "description": "The checkpoint the restore made", "title": "Checkpointid",
        "type": "string"}
    agents = schema["requests"]["openprogram/agents"]["result"]["$defs"]["AgentInfo"]
    assert {"kind", "createdAt"} <= set(agents["required"])
    assert {"queued", "error"} <= set(agents["properties"])
    assert agents["additionalProperties"] is False


def test_the_docs_example_events_match_the_schema() -> None:
    doc = (REPO / "docs" / "protocol.md").read_text("utf-8")
    lines = [ln for ln in doc.splitlines() if ln.startswith('{"type": ')]
    events = protocol_json_schema()["events"]  # once: each build is ~0.16 s of CPU
    checked = set()
    for line in lines:
        event = json.loads(line)
        if event["type"] in methods.EVENT_TYPES:
            validator = jsonschema.Draft202012Validator(events[event["type"]])
            errors = [e.message for e in validator.iter_errors(_unelide(event["data"]))]
            assert errors == [], f"{event['type']}: {errors}"
            checked.add(event["type"])
    assert len(checked) >= 12


def _unelide(data: object) -> object:
    """The docs shorten some values with "…"; drop those keys before validating."""
    if isinstance(data, dict):
        return {k: _unelide(v) for k, v in data.items() if k != "…"}
    return data


def test_markers_cover_the_tables() -> None:
    doc = (REPO / "docs" / "protocol.md").read_text("utf-8")
    names = re.findall(r"<!-- generated: ([a-z-]+)", doc)
    assert names == ["requests", "events", "server-requests", "types"]
