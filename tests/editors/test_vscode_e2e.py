"""The VS Code extension end to end in a real VS Code (code-server, headless Chromium).

``editors/vscode/scripts/install-e2e.sh`` installs code-server and Chromium; the ``.vsix`` is
packaged and the chat panel driven with the scripted model: approve an edit on its card, review
the checkpoint diff, restore and undo, fork and switch branch. Screenshots land in
``artifacts/vscode-e2e/``. The shared-session and editor-context runs have their own file
(``test_vscode_e2e_context.py``, one code-server for both) so they run on another worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.vscode_support import EXT, REPO, packaged, run, tail


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged extension (one copy for this file)."""
    return packaged(tmp_path_factory.mktemp("vsix"))


@pytest.mark.timeout(1200)
def test_vscode_end_to_end(vsix: Path) -> None:
    """Chat, approve on the card, see the file, diff, restore, undo, fork and switch branch."""
    out = REPO / "artifacts" / "vscode-e2e"
    e2e = run(["node", "test/e2e/run.mjs", "--out", str(out), "--vsix", str(vsix)], EXT,
              timeout=900)
    assert e2e.returncode == 0, f"{tail(e2e, 60)}\n(screenshots and logs in {out})"
    assert (out / "03-reply.png").exists()
