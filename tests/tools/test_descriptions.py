"""Every built-in tool tells the model when and how to use it, in one place."""

from __future__ import annotations

import re

from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.builtin.descriptions import DESCRIPTIONS


def test_each_built_in_tool_has_its_description_from_the_one_table() -> None:
    tools = {t.name: t for t in builtin_tools() if t.name != "ask_user"}
    assert set(tools) == set(DESCRIPTIONS)
    for name, tool in tools.items():
        assert tool.description == DESCRIPTIONS[name]
        assert tool.spec().description == DESCRIPTIONS[name]


def test_descriptions_say_when_and_how_in_several_sentences() -> None:
    for name, text in DESCRIPTIONS.items():
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s]
        assert len(sentences) >= 3, (name, text)
        assert 200 <= len(text) <= 2500, (name, len(text))
        assert not re.search(r"\{[A-Z_]+[:}!]", text), name  # no unformatted placeholder
    # the limits they state are the tools' own
    assert "2,000 lines" in DESCRIPTIONS["read_file"]
    assert "default 250" in DESCRIPTIONS["grep"]
    assert "default 120" in DESCRIPTIONS["run_command"] and "at most 600" in \
        DESCRIPTIONS["run_command"]


def test_a_small_windows_registry_is_brief_for_the_request_too() -> None:
    from openprogram_lsp.context.budget import estimate_tools
    from openprogram_lsp.tools.registry import ToolRegistry, first_sentence

    full = ToolRegistry(builtin_tools())
    brief = full.brief()
    assert brief.specs() == full.specs(brief=True)  # what was counted is what is sent
    assert brief.admitted(disabled=["web_fetch"]).is_brief
    assert brief.with_tools([]).is_brief
    grep = next(s for s in brief.specs() if s.name == "grep")
    assert grep.description == first_sentence(DESCRIPTIONS["grep"])
    assert estimate_tools(brief.specs()) < 0.75 * estimate_tools(full.specs())
    # no title or null branch costs tokens in any schema
    text = str([s.input_schema for s in full.specs()])
    assert "'title'" not in text and "'null'" not in text
