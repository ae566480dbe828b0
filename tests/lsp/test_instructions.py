"""Project instructions through the real transport: in every prompt, kept through /compact."""

from __future__ import annotations

import json
from pathlib import Path

from tests.lsp.conftest import Starter, write_script


async def test_instructions_survive_compaction_over_lsp(start: Starter, tmp_path: Path,
                                                        workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("Always answer in French.\n", "utf-8")
    log = tmp_path / "model.jsonl"
    replies = [{"text": f"answer {i} " + "word " * 300} for i in range(4)]
    client = await start(model=write_script(tmp_path / "s.json", [
        *replies, {"text": "SUMMARY of four turns."}, {"text": "après"}]),
        extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    sid = None
    for i in range(4):
        result = await client.call("openprogram/chat", {
            "text": f"question {i} " + "detail " * 300, "sessionId": sid})
        sid = result["sessionId"]
    compact = await client.call("openprogram/chat", {"text": "/compact", "sessionId": sid})
    assert compact["text"].startswith("Context compacted"), compact["text"]
    client.events.clear()
    await client.call("openprogram/chat", {"text": "and now?", "sessionId": sid})
    calls = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    summariser, final = calls[-2], calls[-1]
    assert "Always answer in French." not in summariser["system"]  # its own prompt
    assert "Always answer in French." in final["system"]
    assert any("SUMMARY of four turns." in m["content"] for m in final["messages"])
    assert len(final["messages"]) == 2  # the summary and the new question
    usage = client.of_type("context.usage")[-1]["data"]
    assert usage["compactions"] == 1 and 0 < usage["usedTokens"] < usage["windowTokens"]
