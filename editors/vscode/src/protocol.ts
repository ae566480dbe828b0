/** Wire contract v1: method names and payload types (mirrors the server's method table). */

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
  hooks: 'openprogram/hooks',
  trust: 'openprogram/trust',
  mcp: 'openprogram/mcp',
  mcpRestart: 'openprogram/mcpRestart',
  mcpRevokeTrust: 'openprogram/mcpRevokeTrust',
  subscribe: 'openprogram/subscribe',
  unsubscribe: 'openprogram/unsubscribe',
  branchDiff: 'openprogram/branchDiff',
  blame: 'openprogram/blame',
  rules: 'openprogram/rules',
  revokeRule: 'openprogram/revokeRule',
} as const;

/** Server → client requests. */
export const ServerRequests = {
  requestPermission: 'openprogram/requestPermission',
  askQuestion: 'openprogram/askQuestion',
} as const;

/** Server → client notifications. */
export const ServerNotifications = {
  event: 'openprogram/event',
} as const;

/** Event types carried by `openprogram/event` that this client understands. */
export const EventTypes = [
  'turn.started',
  'text.delta',
  'tool.started',
  'tool.finished',
  'turn.finished',
  'context.compacted',
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
] as const;

/** An approval prompt timed out or its turn was cancelled. */
export const PERMISSION_WITHDRAWN = 'permission.withdrawn';

export type RequestMethod = (typeof Requests)[keyof typeof Requests];
export type EventType = (typeof EventTypes)[number];

/** Every custom method name this client sends or handles. */
export function allMethods(): string[] {
  return [
    ...Object.values(Requests),
    ...Object.values(ServerRequests),
    ...Object.values(ServerNotifications),
  ];
}

export type ToolKind =
  | 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'other';
export type ToolStatus = 'pending' | 'in_progress' | 'completed' | 'failed';
export type TurnStatus = 'done' | 'error' | 'cancelled';
export type Role = 'user' | 'assistant' | 'tool' | 'summary' | 'system';
export type FileStatus = 'added' | 'modified' | 'deleted';
export type PermissionOptionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';

export interface ToolCallRecord {
  id: string;
  name: string;
  kind?: ToolKind;
  input?: Record<string, unknown>;
  status?: ToolStatus;
  output?: string;
  title?: string;
  /** Index of the model call (step) that made this call. */
  step?: number;
  /** Why a tool gate (a hook, a policy), admission, the mode or a rule refused the call. */
  blockedReason?: string;
}

export interface Node {
  id: string;
  role: Role;
  text: string;
  predecessor: string | null;
  caller?: string | null;
  createdAt?: string;
  status?: string | null;
  toolCalls?: ToolCallRecord[] | null;
  /**
   * `steps`: the text of each model call of an assistant turn, in order; `interjections`: user
   * messages fed into the running turn, each before the step it names.
   */
  metadata?: { steps?: string[]; interjections?: Interjection[] } & Record<string, unknown>;
}

/** A steering or follow-up message fed into a running turn before step `beforeStep`. */
export interface Interjection {
  beforeStep: number;
  kind: 'steer' | 'follow_up';
  text: string;
}

export interface CheckpointFile {
  path: string;
  status: FileStatus;
}

export interface Checkpoint {
  id: string;
  sessionId?: string | null;
  turnId?: string | null;
  parentId?: string | null;
  createdAt: string;
  message: string;
  files: CheckpointFile[];
  kind?: 'baseline' | 'turn' | 'safety' | 'restore';
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface TurnResult {
  sessionId: string;
  userNodeId: string;
  assistantNodeId: string;
  headId: string;
  status: TurnStatus;
  text: string;
  usage: Usage;
  checkpoint: Checkpoint | null;
  error?: { message: string; code?: number };
  warnings?: string[];
}

export interface ChatParams {
  text: string;
  sessionId?: string;
  branchFrom?: 'inherit' | string | null;
  model?: string;
  /** Echoed in this turn's `turn.started`, so a new session's events can be matched early. */
  clientTurnId?: string;
}

export interface ForkParams {
  sessionId: string;
  /** null starts a new root in the session. */
  fromNodeId: string | null;
  text: string;
  name?: string;
  model?: string;
  clientTurnId?: string;
}

export interface SessionInfo {
  id: string;
  title: string;
  headId: string | null;
  status: string;
  updatedAt: string;
}

export interface HistoryResult {
  sessionId: string;
  headId: string | null;
  nodes: Node[];
}

export interface BranchInfo {
  headId: string;
  name?: string | null;
  active: boolean;
  length: number;
  preview: string;
}

export interface DiffFile {
  path: string;
  status: FileStatus;
  before?: string | null;
  after?: string | null;
}

export interface CheckpointDiffResult {
  checkpointId: string;
  diff: string;
  files: DiffFile[];
}

export interface RestoreResult {
  restored: string[];
  safetyCheckpointId: string;
}

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: PermissionOptionKind;
}

