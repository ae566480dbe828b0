"""openprogram/restore answers -32002 while another process runs a turn in the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Starter, write_script
from tests.store.test_restore_guard import turn_in_another_process


async def test_lsp_restore_answers_session_busy(start: Starter, tmp_path: Path,
                                                workspace: Path) -> None:
    (workspace / "notes.txt").write_text("first\n")
    edit = [{"tool_calls": [{"name": "write_file",
                             "arguments": {"path": "notes.txt", "content": "second\n"}}]},
            {"text": "Edited."}]
    client = await start(model=write_script(tmp_path / "s.json", edit),
                         args=["--permission-mode", "bypass"])
    result = await client.call("openprogram/chat", {"text": "edit notes"})
    other = turn_in_another_process(workspace, tmp_path / "home")
    try:
        with pytest.raises(JsonRpcException) as info:
            await client.call("openprogram/restore",
                              {"checkpointId": result["checkpoint"]["parentId"]})
        assert info.value.code == -32002 and f"pid {other.pid}" in info.value.message
    finally:
        other.kill()
        other.wait()
    assert (workspace / "notes.txt").read_text() == "second\n"
