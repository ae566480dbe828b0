"""A workspace's .mcp.json is asked about first: once per definition, remembered, revocable."""

from __future__ import annotations

import json
from pathlib import Path

from openprogram_lsp.tools.mcp import McpHub
from openprogram_lsp.tools.mcp.trust import TrustBook
from tests.conftest import RecordingApprover
from tests.tools.mcp.demo import demo_def


def _write(ws: Path, *flags: str) -> None:
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"notes": demo_def(*flags)}}))


async def test_untrusted_servers_do_not_start_and_a_refusal_is_remembered(
        tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    _write(workspace)
    hub = McpHub(home, read_user_config=False)
    try:
        assert await hub.tools_for(workspace) == []  # nobody to ask: not started
        [row] = hub.status(workspace)
        assert (row["status"], row["trust"]) == ("untrusted", "unknown")
        no = RecordingApprover("reject_always")
        assert await hub.tools_for(workspace, approver=no, session_id="s", turn_id="t") == []
        [request] = no.requests
        assert request.tool_call.title.startswith("Start MCP server 'notes' from .mcp.json")
        assert request.tool_call.input["definition"]["command"]
        assert request.options[0].name == "Trust and start it"
        assert hub.status(workspace)[0]["status"] == "denied"
        again = RecordingApprover("allow_always")
        assert await hub.tools_for(workspace, approver=again) == []
        assert again.requests == []  # asked once per definition
    finally:
        await hub.aclose()
    fresh = McpHub(home, read_user_config=False)  # remembered across processes
    assert await fresh.tools_for(workspace, approver=RecordingApprover("allow_always")) == []
    assert fresh.status(workspace)[0]["status"] == "denied"


async def test_a_changed_definition_asks_again_and_revoking_forgets(
        tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    _write(workspace)
    hub = McpHub(home, read_user_config=False)
    try:
        no = RecordingApprover("reject_always")
        await hub.tools_for(workspace, approver=no)
        assert len(no.requests) == 1
        _write(workspace, "--changed")  # the repository changed the command line
        once = RecordingApprover("reject_once")
        await hub.tools_for(workspace, approver=once)
        assert len(once.requests) == 1
        assert await hub.revoke_trust(workspace, "notes")
        asked = RecordingApprover("reject_once")
        await hub.tools_for(workspace, approver=asked)
        assert len(asked.requests) == 1
    finally:
        await hub.aclose()


def test_trust_lives_outside_the_workspace(tmp_path: Path, workspace: Path) -> None:
    book = TrustBook.for_workspace(tmp_path / "home", workspace)
    book.remember("s", "f" * 32, "allow", command="x", persist=True)
    assert book.path is not None and workspace not in book.path.parents
    assert TrustBook.for_workspace(tmp_path / "home", workspace).decision("f" * 32) == "allow"
    assert TrustBook.for_workspace(tmp_path / "home", workspace).decision("g" * 32) is None
