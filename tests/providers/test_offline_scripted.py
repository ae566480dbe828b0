import json
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ConfigError, ProviderError
from openprogram_lsp.core.types import Message
from openprogram_lsp.providers.base import ModelRequest, StreamEnd, TextDelta, ToolCallReady
from openprogram_lsp.providers.factory import make_provider
from openprogram_lsp.providers.offline import HELP, plan_reply


async def collect(provider: object, messages: list[Message]) -> list[object]:
    req = ModelRequest(system="s", messages=messages, tools=[])
    return [ev async for ev in provider.stream(req)]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("text", "tool", "args"), [
    ("write a/b.txt\nline1\nline2", "write_file", {"path": "a/b.txt", "content": "line1\nline2\n"}),
    ("read x.py", "read_file", {"path": "x.py"}),
    ("list src", "list_dir", {"path": "src"}),
    ("list", "list_dir", {"path": "."}),
    ("run echo hi", "run_command", {"command": "echo hi"}),
    ("ask What colour?", "ask_user", {"question": "What colour?"}),
])
def test_offline_commands(text: str, tool: str, args: dict) -> None:
    _, calls = plan_reply([Message(role="user", content=text)])
    assert [(c.name, c.arguments) for c in calls] == [(tool, args)]


async def test_offline_streams_help_and_reacts_to_tool_results() -> None:
    p = make_provider("offline")
    evs = await collect(p, [Message(role="user", content="hello there")])
    assert "".join(e.text for e in evs if isinstance(e, TextDelta)) == HELP
    assert sum(isinstance(e, TextDelta) for e in evs) > 3
    assert isinstance(evs[-1], StreamEnd) and evs[-1].stop_reason == "end_turn"
    evs = await collect(p, [Message(role="tool", content="boom", is_error=True)])
    assert "failed" in "".join(e.text for e in evs if isinstance(e, TextDelta))


async def test_scripted_replays_in_order_across_instances(tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps([{"text": "one two three four"},
                             {"tool_calls": [{"name": "read_file",
                                              "arguments": {"path": "a"}}]}]))
    a, b = make_provider(f"scripted:{f}"), make_provider(f"scripted:{f}")
    first = await collect(a, [Message(role="user", content="x")])
    assert "".join(e.text for e in first if isinstance(e, TextDelta)) == "one two three four"
    second = await collect(b, [Message(role="user", content="x")])
    assert [e.call.name for e in second if isinstance(e, ToolCallReady)] == ["read_file"]
    with pytest.raises(ProviderError, match="exhausted after 2"):
        await collect(a, [])


def test_bad_specs_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown model"):
        make_provider("gpt")
    with pytest.raises(ConfigError, match="no such file"):
        make_provider(f"scripted:{tmp_path}/missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        make_provider(f"scripted:{tmp_path}/bad.json")
