"""The server reads the config file of the editor's folder, not of the directory it runs in.

Real server over stdio started in another directory; the workspace folder comes from
``initialize`` alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import OpClient, Starter
from tests.providers.loopback import LoopbackServer, Reply
from tests.providers.wire import OpenAIStream


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's working directory: a folder with a config file of its own."""
    cwd = tmp_path / "elsewhere"
    (cwd / ".openprogram").mkdir(parents=True)
    (cwd / ".openprogram" / "config.toml").write_text('permission_mode = "plan"\n')
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return cwd


def _config(workspace: Path, text: str) -> None:
    (workspace / ".openprogram").mkdir(exist_ok=True)
    (workspace / ".openprogram" / "config.toml").write_text(text)


async def test_the_editor_folders_model_and_base_url_drive_the_turn(
        start: Starter, workspace: Path, elsewhere: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    api = LoopbackServer().start()
    try:
        api.queue(Reply(chunks=OpenAIStream(model="gpt-ws", text=["from the folder"]).events()))
        user = tmp_path / "xdg" / "openprogram-lsp"
        user.mkdir(parents=True)  # a base URL in a workspace file needs the user's trust
        (user / "config.toml").write_text(f"trusted_workspaces = [{str(workspace)!r}]\n")
        _config(workspace, f'model = "openai:gpt-ws"\n[providers.openai]\n'
                           f'base_url = "{api.url}/v1"\napi_key_env = "OP_WS_KEY"\n')
        monkeypatch.setenv("OP_WS_KEY", "sk-folder")
        client = await start()
        result = await client.call("openprogram/chat", {"text": "hi"})
        assert result["status"] == "done", result
        assert result["text"] == "from the folder"
        assert [r.path for r in api.received] == ["/v1/chat/completions"]
        assert api.received[0].json["model"] == "gpt-ws"
        assert api.received[0].headers["authorization"] == "Bearer sk-folder"
    finally:
        api.stop()


async def test_the_editor_folders_permission_mode_applies_not_the_cwds(
        start: Starter, workspace: Path, elsewhere: Path) -> None:
    asked: list[Any] = []

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            asked.append(params)
            return {"outcome": "selected", "optionId": "allow_once"}

    _config(workspace, 'permission_mode = "ask"\n[checkpoints]\nmax_file_bytes = 4\n')
    client = await start(setup=setup)
    result = await client.call("openprogram/chat", {"text": "write a.txt\nhello"})
    assert result["status"] == "done", result
    # the cwd's plan mode would have refused the write unasked; the folder's file says ask
    assert len(asked) == 1 and (workspace / "a.txt").read_text().startswith("hello")
    # and its checkpoint limits: a file over max_file_bytes is not recorded
    recorded = [f["path"] for f in (result["checkpoint"] or {}).get("files", [])]
    assert "a.txt" not in recorded


async def test_a_broken_folder_config_is_shown_and_fails_the_turn_naming_the_file(
        start: Starter, workspace: Path, elsewhere: Path) -> None:
    _config(workspace, 'permission_mode = "sideways"\n')
    client = await start()
    result = await client.call("openprogram/chat", {"text": "hi"})
    shown = [m.message for m in client.log_messages] + [
        m.message for m in client.messages]
    path = str(workspace / ".openprogram" / "config.toml")
    assert any(path in m for m in shown), shown
    assert result["status"] == "error" and path in result["error"]["message"]
    assert not list(workspace.glob("*.txt"))
    # the user's message is kept, with the failed turn after it
    history = await client.call("openprogram/history", {"sessionId": result["sessionId"]})
    assert [n["text"] for n in history["nodes"] if n["role"] == "user"] == ["hi"]
    assert history["nodes"][-1]["status"] == "error"
