"""Splitting commands into the simple commands a rule must each cover."""

from __future__ import annotations

import pytest

from openprogram_lsp.approvals.shell_split import split_command


@pytest.mark.parametrize(("command", "parts"), [
    ("ls *.txt", ["ls *.txt"]),
    ("ls  *.txt  ", ["ls *.txt"]),
    ("ls *.txt; touch PWNED; echo done.txt", ["ls *.txt", "touch PWNED", "echo done.txt"]),
    ("ls a.txt; id > x.txt", ["ls a.txt", "id > x.txt"]),
    ("a && b || c", ["a", "b", "c"]),
    ("a | b", ["a", "b"]),
    ("a & b", ["a", "b"]),
    ("a\nb", ["a", "b"]),
    ("echo $(rm -rf x)", ["echo $(rm -rf x)", "rm -rf x"]),
    ("echo `id`", ["echo `id`", "id"]),
    ('echo "$(id)"', ['echo "$(id)"', "id"]),
    ("x=$(id) ls", ["x=$(id) ls", "id"]),
    ("diff <(ls) x", ["diff <(ls) x", "ls"]),
    ("(cd a && rm b)", ["cd a", "rm b"]),
    ("{ a; b; }", ["a", "b"]),
    ('echo "a;b"', ['echo "a;b"']),
    ("ls;", ["ls"]),
    ("echo hi > out.txt 2>&1", ["echo hi > out.txt 2>&1"]),
])
def test_parts(command: str, parts: list[str]) -> None:
    assert split_command(command) == parts


@pytest.mark.parametrize("command", [
    "if true; then rm x; fi",
    "for f in *; do rm $f; done",
    "f() { rm x; }; f",
    "cat <<EOF\n$(id)\nEOF",
    "echo ${x:-$(id)}",
    "echo $((1+2))",
    "(a) > f",
    "echo 'unterminated",
])
def test_what_the_walk_cannot_split_stays_one_opaque_part(command: str) -> None:
    assert split_command(command) == [command.strip()]
