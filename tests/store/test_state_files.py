"""Each state file the store keeps has one owner module and one recovery rule (``state_files``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import openprogram_lsp
from openprogram_lsp.core.types import Node
from openprogram_lsp.store import page_snapshot, state_files
from openprogram_lsp.store.session_repo import SessionRepo
from openprogram_lsp.store.session_store import SessionStore

PACKAGE = Path(openprogram_lsp.__file__).parent


def _strings(tree: ast.AST) -> set[str]:
    """The string constants of a module, its docstrings and comments left out."""
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)
            and isinstance(n.value, ast.Constant)}
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docs}


def test_each_state_file_is_named_by_its_owner_alone() -> None:
    spelled: dict[str, set[str]] = {f.name: set() for f in state_files.FILES}
    for path in PACKAGE.rglob("*.py"):
        module = path.relative_to(PACKAGE / "store").with_suffix("").as_posix() \
            if path.is_relative_to(PACKAGE / "store") else str(path)
        if module == "state_files":
            continue
        for text in _strings(ast.parse(path.read_text())):
            for name, where in spelled.items():
                if text == name or text.endswith("/" + name):
                    where.add(module)
    assert {n: sorted(m) for n, m in spelled.items()} == {
        f.name: [f.owner] for f in state_files.FILES}
    assert all(f.recovery for f in state_files.FILES)


def test_a_used_state_root_holds_no_file_the_table_lacks(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_snapshot, "MARGIN_NS", 0)  # the page is kept at once
    store = SessionStore(tmp_path)
    sid = store.create_session()
    pred = None
    for i in range(60):
        meta = {"checkpointId": f"cp{i}"} if i == 3 else {"rules": "reset"} if i == 4 else {}
        pred = store.append(sid, Node(id=f"n{i}", role="user" if i % 2 == 0 else "assistant",
                                      text=f"m{i}", predecessor=pred, metadata=meta),
                            advance_head=True).id
    store.commit_turn(sid, "turn")
    store.list_sessions()
    root = store.session_dir(sid)
    SessionRepo(root).maintain(full=True)
    assert store.keep_first_page(sid, lambda page: b"{}", limit=50) is None
    store.spare.prepare()  # the next session's directory, made ahead (named by its maker)
    ours = {p.name for p in (root / ".git").iterdir() if p.name.startswith("openprogram-")}
    ours |= {".spare-" if p.name.startswith(".spare-") else p.name
             for p in store.root.iterdir() if p.name.startswith(".")}
    assert "openprogram-page" in ours and "openprogram-nodes" in ours and ".spare-" in ours
    assert ours - state_files.BY_NAME.keys() == set()
    for name in ours:
        assert state_files.BY_NAME[name].where == (
            "sessions" if name == ".spare-" or (store.root / name).exists() else "session")
