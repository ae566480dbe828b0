// Generated from server/openprogram_lsp/lsp/wire.py by `python -m openprogram_lsp.lsp.codegen`.
// Do not edit: change the pydantic models and regenerate (tests/lsp/test_codegen.py checks it).
/* eslint-disable */

/** Client → server requests. */
export const Requests = {
  chat: 'openprogram/chat',
  fork: 'openprogram/fork',
  cancel: 'openprogram/cancel',
  steer: 'openprogram/steer',
  sessions: 'openprogram/sessions',
  history: 'openprogram/history',
  branches: 'openprogram/branches',
  checkout: 'openprogram/checkout',
  nameBranch: 'openprogram/nameBranch',
  answer: 'openprogram/answer',
  checkpoints: 'openprogram/checkpoints',
  checkpointDiff: 'openprogram/checkpointDiff',
  restore: 'openprogram/restore',
  agents: 'openprogram/agents',
  renameSession: 'openprogram/renameSession',
  deleteSession: 'openprogram/deleteSession',
  restoreHunk: 'openprogram/restoreHunk',
  branchDiff: 'openprogram/branchDiff',
  blame: 'openprogram/blame',
  files: 'openprogram/files',
  commands: 'openprogram/commands',
  image: 'openprogram/image',
  hooks: 'openprogram/hooks',
  trust: 'openprogram/trust',
  mcp: 'openprogram/mcp',
  mcpRestart: 'openprogram/mcpRestart',
  mcpRevokeTrust: 'openprogram/mcpRevokeTrust',
  subscribe: 'openprogram/subscribe',
  unsubscribe: 'openprogram/unsubscribe',
  rules: 'openprogram/rules',
  revokeRule: 'openprogram/revokeRule',
} as const;

/** Server → client requests. */
export const ServerRequests = {
  requestPermission: 'openprogram/requestPermission',
  askQuestion: 'openprogram/askQuestion',
  diagnostics: 'openprogram/diagnostics',
  navigate: 'openprogram/navigate',
} as const;

/** Server → client notifications. */
export const ServerNotifications = {
  event: 'openprogram/event',
} as const;

/** Event types carried by `openprogram/event`. */
export const EventTypes = [
  'turn.started',
  'text.delta',
  'thought.delta',
  'tool.started',
  'tool.finished',
  'tool.output',
  'plan.updated',
  'turn.finished',
  'context.compacted',
  'context.usage',
  'context.compaction_recommended',
  'checkpoint.created',
  'file.changed',
  'question.asked',
  'question.replied',
  'question.rejected',
  'branch.message_sent',
  'subagent.started',
  'subagent.ended',
  'permission.withdrawn',
  'permission.requested',
  'permission.resolved',
  'rules.changed',
  'mcp.tools_added',
] as const;

export interface AcceptedResult {
  accepted: boolean;
}

/** An agent definition usable as the agent tool's `agent`. */
export interface AgentDefinitionInfo {
  id: string;
  name: string;
  description: string;
  source: string;
  scope: 'user' | 'workspace';
  tools?: string[];
  disallowedTools: string[];
  model?: string;
  permissionMode?: string;
  trust: 'trusted' | 'rejected' | 'unknown';
}

/** One subagent run or send_message delivery (this process's jobs and stored children). */
export interface AgentInfo {
  id: string;
  sessionId: string;
  headId?: string;
  label?: string;
  status: 'running' | 'done' | 'error' | 'cancelled' | 'truncated' | 'refused';
  /** agent: a subagent run; message: a send_message delivery; reply: a follow-up */
  kind: 'agent' | 'message' | 'reply';
  createdAt: string;
  /** Waiting behind other work on its branch */
  queued?: boolean;
  error?: string;
  /** The session that started it */
  parentSessionId?: string;
  /** The turn that started it */
  parentTurnId?: string;
}

export interface AgentsResult {
  agents: AgentInfo[];
  definitions: AgentDefinitionInfo[];
}

/** `openprogram/answer`: answer a pending agent question. */
export interface AnswerParams {
  questionId: string;
  answer: string;
}

/** How one tool call of a session was let through, as its assistant node stores it. */
export interface ApprovalRecordInfo {
  by: 'user' | 'rule' | 'mode' | 'bypass' | 'hook';
  decidedAt: string;
  mode?: string;
  /** The option the user chose (by: user) */
  option?: string;
  /** The rule that allowed it (by: rule) */
  ruleId?: string;
  /** Every rule (one per part of a compound command) */
  ruleIds: string[];
  toolCallId: string;
  tool: string;
  title?: string;
  /** The assistant node of the call */
  turnId: string;
  /** A branch tip holding the turn */
  branchHeadId?: string;
  /** That branch's name, when named */
  branch?: string;
}

/** `openprogram/askQuestion` params (also the `question.asked` event). */
export interface AskQuestionParams {
  sessionId?: string;
  turnId?: string;
  questionId: string;
  question: string;
  options?: string[];
  allowFreeText: boolean;
}

/** The editor's answer to `openprogram/askQuestion`: an answer, or cancelled. */
export interface AskQuestionResponse {
  answer?: string | null;
  cancelled?: boolean;
}

