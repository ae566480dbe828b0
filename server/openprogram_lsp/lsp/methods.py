"""Every method name of the wire contract, by direction (editors' tests compare against this)."""

from __future__ import annotations

CHAT = "openprogram/chat"
FORK = "openprogram/fork"
CANCEL = "openprogram/cancel"
STEER = "openprogram/steer"
SESSIONS = "openprogram/sessions"
HISTORY = "openprogram/history"
BRANCHES = "openprogram/branches"
CHECKOUT = "openprogram/checkout"
NAME_BRANCH = "openprogram/nameBranch"
ANSWER = "openprogram/answer"
CHECKPOINTS = "openprogram/checkpoints"
CHECKPOINT_DIFF = "openprogram/checkpointDiff"
RESTORE = "openprogram/restore"
AGENTS = "openprogram/agents"
RENAME_SESSION = "openprogram/renameSession"
DELETE_SESSION = "openprogram/deleteSession"
RESTORE_HUNK = "openprogram/restoreHunk"
HOOKS = "openprogram/hooks"
TRUST = "openprogram/trust"
MCP = "openprogram/mcp"
MCP_RESTART = "openprogram/mcpRestart"
MCP_REVOKE_TRUST = "openprogram/mcpRevokeTrust"
SUBSCRIBE = "openprogram/subscribe"
UNSUBSCRIBE = "openprogram/unsubscribe"
BRANCH_DIFF = "openprogram/branchDiff"
BLAME = "openprogram/blame"
FILES = "openprogram/files"
COMMANDS = "openprogram/commands"
IMAGE = "openprogram/image"
RULES = "openprogram/rules"
REVOKE_RULE = "openprogram/revokeRule"

EVENT = "openprogram/event"
REQUEST_PERMISSION = "openprogram/requestPermission"
ASK_QUESTION = "openprogram/askQuestion"
DIAGNOSTICS = "openprogram/diagnostics"
NAVIGATE = "openprogram/navigate"

CLIENT_REQUESTS: tuple[str, ...] = (
    CHAT, FORK, CANCEL, STEER, SESSIONS, HISTORY, BRANCHES, CHECKOUT, NAME_BRANCH, ANSWER,
    CHECKPOINTS, CHECKPOINT_DIFF, RESTORE, AGENTS, RENAME_SESSION, DELETE_SESSION, RESTORE_HUNK,
    HOOKS, TRUST,
    MCP, MCP_RESTART, MCP_REVOKE_TRUST, SUBSCRIBE, UNSUBSCRIBE, BRANCH_DIFF,
    BLAME, FILES, COMMANDS, IMAGE,
    RULES, REVOKE_RULE,
)
"""Requests an editor sends to the server."""

CLIENT_NOTIFICATIONS: tuple[str, ...] = ()
"""Custom notifications an editor sends (none: cancelling uses ``$/cancelRequest``)."""

SERVER_REQUESTS: tuple[str, ...] = (REQUEST_PERMISSION, ASK_QUESTION, DIAGNOSTICS,
                                     NAVIGATE)
"""Requests the server sends to editors that declare ``experimental.openprogram``."""

SERVER_NOTIFICATIONS: tuple[str, ...] = (EVENT,)
"""Notifications the server sends."""

STANDARD_USED: tuple[str, ...] = (
    "initialize", "initialized", "shutdown", "exit", "$/cancelRequest", "$/progress",
    "window/workDoneProgress/create", "window/workDoneProgress/cancel",
    "window/showMessageRequest", "window/showMessage", "window/logMessage",
    "workspace/didChangeConfiguration", "workspace/didChangeWorkspaceFolders",
    "textDocument/didOpen", "textDocument/didChange", "textDocument/didSave",
    "textDocument/didClose", "workspace/applyEdit",
    "textDocument/codeLens", "textDocument/hover", "textDocument/codeAction",
    "workspace/executeCommand",
)
"""Standard LSP methods the server uses or answers."""

EVENT_TYPES: tuple[str, ...] = (
    "turn.started", "text.delta", "tool.started", "tool.finished", "turn.finished",
    "context.compacted", "context.usage", "context.compaction_recommended", "checkpoint.created",
    "file.changed", "question.asked", "question.replied", "question.rejected",
    "branch.message_sent", "subagent.started", "subagent.ended", "permission.withdrawn",
    "permission.requested", "permission.resolved",
    "rules.changed", "tool.output", "plan.updated", "thought.delta", "mcp.tools_added",
)
"""Event types clients handle: the contract's, plus ``permission.*``, ``rules.changed``,
``tool.output``, ``plan.updated`` and ``thought.delta``
(others, such as
``model.response_started``, may also arrive and can be ignored)."""

ALL_CUSTOM: frozenset[str] = frozenset(
    CLIENT_REQUESTS + CLIENT_NOTIFICATIONS + SERVER_REQUESTS + SERVER_NOTIFICATIONS)


def as_table() -> dict[str, list[str]]:
    """The method table as JSON-ready lists."""
    return {
        "clientRequests": list(CLIENT_REQUESTS),
        "clientNotifications": list(CLIENT_NOTIFICATIONS),
        "serverRequests": list(SERVER_REQUESTS),
        "serverNotifications": list(SERVER_NOTIFICATIONS),
        "eventTypes": list(EVENT_TYPES),
    }
