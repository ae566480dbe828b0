"""``checkpoints``, ``diff``, ``restore`` and ``undo``: found in whichever workspace holds them."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.store.checkpoints.shadow import workspace_key
from openprogram_lsp.terminal.errors import CliError
from openprogram_lsp.terminal.workspaces import known_workspaces

OpenStore = Callable[[Path], Any]


def has_store(home: Path, workspace: Path) -> bool:
    """Whether checkpoints were ever taken for a workspace (without creating a store)."""
    return (home / "checkpoints" / workspace_key(workspace)).is_dir()


def locate(checkpoint_id: str, *, explicit: Path | None, preferred: Path | None, home: Path,
           open_store: OpenStore,
           probe: Callable[[Any], Any] | None = None) -> tuple[Path, Any]:
    """(workspace, store) holding ``checkpoint_id``: --workspace, else every workspace the user
    has sessions in; CliError naming what to pass when it is nowhere or in several.
    ``probe(store)`` (default: ``store.get(checkpoint_id)``) raises NotFound when absent."""
    check = probe or (lambda store: store.get(checkpoint_id))
    if explicit is not None:
        store = open_store(explicit)
        try:
            check(store)
        except NotFound as exc:
            raise CliError(f"{exc.message} in workspace {explicit}",
                           f"'openprogram-lsp checkpoints --workspace {_q(explicit)}' lists "
                           "them") from None
        return explicit, store
    candidates: list[Path] = []
    for ws in (preferred, Path.cwd().resolve(), *known_workspaces(home)):
        if ws is not None and ws not in candidates and has_store(home, ws):
            candidates.append(ws)
    found: list[tuple[Path, Any]] = []
    ambiguous: str | None = None
    for ws in candidates:
        store = open_store(ws)
        try:
            check(store)
        except NotFound as exc:
            if "ambiguous" in exc.message:
                ambiguous = exc.message
            continue
        found.append((ws, store))
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        where = ", ".join(str(ws) for ws, _ in found)
        raise CliError(f"checkpoint id {checkpoint_id!r} is in several workspaces ({where})",
                       "pass --workspace DIR, or more of the id")
    if ambiguous:
        raise CliError(ambiguous, "give more of the id")
    raise CliError(f"unknown checkpoint id {checkpoint_id!r} (looked in {len(candidates)} "
                   "workspace(s) with checkpoints)",
                   "'openprogram-lsp checkpoints --workspace DIR' lists a workspace's")


def elsewhere(workspace: Path, home: Path) -> str:
    """A hint naming the workspaces the user does have sessions in."""
    others = [str(w) for w in known_workspaces(home) if w != workspace]
    if not others:
        return "no workspace has checkpoints yet"
    return (f"pass --workspace DIR or --session SID (workspaces with sessions: "
            f"{', '.join(others[:5])})")


def none_here(workspace: Path, home: Path, as_json: bool) -> int:
    """What ``checkpoints`` prints for a workspace without any."""
    if as_json:
        print("[]")
    else:
        sys.stderr.write(f"no checkpoints in {workspace}; {elsewhere(workspace, home)}\n")
    return 0


def list_checkpoints(store: Any, workspace: Path, session: str | None, as_json: bool,
                     home: Path) -> int:
    """Print a workspace's checkpoints, newest first."""
    items = store.list(session_id=session)
    if as_json:
        print(json.dumps([c.wire() for c in items]))
        return 0
    if not items:
        return none_here(workspace, home, as_json)
    for c in items:
        files = ", ".join(f"{f.status[0].upper()} {f.path}" for f in c.files[:6])
        first = c.message.splitlines()[0][:50] if c.message else ""
        undone = f"  (undone by {c.undone_by[:12]})" if c.undone_by else ""
        print(f"{c.id[:12]}  {c.created_at}  {c.kind:<8} {first}  {files}{undone}")
    return 0


def show_diff(store: Any, checkpoint_id: str, path: str | None) -> int:
    """Print a checkpoint's diff against the one before it."""
    print(store.diff(checkpoint_id, path).diff, end="")
    return 0


