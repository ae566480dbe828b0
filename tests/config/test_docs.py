"""docs/configuration.md lists every variable the code reads or sets and every setting, and
every variable it lists is used somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from openprogram_lsp.config import load_sections, load_settings

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "configuration.md").read_text()
# the system's own, read as every program reads them (not settings of ours)
SYSTEM = {"HOME", "PATH", "SHELL", "TMPDIR", "TERM", "USER", "LANG"}
# an environment read by name: os.environ.get("X"), os.getenv("X"), env["X"], env.get("X")...
_READ = re.compile(r"(?:environ|getenv|\benv)(?:\.get|\.pop|\.setdefault)?\(?\[?\s*"
                   r"[\"']([A-Z][A-Z0-9_]+)[\"']")


def _table() -> set[str]:
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", DOC, re.M))


def _sources(*folders: str) -> list[Path]:
    out: list[Path] = []
    for folder in folders:
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".lua", ".ts", ".sh", ".mjs", ""} \
                    and "node_modules" not in path.parts:
                out.append(path)
    return out


def test_every_section_variable_is_in_the_table() -> None:
    declared = {v.name for kind in load_sections().values() for v in kind.env.values()}
    assert declared - _table() == set()


def test_every_variable_the_server_reads_or_sets_is_in_the_table() -> None:
    read: set[str] = set()
    for path in _sources("server"):
        read |= set(_READ.findall(path.read_text(errors="ignore")))
    assert "XDG_CONFIG_HOME" in read  # the pattern sees the reads it must
    assert read - SYSTEM - _table() == set()


def test_every_openprogram_variable_in_the_code_is_in_the_table() -> None:
    used: set[str] = set()
    for path in _sources("server", "scripts", "editors/nvim", "editors/vscode/src", "tests",
                         "bench"):
        try:
            used |= set(re.findall(r"\bOPENPROGRAM_[A-Z0-9]+(?:_[A-Z0-9]+)*\b",
                                   path.read_text(errors="ignore")))
        except OSError:
            continue
    prefixes = {u for u in used if any(o.startswith(u + "_") for o in used)}
    assert used - prefixes - _table() == set()


def test_every_variable_in_the_table_is_used() -> None:
    text = "\n".join(p.read_text(errors="ignore") for p in _sources(
        "server", "scripts", "editors", "tests", "bench") if p.stat().st_size < 2_000_000)
    assert {v for v in _table() if not re.search(rf"\b{v}\b", text)} == set()


def _documented(key: str) -> bool:
    leaf = key.rsplit(".", 1)[-1]
    return (f"`{key}`" in DOC or f"`{leaf}`" in DOC
            or re.search(rf"^\s*(?:#\s*)?(?:\[\[[\w.]*\.)?{re.escape(leaf)}\b", DOC, re.M)
            is not None)


def test_every_setting_is_documented() -> None:
    keys = [k for k, _, _ in load_settings(env={}, user_file=False).rows()]
    assert len(keys) > 30
    assert [k for k in keys if not _documented(k)] == []
