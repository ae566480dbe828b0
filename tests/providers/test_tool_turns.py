"""The read-side tools' arguments and results through whole turns: a loopback model server of
each API streams the calls (arguments in fragments, as the APIs send them), the real dispatcher
runs them, and the next request carries each result as the model reads it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher

from .loopback import LoopbackServer, Reply
from .test_end_to_end import Flavor, flavor  # noqa: F401  (the fixture, each API)
from .wire import Call, fragments


def call(call_id: str, name: str, **args: Any) -> Call:
    return Call(call_id, name, fragments(args, 7))


def tree(ws: Path) -> None:
    """A file of 5,000 lines whose answer is on line 4,000, sources of known ages, ignored
    build output, and a note in another case."""
    lines = [f"value_{i:05d} = {i}" for i in range(1, 5001)]
    lines[3999] = "RETRY_LIMIT = 7"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "settings.py").write_text("\n".join(lines) + "\n")
    (ws / "src" / "pkg" / "client.py").write_text(
        "from settings import RETRY_LIMIT\n\n\ndef fetch():\n    return RETRY_LIMIT\n")
    (ws / "NOTES.md").write_text("# Notes\n\nThe retry_limit is seven.\n")
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "gen.py").write_text("RETRY_LIMIT = 0\n")
    for rel, age in (("src/settings.py", 300), ("src/pkg/client.py", 10), ("build/gen.py", 1)):
        os.utime(ws / rel, (1_700_000_000 - age, 1_700_000_000 - age))


async def test_read_find_grep_and_a_command_timeout_through_a_turn(
        flavor: Flavor, server: LoopbackServer,  # noqa: F811
        make_dispatcher: Callable[..., Dispatcher], workspace: Path) -> None:
    tree(workspace)
    server.queue(
        Reply(chunks=flavor.calls([
            call("c1", "find_files", pattern="**/*.py"),
            call("c2", "grep", pattern="retry_limit = ", case_insensitive=True,
                 glob="*.py", context=1),
            call("c3", "grep", pattern="RETRY_LIMIT", output_mode="count"),
            call("c4", "grep", pattern="retry", **{"-i": True},
                 output_mode="files_with_matches", type="md"),
            call("c5", "grep", pattern="value_", head_limit=2),
        ], ["Looking for it."])),
        Reply(chunks=flavor.calls([
            call("c6", "read_file", path="src/settings.py", offset=3999, limit=3),
            call("c7", "read_file", path="src/settings.py"),
            call("c8", "run_command", command="echo started; sleep 30", timeout=1),
        ], [])),
        Reply(chunks=flavor.text(["RETRY_LIMIT is 7 (src/settings.py line 4000)."])))
    dispatcher = make_dispatcher(flavor.spec, permission_mode="bypass")
    result = await dispatcher.run_turn(TurnRequest(text="what is the retry limit?",
                                                   workspace=str(workspace)))
    assert result.status == "done", result.error
    assert len(server.received) == 3
    node = dispatcher.services.store.get_node(result.session_id, result.assistant_node_id)
    records = node.tool_calls or []
    # each call's arguments arrive whole, as the model sent them
    assert [(c.name, c.input) for c in records[:2]] == [
        ("find_files", {"pattern": "**/*.py"}),
        ("grep", {"pattern": "retry_limit = ", "case_insensitive": True, "glob": "*.py",
                  "context": 1})]
    assert records[3].input == {"pattern": "retry", "-i": True,
                                "output_mode": "files_with_matches", "type": "md"}
    first = dict(flavor.tool_results(server.received[1]))
    ids = [c.id for c in records]
    assert first[ids[0]] == "src/pkg/client.py\nsrc/settings.py"  # newest first, no build/
    assert first[ids[1]].splitlines() == [
        "src/settings.py-3999- value_03999 = 3999", "src/settings.py:4000: RETRY_LIMIT = 7",
        "src/settings.py-4001- value_04001 = 4001"]
    assert first[ids[2]] == "src/pkg/client.py:2\nsrc/settings.py:1"
    assert first[ids[3]] == "NOTES.md"
    assert first[ids[4]].splitlines() == [
        "src/settings.py:1: value_00001 = 1", "src/settings.py:2: value_00002 = 2",
        "[4,997 more lines left out; narrow the search, or read on with offset=2]"]
    second = dict(flavor.tool_results(server.received[2]))
    assert second[ids[5]] == ("  3999\tvalue_03999 = 3999\n  4000\tRETRY_LIMIT = 7\n"
                              "  4001\tvalue_04001 = 4001\n"
                              "[showing lines 3999-4001 of 5,000; read on with offset=4002]")
    whole = second[ids[6]]
    assert whole.startswith("     1\tvalue_00001 = 1\n")
    assert whole.endswith("[showing lines 1-2000 of 5,000; read on with offset=2001]")
    assert "RETRY_LIMIT" not in whole
    timed_out = second[ids[7]]
    assert timed_out.removeprefix("Error: ").startswith("started\n")  # OpenAI marks the error
    assert "[killed after 1 s timeout]" in timed_out
    assert [(c.name, c.status) for c in records[5:]] == [
        ("read_file", "completed"), ("read_file", "completed"), ("run_command", "failed")]