/** Consecutive lines last changed by the same checkpoint. */
export interface BlameHunk {
  /** 0-based, as LSP positions */
  startLine: number;
  lineCount: number;
  /** agent: a turn; user: outside the agent; base: before the first checkpoint; unrecorded: changed since the newest checkpoint */
  kind: 'agent' | 'user' | 'base' | 'unrecorded';
  checkpointId?: string;
  checkpointKind?: string;
  createdAt?: string;
  sessionId?: string;
  /** The assistant node of the turn */
  turnId?: string;
  /** 1-based number of the turn on its branch */
  turn?: number;
  /** First line of the turn's user message */
  prompt?: string;
  /** Name of the branch holding the turn */
  branch?: string;
  branchHeadId?: string;
  toolCall?: BlameToolCall;
  /** {by: user|rule|mode|bypass|hook, decidedAt, mode, rule?, optionId?, option?, acceptedHunks?, hunks?, event?, rewrittenBy?, originalInput?} */
  approval?: Record<string, unknown>;
}

/** `openprogram/blame`: who last changed each line of a document. */
export interface BlameParams {
  uri: string;
}

export interface BlameResult {
  uri: string;
  path?: string;
  /** Empty when blame is off or the agent never changed the file */
  hunks: BlameHunk[];
}

export interface BlameToolCall {
  id: string;
  name: string;
  title?: string;
}

/** `openprogram/branchDiff`: compare two branches' code states. */
export interface BranchDiffParams {
  sessionId: string;
  fromHeadId: string;
  toHeadId: string;
  path?: string | null;
}

export interface BranchDiffResult {
  sessionId: string;
  fromHeadId: string;
  toHeadId: string;
  fromCheckpointId: string;
  toCheckpointId: string;
  /** Unified diff from the from-branch's code to the to-branch's */
  diff: string;
  files: DiffFile[];
}

export interface BranchInfo {
  headId: string;
  name?: string;
  active: boolean;
  length: number;
  preview: string;
  /** First node of the branch's own part: a stable id (none: the main line) */
  forkId?: string;
  /** The node the branch continues after */
  forkedFrom?: string;
  /** When the branch's own part began */
  startedAt?: string;
  /** First line of its first own message */
  startPreview?: string;
  /** The branch's code state: the checkpoint of its newest turn */
  codeCheckpointId?: string;
  /** Whether that state differs from the workspace's newest checkpoint */
  codeDiffers?: boolean;
}

/** A send_message delivery was queued (kind message) or its reply came back (kind reply). */
export interface BranchMessageSentData {
  /** SESSION:NODE of the sender */
  from: string;
  /** SESSION:NODE (or label) of the receiver */
  to: string;
  kind: 'message' | 'reply';
  deliveryId: string;
  toLabel?: string | null;
  queued?: boolean | null;
  preview?: string | null;
  /** Replies: taken by the running turn */
  inTurn?: boolean | null;
}

export interface BranchesResult {
  branches: BranchInfo[];
}

export interface CancelResult {
  cancelled: boolean;
}

/** `openprogram/chat`: a user message; a new session when `sessionId` is absent. */
export interface ChatParams {
  /** The user's message */
  text: string;
  /** Continue this session */
  sessionId?: string | null;
  /** "inherit" (default), null for a new root, or a node id to fork at */
  branchFrom?: string | null;
  /** offline, scripted:FILE, openai:M, anthropic:M */
  model?: string | null;
  /** Echoed in turn.started so a client can match its turn */
  clientTurnId?: string | null;
  /** Attachments rendered before the message */
  context?: ContextItem[] | null;
  /** With a node id in branchFrom: the fork's session rules (inherit: shared with the parent branch; reset: none; copy: a snapshot of them, its own from then on) */
  rules?: 'inherit' | 'reset' | 'copy';
}

/** `openprogram/checkout`: move the session head. */
export interface CheckoutParams {
  sessionId: string;
  headId: string;
  /** Also restore the workspace to the branch's code state (undoable) */
  restoreCode?: boolean;
  /** With restoreCode: workspace files the switch leaves as they are (the user's own changes); listed in the result's skipped */
  keepPaths?: string[] | null;
}

export interface CheckoutResult {
  headId: string;
  /** The head before (to undo a switch) */
  previousHeadId?: string;
  /** restoreCode: the checkpoint the workspace was restored to */
  codeCheckpointId?: string;
  /** restoreCode: the files written */
  restored?: string[];
  /** restoreCode: restore this to undo the switch's file changes */
  safetyCheckpointId?: string;
  /** Files another process changed during the switch (left as they are) */
  conflicts?: string[];
  skipped?: string[];
}

/** A commit of the project's files in the private checkpoint store. */
export interface Checkpoint {
  id: string;
  sessionId?: string;
  turnId?: string;
  parentId?: string;
  createdAt: string;
  message: string;
  files: CheckpointFile[];
  kind: 'baseline' | 'turn' | 'safety' | 'restore';
  skipped?: string[];
  /** A turn undone (openprogram/restore with undo): the restore checkpoint that did it; absent once that undo is itself restored away */
  undoneBy?: string;
}

