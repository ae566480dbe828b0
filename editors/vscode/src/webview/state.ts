/** The chat view's state and the pure reducer that folds host messages into it. */
import {
  PERMISSION_WITHDRAWN,
  type BranchInfo,
  type CheckpointFile,
  type EventParams,
  type Interjection,
  type Node,
  type PermissionOption,
  type ToolFinishedData,
  type ToolKind,
  type ToolStartedData,
  type ToolStatus,
  type ToolCallRecord,
  type TurnResult,
} from '../protocol';
import type { HostMessage } from './messages';
import { onSharedEvent, otherEditorsTurn } from './shared';

export interface MessageItem {
  kind: 'message';
  key: string;
  role: 'user' | 'assistant' | 'summary' | 'system';
  text: string;
  nodeId: string | null;
  predecessor: string | null;
  streaming: boolean;
  turnId: string | null;
  /** A message sent from another editor on a shared session. */
  elsewhere?: boolean;
}

export interface PermissionPrompt {
  requestId: string;
  options: PermissionOption[];
  /** The chosen option's id, null when cancelled, undefined while open. */
  choice?: string | null;
  /** Why the server withdrew the prompt (`timeout`, `cancelled`, …), when it did. */
  withdrawn?: string;
  /** Commands: whether it will run sandboxed, and why not. */
  sandbox?: { sandboxed: boolean; note?: string };
  /** Another editor's prompt, shown here without buttons that act (see shared.ts). */
  readOnly?: boolean;
}

export interface ToolItem {
  kind: 'tool';
  key: string;
  toolCallId: string;
  name: string;
  toolKind: ToolKind;
  title: string;
  status: ToolStatus;
  input: Record<string, unknown>;
  output: string | null;
  /** Why the call was refused before it ran (shown on the card), when it was. */
  blockedReason: string | null;
  diff: { path: string; oldText: string; newText: string } | null;
  /** The MCP server and tool, for tools that come from one. */
  mcp: { server: string; tool: string } | null;
  permission: PermissionPrompt | null;
  /** The turn the call belongs to; with `toolCallId`, the key the server guarantees unique. */
  turnId: string | null;
  /** The simple commands of a compound command, each needing approval. */
  parts?: string[] | null;
  /** The child agent that asked, when it was one. */
  label?: string | null;
}

/** The key of a tool card: turn id + tool call id (never the call id alone). */
export function cardKey(turnId: string | null, toolCallId: string): string {
  return `${turnId ?? ''}\u0000${toolCallId}`;
}

function isCard(it: ChatItem, turnId: string | null, toolCallId: string): it is ToolItem {
  return it.kind === 'tool' && it.toolCallId === toolCallId && it.turnId === turnId;
}

export interface QuestionItem {
  kind: 'question';
  key: string;
  requestId: string;
  question: string;
  options: string[];
  allowFreeText: boolean;
  /** The answer, null when cancelled, undefined while open. */
  answer?: string | null;
  /** The server's question id, when known. */
  questionId?: string;
  /** Asked in another editor: shown here without a way to answer (see shared.ts). */
  readOnly?: boolean;
}

export interface CheckpointItem {
  kind: 'checkpoint';
  key: string;
  checkpointId: string;
  files: CheckpointFile[];
}

export interface NoteItem {
  kind: 'note';
  key: string;
  level: NoteLevel;
  text: string;
}

export type NoteLevel = 'info' | 'warning' | 'error';

/** A user message fed into a running turn: steering, or a follow-up. */
export interface InterjectionItem {
  kind: 'interjection';
  key: string;
  mode: Interjection['kind'];
  text: string;
}

export type ChatItem = MessageItem | ToolItem | QuestionItem | CheckpointItem | NoteItem | InterjectionItem;

export interface ChatState {
  sessionId: string | null;
  headId: string | null;
  items: ChatItem[];
  busy: boolean;
  branches: BranchInfo[];
  server: 'starting' | 'running' | 'stopped';
  serverDetail: string | null;
  seq: number;
  /** The `clientTurnId` of the turn this panel sent last; its `turn.started` binds a new session. */
  clientTurnId: string | null;
  /** Older history remains on the server (``openprogram/history`` ``hasMore``). */
  hasMore?: boolean;
  /** The id of the oldest history node loaded: the next page ends before it. */
  oldestNodeId?: string | null;
}

/** The state of an empty chat. */
export function initialState(): ChatState {
  return {
    sessionId: null,
    headId: null,
    items: [],
    busy: false,
    branches: [],
    server: 'starting',
    serverDetail: null,
    seq: 0,
    clientTurnId: null,
  };
}

