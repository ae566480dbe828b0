"""A shared session, then the editor as the context, in one real VS Code (code-server).

One code-server boot for both parts (``test/e2e/context.mjs``): the workbench load is most of a
run's CPU, and the second part only needs the extension switched to a server of its own, which
a settings change does (docs/decisions/test-parallelism.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.vscode_support import EXT, REPO, forked_server, packaged, run, tail


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged extension (one copy for this file)."""
    return packaged(tmp_path_factory.mktemp("vsix"))


@pytest.mark.timeout(900)
def test_vscode_shared_session_then_editor_context(vsix: Path) -> None:
    """Attached to a shared serve --tcp: Watch Session, another editor's turn and its read-only
    approval and question cards with the outcome, the README image on the extension page, Undo
    This Turn. Then, on a server of its own: an unsaved edit, selections (Add Selection to Chat)
    with the diagnostics VS Code's JSON server reports, @-completed files and removable chips
    reach the model and the transcript; the agent reads the buffer; / completion, a custom
    command expanded by the server, an unknown command refused, /mode, the context meter."""
    out = REPO / "artifacts" / "vscode-e2e-context"
    # both servers (the shared serve --tcp and the extension's own) are forks: no step here
    # checks the command's exec (test_vscode_e2e.py does, with the installed command)
    e2e = run(["node", "test/e2e/context.mjs", "--out", str(out), "--vsix", str(vsix)], EXT,
              timeout=800, extra_env=forked_server())
    assert e2e.returncode == 0, f"{tail(e2e, 60)}\n(screenshots in {out})"
    assert (out / "shared-02-outcome.png").exists()
    assert (out / "context-02-sent.png").exists()
