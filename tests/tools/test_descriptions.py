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