/** `openprogram/checkpointDiff`: a checkpoint's diff, optionally for one path. */
export interface CheckpointDiffParams {
  checkpointId: string;
  path?: string | null;
}

export interface CheckpointDiffResult {
  checkpointId: string;
  diff: string;
  files: DiffFile[];
}

/** A file changed by a checkpoint. */
export interface CheckpointFile {
  path: string;
  status: 'added' | 'modified' | 'deleted';
  /** The checkpoint holds the editor buffer's unsaved text of this file, not the disk's (an agent edit into a buffer with unsaved changes) */
  unsaved?: boolean;
}

export interface CheckpointsResult {
  checkpoints: Checkpoint[];
}

export interface CommandInfo {
  name: string;
  description: string;
  source: 'builtin' | 'workspace' | 'user';
  kind: 'builtin' | 'custom';
  argumentHint?: string;
  path?: string;
}

export interface CommandsResult {
  commands: CommandInfo[];
}

/** After a turn that used most of the window: compacting now is advised. */
export interface CompactionRecommendedData {
  /** Tokens used / the context window */
  usageRatio: number;
  contextWindow: number;
}

/** The context was snipped or summarised to fit the model's window. */
export interface ContextCompactedData {
  tokensBefore: number;
  tokensAfter: number;
  /** snip, microcompact, compact, structural or manual */
  path: string;
  contextWindow: number;
  snipped: number;
  summarised: number;
  replaced: number;
  summaryNodeId?: string | null;
  summarizerError?: string | null;
}

/** What the user points the agent at: a file, a selection, diagnostics, a symbol, the references of one (`text`: the editor's list of them) or an image (`data` in base64, or the image file `uri` names, read by the server). */
export interface ContextItem {
  kind: 'file' | 'selection' | 'diagnostics' | 'symbol' | 'references' | 'image';
  uri: string;
  range?: WireRange | null;
  /** The content; absent: the server reads it */
  text?: string | null;
  diagnostics?: DiagnosticItem[] | null;
  /** A symbol's name (symbol, references); an image's name as shown (default: the uri's last part) */
  name?: string | null;
  /** An image's bytes in base64 (a pasted image); absent: the server reads the file. PNG, JPEG, GIF or WebP, judged from the bytes */
  data?: string | null;
  /** What the client thinks the image is; the bytes decide */
  mediaType?: string | null;
}

/** After each context preparation: the budget a turn's model call starts with. */
export interface ContextUsageData {
  usedTokens: number;
  windowTokens: number;
  /** Summaries on the branch so far */
  compactions: number;
  /** How the context was prepared */
  path: string;
}

/** One diagnostic of an attachment, as the editor has it (LSP `Diagnostic` fields). */
export interface DiagnosticItem {
  range: WireRange;
  message: string;
  severity?: number | null;
  source?: string | null;
  code?: string | number | null;
}

/** `openprogram/diagnostics`: the server asks for the diagnostics the editor's language servers publish for some files (sent only to clients declaring `experimental.openprogram.diagnostics`). */
export interface DiagnosticsParams {
  /** The files (`file:` uris); the editor loads a file no buffer holds yet */
  uris: string[];
  /** Answer once no diagnostics changed for this long (0: at once, unless the file had to be loaded) */
  settleMs: number;
  /** Answer by then whatever the servers are doing */
  timeoutMs: number;
}

/** The editor's answer to `openprogram/diagnostics` (its own diagnostics left out). */
export interface DiagnosticsResponse {
  files?: FileDiagnostics[];
}

export interface DiffFile {
  path: string;
  status: 'added' | 'modified' | 'deleted';
  before?: string;
  after?: string;
  binary?: boolean;
  truncated?: boolean;
  /** Changed runs of a text file; openprogram/restoreHunk takes an index */
  hunks?: DiffHunk[];
}

/** One run of changed lines (1-based starts, as in a unified diff). */
export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

/** The edit a tool call would make, for approval prompts. */
export interface DiffPreview {
  path: string;
  oldText: string;
  newText: string;
  unsavedChanges?: boolean;
  /** The changed runs of oldText -> newText; absent: the edit can only be approved whole */
  hunks?: PreviewHunk[];
}

/** Params of methods that take none (`{}` or absent). */
export interface EmptyParams {
}

/** An empty object. */
export interface EmptyResult {
}

/** `openprogram/event`: one event of the bus (`sessionId` null: a workspace event). */
export interface EventNotification {
  type: string;
  sessionId: string | null;
  turnId?: string;
  data: Record<string, unknown>;
  /** Sent by openprogram/subscribe with replay: what the running turn streamed before this editor subscribed */
  replayed?: boolean;
  /** On a replayed turn.started: the turn streamed more than is kept; its deltas are cut */
  replayTruncated?: boolean;
}

export interface FileChange {
  /** Workspace-relative, '/'-separated */
  path: string;
  change: 'added' | 'modified' | 'deleted';
}

/** Files of a watched workspace folder changed (any process); `sessionId` is null. */
export interface FileChangedData {
  changes: FileChange[];
  /** The workspace folder the paths are relative to */
  root?: string;
}

