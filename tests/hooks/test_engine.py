"""The hook engine's per-turn lookups: cached by each file's stamp, an edit seen next turn."""

from __future__ import annotations

import json
import os
from pathlib import Path

from openprogram_lsp.hooks.engine import HookEngine


def _stop(command: str) -> str:
    return json.dumps({"hooks": {"Stop": [{"hooks": [{"command": command}]}]}})


def test_hook_config_is_cached_until_a_file_it_reads_changes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".openprogram").mkdir(parents=True)
    user = tmp_path / "user.json"
    engine = HookEngine(tmp_path / "home", user_files=[user])
    first = engine.config(ws)
    assert first.hooks == [] and engine.config(ws) is first  # nothing changed: not re-read
    settings = ws / ".openprogram" / "settings.json"
    settings.write_text(_stop("a"))  # a file that did not exist appears
    assert [h.command for h in engine.config(ws).hooks] == ["a"]
    stamp = os.stat(settings)
    settings.write_text(_stop("b"))  # same size, and the clock may not have moved:
    os.utime(settings, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    replaced = ws / ".openprogram" / "new.json"
    replaced.write_text(_stop("c"))  # ...but a replaced file is a new inode
    os.utime(replaced, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    os.replace(replaced, settings)
    assert [h.command for h in engine.config(ws).hooks] == ["c"]
    user.write_text(_stop("u"))  # the user's file counts too
    assert [h.command for h in engine.config(ws).hooks] == ["u", "c"]
