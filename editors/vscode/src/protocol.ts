/**
 * Wire contract v1. Method tables and payload types are generated from the server's pydantic
 * models into `wire.ts`; this module adds the names the extension uses for them.
 */
import type * as wire from './wire';

export { EventTypes, Requests, ServerNotifications, ServerRequests } from './wire';
export type {
  AgentDefinitionInfo, AgentInfo, AgentsResult, BranchDiffResult, BranchInfo, BranchesResult,
  CheckoutResult,
  BranchMessageSentData, ChatParams, Checkpoint, CheckpointDiffResult, CheckpointFile,
  CheckpointsResult, CommandInfo, CommandsResult, CompactionRecommendedData, ContextCompactedData, ContextUsageData, DiffFile,
  DiffHunk, EventData, FileChange, FileChangedData, FileEntry, FilesResult, ForkParams, HistoryResult, KnownEvent,
  McpResult, McpServerInfo, McpSource, PermissionOption, PermissionResolvedData, PlanEntry, PlanUpdatedData,
  PermissionToolCall, PermissionWithdrawnData, RequestTypes, RestoreResult, RuleInfo,
  RulesResult, SessionInfo,
  SubagentData, SubscribeResult, ToolCallRecord, ToolFinishedData, ToolOutputData, ToolStartedData, TurnError,
  TurnResult, TurnStartedData, Usage,
} from './wire';
import { EventTypes, Requests, ServerNotifications, ServerRequests } from './wire';

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

export type ToolKind = wire.ToolCallRecord['kind'];
export type ToolStatus = wire.ToolCallRecord['status'];
export type TurnStatus = wire.TurnResult['status'];
export type Role = wire.Node['role'];
export type FileStatus = wire.CheckpointFile['status'];
export type PermissionOptionKind = wire.PermissionOption['kind'];

/** A steering or follow-up message fed into a running turn before step `beforeStep`. */
export interface Interjection {
  beforeStep: number;
  kind: 'steer' | 'follow_up';
  text: string;
}

/**
 * A node as stored: `metadata.steps` is the text of each model call of an assistant turn, in
 * order; `metadata.interjections` the user messages fed into the running turn.
 */
export type Node = Omit<wire.HistoryNode, 'metadata' | 'predecessor' | 'caller'> & {
  /** Always present (maybe null) in `openprogram/history`; left out elsewhere when null. */
  predecessor?: string | null;
  caller?: string | null;
  metadata: { steps?: string[]; interjections?: Interjection[] } & Record<string, unknown>;
};

/** `openprogram/requestPermission` params. */
export type PermissionParams = wire.PermissionRequest;

export type PermissionOutcome =
  | { outcome: 'selected'; optionId: string; acceptedHunks?: number[] }
  | { outcome: 'cancelled' };

/** `openprogram/askQuestion` params. */
export type QuestionParams = wire.AskQuestionParams;

export type QuestionOutcome = { answer: string } | { cancelled: true };

/** `openprogram/event` params (any type; `KnownEvent` narrows the known ones by `type`). */
export type EventParams = wire.EventNotification;

/** Client capability that opts into permission, question, diagnostics and navigation requests. */
export const EXPERIMENTAL_CAPABILITY = { permissions: true, questions: true, diagnostics: true, navigation: true } as const;