/** One file's diagnostics in a `openprogram/diagnostics` answer. */
export interface FileDiagnostics {
  uri: string;
  diagnostics?: DiagnosticItem[];
}

export interface FileEntry {
  /** Relative to the workspace folder, with / */
  path: string;
  uri: string;
}

/** `openprogram/files`: workspace files matching a fuzzy query (@-mention completion). */
export interface FilesParams {
  query?: string;
  limit?: number;
}

export interface FilesResult {
  files: FileEntry[];
  /** How many files matched (the first 2,000 are ranked) */
  total: number;
}

/** `openprogram/fork`: a new branch answering `text` after `fromNodeId`. */
export interface ForkParams {
  sessionId: string;
  /** Fork after this node; null for a new root */
  fromNodeId: string | null;
  text: string;
  name?: string | null;
  /** Echoed in turn.started so a client can match its turn */
  clientTurnId?: string | null;
  /** Start from the code state of fromNodeId (restored first, undoable) */
  restoreCode?: boolean;
  /** With restoreCode: workspace files the restore leaves as they are (the user's own changes); listed in the result's skipped */
  keepPaths?: string[] | null;
  /** Attachments rendered before the message */
  context?: ContextItem[] | null;
  /** The fork's model, as in chat (offline, scripted:FILE, openai:M, anthropic:M); absent: the server's */
  model?: string | null;
  /** The fork's session rules: inherit (shared with the parent branch), reset (none: its calls ask again), copy (a snapshot, its own from then on) */
  rules?: 'inherit' | 'reset' | 'copy';
}

/** A node of `openprogram/history`: `predecessor` and `caller` always present. */
export interface HistoryNode {
  id: string;
  role: 'user' | 'assistant' | 'tool' | 'summary' | 'system';
  text: string;
  predecessor: string | null;
  caller: string | null;
  createdAt: string;
  status?: 'running' | 'done' | 'error' | 'cancelled' | 'interrupted';
  toolCalls?: ToolCallRecord[];
  metadata: Record<string, unknown>;
  /** Replies from subagents and other branches hanging off this node */
  attachments?: Node[];
}

/** `openprogram/history`: one branch, root to head, a page at a time. */
export interface HistoryParams {
  sessionId: string;
  headId?: string | null;
  /** At most this many nodes: the newest ones before beforeNodeId (the server sends 1,000 at most; hasMore) */
  limit?: number;
  /** Return the nodes just before this one (the oldest node of the last page) */
  beforeNodeId?: string | null;
}

export interface HistoryResult {
  sessionId: string;
  headId: string | null;
  nodes: HistoryNode[];
  /** Older nodes remain before the first one listed */
  hasMore: boolean;
}

/** One hook definition, its trust and its last result. */
export interface HookInfo {
  id: string;
  event: string;
  matcher: string;
  command: string;
  timeout: number;
  critical: boolean;
  source: string;
  scope: 'user' | 'workspace';
  trust: 'trusted' | 'rejected' | 'unknown';
  active: boolean;
  lastResult?: HookResultInfo;
  /** What the hook runs: a shell command, an HTTP POST to the URL in command, or a model's judgement with the prompt in command */
  type: 'command' | 'http' | 'prompt' | 'agent';
  /** An async hook: it never holds a turn up */
  background: boolean;
}

/** A hook's last run. */
export interface HookResultInfo {
  exitCode?: number;
  durationMs: number;
  timedOut: boolean;
  at: number;
  outcome: string;
  error?: string;
  stderr?: string;
}

export interface HooksResult {
  hooks: HookInfo[];
  warnings: string[];
}

/** `openprogram/image`: a stored image's bytes, by the hash its record names. */
export interface ImageParams {
  /** From an image record (metadata.context[i].sha256, toolCalls[i].images[j].sha256) */
  sha256: string;
}

/** An image in a message: its record (the bytes stay in the session's image store). */
export interface ImagePart {
  /** The image's content hash (its name in the store) */
  sha256: string;
  /** image/png, image/jpeg, image/gif or image/webp */
  mediaType: string;
  width: number;
  height: number;
  /** Bytes */
  size: number;
  /** What the user or the tool called it */
  name?: string;
  /** The image as given, when it was over the models' limits and was downscaled to this one */
  original?: ImageSize;
}

export interface ImageResult {
  mediaType: string;
  /** The image's bytes in base64 */
  data: string;
}

/** An image as it was given, before it was downscaled to fit the models' limits. */
export interface ImageSize {
  width: number;
  height: number;
  /** Bytes */
  size: number;
}

export interface McpPromptInfo {
  name: string;
  /** The slash command, /mcp__<server>__<prompt> */
  command: string;
  description: string;
  arguments: string[];
}

export interface McpResourceInfo {
  uri: string;
  name: string;
  mimeType?: string;
  /** What to write in a message to attach it: @server:uri */
  reference: string;
}

/** `openprogram/mcpRestart`: reconnect one server, or every server when absent. */
export interface McpRestartParams {
  server?: string | null;
}

export interface McpRestartResult {
  restarted: string[];
  servers: McpServerInfo[];
}

