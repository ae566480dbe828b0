"""The hub against a real MCP server subprocess (stdio): tools, calls, results, prompts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.core.errors import InvalidParams, ToolError
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.command import MAX_OUTPUT_BYTES
from openprogram_lsp.tools.mcp import McpHub
from openprogram_lsp.tools.mcp.expand import expand
from tests.tools.mcp.demo import demo_def, trusted_editor_servers


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpHub, Path, Path]]:
    """One hub with the demo server, shared by this module's tests (a start costs seconds)."""
    root = tmp_path_factory.mktemp("mcp")
    ws, notes = root / "ws", root / "notes"
    ws.mkdir()
    notes.mkdir()
    hub = McpHub(root / "home", read_user_config=False, call_timeout=10)
    trusted_editor_servers(hub, {"demo": demo_def(notes=notes)})
    yield hub, ws, notes
    hub.shutdown()


async def _tools(hub: McpHub, ws: Path) -> dict[str, Tool]:
    return {t.name: t for t in await hub.tools_for(ws)}


async def _run(tool: Tool, ws: Path, **arguments: Any) -> ToolOutput:
    return await tool.run(tool.parse(arguments), ToolContext(workspace=ws))


async def test_tools_are_listed_with_names_schemas_and_kinds(shared: tuple[McpHub, Path, Path]
                                                             ) -> None:
    hub, ws, _ = shared
    tools = await _tools(hub, ws)
    kinds = {name: t.kind for name, t in tools.items()}
    assert kinds["mcp__demo__echo"] == "read"
    assert kinds["mcp__demo__delete_note"] == "delete"
    assert kinds["mcp__demo__add_note"] == "edit"
    assert kinds["mcp__demo__count"] == "other"
    spec = tools["mcp__demo__echo"].spec()
    assert spec.input_schema["properties"]["text"]["type"] == "string"
    assert spec.input_schema["required"] == ["text"]
    assert tools["mcp__demo__echo"].source() == {"server": "demo", "tool": "echo"}
    assert tools["mcp__demo__echo"].category == "mcp"


async def test_calls_return_text_errors_and_attachments(shared: tuple[McpHub, Path, Path]
                                                        ) -> None:
    hub, ws, _ = shared
    tools = await _tools(hub, ws)
    out = await _run(tools["mcp__demo__echo"], ws, text="héllo\x00 world")
    assert (out.text, out.is_error) == ("héllo\x00 world", False)
    failed = await _run(tools["mcp__demo__fail"], ws)
    assert failed.is_error and "the note store is locked" in failed.text
    pic = await _run(tools["mcp__demo__picture"], ws)
    assert not pic.is_error and "image 1: image/png" in pic.text
    assert pic.data["attachments"][0]["mimeType"] == "image/png"
    assert pic.data["attachments"][0]["data"].startswith("iVBOR")
    link = await _run(tools["mcp__demo__link"], ws)
    assert "note://readme" in link.text
    assert link.data["attachments"] == [{"type": "resource_link", "uri": "note://readme",
                                         "name": "readme"}]


async def test_an_image_result_is_stored_and_passed_on_as_an_image(
        shared: tuple[McpHub, Path, Path], tmp_path: Path) -> None:
    from openprogram_lsp.core.images import ImageBlobs, load_base64

    hub, ws, _ = shared
    tools = await _tools(hub, ws)
    blobs = ImageBlobs(tmp_path / "images")
    tool = tools["mcp__demo__picture"]
    pic = await tool.run(tool.parse({}), ToolContext(workspace=ws, images=blobs))
    assert not pic.is_error and "image 1: image/png, 1x1" in pic.text
    assert "attachments" not in pic.data  # the bytes live in the store, not the node
    [part] = pic.data["images"]
    assert (part.media_type, part.width, part.height) == ("image/png", 1, 1)
    assert load_base64(part.sha256).startswith("iVBOR") and blobs.count() == 1


