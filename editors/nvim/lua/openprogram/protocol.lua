--[[
Wire names of the openprogram LSP extension (protocol v1), in one table.

The Python server and the VS Code extension keep the same table; a test checks that this one
names every method and event of the server's table (plus events docs/protocol.md lists, such as
`permission.withdrawn`).
Example: `client:request(protocol.methods.CHAT, { text = 'hi' }, cb)`.
]]

---@class openprogram.Protocol
local M = {}

--- Client -> server requests.
---@enum openprogram.Method
M.methods = {
  CHAT = 'openprogram/chat',
  FORK = 'openprogram/fork',
  CANCEL = 'openprogram/cancel',
  STEER = 'openprogram/steer',
  SESSIONS = 'openprogram/sessions',
  HISTORY = 'openprogram/history',
  BRANCHES = 'openprogram/branches',
  CHECKOUT = 'openprogram/checkout',
  NAME_BRANCH = 'openprogram/nameBranch',
  ANSWER = 'openprogram/answer',
  CHECKPOINTS = 'openprogram/checkpoints',
  CHECKPOINT_DIFF = 'openprogram/checkpointDiff',
  RESTORE = 'openprogram/restore',
  AGENTS = 'openprogram/agents',
  RENAME_SESSION = 'openprogram/renameSession',
  DELETE_SESSION = 'openprogram/deleteSession',
  RESTORE_HUNK = 'openprogram/restoreHunk',
  HOOKS = 'openprogram/hooks',
  TRUST = 'openprogram/trust',
  MCP = 'openprogram/mcp',
  MCP_RESTART = 'openprogram/mcpRestart',
  MCP_REVOKE_TRUST = 'openprogram/mcpRevokeTrust',
  SUBSCRIBE = 'openprogram/subscribe',
  UNSUBSCRIBE = 'openprogram/unsubscribe',
  BRANCH_DIFF = 'openprogram/branchDiff',
  BLAME = 'openprogram/blame',
  RULES = 'openprogram/rules',
  REVOKE_RULE = 'openprogram/revokeRule',
}

--- Server -> client notifications and requests.
---@enum openprogram.ServerMethod
M.server_methods = {
  EVENT = 'openprogram/event',
  REQUEST_PERMISSION = 'openprogram/requestPermission',
  ASK_QUESTION = 'openprogram/askQuestion',
}

--- Event types carried by `openprogram/event`.
---@enum openprogram.EventType
M.events = {
  TURN_STARTED = 'turn.started',
  TEXT_DELTA = 'text.delta',
  TOOL_STARTED = 'tool.started',
  TOOL_FINISHED = 'tool.finished',
  TURN_FINISHED = 'turn.finished',
  CONTEXT_COMPACTED = 'context.compacted',
  CHECKPOINT_CREATED = 'checkpoint.created',
  FILE_CHANGED = 'file.changed',
  QUESTION_ASKED = 'question.asked',
  QUESTION_REPLIED = 'question.replied',
  QUESTION_REJECTED = 'question.rejected',
  BRANCH_MESSAGE_SENT = 'branch.message_sent',
  SUBAGENT_STARTED = 'subagent.started',
  SUBAGENT_ENDED = 'subagent.ended',
  PERMISSION_WITHDRAWN = 'permission.withdrawn',
  PERMISSION_REQUESTED = 'permission.requested',
  PERMISSION_RESOLVED = 'permission.resolved',
  RULES_CHANGED = 'rules.changed',
}

--- The experimental client capability that turns on the two custom server requests.
M.capability = { permissions = true, questions = true }

return M
