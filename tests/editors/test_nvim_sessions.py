"""Sessions and branches in the Neovim plugin (real headless Neovim, real server): forks and
checkouts, the session browser, switching while a turn runs, branch labels and hunk review."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import forkserver
from tests.editors.nvim.runner import joined, run_scripted, write_script

pytestmark = [
    pytest.mark.usefixtures("require_nvim"),
    pytest.mark.timeout(180),
]


def test_fork_from_message_and_checkout(env: dict[str, Path]) -> None:
    picked = write_script(env["tmp"] / "picked.json", [{"text": "Answer new root."}])
    out = run_scripted(env, "fork_checkout", [
        {"text": "Answer one."},
        {"text": "Answer two."},
        {"text": "Answer forked."},
        {"text": "Answer edited."},
        {"text": "Answer from the server's model."},
    ], extra_env={"OP_FORK_MODEL": picked})
    before, forked = joined(out["before"]), joined(out["after_fork"])
    assert "Answer two." in before
    assert out["fork_prompt"]
    # The fork continues after "Answer one." and no longer shows the second exchange.
    assert "Answer one." in forked and "a different second question" in forked
    assert "Answer forked." in forked and "Answer two." not in forked
    # Checkout of the other branch redraws the panel with the original exchange.
    back = joined(out["after_checkout"])
    assert "Answer two." in back and "Answer forked." not in back
    assert len(out["branches"]["branches"]) == 2
    active = [b for b in out["branches"]["branches"] if b["active"]]
    assert active[0]["headId"] == out["picked"]
    # Forking on a user message replaces it: a sibling of "second question".
    edited = joined(out["after_edit"])
    assert "an edited second question" in edited and "Answer edited." in edited
    assert "second question\n" not in edited.replace("an edited second question", "")
    # Forking on the first message: openprogram/fork with fromNodeId null, a new root of the
    # same session.
    fork = out["root_fork"]
    assert fork["null"] is True and fork["params"]["text"] == "a new first question"
    assert fork["params"]["clientTurnId"].startswith("nvim-")
    # ...carrying the model picked in the panel, which answers it (not the server's model).
    assert fork["params"]["model"] == picked
    assert out["root_session"] == out["session"]
    root = joined(out["after_root"])
    assert "a new first question" in root and "Answer new root." in root
    assert "Answer one." not in root and "server's model" not in root
    nodes = out["root_history"]["nodes"]
    assert len(nodes) == 2 and nodes[0].get("predecessor") is None


def test_sessions_cancel_and_lsp_enable(env: dict[str, Path]) -> None:
    out = run_scripted(env, "sessions_cancel", [
        {"text": "Hello from the first session."},
        {"text": "Once upon a time " * 40, "delay": 0.05},
        {"text": "Hello from the second session."},
    ])
    # vim.lsp.enable started the client; the panel reused it.
    assert out["clients"] == 1
    assert out["cancel_status"] == "cancelled"
    assert out["session_items"][0] == "+ New session"
    assert out["second"] != out["first"]
    assert out["back"] == out["first"]
    back = joined(out["back_lines"])
    assert "Hello from the first session." in back
    assert "Hello from the second session." not in back


def test_client_turn_id_binds_the_panel_to_its_own_new_session(env: dict[str, Path]) -> None:
    out = run_scripted(env, "client_turn_id", [
        {"text": "Alpha reply " * 6, "delay": 0.03},
        {"text": "Bravo reply " * 6, "delay": 0.03},
    ])
    other, mine = out["other"], out["result"]
    assert other["status"] == "done" and mine["status"] == "done"
    assert other["sessionId"] != mine["sessionId"]
    # Both turn.started events echo their request's clientTurnId.
    by_cid = {s["cid"]: s for s in out["started"]}
    assert by_cid["script-1"]["session"] == other["sessionId"]
    assert by_cid[out["sent_cid"]]["session"] == mine["sessionId"]
    assert out["sent_cid"].startswith("nvim-")
    # Bound at turn.started, while the request was still running, to the right session.
    bound = out["bound"]
    assert bound["busy"] is True
    assert bound["session"] == bound["event_session"] == mine["sessionId"] == out["session"]
    assert bound["turn"] == bound["event_turn"] == mine["assistantNodeId"]
    # Only the panel's own reply streamed into it.
    streamed = joined(out["streamed"])
    assert mine["text"].strip() in streamed
    assert other["text"].strip() not in streamed
    assert "the other chat" not in joined(out["lines"])


def test_session_browser_and_switching_while_a_turn_runs(env: dict[str, Path]) -> None:
    other = env["tmp"] / "elsewhere"
    other.mkdir()
    done = forkserver.run(["chat", "--workspace", str(other), "--model", "offline",
                           "from another folder"],
                          env={**os.environ, "OPENPROGRAM_HOME": str(env["home"])})
    assert done.returncode == 0, done.stderr
    out = run_scripted(env, "sessions_browser", [
        {"text": "Alpha answer."},
        {"text": "Beta answer."},
        # ~1.7 s of streaming: it still runs while the panel switches and gamma's turn ends
        # (~0.1 s idle)
        {"text": "Once upon a time " * 16, "delay": 0.05},
        {"text": "Gamma answer."},
    ])
    here = joined(out["lines_here"])
    assert here.splitlines()[0] == "+ New session"
    assert "beta question" in here and "alpha question" in here
    assert "from another folder" not in here and "elsewhere" in str(out["title_here"])
    assert "beta question" in joined(out["lines_here"][1:2])  # newest first
    assert "You:" in out["preview"] and any("Beta answer." in x for x in out["preview"])
    everything = joined(out["lines_all"])
    assert "other workspaces" in everything
    other_line = next(x for x in out["lines_all"] if "from another folder" in x)
    assert "elsewhere" in other_line
    assert out["beta"] not in out["ids_after"] and out["alpha"] in out["ids_after"]
    assert not (env["home"] / "sessions" / out["beta"]).exists()
    assert out["title_opened"] == "Renamed alpha"
    # the message sent after switching started its own turn in a new session
    assert out["busy_after_switch"] is False
    assert out["gamma"] not in (out["alpha"], out["beta"])
    assert "Gamma answer." in joined(out["gamma_lines"])
    assert "could not steer" not in joined(out["gamma_lines"])
    assert out["alpha_last"]["status"] == "done"


def test_branch_labels_naming_hunk_review_and_deleted_buffers(env: dict[str, Path]) -> None:
    out = run_scripted(env, "branches_hunks", [
        {"text": "Editing.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "code.py", "content": "one\nTWO\nthree\nfour\nfive\nSIX\nseven\n"}}]},
        {"text": "Edited."},
        {"text": "Then this."},
        {"text": "Fork one."},
        {"text": "Fork two."},
        {"text": "Adding.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "new.txt", "content": "fresh\n"}}]},
        {"text": "Added."},
    ])
    items = [x for x in out["branch_items"] if "Name or rename" not in x]
    assert len(items) == 3 and len(set(items)) == 3
    labels = [x.split(" · ")[0] for x in items]
    assert len(set(labels)) == 3  # the two "list ." forks read differently
    assert any("main" in x for x in labels)
    assert any("second try" in x for x in out["branch_items_after"])
    assert out["first_hunk_line"] == 2 and out["second_hunk_line"] == 6
    assert out["after_hunk"] == "one\nTWO\nthree\nfour\nfive\nsix\nseven\n"
    # one lens per hunk of the agent's edit; the restored hunk's lens went with it
    assert out["lenses_before"] == 2 and out["lenses_after_restore"] == 1
    assert out["after_undo"] == "one\nTWO\nthree\nfour\nfive\nSIX\nseven\n"
    assert out["new_lines"] == ["fresh"]
    assert out["new_exists"] is False and out["new_buffer_valid"] is False
