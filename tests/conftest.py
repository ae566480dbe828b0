"""Shared fixtures: an isolated state root, a workspace, scripted models and a dispatcher."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.config import Settings
from openprogram_lsp.core.types import PermissionOutcome, PermissionRequest, Question
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event, EventBus


def pytest_configure(config: pytest.Config) -> None:
    """Let the suite's Python processes keep compiled bytecode (``__pycache__``, gitignored).

    The suite starts hundreds of ``openprogram-lsp`` processes (servers, CLI runs, ACP agents).
    With ``PYTHONDONTWRITEBYTECODE`` set, as some sandboxes and CI images do, each of them
    recompiled every project module from source: about 0.3 s of CPU per process. Removing it
    here, before the xdist workers start, reaches every process the tests start."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False  # this process too: test modules keep their rewritten form


# The longest files (real editor runs of a minute or more, then the Neovim plugin's two dozen
# editor runs and the npm ACP client's) start first, longest first, so that with
# ``--dist loadfile --no-loadscope-reorder`` (scripts/test) the other workers fill the time with
# short files instead of one worker finishing alone with a long file at the end.
LONG_FIRST = ("tests/editors/test_vscode_e2e.py", "tests/editors/test_nvim_plugin.py",
              "tests/editors/test_nvim_approvals.py",
              "tests/editors/test_vscode_unit.py", "tests/acp/test_acpx.py",
              "tests/editors/test_nvim_sessions.py", "tests/lsp/test_chat.py")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Move the long editor files to the front (a stable sort: the rest keeps its order)."""
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return LONG_FIRST.index(path) if path in LONG_FIRST else len(LONG_FIRST)

    items.sort(key=rank)


@pytest.fixture(autouse=True)
def _isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENPROGRAM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))  # no user hooks
    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)
    monkeypatch.delenv("OPENPROGRAM_CONTEXT_WINDOW", raising=False)
    monkeypatch.delenv("OPENPROGRAM_PERMISSION_MODE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))  # never the user's file
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))  # nor ~/.claude


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def script(tmp_path: Path) -> Callable[[list[dict[str, Any]]], str]:
    """Write a scripted-model file and return its model spec."""
    counter = iter(range(10_000))

    def make(responses: list[dict[str, Any]]) -> str:
        path = tmp_path / f"script-{next(counter)}.json"
        path.write_text(json.dumps(responses))
        return f"scripted:{path}"

    return make


class RecordingApprover:
    """Answers approvals with a fixed choice and records the requests."""

    def __init__(self, kind: str = "allow_once") -> None:
        self.kind = kind
        self.requests: list[PermissionRequest] = []

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        self.requests.append(request)
        if self.kind == "cancelled":
            return PermissionOutcome(outcome="cancelled", reason="timeout")
        return PermissionOutcome(outcome="selected", option_id=self.kind,
                                 kind=self.kind)  # type: ignore[arg-type]


class FixedAsker:
    """Answers every question with a fixed text."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.questions: list[Question] = []

    async def ask(self, question: Question) -> str | None:
        self.questions.append(question)
        return self.answer


@pytest.fixture
def bus() -> EventBus:
    return EventBus()


@pytest.fixture
def make_dispatcher(home: Path, workspace: Path, bus: EventBus) -> Callable[..., Dispatcher]:
    def make(model: str | None = None, **kwargs: Any) -> Dispatcher:
        settings = kwargs.pop("settings", None) or Settings.defaults()
        cfg = AppConfig(workspace=workspace, home=home, model=model,
                        permission_mode=kwargs.pop("permission_mode", "ask"), settings=settings)
        return build_dispatcher(cfg, bus=bus, **kwargs)

    return make


@pytest.fixture
def events(bus: EventBus) -> Iterator[list[Event]]:
    seen: list[Event] = []
    unsub = bus.subscribe(seen.append)
    yield seen
    unsub()