/** `openprogram/mcp`: the workspace's servers, remembered trust and config problems. */
export interface McpResult {
  workspace: string;
  servers: McpServerInfo[];
  trust: McpTrustInfo[];
  problems: string[];
}

/** `openprogram/mcpRevokeTrust`: forget the trust answer about a `.mcp.json` server. */
export interface McpRevokeTrustParams {
  server: string;
}

export interface McpRevokeTrustResult {
  revoked: boolean;
}

export interface McpServerInfo {
  name: string;
  origin: 'user' | 'workspace' | 'editor' | 'acp';
  transport: 'stdio' | 'http';
  /** The command line or URL */
  target: string;
  status: 'stopped' | 'starting' | 'ready' | 'restarting' | 'failed' | 'untrusted' | 'denied' | 'invalid';
  /** For .mcp.json servers: the remembered trust answer */
  trust?: 'allow' | 'deny' | 'unknown';
  lastError?: string;
  restarts: number;
  tools: McpToolInfo[];
  prompts: McpPromptInfo[];
  resources: McpResourceInfo[];
  /** The last lines the server wrote to stderr */
  stderr?: string[];
}

/** Where an MCP tool comes from. */
export interface McpSource {
  server: string;
  tool: string;
  /** The server's own description of the tool (on approval cards) */
  description?: string;
}

export interface McpToolInfo {
  /** The registry name, mcp__<server>__<tool> */
  name: string;
  /** The tool's name on its server */
  tool: string;
  kind: 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'other';
  description: string;
}

/** A running MCP server added tools after it was trusted: each asks before its first call, whatever its annotations, mode and rules say. */
export interface McpToolsAddedData {
  workspace: string;
  server: string;
  tools: McpToolInfo[];
}

export interface McpTrustInfo {
  server: string;
  decision: 'allow' | 'deny';
  createdAt: string;
  command: string;
}

/** `openprogram/nameBranch`: name the branch ending at `headId`. */
export interface NameBranchParams {
  sessionId: string;
  headId: string;
  name: string;
}

/** A place a language server named (`Location`; `LocationLink` as its target). */
export interface NavLocation {
  uri: string;
  range: WireRange;
}

/** A symbol (`DocumentSymbol`, flattened, or `SymbolInformation`). */
export interface NavSymbol {
  name: string;
  kind: number;
  uri?: string | null;
  range: WireRange;
  container?: string | null;
}

/** `openprogram/navigate`: the server asks the editor's language servers a navigation question (sent only to clients declaring `experimental.openprogram.navigation`). */
export interface NavigateParams {
  kind: 'definition' | 'references' | 'hover' | 'documentSymbols' | 'workspaceSymbols';
  /** The file (all but workspaceSymbols) */
  uri?: string;
  /** LSP position {line, character} (definition, references, hover) */
  position?: Record<string, number>;
  /** What to look for (workspaceSymbols) */
  query?: string;
  /** Answer by then with what the servers gave */
  timeoutMs: number;
}

/** The editor's answer to `openprogram/navigate` (its own client left out). */
export interface NavigateResponse {
  locations?: NavLocation[];
  symbols?: NavSymbol[];
  hover?: string | null;
  /** The language servers that answered */
  servers?: string[];
}

/** One node of the conversation DAG. */
export interface Node {
  id: string;
  role: 'user' | 'assistant' | 'tool' | 'summary' | 'system';
  text: string;
  predecessor?: string;
  caller?: string;
  createdAt: string;
  status?: 'running' | 'done' | 'error' | 'cancelled' | 'interrupted';
  toolCalls?: ToolCallRecord[];
  metadata: Record<string, unknown>;
}

/** A path a restore (or undo) left as it is. */
export interface NotRestoredFile {
  /** Workspace-relative, '/'-separated (a directory ends in '/') */
  path: string;
  /** Why, for people */
  reason: string;
}

/** Params with an optional session filter (checkpoints, agents). */
export interface OptionalSessionParams {
  sessionId?: string | null;
}

/** `permission.requested`: another editor's approval, shown read-only. */
export interface PermissionCardData {
  sessionId: string;
  turnId: string;
  toolCall: PermissionToolCall;
  options: PermissionOption[];
  label?: string;
  readOnly: boolean;
}

/** One choice offered when a tool call needs approval. */
export interface PermissionOption {
  optionId: string;
  name: string;
  kind: 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';
}

/** An approval request for one tool call. */
export interface PermissionRequest {
  sessionId: string;
  turnId: string;
  toolCall: PermissionToolCall;
  options: PermissionOption[];
  label?: string;
}

/** How an approval ended (sent to every subscriber). */
export interface PermissionResolvedData {
  toolCallId: string;
  outcome: 'selected' | 'cancelled';
  optionId?: string | null;
  kind?: 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always' | null;
  reason?: string | null;
  /** The hunks the user accepted (absent: the whole edit) */
  acceptedHunks?: number[] | null;
}

/** The editor's answer to `openprogram/requestPermission`. */
export interface PermissionResponse {
  outcome: 'selected' | 'cancelled';
  optionId?: string | null;
  /** With an allow option: apply only these hunks (indices into toolCall.diff.hunks); [] rejects the edit; absent: the whole edit */
  acceptedHunks?: number[] | null;
}

