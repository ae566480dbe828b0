"""The before/after comparison of an edit's diagnostics."""

from __future__ import annotations

from openprogram_lsp.core.diagnostics import Diagnostic, compare, report

E = "undefined name 'x'"


def test_a_moved_diagnostic_is_the_same_and_a_new_one_is_introduced() -> None:
    before = [Diagnostic(3, E, source="pyflakes"), Diagnostic(7, "unused import", 2)]
    after = [Diagnostic(5, E, source="pyflakes"), Diagnostic(9, "unused import", 2),
             Diagnostic(1, "undefined name 'y'", source="pyflakes")]
    new, fixed = compare(before, after, "errors_and_warnings")
    assert new == [Diagnostic(1, "undefined name 'y'", source="pyflakes")]
    assert fixed == []


def test_fixed_ones_and_counted_duplicates() -> None:
    before = [Diagnostic(1, E), Diagnostic(2, E), Diagnostic(4, "bad indent")]
    after = [Diagnostic(1, E), Diagnostic(2, E), Diagnostic(6, E)]
    new, fixed = compare(before, after, "errors")
    assert new == [Diagnostic(6, E)]
    assert fixed == [Diagnostic(4, "bad indent")]


def test_the_level_decides_what_counts() -> None:
    after = [Diagnostic(0, "w", 2), Diagnostic(1, "info", 3), Diagnostic(2, "e", 1)]
    assert compare([], after, "errors")[0] == [Diagnostic(2, "e", 1)]
    assert compare([], after, "errors_and_warnings")[0] == [Diagnostic(0, "w", 2),
                                                            Diagnostic(2, "e", 1)]
    assert compare([], after, "off") == ([], [])


def test_the_report_gives_lines_one_based() -> None:
    text = report("a.py", [Diagnostic(4, E, source="pyflakes")], [Diagnostic(0, "old", 2)])
    assert "line 5: error: undefined name 'x' [pyflakes]" in text
    assert "fixed 1 problem(s)" in text
    assert report("a.py", [], []) == ""
