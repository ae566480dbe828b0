"""A plain Neovim LSP client (no plugin, no experimental capability) gets approvals as
window/showMessageRequest and can still approve an edit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.nvim import runner


@pytest.mark.usefixtures("require_nvim")
@pytest.mark.timeout(180)
def test_plain_client_approves_through_show_message_request(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    model = runner.write_script(tmp_path / "script.json", [
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "plain.txt", "content": "plain\n"}}]},
        {"text": "Written."},
    ])
    out = runner.run_scenario("plain_client", ws, model=model, home=home, plugin=False)
    assert "openprogram" not in (out["experimental"] or {})
    req = out["requests"][0]
    assert req["kind"] == "lsp_message"
    assert req["titles"][0] == "Allow once" and "Reject" in req["titles"]
    assert out["result"]["status"] == "done"
    assert out["file"] == "plain\n"
    assert "text.delta" in out["plain_events"]
