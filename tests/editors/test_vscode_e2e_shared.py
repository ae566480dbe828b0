"""VS Code attached to a shared ``serve --tcp``, in a real VS Code (code-server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.vscode_support import EXT, REPO, packaged, run, tail


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged extension (one copy for this file)."""
    return packaged(tmp_path_factory.mktemp("vsix"))


@pytest.mark.timeout(600)
def test_vscode_watches_a_session_another_editor_drives(vsix: Path) -> None:
    """Attached to a shared serve --tcp: Watch Session, another editor's turn and its read-only
    approval card with the outcome, the README image on the extension page, Undo This Turn."""
    out = REPO / "artifacts" / "vscode-e2e-shared"
    e2e = run(["node", "test/e2e/shared.mjs", "--out", str(out), "--vsix", str(vsix)], EXT,
              timeout=500)
    assert e2e.returncode == 0, f"{tail(e2e, 60)}\n(screenshots in {out})"
    assert (out / "shared-02-outcome.png").exists()
