"""Document sync through the real transport: reads see unsaved buffers, writes never clobber."""

from __future__ import annotations

from pathlib import Path

from tests.lsp.conftest import Starter, write_script
from tests.lsp.docs_helpers import Editor, with_editor


def _tool_output(client: object) -> str:
    finished = client.of_type("tool.finished")  # type: ignore[attr-defined]
    assert finished, "no tool ran"
    return str(finished[-1]["data"]["output"])


async def test_read_serves_the_dirty_buffer(start: Starter, tmp_path: Path,
                                            workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n", "utf-8")
    script = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
              {"text": "read"},
              {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
              {"text": "read"},
              {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
              {"text": "read"}]
    editors: list[Editor] = []
    client = await start(model=write_script(tmp_path / "s.json", script),
                         setup=with_editor(editors), apply_edit=True)
    ed = editors[0]
    uri = ed.open(workspace / "a.py")
    ed.edit(uri, (0, 4), (0, 5), "42")  # unsaved: x = 42
    await client.call("openprogram/chat", {"text": "look"})
    out = _tool_output(client)
    assert "x = 42" in out and "unsaved changes in the editor" in out
    ed.save(workspace / "a.py")  # clean again: the plain file, no note
    client.events.clear()
    await client.call("openprogram/chat", {"text": "again"})
    out = _tool_output(client)
    assert out == "     1\tx = 42"
    ed.edit(uri, (0, 4), (0, 6), "7")  # dirty again, then closed without saving
    ed.close(uri)
    client.events.clear()
    await client.call("openprogram/chat", {"text": "after close"})
    assert _tool_output(client) == "     1\tx = 42"  # the disk: a closed buffer is not consulted


async def test_edit_under_a_dirty_buffer_goes_into_the_buffer(start: Starter, tmp_path: Path,
                                                              workspace: Path) -> None:
    target = workspace / "m.py"
    target.write_text("def f():\n    return 1\n", "utf-8")
    script = [{"tool_calls": [{"name": "edit_file", "arguments": {
        "path": "m.py", "old_text": "return 1", "new_text": "return 2"}}]}, {"text": "done"}]
    editors: list[Editor] = []
    client = await start(model=write_script(tmp_path / "s.json", script),
                         setup=with_editor(editors), apply_edit=True)
    ed = editors[0]
    uri = ed.open(target)
    ed.edit(uri, (2, 0), (2, 0), "# mine, unsaved\n")
    result = await client.call("openprogram/chat", {"text": "bump"})
    assert result["status"] == "done"
    card = client.permission_requests[0]["toolCall"]
    assert "unsaved changes in the editor" in card["title"]
    assert card["diff"]["unsavedChanges"] is True
    assert "# mine, unsaved" in card["diff"]["oldText"]
    # both sides kept, in the buffer; the disk is untouched, and the checkpoint holds the
    # buffer (tests/lsp/test_buffer_checkpoints.py: undo, redo and blame of it)
    assert ed.text[uri] == "def f():\n    return 2\n# mine, unsaved\n"
    assert target.read_text("utf-8") == "def f():\n    return 1\n"
    assert result["checkpoint"]["files"] == [{"path": "m.py", "status": "modified",
                                              "unsaved": True}]
    assert "editor's buffer" in _tool_output(client)


async def test_write_without_apply_edit_is_refused(start: Starter, tmp_path: Path,
                                                   workspace: Path) -> None:
    target = workspace / "n.txt"
    target.write_text("disk\n", "utf-8")
    script = [{"tool_calls": [{"name": "write_file", "arguments": {
        "path": "n.txt", "content": "agent\n"}}]}, {"text": "done"}]
    editors: list[Editor] = []
    client = await start(model=write_script(tmp_path / "s.json", script),
                         setup=with_editor(editors), apply_edit=False)
    ed = editors[0]
    uri = ed.open(target)
    ed.edit(uri, (0, 0), (0, 4), "user")
    await client.call("openprogram/chat", {"text": "write"})
    out = _tool_output(client)
    assert "unsaved changes in the editor" in out and "applyEdit" in out
    assert target.read_text("utf-8") == "disk\n"
    assert ed.text[uri] == "user\n"


async def test_clean_buffer_writes_go_to_disk(start: Starter, tmp_path: Path,
                                              workspace: Path) -> None:
    target = workspace / "c.txt"
    target.write_text("old\n", "utf-8")
    script = [{"tool_calls": [{"name": "write_file", "arguments": {
        "path": "c.txt", "content": "new\n"}}]}, {"text": "done"}]
    editors: list[Editor] = []
    client = await start(model=write_script(tmp_path / "s.json", script),
                         setup=with_editor(editors), apply_edit=True)
    editors[0].open(target)
    result = await client.call("openprogram/chat", {"text": "write"})
    assert target.read_text("utf-8") == "new\n"
    assert result["checkpoint"] is not None
    assert not editors[0].applied
    assert client.permission_requests[0]["toolCall"]["diff"].get("unsavedChanges") is not True


async def test_grep_searches_the_dirty_buffer_like_read_file(start: Starter, tmp_path: Path,
                                                             workspace: Path) -> None:
    (workspace / "a.py").write_text("old_name = 1\n", "utf-8")
    (workspace / "b.py").write_text("print(old_name)\n", "utf-8")
    script = [{"tool_calls": [{"name": "grep", "arguments": {"pattern": "_name"}},
                              {"name": "read_file", "arguments": {"path": "a.py"}}]},
              {"text": "found"}]
    editors: list[Editor] = []
    client = await start(model=write_script(tmp_path / "s.json", script),
                         setup=with_editor(editors))
    ed = editors[0]
    uri = ed.open(workspace / "a.py")
    ed.edit(uri, (0, 0), (0, 3), "new")  # unsaved rename: new_name = 1
    await client.call("openprogram/chat", {"text": "where is it used"})
    names = {e["data"]["toolCallId"]: e["data"]["name"] for e in client.of_type("tool.started")}
    out = {names[e["data"]["toolCallId"]]: e["data"]["output"]
           for e in client.of_type("tool.finished")}
    grep, read = out["grep"], out["read_file"]
    head, *hits = grep.splitlines()
    assert head.startswith("[unsaved changes in the editor: a.py searched as the editor's")
    assert sorted(hits) == ["a.py:1: new_name = 1", "b.py:1: print(old_name)"]
    assert read.splitlines()[1] == "     1\tnew_name = 1"  # read_file agrees
