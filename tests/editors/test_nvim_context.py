"""Context attachments and the agent's code actions in a real headless Neovim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openprogram_lsp.core.transcript import without_environment
from tests.editors.nvim import runner

pytestmark = [pytest.mark.usefixtures("require_nvim"), pytest.mark.timeout(180)]

APP = "import os\n\ndef main():\n    print(x)\n    return 0\n"


def test_range_command_attaches_lines_and_diagnostics(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "app.py").write_text(APP, "utf-8")
    log = tmp_path / "model.jsonl"
    (ws / "other.py").write_text("y = 2\n", "utf-8")
    model = runner.write_script(tmp_path / "script.json", [{"text": "x is not defined."},
                                                           {"text": "They differ."}])
    out = runner.run_scenario("range_attach", ws, model=model, home=home,
                              extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    sent = json.loads(log.read_text("utf-8").splitlines()[0])["messages"][-1]["content"]
    # the buffer as the user sees it (unsaved edit included), not the disk
    assert ('<selection path="app.py" lines="3-5">\ndef main():\n    print(x)\n'
            '    return 1  # unsaved\n</selection>') in sent
    assert "app.py:4:11: error: undefined name 'x' [pyflakes]" in sent
    assert without_environment(sent).endswith("why does this fail?")  # the note comes after
    text = "\n".join(out["lines"])
    assert "[selection app.py:3-5] [diagnostics app.py:3-5 (1)]" in text
    assert "x is not defined." in text
    assert "@app.py" in out["files"]
    assert "/compact" in out["commands"]
    assert out["buffer"] == ["#buffer"]
    second = json.loads(log.read_text("utf-8").splitlines()[1])["messages"][-1]["content"]
    assert '<file path="app.py"' in second and "return 1  # unsaved" in second
    assert '<file path="other.py">\ny = 2\n</file>' in second


def test_code_action_in_neovim_without_the_plugin(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n", "utf-8")
    model = runner.write_script(tmp_path / "script.json", [
        {"text": "Fixing.", "tool_calls": [{"name": "edit_file", "arguments": {
            "path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}]},
        {"text": "add now adds."}])
    out = runner.run_scenario("code_action_plain", ws, model=model, home=home, plugin=False)
    # the approval was a plain showMessageRequest through vim.ui.select
    assert any("Allow once" in titles for titles in out["selects"])
    # both sides kept in the buffer, still unsaved; the disk untouched
    assert out["buffer"] == ["def add(a, b):", "    return a + b", "# mine, unsaved"]
    assert out["modified"] is True
    assert out["disk"] == "def add(a, b):\n    return a - b\n"
    assert any(str(n).startswith("shown: OpenProgram:") and "add now adds." in str(n)
               for n in out["notes"]), out["notes"]


def test_slash_commands_in_the_input(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "app.py").write_text(APP, "utf-8")
    (ws / ".openprogram" / "commands").mkdir(parents=True)
    (ws / ".openprogram" / "commands" / "explain.md").write_text(
        "---\ndescription: Explain a file\n---\nExplain $ARGUMENTS briefly.\n", "utf-8")
    log = tmp_path / "model.jsonl"
    model = runner.write_script(tmp_path / "script.json", [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt",
                                                             "content": "one\n"}}]},
        {"text": "Created."},
        {"text": "It prints x."},
        {"text": "First answer."},
        {"text": "Second answer."},
        {"text": "Odd indeed."},
        {"text": "Install it."},
    ])
    out = runner.run_scenario("slash_commands", ws, model=model, home=home,
                              extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    assert out["created"] == "one\n"
    # undone by the CLI: Neovim's /undo asks the server, and finds nothing left
    assert out["cli_undo"]["code"] == 0 and out["cli_undo"].get("file") is None, out["cli_undo"]
    assert "no turn left to undo" in out["undo_after_cli"]
    # the CLI's redo brings the turn back; /undo undoes it again
    assert out["cli_redo"]["code"] == 0 and out["cli_redo"].get("file") == "one\n", out["cli_redo"]
    assert "undid turn" in out["undo_note"] and "notes.txt" in out["undo_note"]
    assert "no turn left to undo" in out["undo_again"]
    assert out["turns_after_undo"] == 1  # /undo never started a turn
    last = [json.loads(line)["messages"][-1] for line in log.read_text("utf-8").splitlines()]
    users = [m["content"] for m in last if m["role"] == "user"]
    assert users[1] == "Explain app.py briefly."
    assert out["fork_input"] == ["first question"]
    assert "/usr/bin is missing" in users and "/etc/hosts is odd" in users
    assert not any(u.startswith(("/undo", "/fork", "/model", "/mode", "/nosuch", "/new"))
                   for u in users)
    assert out["model"].startswith("scripted:")
    assert out["mode"] == "plan"
    assert "not a permission mode" in out["bad_mode"]
    assert out["unknown"].startswith("openprogram: unknown command /nosuch")
    assert out["turns_after_unknown"] == 4
    assert any(line.startswith(("Nothing to compact yet", "Context compacted"))
               for line in out["compact_lines"]), out["compact_lines"][-6:]
    assert out["new_session"] is False
    # the fork: a branch named alt whose message replaced "first question" (its sibling)
    texts = [n["text"] for n in out["history"]["nodes"] if n["role"] == "user"]
    assert texts == ["create notes.txt", "/explain app.py", "second question"]
    alt = [b for b in out["branches"]["branches"] if b.get("name") == "alt"]
    assert len(alt) == 1 and alt[0]["headId"] == out["history"]["headId"]
    assert len(out["branches"]["branches"]) == 2
    assert "Second answer." in "\n".join(out["fork_lines"])


def test_agent_reads_and_edits_a_dirty_buffer_with_the_plugin(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n", "utf-8")
    log = tmp_path / "model.jsonl"
    model = runner.write_script(tmp_path / "script.json", [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}]},
        {"text": "add now adds."}])
    out = runner.run_scenario("dirty_buffer", ws, model=model, home=home,
                              extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    calls = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    read = calls[1]["messages"][-1]["content"]  # the read_file result the model got
    assert "unsaved changes in the editor" in read and "# mine, unsaved" in read
    assert out["buffer"] == ["def add(a, b):", "    return a + b", "# mine, unsaved"]
    assert out["modified"] is True
    assert out["disk"] == "def add(a, b):\n    return a - b\n"


def test_an_agent_edit_into_an_unsaved_buffer_is_undone_and_blamed(tmp_path: Path) -> None:
    """#31 in real Neovim: the turn's checkpoint holds the buffer's edit; /undo takes it back
    out of the buffer with the user's unsaved line kept; U redoes it; saved, it is blamed."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "src").mkdir(parents=True)
    home.mkdir()
    (ws / "src" / "util.py").write_text("def f():\n    return 1\n", "utf-8")
    model = runner.write_script(tmp_path / "script.json", [
        {"tool_calls": [{"name": "write_file", "arguments": {
            "path": "src/util.py", "content": "def f():\n    return 2\n# mine, unsaved\n"}}]},
        {"text": "Bumped."}])
    out = runner.run_scenario("buffer_undo", ws, model=model, home=home)
    user = ["def f():", "    return 1", "# mine, unsaved"]
    agent = ["def f():", "    return 2", "# mine, unsaved"]
    assert out["after_turn"] == agent
    assert out["disk_after_turn"] == "def f():\n    return 1\n"
    turn = out["checkpoints"]["checkpoints"][0]
    assert turn["kind"] == "turn"
    assert turn["files"] == [{"path": "src/util.py", "status": "modified", "unsaved": True}]
    assert out["undo_note"].startswith("openprogram: undid turn "), out["undo_note"]
    assert "src/util.py" in out["undo_note"]
    assert out["after_undo"] == user and out["modified_after_undo"] is True
    assert out["disk_after_undo"] == "def f():\n    return 1\n"  # never written under the buffer
    assert out["after_redo"] == agent
    assert out["disk_saved"] == "def f():\n    return 2\n# mine, unsaved\n"
    assert [lens["line"] for lens in out["lenses"]] == [1], out["lenses"]
    assert out["lenses"][0]["title"].startswith("edited by the agent in turn 1")