async def test_a_huge_result_is_capped_like_built_in_output(shared: tuple[McpHub, Path, Path]
                                                            ) -> None:
    hub, ws, _ = shared
    tools = await _tools(hub, ws)
    out = await _run(tools["mcp__demo__huge"], ws, size=2_000_000)
    assert len(out.text.encode()) <= MAX_OUTPUT_BYTES + 200 and "truncated" in out.text


async def test_arguments_are_checked_against_the_schema(shared: tuple[McpHub, Path, Path]
                                                        ) -> None:
    hub, ws, _ = shared
    tool = (await _tools(hub, ws))["mcp__demo__echo"]
    with pytest.raises(ToolError, match="text"):
        tool.parse({"text": 5})
    with pytest.raises(ToolError, match="required"):
        tool.parse({})


async def test_a_slow_call_times_out_clearly_and_the_server_keeps_serving(
        shared: tuple[McpHub, Path, Path]) -> None:
    hub, ws, _ = shared
    tools = await _tools(hub, ws)
    hub.call_timeout = 0.5
    try:
        started = time.monotonic()
        out = await _run(tools["mcp__demo__slow"], ws, seconds=30)
        assert time.monotonic() - started < 5
        assert out.is_error and "did not answer slow within 0.5s" in out.text
    finally:
        hub.call_timeout = 10
    again = await _run(tools["mcp__demo__echo"], ws, text="still here")
    assert again.text == "still here"


async def test_prompts_and_resources(shared: tuple[McpHub, Path, Path]) -> None:
    hub, ws, _ = shared
    await hub.tools_for(ws)
    prompts = hub.prompts(ws)
    assert [(s, p.name, [a.name for a in p.arguments]) for s, p in prompts] == [
        ("demo", "review", ["code"])]
    messages = await hub.get_prompt(ws, "demo", "review", {"code": "x = 1"})
    assert messages[0]["role"] == "user"
    assert "x = 1" in messages[0]["content"]["text"]
    assert [(s, r.uri) for s, r in hub.resources(ws)] == [("demo", "note://readme")]
    contents = await hub.read_resource(ws, "demo", "note://readme")
    assert contents[0]["text"] == "Notes are plain text files."


async def test_status_lists_servers_tools_and_stderr(shared: tuple[McpHub, Path, Path]) -> None:
    hub, ws, _ = shared
    await hub.tools_for(ws)
    [row] = hub.status(ws)
    assert row["name"] == "demo" and row["status"] == "ready" and row["origin"] == "editor"
    assert row["transport"] == "stdio" and row["trust"] == "allow"  # asked first (test_trust)
    assert {"name": "mcp__demo__echo", "tool": "echo", "kind": "read",
            "description": "Echo the text back."} in row["tools"]
    assert row["prompts"][0]["command"] == "/mcp__demo__review"
    assert row["resources"][0]["reference"] == "@demo:note://readme"
    assert any("starting" in line for line in row["stderr"])  # stderr reached us


async def test_prompts_expand_as_slash_commands_and_resources_attach(
        shared: tuple[McpHub, Path, Path]) -> None:
    hub, ws, _ = shared
    await hub.tools_for(ws)
    by_key = await expand(hub, ws, "/mcp__demo__review code=x=1")
    assert by_key is not None and by_key.prompt == "demo/review"
    assert by_key.text == "Please review this code carefully:\nx=1"
    whole = await expand(hub, ws, "/mcp__demo__review print('hi')\nprint('there')")
    assert whole is not None and whole.text.endswith("print('hi')\nprint('there')")
    with pytest.raises(InvalidParams, match="code"):
        await expand(hub, ws, "/mcp__demo__review")
    with pytest.raises(InvalidParams, match="/mcp__demo__review"):
        await expand(hub, ws, "/mcp__demo__nope x")
    attached = await expand(hub, ws, "Summarise @demo:note://readme. Ignore me@demo:x")
    assert attached is not None and attached.resources == ["@demo:note://readme"]
    assert attached.text.startswith("Summarise @demo:note://readme.")
    assert "[attached @demo:note://readme]\nNotes are plain text files." in attached.text
    assert await expand(hub, ws, "mail me at bob@example.com:8080 or @other:uri") is None