/** Fold one host message into the state (never mutates its input). */
export function reduce(state: ChatState, msg: HostMessage): ChatState {
  switch (msg.type) {
    case 'snapshot':
      return msg.state;
    case 'reset':
      return { ...initialState(), server: state.server, sessionId: msg.sessionId, seq: state.seq };
    case 'history':
      return {
        ...fromHistory(state, msg.sessionId, msg.headId, msg.nodes),
        hasMore: msg.hasMore === true && msg.nodes.length > 0,
        oldestNodeId: msg.nodes[0]?.id ?? null,
      };
    case 'olderHistory':
      return olderHistory(state, msg.sessionId, msg.headId, msg.nodes, msg.hasMore);
    case 'branches':
      return { ...state, branches: msg.branches };
    case 'userSent':
      return userSent(state, msg.text, msg.predecessor, msg.forkFrom, msg.clientTurnId ?? null);
    case 'event':
      return onEvent(state, msg.event);
    case 'turnResult':
      // The result of a turn the panel has since left (New session during the turn) binds nothing.
      if (state.sessionId === null && msg.clientTurnId !== undefined && msg.clientTurnId !== state.clientTurnId) {
        return state;
      }
      return onTurnResult(state, msg.result);
    case 'interjection':
      return push(closeStreams(state), { kind: 'interjection', key: `i${state.seq}`, mode: msg.mode, text: msg.text });
    case 'turnFailed':
      return note({ ...closeStreams(state), busy: false }, 'error', msg.message);
    case 'permission':
      return onPermission(state, msg);
    case 'permissionSettled':
      return mapItems(state, (it) =>
        it.kind === 'tool' && it.permission?.requestId === msg.requestId && it.permission.choice === undefined
          ? { ...it, permission: { ...it.permission, choice: msg.choice } }
          : it,
      );
    case 'question': {
      const live: QuestionItem = {
        kind: 'question',
        key: `q${state.seq}`,
        requestId: msg.requestId,
        question: msg.question,
        options: msg.options,
        allowFreeText: msg.allowFreeText,
        ...(msg.questionId ? { questionId: msg.questionId } : {}),
      };
      // The question.asked event may have drawn it first, read-only: this editor is asked.
      const shown = state.items.findIndex((it) => it.kind === 'question' && it.readOnly && it.questionId === msg.questionId);
      if (msg.questionId && shown >= 0) {
        const items = state.items.slice();
        items[shown] = { ...live, key: items[shown].key };
        return { ...state, items };
      }
      return push(state, live);
    }
    case 'questionSettled':
      return mapItems(state, (it) =>
        it.kind === 'question' && it.requestId === msg.requestId && it.answer === undefined
          ? { ...it, answer: msg.answer }
          : it,
      );
    case 'status':
      return { ...state, server: msg.server, serverDetail: msg.detail ?? null };
    case 'note':
      return note(state, msg.level, msg.text);
    case 'submit':
      return state;
  }
}

function push(state: ChatState, item: ChatItem): ChatState {
  return { ...state, items: [...state.items, item], seq: state.seq + 1 };
}

function note(state: ChatState, level: NoteLevel, text: string): ChatState {
  return push(state, { kind: 'note', key: `n${state.seq}`, level, text });
}

function mapItems(state: ChatState, fn: (it: ChatItem) => ChatItem): ChatState {
  return { ...state, items: state.items.map(fn) };
}

function closeStreams(state: ChatState): ChatState {
  return mapItems(state, (it) => (it.kind === 'message' && it.streaming ? { ...it, streaming: false } : it));
}

function message(
  state: ChatState,
  role: MessageItem['role'],
  text: string,
  extra: Partial<MessageItem> = {},
): MessageItem {
  return {
    kind: 'message',
    key: `m${state.seq}`,
    role,
    text,
    nodeId: null,
    predecessor: null,
    streaming: false,
    turnId: null,
    ...extra,
  };
}

function toolItem(state: ChatState, call: ToolCallRecord, turnId: string | null): ToolItem {
  return {
    kind: 'tool',
    key: `t${state.seq}`,
    toolCallId: call.id,
    name: call.name,
    toolKind: call.kind ?? 'other',
    title: call.title ?? call.name,
    status: call.status ?? 'completed',
    input: call.input ?? {},
    output: call.output ?? null,
    blockedReason: call.blockedReason ?? null,
    diff: null,
    mcp: null,
    permission: null,
    turnId,
  };
}

