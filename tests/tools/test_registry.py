"""ToolRegistry's specs: the whole guidance, or each description's first sentence."""

from __future__ import annotations

from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.registry import ToolRegistry, first_sentence


def test_brief_specs_keep_each_descriptions_first_sentence() -> None:
    assert first_sentence("Use `a.b` here. Then more.") == "Use `a.b` here."
    assert first_sentence("One sentence only") == "One sentence only"
    reg = ToolRegistry(builtin_tools())
    full, brief = reg.specs(), reg.specs(brief=True)
    assert [s.name for s in brief] == [s.name for s in full]
    # the same parameters, undescribed
    assert all(b.input_schema.get("required") == f.input_schema.get("required")
               and b.input_schema["properties"].keys() == f.input_schema["properties"].keys()
               and not any("description" in p for p in b.input_schema["properties"].values())
               for b, f in zip(brief, full, strict=True))
    assert all(f.description.startswith(b.description) for b, f in zip(brief, full, strict=True))
    assert sum(len(b.description) for b in brief) < sum(len(f.description) for f in full) / 3