def restore(store: Any, workspace: Path, checkpoint_id: str, paths: list[str]) -> int:
    """Restore a checkpoint's files and print how to undo that."""
    target = store.get(checkpoint_id)
    res = store.restore(checkpoint_id, paths or None)
    restored = res.restored
    _not_restored(res)
    if not restored:
        if res.not_restored:
            print(f"restored 0 files from checkpoint {target.id[:12]}")
            return 0
        print(f"restored 0 files: the workspace already matches checkpoint {target.id[:12]}")
        if target.kind == "turn":
            print(f"  that is the state AFTER turn {target.turn_id}; to undo the turn run:\n"
                  f"  openprogram-lsp undo {target.id[:12]} --workspace {_q(workspace)}")
        return 0
    print(f"restored {len(restored)} file(s): {_names(restored)}")
    print(f"undo with: openprogram-lsp restore {res.safety_checkpoint_id[:12]} "
          f"--workspace {_q(workspace)}")
    return 0


def find_turn(store: Any, turn: str | None, session: str | None,
              on_branch: Callable[[Any], bool] | None = None) -> Any:
    """The turn checkpoint ``turn`` names (a checkpoint id or prefix, a turn id or its user
    message's node id), or the newest turn checkpoint not undone yet (of ``session`` when
    given) whose turn is on its session's current branch (``on_branch``): after a checkout
    to another branch, the other branch's turns are not the code in the workspace."""
    items = store.list(session_id=session)
    turns = [c for c in items if c.kind == "turn"]
    if turn is None:
        if not turns:
            raise CliError("no turn in this workspace changed any file",
                           "'openprogram-lsp checkpoints' lists what there is")
        left = [c for c in turns if not c.undone_by]
        if not left:
            raise CliError("every turn that changed files here is undone already",
                           "'openprogram-lsp checkpoints' shows each undo; restoring one "
                           "brings its turn back")
        here = [c for c in left if on_branch is None or on_branch(c)]
        if not here:
            raise CliError("no turn on the current branch changed files and is not undone",
                           "name one: 'openprogram-lsp undo CHECKPOINT' "
                           "('openprogram-lsp checkpoints' lists them)")
        return here[0]
    for c in turns:
        if c.turn_id in (turn, f"{turn}_reply"):
            return c
    found = store.get(turn)  # NotFound when it is not a checkpoint id either
    # the listing's copy: only the listing knows whether a turn was undone
    return next((c for c in turns if c.id == found.id), found)


def undo(store: Any, workspace: Path, checkpoint: Any) -> int:
    """Put the files a turn changed back as they were before it (undoable); a turn already
    undone is refused (its undo would record nothing)."""
    if checkpoint.kind == "turn" and checkpoint.undone_by:
        raise CliError(f"turn {checkpoint.turn_id} is undone already (by checkpoint "
                       f"{checkpoint.undone_by[:12]})",
                       f"redo it with: openprogram-lsp restore {checkpoint.undone_by[:12]} "
                       f"--workspace {_q(workspace)}")
    res = store.undo(checkpoint.id)
    restored = res.restored
    _not_restored(res)
    print(f"undid turn {checkpoint.turn_id} (checkpoint {checkpoint.id[:12]}): "
          f"{len(restored)} file(s) back as before it"
          + (f": {_names(restored)}" if restored else ""))
    print(f"redo with: openprogram-lsp restore {res.safety_checkpoint_id[:12]} "
          f"--workspace {_q(workspace)}")
    return 0


def _not_restored(res: Any) -> None:
    """Name each path a restore left as it is, and why."""
    for item in res.not_restored or ():
        print(f"not restored: {item.path}: {item.reason}")


def _names(paths: list[str]) -> str:
    return ", ".join(paths[:8]) + (f" … {len(paths) - 8} more" if len(paths) > 8 else "")


def _q(path: Path) -> str:
    return shlex.quote(str(path))
