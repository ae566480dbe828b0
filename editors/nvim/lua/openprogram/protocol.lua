--[[
Wire names and payload shapes of the openprogram LSP extension (protocol v1).

Generated from server/openprogram_lsp/lsp/wire.py by `python -m openprogram_lsp.lsp.codegen`;
do not edit (tests/lsp/test_codegen.py checks it). The `---@class` annotations give LuaLS the
fields of every request, result and event payload.
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
  BRANCH_DIFF = 'openprogram/branchDiff',
  BLAME = 'openprogram/blame',
  FILES = 'openprogram/files',
  COMMANDS = 'openprogram/commands',
  IMAGE = 'openprogram/image',
  HOOKS = 'openprogram/hooks',
  TRUST = 'openprogram/trust',
  MCP = 'openprogram/mcp',
  MCP_RESTART = 'openprogram/mcpRestart',
  MCP_REVOKE_TRUST = 'openprogram/mcpRevokeTrust',
  SUBSCRIBE = 'openprogram/subscribe',
  UNSUBSCRIBE = 'openprogram/unsubscribe',
  RULES = 'openprogram/rules',
  REVOKE_RULE = 'openprogram/revokeRule',
}

--- Server -> client notifications and requests.
---@enum openprogram.ServerMethod
M.server_methods = {
  EVENT = 'openprogram/event',
  REQUEST_PERMISSION = 'openprogram/requestPermission',
  ASK_QUESTION = 'openprogram/askQuestion',
  DIAGNOSTICS = 'openprogram/diagnostics',
  NAVIGATE = 'openprogram/navigate',
}

--- Event types carried by `openprogram/event`.
---@enum openprogram.EventType
M.events = {
  TURN_STARTED = 'turn.started',
  TEXT_DELTA = 'text.delta',
  THOUGHT_DELTA = 'thought.delta',
  TOOL_STARTED = 'tool.started',
  TOOL_FINISHED = 'tool.finished',
  TOOL_OUTPUT = 'tool.output',
  PLAN_UPDATED = 'plan.updated',
  TURN_FINISHED = 'turn.finished',
  CONTEXT_COMPACTED = 'context.compacted',
  CONTEXT_USAGE = 'context.usage',
  CONTEXT_COMPACTION_RECOMMENDED = 'context.compaction_recommended',
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
  MCP_TOOLS_ADDED = 'mcp.tools_added',
}

--- The experimental client capability that turns on the custom server requests.
M.capability = { permissions = true, questions = true, diagnostics = true, navigation = true }

--- Params and result type of each client request (for annotations).
M.request_types = {
  ['openprogram/chat'] = { params = 'openprogram.ChatParams', result = 'openprogram.TurnResult' },
  ['openprogram/fork'] = { params = 'openprogram.ForkParams', result = 'openprogram.TurnResult' },
  ['openprogram/cancel'] = { params = 'openprogram.SessionParams', result = 'openprogram.CancelResult' },
  ['openprogram/steer'] = { params = 'openprogram.SteerParams', result = 'openprogram.AcceptedResult' },
  ['openprogram/sessions'] = { params = 'openprogram.SessionsParams', result = 'openprogram.SessionsResult' },
  ['openprogram/history'] = { params = 'openprogram.HistoryParams', result = 'openprogram.HistoryResult' },
  ['openprogram/branches'] = { params = 'openprogram.SessionParams', result = 'openprogram.BranchesResult' },
  ['openprogram/checkout'] = { params = 'openprogram.CheckoutParams', result = 'openprogram.CheckoutResult' },
  ['openprogram/nameBranch'] = { params = 'openprogram.NameBranchParams', result = 'openprogram.EmptyResult' },
  ['openprogram/answer'] = { params = 'openprogram.AnswerParams', result = 'openprogram.AcceptedResult' },
  ['openprogram/checkpoints'] = { params = 'openprogram.OptionalSessionParams', result = 'openprogram.CheckpointsResult' },
  ['openprogram/checkpointDiff'] = { params = 'openprogram.CheckpointDiffParams', result = 'openprogram.CheckpointDiffResult' },
  ['openprogram/restore'] = { params = 'openprogram.RestoreParams', result = 'openprogram.RestoreResult' },
  ['openprogram/agents'] = { params = 'openprogram.OptionalSessionParams', result = 'openprogram.AgentsResult' },
  ['openprogram/renameSession'] = { params = 'openprogram.RenameSessionParams', result = 'openprogram.EmptyResult' },
  ['openprogram/deleteSession'] = { params = 'openprogram.SessionParams', result = 'openprogram.EmptyResult' },
  ['openprogram/restoreHunk'] = { params = 'openprogram.RestoreHunkParams', result = 'openprogram.RestoreResult' },
  ['openprogram/branchDiff'] = { params = 'openprogram.BranchDiffParams', result = 'openprogram.BranchDiffResult' },
  ['openprogram/blame'] = { params = 'openprogram.BlameParams', result = 'openprogram.BlameResult' },
  ['openprogram/files'] = { params = 'openprogram.FilesParams', result = 'openprogram.FilesResult' },
  ['openprogram/commands'] = { params = 'openprogram.EmptyParams', result = 'openprogram.CommandsResult' },
  ['openprogram/image'] = { params = 'openprogram.ImageParams', result = 'openprogram.ImageResult' },
  ['openprogram/hooks'] = { params = 'openprogram.EmptyParams', result = 'openprogram.HooksResult' },
  ['openprogram/trust'] = { params = 'openprogram.TrustParams', result = 'openprogram.TrustResult' },
  ['openprogram/mcp'] = { params = 'openprogram.EmptyParams', result = 'openprogram.McpResult' },
  ['openprogram/mcpRestart'] = { params = 'openprogram.McpRestartParams', result = 'openprogram.McpRestartResult' },
  ['openprogram/mcpRevokeTrust'] = { params = 'openprogram.McpRevokeTrustParams', result = 'openprogram.McpRevokeTrustResult' },
  ['openprogram/subscribe'] = { params = 'openprogram.SubscribeParams', result = 'openprogram.SubscribeResult' },
  ['openprogram/unsubscribe'] = { params = 'openprogram.SessionParams', result = 'openprogram.AcceptedResult' },
  ['openprogram/rules'] = { params = 'openprogram.RulesParams', result = 'openprogram.RulesResult' },
  ['openprogram/revokeRule'] = { params = 'openprogram.RevokeRuleParams', result = 'openprogram.RevokeRuleResult' },
}

--- The data type of each event type.
M.event_types = {
  ['turn.started'] = 'openprogram.TurnStartedData',
  ['text.delta'] = 'openprogram.TextDeltaData',
  ['thought.delta'] = 'openprogram.ThoughtDeltaData',
  ['tool.started'] = 'openprogram.ToolStartedData',
  ['tool.finished'] = 'openprogram.ToolFinishedData',
  ['tool.output'] = 'openprogram.ToolOutputData',
  ['plan.updated'] = 'openprogram.PlanUpdatedData',
  ['turn.finished'] = 'openprogram.TurnResult',
  ['context.compacted'] = 'openprogram.ContextCompactedData',
  ['context.usage'] = 'openprogram.ContextUsageData',
  ['context.compaction_recommended'] = 'openprogram.CompactionRecommendedData',
  ['checkpoint.created'] = 'openprogram.Checkpoint',
  ['file.changed'] = 'openprogram.FileChangedData',
  ['question.asked'] = 'openprogram.AskQuestionParams',
  ['question.replied'] = 'openprogram.QuestionRepliedData',
  ['question.rejected'] = 'openprogram.QuestionRejectedData',
  ['branch.message_sent'] = 'openprogram.BranchMessageSentData',
  ['subagent.started'] = 'openprogram.SubagentData',
  ['subagent.ended'] = 'openprogram.SubagentData',
  ['permission.withdrawn'] = 'openprogram.PermissionWithdrawnData',
  ['permission.requested'] = 'openprogram.PermissionCardData',
  ['permission.resolved'] = 'openprogram.PermissionResolvedData',
  ['rules.changed'] = 'openprogram.RulesChangedData',
  ['mcp.tools_added'] = 'openprogram.McpToolsAddedData',
}

---@class openprogram.AcceptedResult
---@field accepted boolean

---@class openprogram.AgentDefinitionInfo An agent definition usable as the agent tool's `agent`.
---@field id string
---@field name string
---@field description string
---@field source string
---@field scope 'user'|'workspace'
---@field tools? string[]
---@field disallowedTools string[]
---@field model? string
---@field permissionMode? string
---@field trust 'trusted'|'rejected'|'unknown'

---@class openprogram.AgentInfo One subagent run or send_message delivery (this process's jobs and stored children).
---@field id string
---@field sessionId string
---@field headId? string
---@field label? string
---@field status 'running'|'done'|'error'|'cancelled'|'truncated'|'refused'
---@field kind 'agent'|'message'|'reply' agent: a subagent run; message: a send_message delivery; reply: a follow-up
---@field createdAt string
---@field queued? boolean Waiting behind other work on its branch
---@field error? string
---@field parentSessionId? string The session that started it
---@field parentTurnId? string The turn that started it

---@class openprogram.AgentsResult
---@field agents openprogram.AgentInfo[]
---@field definitions openprogram.AgentDefinitionInfo[]

---@class openprogram.AnswerParams `openprogram/answer`: answer a pending agent question.
---@field questionId string
---@field answer string

---@class openprogram.ApprovalRecordInfo How one tool call of a session was let through, as its assistant node stores it.
---@field by 'user'|'rule'|'mode'|'bypass'|'hook'
---@field decidedAt string
---@field mode? string
---@field option? string The option the user chose (by: user)
---@field ruleId? string The rule that allowed it (by: rule)
---@field ruleIds string[] Every rule (one per part of a compound command)
---@field toolCallId string
---@field tool string
---@field title? string
---@field turnId string The assistant node of the call
---@field branchHeadId? string A branch tip holding the turn
---@field branch? string That branch's name, when named

---@class openprogram.AskQuestionParams `openprogram/askQuestion` params (also the `question.asked` event).
---@field sessionId? string
---@field turnId? string
---@field questionId string
---@field question string
---@field options? string[]
---@field allowFreeText boolean

---@class openprogram.AskQuestionResponse The editor's answer to `openprogram/askQuestion`: an answer, or cancelled.
---@field answer? string|vim.NIL
---@field cancelled? boolean

---@class openprogram.BlameHunk Consecutive lines last changed by the same checkpoint.
---@field startLine integer 0-based, as LSP positions
---@field lineCount integer
---@field kind 'agent'|'user'|'base'|'unrecorded' agent: a turn; user: outside the agent; base: before the first checkpoint; unrecorded: changed since the newest checkpoint
---@field checkpointId? string
---@field checkpointKind? string
---@field createdAt? string
---@field sessionId? string
---@field turnId? string The assistant node of the turn
---@field turn? integer 1-based number of the turn on its branch
---@field prompt? string First line of the turn's user message
---@field branch? string Name of the branch holding the turn
---@field branchHeadId? string
---@field toolCall? openprogram.BlameToolCall
---@field approval? table<string, any> {by: user|rule|mode|bypass|hook, decidedAt, mode, rule?, optionId?, option?, acceptedHunks?, hunks?, event?, rewrittenBy?, originalInput?}

---@class openprogram.BlameParams `openprogram/blame`: who last changed each line of a document.
---@field uri string

---@class openprogram.BlameResult
---@field uri string
---@field path? string
---@field hunks openprogram.BlameHunk[] Empty when blame is off or the agent never changed the file

---@class openprogram.BlameToolCall
---@field id string
---@field name string
---@field title? string

---@class openprogram.BranchDiffParams `openprogram/branchDiff`: compare two branches' code states.
---@field sessionId string
---@field fromHeadId string
---@field toHeadId string
---@field path? string|vim.NIL

---@class openprogram.BranchDiffResult
---@field sessionId string
---@field fromHeadId string
---@field toHeadId string
---@field fromCheckpointId string
---@field toCheckpointId string
---@field diff string Unified diff from the from-branch's code to the to-branch's
---@field files openprogram.DiffFile[]

---@class openprogram.BranchInfo
---@field headId string
---@field name? string
---@field active boolean
---@field length integer
---@field preview string
---@field forkId? string First node of the branch's own part: a stable id (none: the main line)
---@field forkedFrom? string The node the branch continues after
---@field startedAt? string When the branch's own part began
---@field startPreview? string First line of its first own message
---@field codeCheckpointId? string The branch's code state: the checkpoint of its newest turn
---@field codeDiffers? boolean Whether that state differs from the workspace's newest checkpoint

---@class openprogram.BranchMessageSentData A send_message delivery was queued (kind message) or its reply came back (kind reply).
---@field from string SESSION:NODE of the sender
---@field to string SESSION:NODE (or label) of the receiver
---@field kind 'message'|'reply'
---@field deliveryId string
---@field toLabel? string|vim.NIL
---@field queued? boolean|vim.NIL
---@field preview? string|vim.NIL
---@field inTurn? boolean|vim.NIL Replies: taken by the running turn

---@class openprogram.BranchesResult
---@field branches openprogram.BranchInfo[]

---@class openprogram.CancelResult
---@field cancelled boolean

---@class openprogram.ChatParams `openprogram/chat`: a user message; a new session when `sessionId` is absent.
---@field text string The user's message
---@field sessionId? string|vim.NIL Continue this session
---@field branchFrom? string|vim.NIL "inherit" (default), null for a new root, or a node id to fork at
---@field model? string|vim.NIL offline, scripted:FILE, openai:M, anthropic:M
---@field clientTurnId? string|vim.NIL Echoed in turn.started so a client can match its turn
---@field context? openprogram.ContextItem[]|vim.NIL Attachments rendered before the message
---@field rules? 'inherit'|'reset'|'copy' With a node id in branchFrom: the fork's session rules (inherit: shared with the parent branch; reset: none; copy: a snapshot of them, its own from then on)

---@class openprogram.CheckoutParams `openprogram/checkout`: move the session head.
---@field sessionId string
---@field headId string
---@field restoreCode? boolean Also restore the workspace to the branch's code state (undoable)
---@field keepPaths? string[]|vim.NIL With restoreCode: workspace files the switch leaves as they are (the user's own changes); listed in the result's skipped

---@class openprogram.CheckoutResult
---@field headId string
---@field previousHeadId? string The head before (to undo a switch)
---@field codeCheckpointId? string restoreCode: the checkpoint the workspace was restored to
---@field restored? string[] restoreCode: the files written
---@field safetyCheckpointId? string restoreCode: restore this to undo the switch's file changes
---@field conflicts? string[] Files another process changed during the switch (left as they are)
---@field skipped? string[]

---@class openprogram.Checkpoint A commit of the project's files in the private checkpoint store.
---@field id string
---@field sessionId? string
---@field turnId? string
---@field parentId? string
---@field createdAt string
---@field message string
---@field files openprogram.CheckpointFile[]
---@field kind 'baseline'|'turn'|'safety'|'restore'
---@field skipped? string[]
---@field undoneBy? string A turn undone (openprogram/restore with undo): the restore checkpoint that did it; absent once that undo is itself restored away

---@class openprogram.CheckpointDiffParams `openprogram/checkpointDiff`: a checkpoint's diff, optionally for one path.
---@field checkpointId string
---@field path? string|vim.NIL

---@class openprogram.CheckpointDiffResult
---@field checkpointId string
---@field diff string
---@field files openprogram.DiffFile[]

---@class openprogram.CheckpointFile A file changed by a checkpoint.
---@field path string
---@field status 'added'|'modified'|'deleted'
---@field unsaved? boolean The checkpoint holds the editor buffer's unsaved text of this file, not the disk's (an agent edit into a buffer with unsaved changes)

---@class openprogram.CheckpointsResult
---@field checkpoints openprogram.Checkpoint[]

---@class openprogram.CommandInfo
---@field name string
---@field description string
---@field source 'builtin'|'workspace'|'user'
---@field kind 'builtin'|'custom'
---@field argumentHint? string
---@field path? string

---@class openprogram.CommandsResult
---@field commands openprogram.CommandInfo[]

---@class openprogram.CompactionRecommendedData After a turn that used most of the window: compacting now is advised.
---@field usageRatio number Tokens used / the context window
---@field contextWindow integer

---@class openprogram.ContextCompactedData The context was snipped or summarised to fit the model's window.
---@field tokensBefore integer
---@field tokensAfter integer
---@field path string snip, microcompact, compact, structural or manual
---@field contextWindow integer
---@field snipped integer
---@field summarised integer
---@field replaced integer
---@field summaryNodeId? string|vim.NIL
---@field summarizerError? string|vim.NIL

---@class openprogram.ContextItem What the user points the agent at: a file, a selection, diagnostics, a symbol, the references of one (`text`: the editor's list of them) or an image (`data` in base64, or the image file `uri` names, read by the server).
---@field kind 'file'|'selection'|'diagnostics'|'symbol'|'references'|'image'
---@field uri string
---@field range? openprogram.WireRange|vim.NIL
---@field text? string|vim.NIL The content; absent: the server reads it
---@field diagnostics? openprogram.DiagnosticItem[]|vim.NIL
---@field name? string|vim.NIL A symbol's name (symbol, references); an image's name as shown (default: the uri's last part)
---@field data? string|vim.NIL An image's bytes in base64 (a pasted image); absent: the server reads the file. PNG, JPEG, GIF or WebP, judged from the bytes
---@field mediaType? string|vim.NIL What the client thinks the image is; the bytes decide

---@class openprogram.ContextUsageData After each context preparation: the budget a turn's model call starts with.
---@field usedTokens integer
---@field windowTokens integer
---@field compactions integer Summaries on the branch so far
---@field path string How the context was prepared

---@class openprogram.DiagnosticItem One diagnostic of an attachment, as the editor has it (LSP `Diagnostic` fields).
---@field range openprogram.WireRange
---@field message string
---@field severity? integer|vim.NIL
---@field source? string|vim.NIL
---@field code? string|integer|vim.NIL

---@class openprogram.DiagnosticsParams `openprogram/diagnostics`: the server asks for the diagnostics the editor's language servers publish for some files (sent only to clients declaring `experimental.openprogram.diagnostics`).
---@field uris string[] The files (`file:` uris); the editor loads a file no buffer holds yet
---@field settleMs integer Answer once no diagnostics changed for this long (0: at once, unless the file had to be loaded)
---@field timeoutMs integer Answer by then whatever the servers are doing

---@class openprogram.DiagnosticsResponse The editor's answer to `openprogram/diagnostics` (its own diagnostics left out).
---@field files? openprogram.FileDiagnostics[]

---@class openprogram.DiffFile
---@field path string
---@field status 'added'|'modified'|'deleted'
---@field before? string
---@field after? string
---@field binary? boolean
---@field truncated? boolean
---@field hunks? openprogram.DiffHunk[] Changed runs of a text file; openprogram/restoreHunk takes an index

---@class openprogram.DiffHunk One run of changed lines (1-based starts, as in a unified diff).
---@field oldStart integer
---@field oldLines integer
---@field newStart integer
---@field newLines integer

---@class openprogram.DiffPreview The edit a tool call would make, for approval prompts.
---@field path string
---@field oldText string
---@field newText string
---@field unsavedChanges? boolean
---@field hunks? openprogram.PreviewHunk[] The changed runs of oldText -> newText; absent: the edit can only be approved whole

---@class openprogram.EmptyParams Params of methods that take none (`{}` or absent).

---@class openprogram.EmptyResult An empty object.

---@class openprogram.EventNotification `openprogram/event`: one event of the bus (`sessionId` null: a workspace event).
---@field type string
---@field sessionId string|vim.NIL
---@field turnId? string
---@field data table<string, any>
---@field replayed? boolean Sent by openprogram/subscribe with replay: what the running turn streamed before this editor subscribed
---@field replayTruncated? boolean On a replayed turn.started: the turn streamed more than is kept; its deltas are cut

---@class openprogram.FileChange
---@field path string Workspace-relative, '/'-separated
---@field change 'added'|'modified'|'deleted'

---@class openprogram.FileChangedData Files of a watched workspace folder changed (any process); `sessionId` is null.
---@field changes openprogram.FileChange[]
---@field root? string The workspace folder the paths are relative to

---@class openprogram.FileDiagnostics One file's diagnostics in a `openprogram/diagnostics` answer.
---@field uri string
---@field diagnostics? openprogram.DiagnosticItem[]

---@class openprogram.FileEntry
---@field path string Relative to the workspace folder, with /
---@field uri string

---@class openprogram.FilesParams `openprogram/files`: workspace files matching a fuzzy query (@-mention completion).
---@field query? string
---@field limit? integer

---@class openprogram.FilesResult
---@field files openprogram.FileEntry[]
---@field total integer How many files matched (the first 2,000 are ranked)

---@class openprogram.ForkParams `openprogram/fork`: a new branch answering `text` after `fromNodeId`.
---@field sessionId string
---@field fromNodeId string|vim.NIL Fork after this node; null for a new root
---@field text string
---@field name? string|vim.NIL
---@field clientTurnId? string|vim.NIL Echoed in turn.started so a client can match its turn
---@field restoreCode? boolean Start from the code state of fromNodeId (restored first, undoable)
---@field keepPaths? string[]|vim.NIL With restoreCode: workspace files the restore leaves as they are (the user's own changes); listed in the result's skipped
---@field context? openprogram.ContextItem[]|vim.NIL Attachments rendered before the message
---@field model? string|vim.NIL The fork's model, as in chat (offline, scripted:FILE, openai:M, anthropic:M); absent: the server's
---@field rules? 'inherit'|'reset'|'copy' The fork's session rules: inherit (shared with the parent branch), reset (none: its calls ask again), copy (a snapshot, its own from then on)

---@class openprogram.HistoryNode A node of `openprogram/history`: `predecessor` and `caller` always present.
---@field id string
---@field role 'user'|'assistant'|'tool'|'summary'|'system'
---@field text string
---@field predecessor string|vim.NIL
---@field caller string|vim.NIL
---@field createdAt string
---@field status? 'running'|'done'|'error'|'cancelled'|'interrupted'
---@field toolCalls? openprogram.ToolCallRecord[]
---@field metadata table<string, any>
---@field attachments? openprogram.Node[] Replies from subagents and other branches hanging off this node

---@class openprogram.HistoryParams `openprogram/history`: one branch, root to head, a page at a time.
---@field sessionId string
---@field headId? string|vim.NIL
---@field limit? integer At most this many nodes: the newest ones before beforeNodeId (the server sends 1,000 at most; hasMore)
---@field beforeNodeId? string|vim.NIL Return the nodes just before this one (the oldest node of the last page)

---@class openprogram.HistoryResult
---@field sessionId string
---@field headId string|vim.NIL
---@field nodes openprogram.HistoryNode[]
---@field hasMore boolean Older nodes remain before the first one listed

---@class openprogram.HookInfo One hook definition, its trust and its last result.
---@field id string
---@field event string
---@field matcher string
---@field command string
---@field timeout number
---@field critical boolean
---@field source string
---@field scope 'user'|'workspace'
---@field trust 'trusted'|'rejected'|'unknown'
---@field active boolean
---@field lastResult? openprogram.HookResultInfo
---@field type 'command'|'http'|'prompt'|'agent' What the hook runs: a shell command, an HTTP POST to the URL in command, or a model's judgement with the prompt in command
---@field background boolean An async hook: it never holds a turn up

---@class openprogram.HookResultInfo A hook's last run.
---@field exitCode? integer
---@field durationMs number
---@field timedOut boolean
---@field at number
---@field outcome string
---@field error? string
---@field stderr? string

---@class openprogram.HooksResult
---@field hooks openprogram.HookInfo[]
---@field warnings string[]

---@class openprogram.ImageParams `openprogram/image`: a stored image's bytes, by the hash its record names.
---@field sha256 string From an image record (metadata.context[i].sha256, toolCalls[i].images[j].sha256)

---@class openprogram.ImagePart An image in a message: its record (the bytes stay in the session's image store).
---@field sha256 string The image's content hash (its name in the store)
---@field mediaType string image/png, image/jpeg, image/gif or image/webp
---@field width integer
---@field height integer
---@field size integer Bytes
---@field name? string What the user or the tool called it
---@field original? openprogram.ImageSize The image as given, when it was over the models' limits and was downscaled to this one

---@class openprogram.ImageResult
---@field mediaType string
---@field data string The image's bytes in base64

---@class openprogram.ImageSize An image as it was given, before it was downscaled to fit the models' limits.
---@field width integer
---@field height integer
---@field size integer Bytes

---@class openprogram.McpPromptInfo
---@field name string
---@field command string The slash command, /mcp__<server>__<prompt>
---@field description string
---@field arguments string[]

---@class openprogram.McpResourceInfo
---@field uri string
---@field name string
---@field mimeType? string
---@field reference string What to write in a message to attach it: @server:uri

---@class openprogram.McpRestartParams `openprogram/mcpRestart`: reconnect one server, or every server when absent.
---@field server? string|vim.NIL

---@class openprogram.McpRestartResult
---@field restarted string[]
---@field servers openprogram.McpServerInfo[]

---@class openprogram.McpResult `openprogram/mcp`: the workspace's servers, remembered trust and config problems.
---@field workspace string
---@field servers openprogram.McpServerInfo[]
---@field trust openprogram.McpTrustInfo[]
---@field problems string[]

---@class openprogram.McpRevokeTrustParams `openprogram/mcpRevokeTrust`: forget the trust answer about a `.mcp.json` server.
---@field server string

---@class openprogram.McpRevokeTrustResult
---@field revoked boolean

---@class openprogram.McpServerInfo
---@field name string
---@field origin 'user'|'workspace'|'editor'|'acp'
---@field transport 'stdio'|'http'
---@field target string The command line or URL
---@field status 'stopped'|'starting'|'ready'|'restarting'|'failed'|'untrusted'|'denied'|'invalid'
---@field trust? 'allow'|'deny'|'unknown' For .mcp.json servers: the remembered trust answer
---@field lastError? string
---@field restarts integer
---@field tools openprogram.McpToolInfo[]
---@field prompts openprogram.McpPromptInfo[]
---@field resources openprogram.McpResourceInfo[]
---@field stderr? string[] The last lines the server wrote to stderr

---@class openprogram.McpSource Where an MCP tool comes from.
---@field server string
---@field tool string
---@field description? string The server's own description of the tool (on approval cards)

---@class openprogram.McpToolInfo
---@field name string The registry name, mcp__<server>__<tool>
---@field tool string The tool's name on its server
---@field kind 'read'|'edit'|'delete'|'move'|'search'|'execute'|'think'|'fetch'|'other'
---@field description string

---@class openprogram.McpToolsAddedData A running MCP server added tools after it was trusted: each asks before its first call, whatever its annotations, mode and rules say.
---@field workspace string
---@field server string
---@field tools openprogram.McpToolInfo[]

---@class openprogram.McpTrustInfo
---@field server string
---@field decision 'allow'|'deny'
---@field createdAt string
---@field command string

---@class openprogram.NameBranchParams `openprogram/nameBranch`: name the branch ending at `headId`.
---@field sessionId string
---@field headId string
---@field name string

---@class openprogram.NavLocation A place a language server named (`Location`; `LocationLink` as its target).
---@field uri string
---@field range openprogram.WireRange

---@class openprogram.NavSymbol A symbol (`DocumentSymbol`, flattened, or `SymbolInformation`).
---@field name string
---@field kind integer
---@field uri? string|vim.NIL
---@field range openprogram.WireRange
---@field container? string|vim.NIL

---@class openprogram.NavigateParams `openprogram/navigate`: the server asks the editor's language servers a navigation question (sent only to clients declaring `experimental.openprogram.navigation`).
---@field kind 'definition'|'references'|'hover'|'documentSymbols'|'workspaceSymbols'
---@field uri? string The file (all but workspaceSymbols)
---@field position? table<string, integer> LSP position {line, character} (definition, references, hover)
---@field query? string What to look for (workspaceSymbols)
---@field timeoutMs integer Answer by then with what the servers gave

---@class openprogram.NavigateResponse The editor's answer to `openprogram/navigate` (its own client left out).
---@field locations? openprogram.NavLocation[]
---@field symbols? openprogram.NavSymbol[]
---@field hover? string|vim.NIL
---@field servers? string[] The language servers that answered

---@class openprogram.Node One node of the conversation DAG.
---@field id string
---@field role 'user'|'assistant'|'tool'|'summary'|'system'
---@field text string
---@field predecessor? string
---@field caller? string
---@field createdAt string
---@field status? 'running'|'done'|'error'|'cancelled'|'interrupted'
---@field toolCalls? openprogram.ToolCallRecord[]
---@field metadata table<string, any>

---@class openprogram.NotRestoredFile A path a restore (or undo) left as it is.
---@field path string Workspace-relative, '/'-separated (a directory ends in '/')
---@field reason string Why, for people

---@class openprogram.OptionalSessionParams Params with an optional session filter (checkpoints, agents).
---@field sessionId? string|vim.NIL

---@class openprogram.PermissionCardData `permission.requested`: another editor's approval, shown read-only.
---@field sessionId string
---@field turnId string
---@field toolCall openprogram.PermissionToolCall
---@field options openprogram.PermissionOption[]
---@field label? string
---@field readOnly boolean

---@class openprogram.PermissionOption One choice offered when a tool call needs approval.
---@field optionId string
---@field name string
---@field kind 'allow_once'|'allow_always'|'reject_once'|'reject_always'

---@class openprogram.PermissionRequest An approval request for one tool call.
---@field sessionId string
---@field turnId string
---@field toolCall openprogram.PermissionToolCall
---@field options openprogram.PermissionOption[]
---@field label? string

---@class openprogram.PermissionResolvedData How an approval ended (sent to every subscriber).
---@field toolCallId string
---@field outcome 'selected'|'cancelled'
---@field optionId? string|vim.NIL
---@field kind? 'allow_once'|'allow_always'|'reject_once'|'reject_always'|vim.NIL
---@field reason? string|vim.NIL
---@field acceptedHunks? integer[]|vim.NIL The hunks the user accepted (absent: the whole edit)

---@class openprogram.PermissionResponse The editor's answer to `openprogram/requestPermission`.
---@field outcome 'selected'|'cancelled'
---@field optionId? string|vim.NIL
---@field acceptedHunks? integer[]|vim.NIL With an allow option: apply only these hunks (indices into toolCall.diff.hunks); [] rejects the edit; absent: the whole edit

---@class openprogram.PermissionToolCall The tool call an approval is about.
---@field toolCallId string
---@field name string
---@field kind 'read'|'edit'|'delete'|'move'|'search'|'execute'|'think'|'fetch'|'other'
---@field title string
---@field input table<string, any>
---@field diff? openprogram.DiffPreview
---@field sandboxed? boolean
---@field sandboxNote? string
---@field mcp? openprogram.McpSource Set when an MCP server's tool asks
---@field parts? string[]
---@field uncoveredParts? string[]

---@class openprogram.PermissionWithdrawnData An approval prompt timed out or its turn was cancelled: close it.
---@field toolCallId string
---@field reason string

---@class openprogram.PlanEntry One step of the agent's to-do list (`todo_write`; ACP `plan` entries).
---@field content string The step, imperative ("Run the tests")
---@field status 'pending'|'in_progress'|'completed'
---@field activeForm? string The step as an ongoing action ("Running the tests"), shown while in progress

---@class openprogram.PlanUpdatedData The agent's to-do list, replaced whole (`todo_write`): show it as a checklist. On re-attach the latest plan is the input (`todos`) of the branch's last completed `todo_write` call in the history.
---@field entries openprogram.PlanEntry[]

---@class openprogram.PreviewHunk One run of changed lines of an edit preview (1-based starts, as in a unified diff); an approval may accept some hunks by `index` (`acceptedHunks`).
---@field index integer 0-based, in file order: what acceptedHunks names
---@field oldStart integer
---@field oldLines integer
---@field newStart integer
---@field newLines integer
---@field header? string The unified-diff header, @@ -a,b +c,d @@

---@class openprogram.QuestionRejectedData A question ended without an answer.
---@field questionId string
---@field reason string timeout, dismissed or cancelled

---@class openprogram.QuestionRepliedData A question was answered.
---@field questionId string
---@field answer string

---@class openprogram.RenameSessionParams `openprogram/renameSession`: give a session a new title.
---@field sessionId string
---@field title string

---@class openprogram.RestoreHunkParams `openprogram/restoreHunk`: undo one hunk of a checkpoint's change to a file.
---@field checkpointId string
---@field path string
---@field hunk integer Index into files[].hunks of checkpointDiff

---@class openprogram.RestoreParams `openprogram/restore`: restore a checkpoint (all files or some), or with `undo` return a turn's files to how they were before that turn.
---@field checkpointId string
---@field paths? string[]|vim.NIL
---@field undo? boolean

---@class openprogram.RestoreResult `openprogram/restore` and `restoreHunk`: what was written, and how to undo it.
---@field restored string[]
---@field safetyCheckpointId string|vim.NIL The checkpoint of the state before (restore it to undo); null: none needed
---@field changes openprogram.FileChange[] Each written file and how it changed
---@field checkpointId? string The checkpoint the restore made
---@field undoneCheckpointId? string With undo: the turn undone
---@field restoredFromCheckpointId? string With undo: the checkpoint the files came back to
---@field conflicts? string[] Files another process changed during the restore (left as they are)
---@field skipped? string[] The paths of notRestored
---@field notRestored? openprogram.NotRestoredFile[] Paths left as they are, each with why: files a checkpoint could not record (over checkpoints.max_file_bytes, unreadable, a FIFO, socket or device), or something unrecorded in the way

---@class openprogram.RevokeRuleParams `openprogram/revokeRule`: forget one rule, at once.
---@field ruleId string
---@field workspace? string|vim.NIL The folder the rule belongs to (default: any)

---@class openprogram.RevokeRuleResult
---@field revoked openprogram.RuleInfo

---@class openprogram.RuleInfo One standing rule: what it covers, its scope, and where it came from.
---@field id string
---@field decision 'allow'|'deny'
---@field kind 'command'|'edit'|'call'|'tool'|'pattern'|'host' command: one exact simple command; edit: a file, folder or every edit; call: one exact call; tool: every call of one MCP server's tool; pattern: an fnmatch pattern from settings; host: every fetch from one host (value: host, or host:port)
---@field tool string
---@field value? string
---@field editScope? 'file'|'folder'|'workspace'
---@field scope 'session'|'workspace'
---@field sessionId? string
---@field branch? string A session rule made on a reset or copy fork: the fork's first node (its rules scope)
---@field origin 'prompt'|'settings'|'legacy'
---@field createdAt string
---@field toolCallId? string
---@field turnId? string
---@field description string
---@field revocable boolean
---@field workspace? string The workspace folder whose rule it is (null: a settings rule, every folder)

---@class openprogram.RulesChangedData A rule was made from a prompt or revoked: refresh a rules view.
---@field action 'added'|'revoked'
---@field ruleIds string[]
---@field toolCallId? string|vim.NIL The prompt the rules came from
---@field workspace? string|vim.NIL The workspace folder of the rules

---@class openprogram.RulesParams `openprogram/rules`: the standing rules of the workspace folders (and of one session).
---@field sessionId? string|vim.NIL Also list this session's rules (default: all)
---@field workspace? string|vim.NIL Only this workspace folder (default: every one)
---@field records? boolean Also list the session's approval records, read from its store (needs sessionId)
---@field cursor? string|vim.NIL nextCursor of the previous page of records
---@field limit? integer Records per page

---@class openprogram.RulesResult
---@field rules openprogram.RuleInfo[]
---@field records? openprogram.ApprovalRecordInfo[] With records: the session's approval records, oldest first
---@field nextCursor? string More records: pass it as cursor

---@class openprogram.SessionInfo
---@field id string
---@field title string
---@field headId? string
---@field status string
---@field updatedAt string
---@field workspace? string The folder the session works in

---@class openprogram.SessionParams Params naming one session (cancel, branches).
---@field sessionId string

---@class openprogram.SessionsParams `openprogram/sessions`: one page of sessions, newest first, optionally one folder's.
---@field limit? integer|vim.NIL At most this many sessions
---@field offset? integer Skip this many (newest first)
---@field workspace? string|vim.NIL Only sessions working in this folder

---@class openprogram.SessionsResult
---@field sessions openprogram.SessionInfo[]
---@field total integer Sessions matching the filter, on every page
---@field hasMore boolean More sessions after this page

---@class openprogram.SteerParams `openprogram/steer`: interject into the running turn.
---@field sessionId string
---@field text string

---@class openprogram.SubagentData `subagent.started` / `subagent.ended`: a child run on its own branch.
---@field agentId string
---@field kind 'agent'|'message'
---@field label? string|vim.NIL
---@field parentSessionId? string|vim.NIL
---@field parentTurnId? string|vim.NIL
---@field branchFrom? string|vim.NIL
---@field status? 'done'|'error'|'cancelled'|'truncated'|'refused'|vim.NIL subagent.ended only
---@field headId? string|vim.NIL subagent.ended: the child's branch tip
---@field checkpointId? string|vim.NIL
---@field error? string|vim.NIL

---@class openprogram.SubscribeParams `openprogram/subscribe`: receive the events of a session (whoever drives it).
---@field sessionId string
---@field replay? boolean First send this editor what the session's running turn streamed so far (events marked replayed, before any later event)

---@class openprogram.SubscribeResult `openprogram/subscribe`: where the session is now (a turn may be running).
---@field sessionId string
---@field headId? string
---@field runningTurnId? string

---@class openprogram.TextDeltaData The next piece of the reply.
---@field text string

---@class openprogram.ThoughtDeltaData The next piece of the model's reasoning (extended thinking, `reasoning_content`): shown collapsed, never part of the reply's text; stored in the reply's `metadata.thoughts`.
---@field text string

---@class openprogram.ToolCallRecord One tool call as recorded on an assistant node.
---@field id string
---@field name string
---@field kind 'read'|'edit'|'delete'|'move'|'search'|'execute'|'think'|'fetch'|'other'
---@field input table<string, any>
---@field status 'pending'|'in_progress'|'completed'|'failed'
---@field output? string
---@field title? string
---@field step integer
---@field blockedReason? string
---@field cancelled? boolean
---@field approval? table<string, any>
---@field images? openprogram.ImagePart[] Images the tool returned (read_file of an image, an MCP tool's image content): shown to a model that sees

---@class openprogram.ToolFinishedData A tool call ended; editors show `blockedReason` on the card.
---@field toolCallId string
---@field status 'completed'|'failed'
---@field output string
---@field blockedReason? string Why a tool gate (a hook, a policy), admission, the mode or a rule refused the call
---@field cancelled? boolean True: the turn's cancel cut the call while it ran or waited for approval

---@class openprogram.ToolOutputData The next piece of a running command's output (`run_command`), as it comes.
---@field toolCallId string
---@field text string Batched (about 50 ms or 8 KiB); at most 64 KiB per call are streamed, then a note; tool.finished carries the whole output

---@class openprogram.ToolStartedData A tool call is about to run (approval may still be asked).
---@field toolCallId string
---@field name string
---@field kind 'read'|'edit'|'delete'|'move'|'search'|'execute'|'think'|'fetch'|'other'
---@field title string
---@field input table<string, any>
---@field mcp? openprogram.McpSource Set when an MCP server's tool runs

---@class openprogram.TrustParams `openprogram/trust`: trust, reject or forget a workspace hook or agent definition.
---@field id string
---@field decision 'trust'|'reject'|'forget'

---@class openprogram.TrustResult
---@field id string
---@field trust 'trusted'|'rejected'|'unknown'

---@class openprogram.TurnError Why a turn failed.
---@field message string
---@field code? integer

---@class openprogram.TurnResult What one turn produced.
---@field sessionId string
---@field userNodeId string
---@field assistantNodeId string
---@field headId string
---@field status 'done'|'error'|'cancelled'|'truncated'|'refused'
---@field text string
---@field usage openprogram.Usage
---@field checkpoint openprogram.Checkpoint|vim.NIL
---@field checkpointPending? string With checkpoint null: the id of the turn's checkpoint, still to be committed (the turn ended during the workspace's first walk); a checkpoint.created event brings it, and history names it at once
---@field error? openprogram.TurnError
---@field warnings? string[]

---@class openprogram.TurnStartedData A turn began: its user node is written, the reply node is running.
---@field userNodeId string
---@field assistantNodeId string
---@field text string
---@field source string user, cli, agent_spawn, send_message, follow_up, ...
---@field predecessor string|vim.NIL The node the user message follows (null: root)
---@field clientTurnId? string The chat/fork request's clientTurnId
---@field agentId? string A subagent's turn: its agentId, as in subagent.started (editors show its stream apart)

---@class openprogram.Usage Token usage of a turn or model call.
---@field inputTokens integer
---@field outputTokens integer
---@field cacheReadTokens? integer
---@field cacheWriteTokens? integer
---@field estimated? boolean Some of it is counted from the text, not reported by the provider (a model call the cancel cut before its usage came)

---@class openprogram.WirePosition An LSP position (0-based line, UTF-16 character).
---@field line integer
---@field character integer

---@class openprogram.WireRange An LSP range.
---@field start openprogram.WirePosition
---@field end openprogram.WirePosition

return M
