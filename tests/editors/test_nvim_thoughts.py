"""The Neovim panel shows the model's thoughts collapsed, live and from history; gT opens them."""

from __future__ import annotations

from pathlib import Path

from tests.editors.nvim.runner import run_scripted


def test_thoughts_are_collapsed_lines_live_and_in_history(env: dict[str, Path]) -> None:
    out = run_scripted(env, "thoughts", [
        {"thought": "The user wants a plan.\nStart small.", "text": "Here is the plan."}])
    live = out["streamed"]
    assert any(ln.startswith("> ▸ _thinking…") for snap in live for ln in snap)
    final_live = live[-1]
    assert "Here is the plan." in final_live
    assert not any("Start small." in ln for snap in live for ln in snap)  # never spelled out
    lines = out["lines"]
    assert "> ▸ _thought · 2 lines · gT to read_" in lines
    assert lines.index("> ▸ _thought · 2 lines · gT to read_") < lines.index("Here is the plan.")
    assert not any("Start small." in ln for ln in lines)
    assert out["float"] == ["The user wants a plan.", "Start small."]
