"""The machine says no, over the real LSP transport: a server started under bubblewrap with a
read-only folder and a full 64 KiB tmpfs in its workspace. A write into either, a name too long,
a name with a newline and a grep past a path too deep to open are ordinary tool errors (no temp
file named, no "crashed" in the log), and the turn's warnings say which tool failed."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import Starter, write_script
from tests.tools.test_grep import make_deep, remove_deep

pytestmark = pytest.mark.timeout(120)


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture
def deep(workspace: Path) -> Iterator[Path]:
    (workspace / "tree").mkdir()
    make_deep(workspace / "tree")
    yield workspace
    if (workspace / "tree" / "d").exists():
        remove_deep(workspace / "tree")


async def test_file_system_refusals_are_tool_errors_and_the_turn_says_so(
        deep: Path, start: Starter, tmp_path: Path) -> None:
    workspace = deep
    bwrap = shutil.which("bwrap")
    assert bwrap is not None, "bubblewrap is installed by scripts/install-sandbox"
    (workspace / "ro").mkdir()
    (workspace / "ro" / "kept.txt").write_text("kept\n")
    (workspace / "full").mkdir()
    (workspace / "a.txt").write_text("findable\n")
    long_name = "n" * 300 + ".txt"
    model = write_script(tmp_path / "script.json", [
        _call("write_file", {"path": "ro/a.txt", "content": "x\n"}),
        _call("edit_file", {"path": "ro/kept.txt", "old_text": "kept", "new_text": "gone"}),
        _call("write_file", {"path": "full/big.txt", "content": "y" * 200_000}),
        _call("write_file", {"path": long_name, "content": "z\n"}),
        _call("write_file", {"path": "bad\nname.txt", "content": "z\n"}),
        _call("grep", {"pattern": "nowhere to be found"}),
        _call("grep", {"pattern": "findable"}),
        {"text": "Done."},
    ])
    wrap = [bwrap, "--dev-bind", "/", "/", "--ro-bind", str(workspace / "ro"),
            str(workspace / "ro"), "--size", "65536", "--tmpfs", str(workspace / "full"), "--"]
    client = await start(model=model, wrap=wrap, init_options={"permissionMode": "bypass"})
    result = await client.call("openprogram/chat", {"text": "go"})

    outputs = [e["data"]["output"] for e in client.of_type("tool.finished")]
    statuses = [e["data"]["status"] for e in client.of_type("tool.finished")]
    assert statuses == ["failed"] * 5 + ["completed"] * 2, outputs
    assert outputs[0] == "write_file failed: ro/a.txt: the file system is read-only (EROFS)"
    assert outputs[1] == ("edit_file failed: ro/kept.txt: the file system is read-only "
                          "(EROFS)")
    assert outputs[2] == ("write_file failed: full/big.txt: no space is left on the device "
                          "(ENOSPC)")
    assert outputs[3].startswith(f"write_file failed: {'n' * 60}…")
    assert outputs[3].endswith("a name in the path is too long (at most 255 bytes per name) "
                               "(ENAMETOOLONG)")
    assert "control character '\\n' in the file name" in outputs[4]
    assert outputs[5].startswith("no matches\n[not searched (unreadable, or too deep to open): "
                                 "./tree/d/d/"), outputs[5]
    assert outputs[6].startswith("a.txt:1: findable\n[not searched"), outputs[6]
    assert not any(".tmp" in o for o in outputs), outputs  # no temporary file's name
    assert not (workspace / "ro" / "a.txt").exists()
    assert (workspace / "ro" / "kept.txt").read_text() == "kept\n"

    assert result["status"] == "done", result
    assert result["warnings"][:4] == outputs[:4], result["warnings"]
    log = (tmp_path / "server0.log").read_text()
    assert "crashed" not in log and "Traceback" not in log

    # the deep tree removed under the live watcher: the server serves on (it was held for
    # minutes, deciding whether each of the 2,100 paths was ignored)
    remove_deep(workspace / "tree")
    listed = await asyncio.wait_for(client.call("openprogram/sessions", {}), 30)
    assert listed["sessions"]
