"""The ACP slash commands over the checkpoint store's typed results: /diff and /restore."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.acp.commands import Commands
from openprogram_lsp.dispatcher import Dispatcher


async def test_diff_and_restore_answer_from_the_typed_results(dispatcher: Dispatcher,
                                                              workspace: Path) -> None:
    store = dispatcher.checkpointer(workspace)
    assert store is not None
    store.ensure_baseline("s")
    (workspace / "a.txt").write_text("one\n")
    store.note_paths(["a.txt"])
    cp = store.commit_turn("s", "t1", "turn 1")
    assert cp is not None
    (workspace / "a.txt").write_text("two\n")
    store.note_paths(["a.txt"])  # what the watcher reports
    commands = Commands(dispatcher)
    assert "+one" in await commands.diff(workspace, [cp.id])
    answer = await commands.restore("s", workspace, [cp.id])
    assert answer.startswith("Restored 1 file(s). Undo with `/restore ")
    assert (workspace / "a.txt").read_text() == "one\n"
    safety = answer.removeprefix("Restored 1 file(s). Undo with `/restore ").removesuffix("`.")
    assert (await commands.restore("s", workspace, [safety])).startswith("Restored 1 file(s).")
    assert (workspace / "a.txt").read_text() == "two\n"


async def test_restore_names_a_file_it_could_not_record(dispatcher: Dispatcher,
                                                        workspace: Path) -> None:
    store = dispatcher.checkpointer(workspace)
    assert store is not None
    (workspace / "data.bin").write_bytes(b"x" * 6_000_000)  # over max_file_bytes
    base = store.ensure_baseline("s")
    assert base is not None
    (workspace / "data.bin").write_bytes(b"small\n")
    store.note_paths(["data.bin"])
    assert store.commit_turn("s", "t1", "turn 1") is not None
    answer = await Commands(dispatcher).restore("s", workspace, [base.id])
    assert "\nNot restored: `data.bin`: larger than checkpoints.max_file_bytes" in answer
    assert (workspace / "data.bin").read_bytes() == b"small\n"
