"""The workspace watcher: gitignore rules and file.changed batches on a real bus."""

from __future__ import annotations

import asyncio
from pathlib import Path

from watchfiles import Change

from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.store.watcher import MAX_DEPTH, IgnoreRules, WorkspaceWatcher, parse_gitignore


def test_gitignore_rules(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text(
        "# comment\nbuild/\n*.log\n!keep.log\n/top.txt\ndocs/**/*.tmp\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("x*\n")
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("secret.env\n")
    rules = IgnoreRules(tmp_path)
    ignored = ["build/x.o", "a.log", "deep/b.log", "top.txt", "docs/a/b/c.tmp", "docs/c.tmp",
               "sub/xa", "sub/deeper/xb", "node_modules/a.js", ".git/index", ".venv/bin/py",
               "pkg/__pycache__/m.pyc", "secret.env"]
    kept = ["a.py", "keep.log", "sub/top.txt", "xa", "docs/c.txt", "buildx/y"]
    assert [p for p in ignored if not rules.is_ignored(p)] == []
    assert [p for p in kept if rules.is_ignored(p)] == []


def test_gitignore_changes_are_picked_up(tmp_path: Path) -> None:
    rules = IgnoreRules(tmp_path)
    assert not rules.is_ignored("gen.txt")
    (tmp_path / ".gitignore").write_text("gen.txt\n")
    assert rules.is_ignored("gen.txt")


def test_parse_skips_blank_and_comments() -> None:
    assert parse_gitignore("\n# x\n   \n") == []
    [p] = parse_gitignore("dir/\n")
    assert p.dir_only and not p.negate


async def test_watcher_emits_file_changed(tmp_path: Path) -> None:
    bus = EventBus()
    events: list[Event] = []
    bus.subscribe(events.append, ["file.changed"])
    noted: list[list[dict[str, str]]] = []
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    watcher = WorkspaceWatcher(tmp_path, bus, on_changes=lambda root, ch: noted.append(ch))
    watcher.start()
    try:
        for i in range(300):
            (tmp_path / "skip.tmp").write_text(str(i))
            (tmp_path / "a.txt").write_text(str(i))
            await asyncio.sleep(0.02)
            if events:
                break
        assert events, "no file.changed event"
        changes = events[0].payload["changes"]
        assert {"path": "a.txt", "change": "added"} in changes or \
            {"path": "a.txt", "change": "modified"} in changes
        assert all(c["path"] != "skip.tmp" for e in events for c in e.payload["changes"])
        assert events[0].payload["root"] == str(tmp_path.resolve())
        assert noted and noted[0] == changes
    finally:
        await watcher.stop()


def test_excluded_state_root_is_not_reported(tmp_path: Path) -> None:
    from watchfiles import Change

    home = tmp_path / "state"
    watcher = WorkspaceWatcher(tmp_path, EventBus(), exclude=[home])
    raw = {(Change.added, str(home / "sessions" / "x.json")),
           (Change.modified, str(tmp_path / "a.py")),
           (Change.deleted, str(tmp_path / "b.py"))}
    assert watcher.changes_of(raw) == [{"path": "a.py", "change": "modified"},
                                       {"path": "b.py", "change": "deleted"}]


def test_new_directory_reports_the_files_already_in_it(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("x")
    (tmp_path / "pkg" / "debug.log").write_text("x")
    (tmp_path / "pkg" / "node_modules").mkdir()
    (tmp_path / "pkg" / "node_modules" / "m.js").write_text("x")
    watcher = WorkspaceWatcher(tmp_path, EventBus())
    changes = watcher.changes_of({(Change.added, str(tmp_path / "pkg"))})
    assert changes == [{"path": "pkg/a.py", "change": "added"},
                       {"path": "pkg/sub/b.py", "change": "added"}]


def test_paths_deeper_than_the_limit_are_ignored(tmp_path: Path) -> None:
    rules = IgnoreRules(tmp_path)
    assert not rules.is_ignored("/".join(["d"] * MAX_DEPTH))
    assert rules.is_ignored("/".join(["d"] * (MAX_DEPTH + 1)))
    assert rules.is_ignored("/".join(["d"] * 2100) + "/x.txt")