/** The tool call an approval is about. */
export interface PermissionToolCall {
  toolCallId: string;
  name: string;
  kind: 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'other';
  title: string;
  input: Record<string, unknown>;
  diff?: DiffPreview;
  sandboxed?: boolean;
  sandboxNote?: string;
  /** Set when an MCP server's tool asks */
  mcp?: McpSource;
  parts?: string[];
  uncoveredParts?: string[];
}

/** An approval prompt timed out or its turn was cancelled: close it. */
export interface PermissionWithdrawnData {
  toolCallId: string;
  reason: string;
}

/** One step of the agent's to-do list (`todo_write`; ACP `plan` entries). */
export interface PlanEntry {
  /** The step, imperative ("Run the tests") */
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
  /** The step as an ongoing action ("Running the tests"), shown while in progress */
  activeForm?: string;
}

/** The agent's to-do list, replaced whole (`todo_write`): show it as a checklist. On re-attach the latest plan is the input (`todos`) of the branch's last completed `todo_write` call in the history. */
export interface PlanUpdatedData {
  entries: PlanEntry[];
}

/** One run of changed lines of an edit preview (1-based starts, as in a unified diff); an approval may accept some hunks by `index` (`acceptedHunks`). */
export interface PreviewHunk {
  /** 0-based, in file order: what acceptedHunks names */
  index: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** The unified-diff header, @@ -a,b +c,d @@ */
  header?: string;
}

/** A question ended without an answer. */
export interface QuestionRejectedData {
  questionId: string;
  /** timeout, dismissed or cancelled */
  reason: string;
}

/** A question was answered. */
export interface QuestionRepliedData {
  questionId: string;
  answer: string;
}

/** `openprogram/renameSession`: give a session a new title. */
export interface RenameSessionParams {
  sessionId: string;
  title: string;
}

/** `openprogram/restoreHunk`: undo one hunk of a checkpoint's change to a file. */
export interface RestoreHunkParams {
  checkpointId: string;
  path: string;
  /** Index into files[].hunks of checkpointDiff */
  hunk: number;
}

/** `openprogram/restore`: restore a checkpoint (all files or some), or with `undo` return a turn's files to how they were before that turn. */
export interface RestoreParams {
  checkpointId: string;
  paths?: string[] | null;
  undo?: boolean;
}

/** `openprogram/restore` and `restoreHunk`: what was written, and how to undo it. */
export interface RestoreResult {
  restored: string[];
  /** The checkpoint of the state before (restore it to undo); null: none needed */
  safetyCheckpointId: string | null;
  /** Each written file and how it changed */
  changes: FileChange[];
  /** The checkpoint the restore made */
  checkpointId?: string;
  /** With undo: the turn undone */
  undoneCheckpointId?: string;
  /** With undo: the checkpoint the files came back to */
  restoredFromCheckpointId?: string;
  /** Files another process changed during the restore (left as they are) */
  conflicts?: string[];
  /** The paths of notRestored */
  skipped?: string[];
  /** Paths left as they are, each with why: files a checkpoint could not record (over checkpoints.max_file_bytes, unreadable, a FIFO, socket or device), or something unrecorded in the way */
  notRestored?: NotRestoredFile[];
}

/** `openprogram/revokeRule`: forget one rule, at once. */
export interface RevokeRuleParams {
  ruleId: string;
  /** The folder the rule belongs to (default: any) */
  workspace?: string | null;
}

export interface RevokeRuleResult {
  revoked: RuleInfo;
}

/** One standing rule: what it covers, its scope, and where it came from. */
export interface RuleInfo {
  id: string;
  decision: 'allow' | 'deny';
  /** command: one exact simple command; edit: a file, folder or every edit; call: one exact call; tool: every call of one MCP server's tool; pattern: an fnmatch pattern from settings; host: every fetch from one host (value: host, or host:port) */
  kind: 'command' | 'edit' | 'call' | 'tool' | 'pattern' | 'host';
  tool: string;
  value?: string;
  editScope?: 'file' | 'folder' | 'workspace';
  scope: 'session' | 'workspace';
  sessionId?: string;
  /** A session rule made on a reset or copy fork: the fork's first node (its rules scope) */
  branch?: string;
  origin: 'prompt' | 'settings' | 'legacy';
  createdAt: string;
  toolCallId?: string;
  turnId?: string;
  description: string;
  revocable: boolean;
  /** The workspace folder whose rule it is (null: a settings rule, every folder) */
  workspace?: string;
}

/** A rule was made from a prompt or revoked: refresh a rules view. */
export interface RulesChangedData {
  action: 'added' | 'revoked';
  ruleIds: string[];
  /** The prompt the rules came from */
  toolCallId?: string | null;
  /** The workspace folder of the rules */
  workspace?: string | null;
}

/** `openprogram/rules`: the standing rules of the workspace folders (and of one session). */
export interface RulesParams {
  /** Also list this session's rules (default: all) */
  sessionId?: string | null;
  /** Only this workspace folder (default: every one) */
  workspace?: string | null;
  /** Also list the session's approval records, read from its store (needs sessionId) */
  records?: boolean;
  /** nextCursor of the previous page of records */
  cursor?: string | null;
  /** Records per page */
  limit?: number;
}

