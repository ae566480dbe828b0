/**
 * A session shared by several editors (`serve --tcp`): another editor's turns and their
 * approvals, folded into the chat state. The editor that started a turn answers its prompts;
 * here they are read-only cards (`permission.requested` with `readOnly`) that show the outcome
 * (`permission.resolved`).
 */
import type { EventParams, PermissionOption, ToolKind } from '../protocol';
import type { ChatItem, ChatState, QuestionItem, ToolItem } from './state';

interface ReadOnlyRequest {
  toolCall?: { toolCallId?: string; name?: string; kind?: ToolKind; title?: string; input?: Record<string, unknown>; diff?: ToolItem['diff'] };
  options?: PermissionOption[];
  readOnly?: boolean;
}

/** Fold a shared-session event; `undefined` when `ev` is not one. */
export function onSharedEvent(state: ChatState, ev: EventParams): ChatState | undefined {
  if (ev.type === 'permission.requested') {
    return readOnlyCard(state, ev.data as ReadOnlyRequest, ev.turnId ?? null);
  }
  if (ev.type === 'question.asked') {
    const id = String(ev.data.questionId ?? '');
    if (!id || state.items.some((it) => it.kind === 'question' && it.questionId === id)) return state;
    const card: QuestionItem = {
      kind: 'question',
      key: `q${state.seq}`,
      requestId: '',
      questionId: id,
      question: String(ev.data.question ?? ''),
      options: Array.isArray(ev.data.options) ? ev.data.options.map(String) : [],
      allowFreeText: ev.data.allowFreeText === true,
      readOnly: true,
    };
    return { ...state, seq: state.seq + 1, items: [...state.items, card] };
  }
  if (ev.type === 'question.replied' || ev.type === 'question.rejected') {
    const id = String(ev.data.questionId ?? '');
    const answer = ev.type === 'question.replied' ? String(ev.data.answer ?? '') : null;
    return {
      ...state,
      items: state.items.map((it): ChatItem =>
        it.kind === 'question' && it.readOnly && it.questionId === id && it.answer === undefined ? { ...it, answer } : it,
      ),
    };
  }
  if (ev.type === 'permission.resolved') {
    const toolCallId = String(ev.data.toolCallId ?? '');
    const choice = ev.data.outcome === 'selected' ? String(ev.data.optionId ?? '') : null;
    const reason = String(ev.data.reason ?? '');
    return {
      ...state,
      items: state.items.map((it): ChatItem =>
        it.kind === 'tool' && it.toolCallId === toolCallId && it.permission?.readOnly && it.permission.choice === undefined
          ? { ...it, permission: { ...it.permission, choice, ...(choice === null ? { withdrawn: reason || 'dismissed' } : {}) } }
          : it,
      ),
    };
  }
  return undefined;
}

function readOnlyCard(state: ChatState, req: ReadOnlyRequest, turnId: string | null): ChatState {
  const tc = req.toolCall ?? {};
  const toolCallId = String(tc.toolCallId ?? '');
  const permission = { requestId: '', options: req.options ?? [], readOnly: true };
  if (state.items.some((it) => it.kind === 'tool' && it.toolCallId === toolCallId)) {
    return {
      ...state,
      items: state.items.map((it): ChatItem =>
        it.kind === 'tool' && it.toolCallId === toolCallId ? { ...it, permission, diff: tc.diff ?? it.diff } : it,
      ),
    };
  }
  const card: ToolItem = {
    kind: 'tool',
    key: `t${state.seq}`,
    toolCallId,
    name: String(tc.name ?? 'tool'),
    toolKind: tc.kind ?? 'other',
    title: String(tc.title ?? tc.name ?? 'tool'),
    status: 'pending',
    input: tc.input ?? {},
    output: null,
    blockedReason: null,
    diff: tc.diff ?? null,
    mcp: null,
    permission,
    turnId,
  };
  return { ...state, seq: state.seq + 1, items: [...state.items, card] };
}
