"""The editor is the context, in a real VS Code (code-server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.vscode_support import EXT, REPO, packaged, run, tail


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged extension (one copy for this file)."""
    return packaged(tmp_path_factory.mktemp("vsix"))


@pytest.mark.timeout(600)
def test_vscode_editor_is_the_context(vsix: Path) -> None:
    """An unsaved edit, selections (Add Selection to Chat) with the diagnostics VS Code's JSON
    server reports, @-completed files and removable chips reach the model and the transcript;
    the agent reads the buffer; / completion, a custom command expanded by the server, an
    unknown command refused, /mode, the context meter."""
    out = REPO / "artifacts" / "vscode-e2e-context"
    e2e = run(["node", "test/e2e/context.mjs", "--out", str(out), "--vsix", str(vsix)], EXT,
              timeout=500)
    assert e2e.returncode == 0, f"{tail(e2e, 60)}\n(screenshots in {out})"
    assert (out / "context-02-sent.png").exists()
