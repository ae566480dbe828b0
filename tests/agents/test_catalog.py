"""A workspace's agent definitions: read from the user's directories then the workspace's (a
later one wins a name), kept until a directory's listing or a definition file changes."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.agents.catalog import AgentCatalog, agent_dirs


def _catalog(tmp_path: Path) -> AgentCatalog:
    return AgentCatalog(lambda real: agent_dirs(tmp_path / "cfg", str(real), tmp_path / "claude"))


def _define(folder: Path, name: str, description: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\ndescription: {description}\n---\nDo it.\n")


def test_definitions_follow_their_directory_and_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    catalog = _catalog(tmp_path)
    assert catalog.agents(ws) == {}
    agents = ws / ".openprogram" / "agents"
    _define(agents, "reviewer", "first")
    assert catalog.agents(ws)["reviewer"].description == "first"
    cached = catalog.agents(ws)
    assert catalog.agents(ws) is cached  # nothing changed: not re-read
    _define(agents, "reviewer", "second, longer")
    assert catalog.agents(ws)["reviewer"].description == "second, longer"
    _define(agents, "tester", "tests")
    assert sorted(catalog.agents(ws)) == ["reviewer", "tester"]
    (agents / "tester.md").unlink()
    assert sorted(catalog.agents(ws)) == ["reviewer"]


def test_a_later_directory_wins_a_name(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    catalog = _catalog(tmp_path)
    _define(tmp_path / "claude" / "agents", "reviewer", "claude code's")
    _define(tmp_path / "cfg" / "agents", "reviewer", "the user's")
    _define(tmp_path / "cfg" / "agents", "planner", "the user's planner")
    assert catalog.agents(ws)["reviewer"].description == "the user's"
    _define(ws / ".claude" / "agents", "reviewer", "the workspace's, claude code's")
    assert catalog.agents(ws)["reviewer"].description == "the workspace's, claude code's"
    _define(ws / ".openprogram" / "agents", "reviewer", "the workspace's")
    found = catalog.agents(ws)
    assert found["reviewer"].description == "the workspace's"
    assert found["reviewer"].scope == "workspace" and found["planner"].scope == "user"