/** Older history drawn above what is shown (its keys continue the sequence, so stay unique). */
function olderHistory(state: ChatState, sessionId: string, headId: string | null, nodes: Node[],
  hasMore: boolean): ChatState {
  if (state.sessionId !== sessionId || state.headId !== headId || nodes.length === 0) {
    return state;
  }
  const older = fromHistory({ ...state, items: [] }, sessionId, headId, nodes);
  return {
    ...state,
    items: [...older.items, ...state.items],
    seq: older.seq,
    hasMore,
    oldestNodeId: nodes[0].id,
  };
}

function fromHistory(
  state: ChatState,
  sessionId: string,
  headId: string | null,
  nodes: Node[],
): ChatState {
  let next: ChatState = { ...state, sessionId, headId, items: [], busy: false };
  for (const node of nodes) {
    if (node.role === 'tool') {
      continue;
    }
    if (node.role !== 'assistant') {
      next = push(next, message(next, node.role, node.text, { nodeId: node.id, predecessor: node.predecessor }));
      continue;
    }
    // Interleave each model call's text with the tool calls it made, as they streamed, and the
    // messages fed into the turn (steering, follow-ups) before the step that first saw them.
    const calls = node.toolCalls ?? [];
    const steps = Array.isArray(node.metadata?.steps) ? node.metadata.steps : null;
    const said = interjections(node);
    const segments: { text: string; calls: ToolCallRecord[]; before: Interjection[] }[] = steps
      ? steps.map((text, i) => ({
          text,
          calls: calls.filter((c) => (c.step ?? 0) === i),
          before: said.filter((x) => x.beforeStep === i),
        }))
      : [{ text: '', calls, before: [] }, { text: node.text, calls: [], before: [] }];
    const placedCalls = new Set(segments.flatMap((seg) => seg.calls));
    const placedSaid = new Set(segments.flatMap((seg) => seg.before));
    // Calls of an unknown step go last; messages fed in after the last step (just before a
    // cancel, or with no steps recorded) follow them.
    segments.push({ text: '', calls: steps ? calls.filter((c) => !placedCalls.has(c)) : [], before: [] });
    const late = said.filter((x) => !placedSaid.has(x));
    const last = segments.map((seg) => seg.text).reduce((at, text, i) => (text ? i : at), -1);
    segments.forEach((seg, i) => {
      for (const x of seg.before) {
        next = push(next, { kind: 'interjection', key: `i${next.seq}`, mode: x.kind, text: x.text });
      }
      if (seg.text) {
        const isLast = i === last;
        next = push(next, message(next, 'assistant', seg.text, isLast ? { nodeId: node.id, predecessor: node.predecessor } : {}));
      }
      for (const call of seg.calls) {
        next = push(next, toolItem(next, call, node.id)); // an assistant node's id is its turn id
      }
    });
    if (last < 0 && node.text) {
      next = push(next, message(next, 'assistant', node.text, { nodeId: node.id, predecessor: node.predecessor }));
    }
    for (const x of late) {
      next = push(next, { kind: 'interjection', key: `i${next.seq}`, mode: x.kind, text: x.text });
    }
  }
  return next;
}

/** The well-formed entries of an assistant node's `metadata.interjections`, in order. */
function interjections(node: Node): Interjection[] {
  const raw: unknown = node.metadata?.interjections;
  if (!Array.isArray(raw)) {
    return [];
  }
  return raw.flatMap((x: unknown): Interjection[] => {
    const r = x as Partial<Interjection> | null;
    if (!r || typeof r.text !== 'string') {
      return [];
    }
    const beforeStep = typeof r.beforeStep === 'number' && r.beforeStep >= 0 ? r.beforeStep : Number.MAX_SAFE_INTEGER;
    return [{ beforeStep, kind: r.kind === 'follow_up' ? 'follow_up' : 'steer', text: r.text }];
  });
}

function userSent(
  state: ChatState,
  text: string,
  predecessor: string | null,
  forkFrom: string | null | undefined,
  clientTurnId: string | null,
): ChatState {
  let items = state.items;
  if (forkFrom !== undefined) {
    // A fork shows the chain up to the fork point; everything after it belongs to another branch.
    const at = forkFrom === null ? -1 : items.findIndex((it) => it.kind === 'message' && it.nodeId === forkFrom);
    items = at < 0 && forkFrom !== null ? items : items.slice(0, at + 1);
  }
  const next: ChatState = { ...state, items, busy: true, clientTurnId };
  return push(next, message(next, 'user', text, { predecessor: forkFrom ?? predecessor }));
}

