"""The first turn's work built ahead (dispatcher/warmup.py): in a fresh process, the turn's
models are still to build and the tools' specs not made; after ``warm_up`` all are, the
session listing is read, and the first session's directory is ready and the mount table read:
a listing and a turn then build and parse none of them, and the turn uses the directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import asyncio, sys
from pathlib import Path
import pydantic._internal._model_construction as construction
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.core import types
from openprogram_lsp.core import localfs
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher.warmup import deferred_models, warm_up
from openprogram_lsp.lsp.server import TURN_WIRE
from openprogram_lsp.store import session_listing
from openprogram_lsp.store.session_store import SessionStore
from openprogram_lsp.tools import base

ws, home = Path(sys.argv[1]), Path(sys.argv[2])
earlier = [SessionStore(home).create_session(title=f"s{i}") for i in range(3)]
parsed = []
real_parsed = session_listing._parsed
session_listing._parsed = lambda lines: parsed.append(len(lines)) or real_parsed(lines)
d = build_dispatcher(AppConfig(workspace=ws, home=home, model="offline",
                               permission_mode="accept-edits"))
before = len(deferred_models(types))
assert before >= 10 and not base._SPECS, (before, base._SPECS)
assert localfs._mounts._table is None
assert not parsed
asyncio.run(warm_up(d.services, TURN_WIRE))
assert parsed == [3], parsed  # the listing, read once ahead
import os
scans = []
real_scandir = os.scandir
os.scandir = lambda path=".": scans.append(str(path)) or real_scandir(path)
assert {r["id"] for r in d.services.store.list_sessions()} == set(earlier) and parsed == [3]
os.scandir = real_scandir
assert str(home / "sessions") not in scans, scans  # the spare's directory was seen already
assert localfs._mounts._table  # the mount table a first write reads
assert not deferred_models(types), deferred_models(types)
assert all(cls.__pydantic_complete__ for cls in TURN_WIRE)
assert {type(t) for t in d.services.tools.tools()} <= set(base._SPECS)
spares = lambda: [p for p in (home / "sessions").iterdir() if p.name.startswith(".spare-")]
assert len(spares()) == 1  # the first session's directory, made ahead
built = []
complete = construction.complete_model_class
construction.complete_model_class = lambda cls, *a, **k: built.append(cls) or complete(cls, *a, **k)
result = d.process_user_turn(TurnRequest(text="write f.txt\\nhello\\n", workspace=str(ws)))
assert result.status == "done" and (ws / "f.txt").read_text() == "hello\\n", result
assert not built, built
assert spares() == [] and (home / "sessions" / result.session_id / ".git" / "HEAD").is_file()
print("ok", before)
"""


def test_warm_up_builds_what_a_first_turn_would(workspace: Path, home: Path) -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(workspace), str(home)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("ok")