export interface RulesResult {
  rules: RuleInfo[];
  /** With records: the session's approval records, oldest first */
  records?: ApprovalRecordInfo[];
  /** More records: pass it as cursor */
  nextCursor?: string;
}

export interface SessionInfo {
  id: string;
  title: string;
  headId?: string;
  status: string;
  updatedAt: string;
  /** The folder the session works in */
  workspace?: string;
}

/** Params naming one session (cancel, branches). */
export interface SessionParams {
  sessionId: string;
}

/** `openprogram/sessions`: one page of sessions, newest first, optionally one folder's. */
export interface SessionsParams {
  /** At most this many sessions */
  limit?: number | null;
  /** Skip this many (newest first) */
  offset?: number;
  /** Only sessions working in this folder */
  workspace?: string | null;
}

export interface SessionsResult {
  sessions: SessionInfo[];
  /** Sessions matching the filter, on every page */
  total: number;
  /** More sessions after this page */
  hasMore: boolean;
}

/** `openprogram/steer`: interject into the running turn. */
export interface SteerParams {
  sessionId: string;
  text: string;
}

/** `subagent.started` / `subagent.ended`: a child run on its own branch. */
export interface SubagentData {
  agentId: string;
  kind: 'agent' | 'message';
  label?: string | null;
  parentSessionId?: string | null;
  parentTurnId?: string | null;
  branchFrom?: string | null;
  /** subagent.ended only */
  status?: 'done' | 'error' | 'cancelled' | 'truncated' | 'refused' | null;
  /** subagent.ended: the child's branch tip */
  headId?: string | null;
  checkpointId?: string | null;
  error?: string | null;
}

/** `openprogram/subscribe`: receive the events of a session (whoever drives it). */
export interface SubscribeParams {
  sessionId: string;
  /** First send this editor what the session's running turn streamed so far (events marked replayed, before any later event) */
  replay?: boolean;
}

/** `openprogram/subscribe`: where the session is now (a turn may be running). */
export interface SubscribeResult {
  sessionId: string;
  headId?: string;
  runningTurnId?: string;
}

/** The next piece of the reply. */
export interface TextDeltaData {
  text: string;
}

/** The next piece of the model's reasoning (extended thinking, `reasoning_content`): shown collapsed, never part of the reply's text; stored in the reply's `metadata.thoughts`. */
export interface ThoughtDeltaData {
  text: string;
}

/** One tool call as recorded on an assistant node. */
export interface ToolCallRecord {
  id: string;
  name: string;
  kind: 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'other';
  input: Record<string, unknown>;
  status: 'pending' | 'in_progress' | 'completed' | 'failed';
  output?: string;
  title?: string;
  step: number;
  blockedReason?: string;
  cancelled?: boolean;
  approval?: Record<string, unknown>;
  /** Images the tool returned (read_file of an image, an MCP tool's image content): shown to a model that sees */
  images?: ImagePart[];
}

/** A tool call ended; editors show `blockedReason` on the card. */
export interface ToolFinishedData {
  toolCallId: string;
  status: 'completed' | 'failed';
  output: string;
  /** Why a tool gate (a hook, a policy), admission, the mode or a rule refused the call */
  blockedReason?: string;
  /** True: the turn's cancel cut the call while it ran or waited for approval */
  cancelled?: boolean;
}

/** The next piece of a running command's output (`run_command`), as it comes. */
export interface ToolOutputData {
  toolCallId: string;
  /** Batched (about 50 ms or 8 KiB); at most 64 KiB per call are streamed, then a note; tool.finished carries the whole output */
  text: string;
}

/** A tool call is about to run (approval may still be asked). */
export interface ToolStartedData {
  toolCallId: string;
  name: string;
  kind: 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'other';
  title: string;
  input: Record<string, unknown>;
  /** Set when an MCP server's tool runs */
  mcp?: McpSource;
}

/** `openprogram/trust`: trust, reject or forget a workspace hook or agent definition. */
export interface TrustParams {
  id: string;
  decision: 'trust' | 'reject' | 'forget';
}

export interface TrustResult {
  id: string;
  trust: 'trusted' | 'rejected' | 'unknown';
}

/** Why a turn failed. */
export interface TurnError {
  message: string;
  code?: number;
}

/** What one turn produced. */
export interface TurnResult {
  sessionId: string;
  userNodeId: string;
  assistantNodeId: string;
  headId: string;
  status: 'done' | 'error' | 'cancelled' | 'truncated' | 'refused';
  text: string;
  usage: Usage;
  checkpoint: Checkpoint | null;
  /** With checkpoint null: the id of the turn's checkpoint, still to be committed (the turn ended during the workspace's first walk); a checkpoint.created event brings it, and history names it at once */
  checkpointPending?: string;
  error?: TurnError;
  warnings?: string[];
}