function onEvent(state: ChatState, ev: EventParams): ChatState {
  if (state.sessionId === null) {
    // A chat that starts a new session binds the panel when its own turn starts; until then
    // other sessions' events (other windows, subagents) are not ours.
    if (!startsOurTurn(state, ev)) {
      return state;
    }
  } else if (ev.sessionId !== state.sessionId) {
    return state;
  }
  const adopted: ChatState = state.sessionId === null ? { ...state, sessionId: ev.sessionId } : state;
  const turnId = ev.turnId ?? null;
  switch (ev.type) {
    case 'turn.started':
      return otherEditorsTurn(adopted, ev);
    case 'text.delta':
      return appendDelta(adopted, turnId, String(ev.data.text ?? ''));
    case 'tool.started':
      return upsertTool(adopted, ev.data as unknown as ToolStartedData, turnId);
    case 'tool.finished': {
      const d = ev.data as unknown as ToolFinishedData;
      return mapItems(adopted, (it) =>
        isCard(it, turnId, d.toolCallId)
          ? { ...it, status: d.status, output: d.output ?? null, blockedReason: d.blockedReason ?? null }
          : it,
      );
    }
    case 'turn.finished':
      return onTurnResult(adopted, ev.data as unknown as TurnResult);
    case 'context.compacted':
      return note(adopted, 'info', 'Context compacted to fit the model window.');
    case 'subagent.started': {
      const label = String(ev.data.label ?? ev.data.agentId ?? 'subagent');
      return note(adopted, 'info', `Subagent “${label}” started.`);
    }
    case 'subagent.ended': {
      const label = String(ev.data.label ?? ev.data.agentId ?? 'subagent');
      return note(adopted, 'info', `Subagent “${label}” ${String(ev.data.status ?? 'ended')}.`);
    }
    case 'branch.message_sent':
      return note(adopted, 'info', `Message sent to branch ${String(ev.data.to ?? '')}.`);
    case PERMISSION_WITHDRAWN: {
      // The prompt is gone: whether it was still open or settled as "no answer" when the
      // request was cancelled, the card says why; a chosen option stays as it was.
      const toolCallId = String(ev.data.toolCallId ?? '');
      const reason = String(ev.data.reason ?? '') || 'withdrawn';
      return mapItems(adopted, (it) =>
        isCard(it, turnId, toolCallId) && it.permission && !it.permission.choice && !it.permission.withdrawn
          ? { ...it, permission: { ...it.permission, choice: null, withdrawn: reason } }
          : it,
      );
    }
    default:
      return onSharedEvent(adopted, ev) ?? adopted;
  }
}

/**
 * Whether `ev` is the `turn.started` of the turn this panel sent. A turn started elsewhere (a
 * follow-up of an older session's subagent, another client) does not echo our id; a server
 * that echoes nothing binds the panel at the turn's result instead.
 */
function startsOurTurn(state: ChatState, ev: EventParams): boolean {
  if (ev.type !== 'turn.started' || !ev.sessionId || !state.busy) {
    return false;
  }
  return state.clientTurnId ? ev.data.clientTurnId === state.clientTurnId : ev.data.clientTurnId === undefined;
}

function appendDelta(state: ChatState, turnId: string | null, text: string): ChatState {
  if (!text) {
    return state;
  }
  const last = state.items[state.items.length - 1];
  if (last && last.kind === 'message' && last.role === 'assistant' && last.streaming) {
    const items = state.items.slice(0, -1);
    return { ...state, busy: true, items: [...items, { ...last, text: last.text + text }] };
  }
  // Text after a tool card starts a new segment of the same reply.
  return push({ ...state, busy: true }, message(state, 'assistant', text, { streaming: true, turnId }));
}

function upsertTool(state: ChatState, d: ToolStartedData, turnId: string | null): ChatState {
  const found = state.items.some((it) => isCard(it, turnId, d.toolCallId));
  if (found) {
    return mapItems(state, (it) =>
      isCard(it, turnId, d.toolCallId)
        ? { ...it, status: it.status === 'pending' ? 'in_progress' : it.status, title: d.title || it.title }
        : it,
    );
  }
  return push(closeStreams(state), {
    kind: 'tool',
    key: `t${state.seq}`,
    toolCallId: d.toolCallId,
    name: d.name,
    toolKind: d.kind ?? 'other',
    title: d.title || d.name,
    status: 'in_progress',
    input: d.input ?? {},
    output: null,
    blockedReason: null,
    diff: null,
    mcp: d.mcp ?? null,
    permission: null,
    turnId,
  });
}

