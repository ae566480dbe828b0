"""The VS Code extension end to end in a real VS Code (code-server, headless Chromium).

``editors/vscode/scripts/install-e2e.sh`` installs code-server and Chromium; the ``.vsix`` is
packaged and driven in one workbench (``test/e2e/run.mjs``, then ``test/e2e/context.mjs``'s
parts): the chat panel with the scripted model (approve an edit on its card, review the checkpoint
diff, restore and undo, fork and switch branch, the server killed and restarted, the extension
host restarted), a shared ``serve --tcp`` session another editor drives, the editor as the
context, and VS Code's TypeScript server answering the agent (``test/e2e/language.mjs``). One
code-server boot and one workbench load for all of it: they were most of each run's
CPU (docs/decisions/test-parallelism.md). Screenshots land in ``artifacts/vscode-e2e/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.vscode_support import EXT, REPO, forked_server, packaged, run, tail


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged extension (one copy for this file)."""
    return packaged(tmp_path_factory.mktemp("vsix"))


@pytest.mark.timeout(1500)
def test_vscode_end_to_end(vsix: Path) -> None:
    """The default layout at 1366x768 (the log's height, the tree views collapsed); chat, approve on
    the card (the model's thought one collapsed line, its plan a checklist above the input), see the
    file, open a file name in the reply in the editor, diff, restore, undo, fork on the model picked
    in the header and switch branch, kill and restart the server, reload the window mid-turn with
    an approval open (the same server goes on; the reloaded window shows the turn once, is asked
    the approval again and streams the rest, #36), restart the extension host. Attached to a shared
    serve --tcp: Watch Session, another editor's turn and its read-only approval and question cards
    with the outcome, the README image on the extension page, Undo This Turn. Then, on a server of
    its own: an unsaved edit, selections (Add Selection to Chat) with the diagnostics VS Code's JSON
    server reports, @-completed files and removable chips reach the model and the transcript; the
    agent reads the buffer; / completion, a custom command expanded by the server, an unknown
    command refused, /mode, the context meter; an agent edit into the unsaved buffer, then /undo
    takes it back out of the buffer with the unsaved text kept and the disk untouched (#31); an
    image copied to the clipboard and pasted (Ctrl+V) into the input is a chip with its thumbnail
    and reaches the model as an image (#39); an edit reviewed hunk by hunk in the diff editor,
    only the accepted hunk written (#36); before those, a code block coloured, copied to the
    clipboard and applied. Last,
    with VS Code's own TypeScript server: the panel's Symbol… button attaches the declaration of
    the word under the cursor (in another file), its references and a symbol picked by name,
    lsp_definition and lsp_references answered across two files, and an edit's result naming the
    TypeScript error it introduced (#40)."""
    out = REPO / "artifacts" / "vscode-e2e"
    # run.mjs's own server is the installed command (its kill step checks the real process and
    # the command it started); the shared server and the context part's own are forks
    forked = forked_server().get("OPENPROGRAM_LSP")
    e2e = run(["node", "test/e2e/run.mjs", "--out", str(out), "--vsix", str(vsix)], EXT,
              timeout=1300, extra_env={"E2E_CONTEXT_LSP": forked} if forked else None)
    assert e2e.returncode == 0, f"{tail(e2e, 60)}\n(screenshots and logs in {out})"
    for shot in ("01b-layout-1366x768.png", "03-reply.png", "10a-reattached.png",
                 "shared-02-outcome.png",
                 "context-02-sent.png", "context-05-hunk-review.png", "language-02-turn.png"):
        assert (out / shot).exists(), shot
