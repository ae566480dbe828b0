"""A file written by another process reaches the client as ``file.changed``; ignored ones don't."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from tests.lsp.conftest import OpClient, Starter


def _paths(client: OpClient) -> set[str]:
    return {c["path"] for e in client.of_type("file.changed") for c in e["data"]["changes"]}


async def _watching(client: OpClient, workspace: Path) -> None:
    """Wait until the watcher reports (it starts after ``initialized``)."""
    probe = workspace / "probe.txt"
    for i in range(200):
        probe.write_text(str(i))
        await asyncio.sleep(0.05)
        if "probe.txt" in _paths(client):
            return
    raise AssertionError("the watcher never reported")


async def test_external_write_arrives_as_file_changed(start: Starter, workspace: Path) -> None:
    (workspace / ".gitignore").write_text("ignored.txt\nbuild/\n")
    (workspace / "node_modules").mkdir()
    client = await start(model="offline")
    await _watching(client, workspace)
    script = (
        "import pathlib, sys\n"
        "root = pathlib.Path(sys.argv[1])\n"
        "(root / 'ignored.txt').write_text('x')\n"
        "(root / 'build').mkdir()\n"
        "(root / 'build' / 'out.o').write_text('x')\n"
        "(root / 'node_modules' / 'm.js').write_text('x')\n"
        "(root / 'src').mkdir()\n"
        "(root / 'src' / 'real.py').write_text('print(1)')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(workspace)], check=True)
    event = await client.wait_event(
        "file.changed", lambda e: any(c["path"] == "src/real.py" for c in e["data"]["changes"]))
    change = next(c for c in event["data"]["changes"] if c["path"] == "src/real.py")
    assert change["change"] in ("added", "modified")
    assert event["data"]["root"] == str(workspace.resolve())
    assert event["sessionId"] is None
    seen = _paths(client)
    assert not seen & {"ignored.txt", "build/out.o", "node_modules/m.js"}

    (workspace / "src" / "real.py").unlink()
    await client.wait_event("file.changed", lambda e: {"path": "src/real.py",
                                                       "change": "deleted"} in
                            e["data"]["changes"])


async def test_files_list_follows_the_watcher(start: Starter, workspace: Path) -> None:
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "old_module.py").write_text("")
    client = await start(model="offline")
    await _watching(client, workspace)

    async def files(query: str) -> list[str]:
        found = await client.call("openprogram/files", {"query": query})
        return [f["path"] for f in found["files"]]

    assert await files("oldmod") == ["old_module.py"]  # the list is built now
    (workspace / "build").mkdir()
    (workspace / "build" / "new_module.py").write_text("")  # ignored: never listed
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "new_module.py").write_text("")
    (workspace / "old_module.py").unlink()
    await client.wait_event("file.changed", lambda e: any(
        c["path"] == "old_module.py" for c in e["data"]["changes"]))
    await client.wait_event("file.changed", lambda e: any(
        c["path"] == "pkg/new_module.py" for c in e["data"]["changes"]))
    assert await files("newmod") == ["pkg/new_module.py"]
    assert await files("oldmod") == []
