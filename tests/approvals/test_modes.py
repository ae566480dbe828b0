import pytest

from openprogram_lsp.approvals.modes import mode_decision
from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.registry import ToolRegistry, admit


@pytest.mark.parametrize(("mode", "kind", "expected"), [
    ("ask", "read", "allow"), ("ask", "edit", "ask"), ("ask", "execute", "ask"),
    ("accept-edits", "edit", "allow"), ("accept-edits", "execute", "ask"),
    ("plan", "search", "allow"), ("plan", "edit", "deny"), ("plan", "execute", "deny"),
    ("bypass", "execute", "allow"),
])
def test_mode_decisions(mode: str, kind: str, expected: str) -> None:
    assert mode_decision(mode, kind) == expected  # type: ignore[arg-type]


def test_static_admission_order() -> None:
    assert not admit("run_command", "core", disabled=["run_*"], allowed=["run_command"])
    assert admit("grep", "core", allowed=["grep"], categories=[])
    assert not admit("grep", "core", allowed=["read_*"], categories=["net"])
    assert admit("grep", "core", categories=["co*"])
    reg = ToolRegistry(builtin_tools()).admitted(disabled=["run_command", "write_*"])
    assert "run_command" not in reg.names() and "read_file" in reg.names()
    with pytest.raises(ValueError):
        ToolRegistry([*builtin_tools(), builtin_tools()[0]])
