"""openprogram/files and openprogram/commands over the real transport; a custom command's turn."""

from __future__ import annotations

import json
from pathlib import Path

from openprogram_lsp.core.transcript import without_environment
from tests.lsp.conftest import Starter, write_script


async def test_files_and_commands(start: Starter, tmp_path: Path, workspace: Path) -> None:
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "server.py").write_text("", "utf-8")
    (workspace / ".openprogram" / "commands").mkdir(parents=True)
    (workspace / ".openprogram" / "commands" / "explain.md").write_text(
        "---\ndescription: Explain code\n---\nExplain $ARGUMENTS to a newcomer.\n", "utf-8")
    log = tmp_path / "model.jsonl"
    client = await start(model=write_script(tmp_path / "s.json", [{"text": "ok"}]),
                         extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    files = await client.call("openprogram/files", {"query": "psrv"})
    assert files["files"][0]["path"] == "pkg/server.py"
    assert files["files"][0]["uri"] == (workspace / "pkg" / "server.py").as_uri()
    commands = await client.call("openprogram/commands", {})
    names = {c["name"]: c for c in commands["commands"]}
    assert names["compact"]["kind"] == "builtin"
    assert names["explain"] == {"name": "explain", "description": "Explain code",
                                "source": "workspace", "kind": "custom",
                                "path": ".openprogram/commands/explain.md"}
    result = await client.call("openprogram/chat", {"text": "/explain pkg/server.py"})
    sent = json.loads(log.read_text("utf-8").splitlines()[0])["messages"][-1]["content"]
    assert without_environment(sent) == "Explain pkg/server.py to a newcomer."
    assert sent.endswith("</environment>")  # the workspace note, after the message
    history = await client.call("openprogram/history", {"sessionId": result["sessionId"]})
    assert history["nodes"][0]["text"] == "/explain pkg/server.py"
    assert history["nodes"][0]["metadata"]["slashCommand"]["name"] == "explain"
    try:
        await client.call("openprogram/files", {"limit": 0})
    except Exception as exc:
        assert "limit" in str(exc)
    else:
        raise AssertionError("limit 0 accepted")
