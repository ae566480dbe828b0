"""Sessions written the way earlier versions of the store wrote them, by real git.

``git log -p`` on ``server/openprogram_lsp/store/`` shows these layouts (newest last):

- ``flat`` (4ed33b7 .. 217e558^): ``git init -b main``, flat ``nodes/<seq>-<id>.json``,
  ``context/<turn>.json`` listing every kept node id, one ``git add -A && git commit`` per turn
  (a git index, only loose objects), no journal, no ``openprogram-checkpoints`` file.
- ``sharded`` (217e558 .. e6ebeb8^): nodes under ``nodes/GGG/LLLLL/``, the ContextCommit beside
  its node with full id lists, commits made in process (no index), a journal.
- ``ranges`` (e6ebeb8 .. 1f146d9^): the same with id lists as chain ranges; still no
  ``openprogram-checkpoints`` file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from openprogram_lsp.store.git import run_git

LAYOUTS = ("flat", "sharded", "ranges")
_ENV = {"GIT_AUTHOR_DATE": "2026-11-30T07:00:00Z", "GIT_COMMITTER_DATE": "2026-11-30T07:00:00Z"}


def _node_path(layout: str, seq: int, nid: str) -> str:
    if layout == "flat":
        return f"{seq:07d}-{nid}.json"
    return f"{seq // 10000:03d}/{seq // 100:05d}/{seq:07d}-{nid}.json"


def _ranges(ids: list[str], chain: list[str]) -> list[list[int]]:
    out: list[list[int]] = []
    for at in (chain.index(i) for i in ids):
        if out and out[-1][1] + 1 == at:
            out[-1][1] = at
        else:
            out.append([at, at])
    return out


def write_legacy_session(sessions: Path, sid: str, layout: str, *, turns: int,
                         workspace: str, uncommitted: bool = False) -> dict[str, Any]:
    """A session of ``turns`` user/assistant pairs in an old layout; returns what it holds.

    ``uncommitted``: the last node is written but its turn never committed (a process killed
    between the write and ``git commit``).
    """
    root = sessions / sid
    root.mkdir(parents=True)
    run_git(["init", "-q", "--template=", "-b", "main", str(root)])
    (root / ".gitignore").write_text("*.tmp\n.*.tmp\n")
    if layout != "flat":
        (root / ".git" / "openprogram-journal").touch()
    nodes = root / "nodes"
    nodes.mkdir()
    if layout == "flat":
        (root / "context").mkdir()
    meta: dict[str, Any] = {"id": sid, "title": "old session", "headId": None, "branches": {},
                            "status": "idle", "createdAt": "2026-11-30T07:00:00Z",
                            "updatedAt": "2026-11-30T07:00:00Z", "workspace": workspace}
    chain: list[str] = []
    checkpoints: list[str] = []
    seq = 0

    written: list[str] = []

    def put(rel: str, data: dict[str, Any]) -> None:
        written.append(rel)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, separators=(",", ":")))

    def commit(subject: str) -> None:
        run_git(["add", "-A"], cwd=root)
        run_git(["commit", "-q", "--no-verify", "-m", subject], cwd=root, env=_ENV)
        if layout != "flat":  # their in-process commits made the same objects, and no index
            (root / ".git" / "index").unlink()
        written.clear()

    put("meta.json", meta)
    commit("create session")
    for t in range(turns):
        for role in ("user", "assistant"):
            seq += 1
            nid = f"{'u' if role == 'user' else 'a'}{t}"
            node: dict[str, Any] = {"id": nid, "role": role, "text": f"{role} {t}",
                                    "created_at": "2026-11-30T07:00:00Z", "metadata": {}}
            if chain:
                node["predecessor"] = chain[-1]
            if role == "assistant":
                node["status"] = "done"
                node["tool_calls"] = [{"id": f"call{t}", "name": "read_file", "kind": "read",
                                       "input": {"path": "a.txt"}, "status": "completed",
                                       "output": "text", "step": 0}]
                cid = f"c{t:04d}old"
                node["metadata"] = {"checkpointId": cid, "model": "offline"}
                checkpoints.append(cid)
            put(f"nodes/{_node_path(layout, seq, nid)}", node)
            chain.append(nid)
        record: dict[str, Any] = {"version": 1, "sessionId": sid, "turnId": chain[-1],
                                  "model": "offline", "contextWindow": 200000, "estimate": 10,
                                  "kept": list(chain), "snipped": [], "summarised": []}
        if layout == "flat":
            put(f"context/{chain[-1]}.json", record)
        else:
            beside = _node_path(layout, seq, chain[-1])[:-len(".json")] + ".context.json"
            if layout == "ranges":
                for key in ("kept", "snipped", "summarised"):
                    record[key + "Ranges"] = _ranges(record.pop(key), chain)
            put(f"nodes/{beside}", record)
        meta["headId"] = chain[-1]
        put("meta.json", meta)
        if not (uncommitted and t == turns - 1):
            commit(f"turn: user {t}")
    if written and layout != "flat":  # what those versions journaled before a commit
        with open(root / ".git" / "openprogram-journal", "a") as fh:
            fh.write("".join(f"{rel}\n" for rel in written))
    return {"root": root, "chain": chain, "checkpoints": checkpoints, "seq": seq}


def loose_objects(root: Path) -> int:
    """Loose objects in a session's ``.git``."""
    objects = root / ".git" / "objects"
    return sum(len(os.listdir(objects / d)) for d in os.listdir(objects) if len(d) == 2)