export interface PermissionToolCall {
  toolCallId: string;
  name: string;
  kind: ToolKind;
  title: string;
  input: Record<string, unknown>;
  diff?: { path: string; oldText: string; newText: string } | null;
  /** The simple commands of an execute call: each must be allowed for it to run unasked. */
  parts?: string[] | null;
  /** Those parts no rule allows yet. */
  uncoveredParts?: string[] | null;
  /** Set when an MCP server's tool asks: the card shows server, tool and every argument. */
  mcp?: McpSource | null;
  /** Commands: whether it will run in the bubblewrap sandbox; `sandboxNote` says why not. */
  sandboxed?: boolean;
  sandboxNote?: string;
}

/** One MCP server of the workspace (`openprogram/mcp`). */
export interface McpServerInfo {
  name: string;
  origin: 'user' | 'workspace' | 'editor' | 'acp';
  transport: 'stdio' | 'http';
  target: string;
  status: 'stopped' | 'starting' | 'ready' | 'restarting' | 'failed' | 'untrusted' | 'denied' | 'invalid';
  trust?: 'allow' | 'deny' | 'unknown' | null;
  lastError?: string | null;
  restarts: number;
  tools: { name: string; tool: string; kind: ToolKind; description: string }[];
  prompts: { name: string; command: string; description: string; arguments: string[] }[];
  resources: { uri: string; name: string; mimeType?: string | null; reference: string }[];
  stderr?: string[] | null;
}

export interface McpResult {
  workspace: string;
  servers: McpServerInfo[];
  trust: { server: string; decision: 'allow' | 'deny'; createdAt: string; command: string }[];
  problems: string[];
}

/** Where an MCP tool comes from. */
export interface McpSource {
  server: string;
  tool: string;
}

export interface PermissionParams {
  sessionId: string;
  turnId: string;
  toolCall: PermissionToolCall;
  options: PermissionOption[];
  /** The child agent asking, when it is one. */
  label?: string | null;
}

/** One standing rule (`openprogram/rules`). */
export interface RuleInfo {
  id: string;
  decision: 'allow' | 'deny';
  kind: 'command' | 'edit' | 'call' | 'pattern';
  tool: string;
  value?: string | null;
  editScope?: 'file' | 'folder' | 'workspace' | null;
  scope: 'session' | 'workspace';
  sessionId?: string | null;
  origin: 'prompt' | 'settings' | 'legacy';
  createdAt: string;
  toolCallId?: string | null;
  turnId?: string | null;
  description: string;
  revocable: boolean;
}

export type PermissionOutcome =
  | { outcome: 'selected'; optionId: string }
  | { outcome: 'cancelled' };

export interface QuestionParams {
  sessionId: string;
  turnId: string;
  questionId: string;
  question: string;
  options?: string[] | null;
  allowFreeText: boolean;
}

export type QuestionOutcome = { answer: string } | { cancelled: true };

export interface EventParams {
  type: string;
  sessionId: string;
  turnId?: string | null;
  data: Record<string, unknown>;
}

export interface ToolStartedData {
  toolCallId: string;
  name: string;
  kind: ToolKind;
  title: string;
  input: Record<string, unknown>;
  mcp?: McpSource | null;
}

export interface ToolFinishedData {
  toolCallId: string;
  status: 'completed' | 'failed';
  output: string;
  /** Set when the call was refused before it ran (a hook, a policy, admission, mode, rule). */
  blockedReason?: string;
}

/** `permission.withdrawn`: an approval prompt timed out or its turn was cancelled. */
export interface PermissionWithdrawnData {
  toolCallId: string;
  reason: string;
}

/** One subagent run (`openprogram/agents`). */
export interface AgentInfo {
  id: string;
  sessionId: string;
  headId?: string | null;
  label?: string | null;
  status: 'running' | 'done' | 'error' | 'cancelled';
  /** `agent` (a subagent run) or `message` (a send_message delivery); informational. */
  kind?: string;
  createdAt?: string;
  error?: string;
  queued?: boolean;
}

/** Client capability that opts into permission and question requests. */
export const EXPERIMENTAL_CAPABILITY = { permissions: true, questions: true } as const;