/** A turn began: its user node is written, the reply node is running. */
export interface TurnStartedData {
  userNodeId: string;
  assistantNodeId: string;
  text: string;
  /** user, cli, agent_spawn, send_message, follow_up, ... */
  source: string;
  /** The node the user message follows (null: root) */
  predecessor: string | null;
  /** The chat/fork request's clientTurnId */
  clientTurnId?: string;
  /** A subagent's turn: its agentId, as in subagent.started (editors show its stream apart) */
  agentId?: string;
}

/** Token usage of a turn or model call. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Some of it is counted from the text, not reported by the provider (a model call the cancel cut before its usage came) */
  estimated?: boolean;
}

/** An LSP position (0-based line, UTF-16 character). */
export interface WirePosition {
  line: number;
  character: number;
}

/** An LSP range. */
export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}

/** Params and result of each client request. */
export interface RequestTypes {
  'openprogram/chat': { params: ChatParams; result: TurnResult };
  'openprogram/fork': { params: ForkParams; result: TurnResult };
  'openprogram/cancel': { params: SessionParams; result: CancelResult };
  'openprogram/steer': { params: SteerParams; result: AcceptedResult };
  'openprogram/sessions': { params: SessionsParams; result: SessionsResult };
  'openprogram/history': { params: HistoryParams; result: HistoryResult };
  'openprogram/branches': { params: SessionParams; result: BranchesResult };
  'openprogram/checkout': { params: CheckoutParams; result: CheckoutResult };
  'openprogram/nameBranch': { params: NameBranchParams; result: EmptyResult };
  'openprogram/answer': { params: AnswerParams; result: AcceptedResult };
  'openprogram/checkpoints': { params: OptionalSessionParams; result: CheckpointsResult };
  'openprogram/checkpointDiff': { params: CheckpointDiffParams; result: CheckpointDiffResult };
  'openprogram/restore': { params: RestoreParams; result: RestoreResult };
  'openprogram/agents': { params: OptionalSessionParams; result: AgentsResult };
  'openprogram/renameSession': { params: RenameSessionParams; result: EmptyResult };
  'openprogram/deleteSession': { params: SessionParams; result: EmptyResult };
  'openprogram/restoreHunk': { params: RestoreHunkParams; result: RestoreResult };
  'openprogram/branchDiff': { params: BranchDiffParams; result: BranchDiffResult };
  'openprogram/blame': { params: BlameParams; result: BlameResult };
  'openprogram/files': { params: FilesParams; result: FilesResult };
  'openprogram/commands': { params: EmptyParams; result: CommandsResult };
  'openprogram/image': { params: ImageParams; result: ImageResult };
  'openprogram/hooks': { params: EmptyParams; result: HooksResult };
  'openprogram/trust': { params: TrustParams; result: TrustResult };
  'openprogram/mcp': { params: EmptyParams; result: McpResult };
  'openprogram/mcpRestart': { params: McpRestartParams; result: McpRestartResult };
  'openprogram/mcpRevokeTrust': { params: McpRevokeTrustParams; result: McpRevokeTrustResult };
  'openprogram/subscribe': { params: SubscribeParams; result: SubscribeResult };
  'openprogram/unsubscribe': { params: SessionParams; result: AcceptedResult };
  'openprogram/rules': { params: RulesParams; result: RulesResult };
  'openprogram/revokeRule': { params: RevokeRuleParams; result: RevokeRuleResult };
}

/** Params and result of each server request. */
export interface ServerRequestTypes {
  'openprogram/requestPermission': { params: PermissionRequest; result: PermissionResponse };
  'openprogram/askQuestion': { params: AskQuestionParams; result: AskQuestionResponse };
  'openprogram/diagnostics': { params: DiagnosticsParams; result: DiagnosticsResponse };
  'openprogram/navigate': { params: NavigateParams; result: NavigateResponse };
}

/** The `data` of each event type. */
export interface EventData {
  'turn.started': TurnStartedData;
  'text.delta': TextDeltaData;
  'thought.delta': ThoughtDeltaData;
  'tool.started': ToolStartedData;
  'tool.finished': ToolFinishedData;
  'tool.output': ToolOutputData;
  'plan.updated': PlanUpdatedData;
  'turn.finished': TurnResult;
  'context.compacted': ContextCompactedData;
  'context.usage': ContextUsageData;
  'context.compaction_recommended': CompactionRecommendedData;
  'checkpoint.created': Checkpoint;
  'file.changed': FileChangedData;
  'question.asked': AskQuestionParams;
  'question.replied': QuestionRepliedData;
  'question.rejected': QuestionRejectedData;
  'branch.message_sent': BranchMessageSentData;
  'subagent.started': SubagentData;
  'subagent.ended': SubagentData;
  'permission.withdrawn': PermissionWithdrawnData;
  'permission.requested': PermissionCardData;
  'permission.resolved': PermissionResolvedData;
  'rules.changed': RulesChangedData;
  'mcp.tools_added': McpToolsAddedData;
}

/** One `openprogram/event` of a known type, discriminated by `type`. */
export type KnownEvent = {
  [K in keyof EventData]: {
    type: K; sessionId: string | null; turnId?: string | null; data: EventData[K];
  };
}[keyof EventData];
