"""Checkpoint store: seeded random edit sequences keep every checkpoint equal to the disk."""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import pytest
from tests.store._cp_helpers import make_workspace, open_store, tree_hash

from openprogram_lsp.store.checkpoints import CheckpointStore

NAMES = ["a.txt", "b.py", "d1/c.txt", "d1/d2/e.md", "d3/f.bin", "g h.txt", "d1/d2/x.log"]


def _disk(ws: Path) -> dict[str, str]:
    """Recorded files on disk: path -> blob id (no .git, no *.log)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(ws).as_posix()
            if rel.endswith(".log"):
                continue
            data = os.fsencode(os.readlink(full)) if full.is_symlink() else full.read_bytes()
            mode = "l" if full.is_symlink() else ("x" if os.access(full, os.X_OK) else "f")
            out[rel] = mode + hashlib.sha1(f"blob {len(data)}".encode() + b"\0" + data).hexdigest()
    return out


def _recorded(store: CheckpointStore, cid: str) -> dict[str, str]:
    commit = store._entry(cid).commit
    out = store.repo.git(["ls-tree", "-r", "-z", commit]).split(b"\0")
    kinds = {b"120000": "l", b"100755": "x", b"100644": "f"}
    return {line.split(b"\t", 1)[1].decode(): kinds[line.split()[0]] + line.split()[2].decode()
            for line in out if line}


def _mutate(rng: random.Random, ws: Path) -> list[str]:
    name = rng.choice(NAMES)
    full = ws / name
    action = rng.random()
    if action < 0.08:
        if full.is_file() and not full.is_symlink():
            full.chmod(full.stat().st_mode ^ 0o111)
    elif action < 0.14:
        if not os.path.lexists(full):
            full.parent.mkdir(parents=True, exist_ok=True)
            full.symlink_to(rng.choice(["a.txt", "missing", "../d1/c.txt"]))
    elif action < 0.55:
        if full.is_symlink():
            full.unlink()
        full.parent.mkdir(parents=True, exist_ok=True)
        data = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))
        full.write_bytes(data if name.endswith(".bin") else data.hex().encode())
    elif action < 0.8:
        if os.path.lexists(full):
            full.unlink()
    else:
        other = ws / rng.choice(NAMES)
        if os.path.lexists(full) and not os.path.lexists(other):
            other.parent.mkdir(parents=True, exist_ok=True)
            full.rename(other)
            return [name, other.relative_to(ws).as_posix()]
    return [name]


# more seeds: CP_SEEDS=4,5,6 pytest ...
SEEDS = [int(s) for s in os.environ.get("CP_SEEDS", "1,2,3").split(",")]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_turns_and_restores(tmp_path: Path, seed: int,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp.store.checkpoints import stage

    rng = random.Random(seed)
    if seed % 3 == 0:
        monkeypatch.setattr(stage, "BULK_ADD", 1)  # walks stage with one bulk add -A
    ws = make_workspace(tmp_path, git=seed % 2 == 0)
    store = open_store(ws, tmp_path / "home")
    base = store.ensure_baseline("s")
    assert base is not None
    states = {base.id: tree_hash(ws, skip=(".git",))}
    for turn in range(40):
        noted: list[str] = []
        for _ in range(rng.randint(1, 4)):
            noted += _mutate(rng, ws)
        if rng.random() < 0.25:
            store.note_all()  # a shell command: nothing precise reported
        else:
            store.note_paths(noted)
        if rng.random() < 0.1:
            store = open_store(ws, tmp_path / "home")  # a restart in between
        cp = store.commit_turn("s", f"t{turn}", "m")
        head = store.list()[0]
        assert _recorded(store, head.id) == _disk(ws)
        if cp is not None:
            states[cp.id] = tree_hash(ws, skip=(".git",))
        if rng.random() < 0.15:
            target = rng.choice(list(states))
            logs = {p: h for p, h in tree_hash(ws, skip=(".git",)).items() if p.endswith(".log")}
            out = store.restore(target)
            expect = {p: h for p, h in states[target].items() if not p.endswith(".log")}
            now = tree_hash(ws, skip=(".git",))
            assert {p: h for p, h in now.items() if not p.endswith(".log")} == expect
            assert {p: h for p, h in now.items() if p.endswith(".log")} == logs
            assert _disk(ws) == _recorded(store, target)  # modes and links too
            if out.checkpoint_id:
                states[out.checkpoint_id] = now
        if rng.random() < 0.08:
            keep = set(rng.sample(sorted(states), k=min(2, len(states))))
            for gone in store.prune(max_count=rng.randint(1, 5), max_age_days=None,
                                    keep_ids=keep, gc=rng.random() < 0.5):
                del states[gone]
            assert set(states) == {c.id for c in store.list()}
    store.stager.flush()
    head_tree = store.repo.git(["rev-parse", "refs/heads/checkpoints^{tree}"]).strip()
    assert store.repo.git(["write-tree"]).strip() == head_tree