def test_image_command_attaches_image_files_and_the_clipboards(tmp_path: Path) -> None:
    from tests.imagefiles import gif, png

    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "shot.png").write_bytes(png(6, 4))
    (tmp_path / "elsewhere.gif").write_bytes(gif(3, 2))
    (tmp_path / "copied.png").write_bytes(png(7, 5, seed=9))  # what the clipboard holds
    log = tmp_path / "model.jsonl"
    model = runner.write_script(tmp_path / "script.json", [{"text": "Three pictures."}])
    out = runner.run_scenario("image_attach", ws, model=model, home=home,
                              extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log),
                                         "OP_OUTSIDE_IMAGE": str(tmp_path / "elsewhere.gif"),
                                         "OP_CLIPBOARD_IMAGE": str(tmp_path / "copied.png")})
    assert out["queued_after_missing"] == 0
    assert out["pasted"] == "paste-1.png"
    sent = json.loads(log.read_text("utf-8").splitlines()[0])["messages"][-1]
    assert [(i["media_type"], i["width"], i["height"]) for i in sent["images"]] \
        == [("image/png", 6, 4), ("image/gif", 3, 2), ("image/png", 7, 5)]
    assert '<image path="shot.png" type="image/png" pixels="6x4"/>' in sent["content"]
    text = "\n".join(out["lines"])
    assert "[image shot.png 6x4 " in text and "[image elsewhere.gif 3x2 " in text
    assert "[image paste-1.png 7x5 " in text
    missing = "\n".join(out["missing_lines"])
    assert "missing.png: no such file" in missing
    assert "sh found no image on the clipboard (cat: nothing-copied: No such file" in missing
    assert len(list((home / "images").glob("??/*"))) == 3