function onPermission(state: ChatState, msg: Extract<HostMessage, { type: 'permission' }>): ChatState {
  const tc = msg.toolCall;
  const turnId = msg.turnId ?? null;
  const permission: PermissionPrompt = { requestId: msg.requestId, options: msg.options };
  if (typeof tc.sandboxed === 'boolean') {
    permission.sandbox = { sandboxed: tc.sandboxed, note: tc.sandboxNote };
  }
  const diff = tc.diff ?? null;
  const extra = { parts: tc.parts ?? null, label: msg.label ?? null, title: tc.title || tc.name };
  // Only the card of this very call (same turn, same id) takes the prompt, never an older one.
  if (state.items.some((it) => isCard(it, turnId, tc.toolCallId))) {
    return mapItems(state, (it) =>
      isCard(it, turnId, tc.toolCallId)
        ? { ...it, ...extra, permission, diff: diff ?? it.diff, input: tc.input ?? it.input, mcp: tc.mcp ?? it.mcp }
        : it,
    );
  }
  return push(closeStreams(state), {
    kind: 'tool',
    key: `t${state.seq}`,
    toolCallId: tc.toolCallId,
    name: tc.name,
    toolKind: tc.kind ?? 'other',
    status: 'pending',
    input: tc.input ?? {},
    output: null,
    blockedReason: null,
    diff,
    mcp: tc.mcp ?? null,
    permission,
    turnId,
    ...extra,
  });
}

function onTurnResult(state: ChatState, r: TurnResult): ChatState {
  if (state.sessionId !== null && r.sessionId !== state.sessionId) {
    return state;
  }
  const ended = r.status !== 'done';
  let items = state.items.map((it): ChatItem => {
    if (it.kind === 'message' && it.streaming) return { ...it, streaming: false };
    // A cancelled or failed turn leaves no tool running.
    if (ended && it.kind === 'tool' && (it.status === 'in_progress' || it.status === 'pending')) {
      return { ...it, status: 'failed', output: it.output ?? (r.status === 'cancelled' ? 'Cancelled.' : 'The turn failed.') };
    }
    return it;
  });
  // The newest user message without a node id is the one this turn answered.
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i];
    if (it.kind === 'message' && it.role === 'user') {
      if (it.nodeId === null) {
        items[i] = { ...it, nodeId: r.userNodeId };
      }
      break;
    }
  }
  let next: ChatState = { ...state, items, sessionId: r.sessionId, headId: r.headId, busy: false, clientTurnId: null };
  const hasAssistant = items.some((it) => it.kind === 'message' && it.nodeId === r.assistantNodeId);
  if (!hasAssistant) {
    const lastUser = lastIndex(items, (it) => it.kind === 'message' && it.role === 'user');
    const seg = lastIndex(items, (it, i) => i > lastUser && it.kind === 'message' && it.role === 'assistant');
    if (seg >= 0) {
      items = [...items];
      items[seg] = { ...(items[seg] as MessageItem), nodeId: r.assistantNodeId };
      next = { ...next, items };
    } else if (r.text) {
      next = push(next, message(next, 'assistant', r.text, { nodeId: r.assistantNodeId }));
    }
  }
  const cp = r.checkpoint;
  if (cp && cp.files.length > 0 && !next.items.some((it) => it.kind === 'checkpoint' && it.checkpointId === cp.id)) {
    next = push(next, { kind: 'checkpoint', key: `c${next.seq}`, checkpointId: cp.id, files: cp.files });
  }
  if (r.status === 'error' && !next.items.some((it) => it.kind === 'note' && it.key === `err-${r.assistantNodeId}`)) {
    next = push(next, { kind: 'note', key: `err-${r.assistantNodeId}`, level: 'error', text: r.error?.message ?? 'The turn failed.' });
  } else if (r.status === 'cancelled' && !next.items.some((it) => it.kind === 'note' && it.key === `cancel-${r.assistantNodeId}`)) {
    next = push(next, { kind: 'note', key: `cancel-${r.assistantNodeId}`, level: 'info', text: 'Cancelled.' });
  }
  // Non-fatal problems of the turn (e.g. no checkpoint); turn.finished and the result both carry them.
  (Array.isArray(r.warnings) ? r.warnings : []).forEach((text, i) => {
    const key = `warn-${r.assistantNodeId}-${i}`;
    if (!next.items.some((it) => it.kind === 'note' && it.key === key)) {
      next = push(next, { kind: 'note', key, level: 'warning', text: String(text) });
    }
  });
  return next;
}

function lastIndex(items: ChatItem[], pred: (it: ChatItem, i: number) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) {
    if (pred(items[i], i)) {
      return i;
    }
  }
  return -1;
}

/** A withdrawal reason (`permission.withdrawn`) in words. */
export function withdrawnReason(reason: string): string {
  if (reason === 'timeout') return 'no answer in time';
  if (reason === 'cancelled') return 'the turn was cancelled';
  return reason || 'withdrawn by the server';
}
