/** The chat page: renders the state and turns clicks and keys into page messages. */
import { branchLabel, sessionTitle } from '../branches/label';
import { compact, lineDiff } from './diff';
import { splitOptions, toolStatusLabel } from './cards';
import { hunksLabel } from '../chat/hunkReview';
import { escapeHtml, renderMarkdown } from './markdown';
import type { Completion, HostMessage, PageMessage } from './messages';
import { applyCompletion, tokenAt, type CompletionToken } from './complete';
import { meterText } from '../context/meter';
import type { SessionInfo } from '../protocol';
import {
  initialState,
  orderSessions,
  reduce,
  withdrawnReason,
  type ChatItem,
  type ChatState,
  type InterjectionItem,
  type MessageItem,
  type ToolItem,
} from './state';

interface VsCodeApi {
  postMessage(msg: PageMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
let state: ChatState = (vscode.getState() as ChatState | undefined) ?? initialState();
let forkFrom: { nodeId: string | null; label: string; name?: string } | null = null;
const rendered = new Map<string, { item: ChatItem; el: HTMLElement }>();
/** Thoughts the user opened (a streaming one is redrawn with each delta). */
const openThoughts = new Set<string>();

const CHOICE_LABEL: Record<string, string> = {
  allow_once: 'Allowed once', allow_always: 'Always allowed', reject_once: 'Rejected', reject_always: 'Always rejected',
};

function post(msg: PageMessage): void {
  vscode.postMessage(msg);
}

function h(tag: string, cls?: string, html?: string): HTMLElement {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (html !== undefined) el.innerHTML = html;
  return el;
}

function button(label: string, cls: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.className = cls;
  b.textContent = label;
  if (title) b.title = title;
  b.addEventListener('click', onClick);
  return b;
}

function layout(): void {
  const app = document.getElementById('app')!;
  app.innerHTML = `
<header class="bar">
  <button id="sessions-toggle" class="icon" title="Sessions: open, search, rename, delete" aria-label="Sessions" aria-expanded="false">☰ Sessions</button>
  <select id="branch" title="Branch" aria-label="Branch"></select>
  <span class="spacer"></span>
  <button id="new" class="icon" title="New session" aria-label="New session">+ New</button>
</header>
<div class="bar controls">
  <button id="model" class="chip" title="Model for the next turns (click to change)" aria-label="Model"></button>
  <select id="mode" title="Permission mode: when the agent asks before acting" aria-label="Permission mode">
    <option value="ask">Ask before edits and commands</option>
    <option value="accept-edits">Accept edits, ask for commands</option>
    <option value="plan">Plan (read-only)</option>
    <option value="bypass">Bypass (never ask)</option>
  </select>
  <span class="spacer"></span>
  <span id="context" class="context" hidden><span class="meter"><span class="fill"></span></span><span class="ctx-text"></span></span>
</div>
<div id="banner" class="banner" hidden></div>
<section id="sessions" class="sessions" hidden aria-label="Sessions">
  <input id="session-search" type="search" placeholder="Search sessions" aria-label="Search sessions">
  <div id="session-list" role="list"></div>
</section>
<main id="log" aria-live="polite"></main>
<button id="jump" class="jump" hidden title="Scroll to the latest message">↓ New activity below</button>
<details id="plan" class="plan" open hidden><summary></summary><ul role="list"></ul></details>
<footer class="composer">
  <div id="fork" class="fork-chip" hidden></div>
  <div id="chips" class="chips" aria-label="Attached to the next message"></div>
  <ul id="complete" class="complete" role="listbox" hidden></ul>
  <textarea id="input" rows="3" placeholder="Ask OpenProgram… (@ a file, / a command; Enter to send, Shift+Enter for a new line)"
    aria-autocomplete="list" aria-controls="complete"></textarea>
  <div class="actions">
    <span id="busy" class="busy" hidden>working…</span>
    <button id="attach-symbol" class="secondary" title="Attach a symbol of the active file (the one under the cursor first)" aria-label="Attach symbol">Symbol…</button>
    <button id="attach-image" class="secondary" title="Attach images (or paste or drop them here)" aria-label="Attach image">Image…</button>
    <button id="cancel" class="secondary" hidden>Cancel</button>
    <button id="send" class="primary">Send</button>
  </div>
</footer>`;
  const input = document.getElementById('input') as HTMLTextAreaElement;
  input.addEventListener('input', () => updateCompletion());
  document.getElementById('attach-image')!.addEventListener('click', () => post({ type: 'pickImages' }));
  document.getElementById('attach-symbol')!.addEventListener('click', () => post({ type: 'pickSymbol' }));
  // an image pasted into the input, or dropped anywhere on the panel, goes with the next message
  input.addEventListener('paste', (e) => {
    if (e.clipboardData && attachImageFiles(e.clipboardData.files)) e.preventDefault();
  });
  document.addEventListener('dragover', (e) => {
    if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
  });
  document.addEventListener('drop', (e) => {
    if (e.dataTransfer && attachImageFiles(e.dataTransfer.files)) e.preventDefault();
  });
  input.addEventListener('click', () => updateCompletion());
  input.addEventListener('blur', () => setTimeout(() => closeCompletion(), 150));
  input.addEventListener('keydown', (e) => {
    if (completionKey(e)) {
      e.preventDefault();
      return;
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    } else if (e.key === 'Escape' && state.busy) {
      post({ type: 'cancel' });
    }
  });
  document.getElementById('send')!.addEventListener('click', submit);
  const log = document.getElementById('log')!;
  document.getElementById('jump')!.addEventListener('click', () => {
    log.scrollTop = log.scrollHeight;
    (document.getElementById('jump') as HTMLElement).hidden = true;
  });
  log.addEventListener('scroll', () => {
    if (nearBottom(log)) (document.getElementById('jump') as HTMLElement).hidden = true;
  });
  // Links in messages: a file link opens the file (at its line) in the editor; a web link opens
  // through VS Code's opener (which asks before leaving for an untrusted site). Nothing navigates
  // the page itself.
  log.addEventListener('click', (e) => {
    const action = (e.target as Element | null)?.closest?.('button[data-code-action]');
    if (action) {
      const block = action.closest('.code-block');
      const text = block?.querySelector('pre code')?.textContent ?? '';
      const kind = action.getAttribute('data-code-action');
      const path = block?.getAttribute('data-path') ?? undefined;
      post(kind === 'insert' ? { type: 'insertCode', text } : kind === 'apply' ? { type: 'applyCode', text, ...(path ? { path } : {}) }
        : { type: 'copyCode', text });
      if (action.getAttribute('data-code-action') === 'copy') {
        action.textContent = 'Copied';
        setTimeout(() => { action.textContent = 'Copy'; }, 1500);
      }
      return;
    }
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a) return;
    e.preventDefault();
    const path = a.getAttribute('data-path');
    if (path !== null) {
      const line = Number(a.getAttribute('data-line'));
      post({ type: 'openFile', path, ...(line > 0 ? { line } : {}) });
      return;
    }
    const href = a.getAttribute('href');
    if (href && /^(https?:|mailto:)/i.test(href)) post({ type: 'openLink', url: href });
  });
  // Ctrl/Cmd+Alt+N here is ours, never the workbench's "new untitled file": handled in the page,
  // and not forwarded (a context key set from focus events would race the first key press).
  document.addEventListener('keydown', (e) => {
    if (e.altKey && (e.ctrlKey || e.metaKey) && !e.shiftKey && e.key.toLowerCase() === 'n') {
      e.preventDefault();
      e.stopPropagation();
      forkFrom = null;
      post({ type: 'newSession' });
    }
  });
  // The host sets a context key from these, so the panel's keybindings apply only in it.
  window.addEventListener('focus', () => post({ type: 'focus', focused: true }));
  document.addEventListener('focusin', () => post({ type: 'focus', focused: true }));
  window.addEventListener('blur', () => post({ type: 'focus', focused: false }));
  document.getElementById('cancel')!.addEventListener('click', () => post({ type: 'cancel' }));
  document.getElementById('new')!.addEventListener('click', () => {
    forkFrom = null;
    post({ type: 'newSession' });
  });
  document.getElementById('model')!.addEventListener('click', () => post({ type: 'pickModel' }));
  document.getElementById('sessions-toggle')!.addEventListener('click', () => toggleSessions());
  document.getElementById('session-search')!.addEventListener('input', () => renderSessions());
  document.getElementById('session-search')!.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') toggleSessions(false);
  });
  document.getElementById('mode')!.addEventListener('change', (e) => {
    post({ type: 'setMode', mode: (e.target as HTMLSelectElement).value });
  });
  document.getElementById('branch')!.addEventListener('change', (e) => {
    const headId = (e.target as HTMLSelectElement).value;
    if (headId) post({ type: 'checkout', headId });
  });
}

let sessionsOpen = false;

function toggleSessions(open = !sessionsOpen): void {
  sessionsOpen = open;
  const el = document.getElementById('sessions') as HTMLElement;
  el.hidden = !open;
  document.getElementById('sessions-toggle')!.setAttribute('aria-expanded', String(open));
  if (open) {
    post({ type: 'listSessions' });
    (document.getElementById('session-search') as HTMLInputElement).focus();
  }
  renderSessions();
}

/** A time as the list shows it: today's as HH:MM, older ones as the date. */
function when(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString();
}

function renderSessions(): void {
  if (!sessionsOpen) return;
  const list = document.getElementById('session-list') as HTMLElement;
  const query = (document.getElementById('session-search') as HTMLInputElement).value;
  list.replaceChildren();
  if (!state.sessions) {
    list.appendChild(h('div', 'session-empty', 'Loading…'));
    return;
  }
  const { here, elsewhere } = orderSessions(state.sessions.list, state.sessions.workspace, query);
  const row = (s: SessionInfo, other: boolean): HTMLElement => {
    const el = h('div', `session-row${s.id === state.sessionId ? ' current' : ''}`);
    el.setAttribute('role', 'listitem');
    el.dataset.sessionId = s.id;
    const open = button(sessionTitle(s), 'link session-title', () => {
      post({ type: 'openSession', sessionId: s.id });
      toggleSessions(false);
    }, `Open this session${other && s.workspace ? ` (works in ${s.workspace})` : ''}`);
    el.appendChild(open);
    const meta = [when(s.updatedAt), s.status === 'running' ? 'running' : '', other && s.workspace ? s.workspace.split('/').filter(Boolean).pop() ?? '' : '']
      .filter(Boolean).join(' · ');
    el.appendChild(h('span', 'session-meta', escapeHtml(meta)));
    el.appendChild(button('✎', 'link session-rename', () => post({ type: 'renameSession', sessionId: s.id }), 'Rename'));
    el.appendChild(button('🗑', 'link session-delete', () => post({ type: 'deleteSession', sessionId: s.id }), 'Delete'));
    return el;
  };
  if (here.length) list.appendChild(h('div', 'session-group', 'This workspace'));
  here.forEach((s) => list.appendChild(row(s, false)));
  if (elsewhere.length) list.appendChild(h('div', 'session-group', here.length ? 'Other workspaces' : 'Sessions'));
  elsewhere.forEach((s) => list.appendChild(row(s, true)));
  if (!here.length && !elsewhere.length) list.appendChild(h('div', 'session-empty', query ? 'No session matches.' : 'No sessions yet.'));
}

/** The completion popup: its rows, the highlighted one, and the token it completes. */
let popup: { requestId: number; token: CompletionToken; items: Completion[]; active: number } | null = null;
let completeSeq = 0;
let asked: { requestId: number; token: CompletionToken } | null = null;
let completeTimer: ReturnType<typeof setTimeout> | undefined;
/** Enter or Tab pressed while the rows shown were for what was typed before: used on the answer. */
let pendingPick: 'Enter' | 'Tab' | null = null;

/** Ask the host what the word at the cursor completes to (debounced a little for files). */
function updateCompletion(): void {
  const input = document.getElementById('input') as HTMLTextAreaElement;
  const token = input.selectionStart === input.selectionEnd ? tokenAt(input.value, input.selectionStart) : null;
  clearTimeout(completeTimer);
  completeTimer = undefined;
  pendingPick = null; // typed on after the key: the key was for other text
  if (!token) {
    closeCompletion();
    return;
  }
  const ask = (): void => {
    completeTimer = undefined;
    asked = { requestId: ++completeSeq, token };
    post({ type: 'complete', requestId: asked.requestId, kind: token.kind, query: token.query });
  };
  if (token.kind === 'files') completeTimer = setTimeout(ask, 60);
  else ask();
}

function closeCompletion(): void {
  popup = null;
  asked = null;
  pendingPick = null;
  renderCompletion();
}

function renderCompletion(): void {
  const list = document.getElementById('complete') as HTMLElement;
  const input = document.getElementById('input') as HTMLTextAreaElement;
  list.replaceChildren();
  list.hidden = popup === null;
  input.setAttribute('aria-expanded', String(popup !== null));
  if (!popup) {
    input.removeAttribute('aria-activedescendant');
    return;
  }
  if (popup.items.length === 0) {
    list.appendChild(h('li', 'complete-empty', popup.token.kind === 'files' ? 'No file matches.' : 'No command matches.'));
    return;
  }
  popup.items.forEach((item, i) => {
    const li = h('li', `complete-item${i === popup!.active ? ' active' : ''}`);
    li.id = `complete-${i}`;
    li.setAttribute('role', 'option');
    li.setAttribute('aria-selected', String(i === popup!.active));
    li.appendChild(h('span', 'complete-label', escapeHtml(item.label)));
    if (item.detail) li.appendChild(h('span', 'complete-detail', escapeHtml(item.detail)));
    li.addEventListener('mousedown', (e) => {
      e.preventDefault(); // keep the focus in the input
      accept(i);
    });
    list.appendChild(li);
  });
  input.setAttribute('aria-activedescendant', `complete-${popup.active}`);
  document.getElementById(`complete-${popup.active}`)?.scrollIntoView({ block: 'nearest' });
}

/** Keys for the open popup: Up/Down move, Enter/Tab pick, Escape closes. True when used. */
function completionKey(e: KeyboardEvent): boolean {
  if (!popup || e.isComposing) return false;
  const n = popup.items.length;
  if (e.key === 'Escape') {
    closeCompletion();
    e.stopPropagation();
    return true;
  }
  const picking = (e.key === 'Enter' && !e.shiftKey) || e.key === 'Tab';
  if (picking && (completeTimer !== undefined || asked?.requestId !== popup.requestId)) {
    // The rows answer what was typed before the last keys (`/` while `/new` is asked): picking
    // one now would put `/compact` for `/new`. The key waits for the answer to the text typed.
    pendingPick = e.key as 'Enter' | 'Tab';
    return true;
  }
  if (n === 0) return false;
  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    popup.active = (popup.active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
    renderCompletion();
    return true;
  }
  if (picking) {
    pick(e.key as 'Enter' | 'Tab');
    return true;
  }
  return false;
}

/** Enter or Tab on the popup: Enter on a command that takes no arguments (/new, /undo) runs it;
 * Tab only completes. */
function pick(key: 'Enter' | 'Tab'): void {
  if (!popup) return;
  const run = key === 'Enter' && popup.token.kind === 'commands' && !popup.items[popup.active].insert.endsWith(' ');
  accept(popup.active);
  if (run) submit();
}

/** Put the picked row into the input; a file is attached (a chip). */
function accept(i: number): void {
  if (!popup) return;
  const item = popup.items[i];
  const input = document.getElementById('input') as HTMLTextAreaElement;
  const done = applyCompletion(input.value, input.selectionStart, popup.token, item.insert);
  input.value = done.text;
  input.setSelectionRange(done.cursor, done.cursor);
  input.focus();
  if (item.uri) post({ type: 'attachFile', uri: item.uri, path: item.label });
  closeCompletion();
}

/** History thumbnails by image hash: fetched once (`loadImage`), null while asked or gone. */
const storedImages = new Map<string, string | null>();

/** A stored image's thumbnail: from the cache, else asked for and filled in when it comes. */
function storedThumbnail(sha256: string, alt: string): HTMLElement {
  const img = document.createElement('img');
  img.className = 'thumb';
  img.alt = alt;
  img.dataset.sha256 = sha256;
  const url = storedImages.get(sha256);
  if (url) img.src = url;
  else if (!storedImages.has(sha256)) {
    storedImages.set(sha256, null);
    post({ type: 'loadImage', sha256 });
  } else img.hidden = true;
  return img;
}

/** An image's thumbnail (a data: URL the CSP allows). */
function thumbnail(src: string, alt: string): HTMLElement {
  const img = document.createElement('img');
  img.className = 'thumb';
  img.src = src;
  img.alt = alt;
  return img;
}

/** Images pasted or dropped into the panel go with the next message (as base64). */
function attachImageFiles(files: Iterable<File>): boolean {
  let any = false;
  for (const file of files) {
    if (!file.type.startsWith('image/')) continue;
    any = true;
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      const comma = url.indexOf(',');
      post({ type: 'attachImage', name: file.name || `pasted-${Date.now()}.png`, data: url.slice(comma + 1), mediaType: file.type });
    };
    reader.readAsDataURL(file);
  }
  return any;
}

function renderChips(): void {
  const box = document.getElementById('chips') as HTMLElement;
  box.replaceChildren();
  box.hidden = state.attachments.length === 0;
  for (const c of state.attachments) {
    const kind = c.active ? 'current file' : c.kind;
    const chip = h('span', `chip-attachment kind-${c.kind}${c.active ? ' active-file' : ''}`);
    chip.dataset.id = c.id;
    chip.title = `${kind}: ${c.label} (goes with your next message)`;
    chip.appendChild(h('span', 'chip-kind', escapeHtml(kind)));
    if (c.thumb) chip.appendChild(thumbnail(c.thumb, c.label));
    chip.appendChild(h('span', 'chip-label', escapeHtml(c.label)));
    chip.appendChild(button('✕', 'link chip-remove', () => post({ type: 'removeAttachment', id: c.id }), `Remove ${c.label}`));
    box.appendChild(chip);
  }
}

function submit(): void {
  const input = document.getElementById('input') as HTMLTextAreaElement;
  const text = input.value.trim();
  if (!text) return;
  closeCompletion();
  input.value = '';
  scrollToEnd = true;
  if (forkFrom) {
    post({ type: 'send', text, forkFrom: forkFrom.nodeId, ...(forkFrom.name ? { forkName: forkFrom.name } : {}) });
    forkFrom = null;
  } else {
    post({ type: 'send', text });
  }
  renderChrome();
}

function startFork(item: MessageItem, name?: string): void {
  const nodeId = item.role === 'user' ? item.predecessor : item.nodeId;
  const preview = item.text.length > 40 ? `${item.text.slice(0, 40)}…` : item.text;
  const named = name ? `named “${name}”${item.role === 'user' ? ',' : ''} ` : '';
  forkFrom = { nodeId, label: `${named}${item.role === 'user' ? 'editing' : 'after'} “${preview}”`, ...(name ? { name } : {}) };
  // whether the code comes along is asked now, at Fork, not when the message is sent (a new
  // conversation from the first message, unnamed, brings no code: nothing to ask)
  if (nodeId !== null || name) post({ type: 'forkStarted', nodeId });
  const input = document.getElementById('input') as HTMLTextAreaElement;
  if (item.role === 'user') input.value = item.text;
  input.focus();
  renderChrome();
}

/** A token count, short: 950, 12.3k, 1.2M. */
function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

function renderMessage(item: MessageItem): HTMLElement {
  const el = h('div', `msg role-${item.role}${item.streaming ? ' streaming' : ''}`);
  el.dataset.nodeId = item.nodeId ?? '';
  const who = item.role === 'user' ? (item.elsewhere ? 'You · in another editor' : 'You')
    : item.role === 'assistant' ? 'OpenProgram'
      : item.role === 'report' ? item.from ?? 'Report' : item.role;
  const head = h('div', 'msg-head', `<span class="who">${escapeHtml(who)}</span>`);
  const forkable = item.role === 'user' ? item.nodeId !== null : item.nodeId !== null && item.role === 'assistant';
  // no counts reported (a turn cut before the model's usage arrived): say nothing rather than "0 in"
  if (item.usage && (item.usage.inputTokens > 0 || item.usage.outputTokens > 0)) {
    const u = item.usage;
    // a turn the cancel cut: the server counted the cut call from its text (≈)
    const about = u.estimated ? '≈' : '';
    const span = h('span', 'usage', escapeHtml(`${about}${tokens(u.inputTokens)} in · ${about}${tokens(u.outputTokens)} out`));
    if (u.estimated) span.title = 'Estimated in part: the turn was cut before the model reported its usage';
    head.appendChild(span);
    (head.lastChild as HTMLElement).title = `This turn used ${u.inputTokens} input and ${u.outputTokens} output tokens.`;
  }
  if (forkable && !state.busy) {
    head.appendChild(button('Fork', 'link fork', () => startFork(item), 'Start a new branch from this message'));
  }
  el.appendChild(head);
  if (item.context?.length) {
    // what the model saw with this message: each attachment, its text on demand
    const box = h('div', 'msg-context');
    for (const a of item.context) {
      const det = h('details', `sent-attachment kind-${a.kind}`);
      const sum = h('summary', undefined);
      sum.appendChild(h('span', 'chip-kind', escapeHtml(a.kind)));
      if (a.thumb) sum.appendChild(thumbnail(a.thumb, a.label));
      else if (a.sha256) sum.appendChild(storedThumbnail(a.sha256, a.label));
      sum.appendChild(h('span', 'chip-label', escapeHtml(a.label)));
      if (a.unsaved) sum.appendChild(h('span', 'chip-unsaved', 'unsaved'));
      det.appendChild(sum);
      if (a.text !== undefined) det.appendChild(h('pre', 'sent-text', escapeHtml(a.text)));
      box.appendChild(det);
    }
    el.appendChild(box);
  }
  el.appendChild(h('div', 'msg-body', renderMarkdown(item.text)));
  return el;
}

function diffHtml(oldText: string, newText: string): string {
  const full = lineDiff(oldText, newText);
  if (!full.some((l) => l.op !== ' ')) {
    return '<div class="dl op-ctx">(no changes)</div>';
  }
  // The whole diff: the box scrolls, so a card never approves more than it shows.
  return compact(full)
    .map((l) => `<div class="dl op-${l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'ctx'}">${l.op} ${escapeHtml(l.text)}</div>`)
    .join('');
}

/** Another editor's approval: what it was asked, then what it chose; nothing here acts. */
function readOnlyApproval(p: NonNullable<ToolItem['permission']>): HTMLElement {
  const box = h('div', 'approval read-only');
  if (p.choice === undefined) {
    box.appendChild(h('div', 'approval-waiting', 'Asked in another editor; its answer will show here (read-only).'));
    return box;
  }
  const chosen = p.options.find((o) => o.optionId === p.choice);
  const what = chosen ? CHOICE_LABEL[chosen.kind] ?? chosen.name : `Not answered (${withdrawnReason(p.withdrawn ?? 'dismissed')})`;
  box.appendChild(h('div', 'approval-done', escapeHtml(`${what} in another editor`)));
  return box;
}

/** Approval requests whose standing options the user opened (kept across redraws). */
const standingOpen = new Set<string>();

function renderTool(item: ToolItem): HTMLElement {
  const el = h('div', `tool-card status-${item.status}`);
  el.dataset.toolCallId = item.toolCallId;
  el.dataset.kind = item.toolKind;
  const head = h('div', 'tool-head');
  // ask_user is the model asking the user, not its thinking (the wire's kind is "think")
  head.appendChild(h('span', 'tool-kind', escapeHtml(item.name === 'ask_user' ? 'question' : item.toolKind)));
  head.appendChild(h('span', 'tool-title', escapeHtml(item.title)));
  const { label, badge } = toolStatusLabel(item);
  if (item.cancelled) el.classList.add('status-cancelled');
  if (badge === 'waiting') el.classList.add('waiting');
  head.appendChild(h('span', `tool-status badge-${badge}`, escapeHtml(label)));
  el.appendChild(head);
  const path = typeof item.input.path === 'string' ? item.input.path : null;
  if (item.diff) {
    el.appendChild(h('div', 'diff', diffHtml(item.diff.oldText, item.diff.newText)));
  } else if (item.name === 'write_file' && typeof item.input.content === 'string') {
    el.appendChild(h('div', 'diff', diffHtml('', item.input.content)));
  } else if (item.name === 'run_command' && typeof item.input.command === 'string') {
    el.appendChild(h('pre', 'command', `$ ${escapeHtml(item.input.command)}`));
    if (item.parts && item.parts.length > 1) {
      // Each simple command the shell would run: an "always" answer names each one.
      const list = h('ul', 'command-parts');
      for (const part of item.parts) list.appendChild(h('li', undefined, `<code>${escapeHtml(part)}</code>`));
      el.appendChild(h('div', 'parts-head', `Runs ${item.parts.length} commands:`));
      el.appendChild(list);
    }
  } else if (item.name === 'agent' && typeof item.input.prompt === 'string') {
    el.appendChild(h('div', 'parts-head', 'Task for the child agent:'));
    el.appendChild(h('pre', 'command agent-task', escapeHtml(item.input.prompt)));
  } else if (item.mcp || item.name.startsWith('mcp__')) {
    // MCP calls (and the trust question about a .mcp.json server): who runs it and the
    // complete arguments; the block scrolls rather than cutting anything.
    if (item.mcp) {
      el.appendChild(h('div', 'mcp-source',
        `MCP server <b>${escapeHtml(item.mcp.server)}</b> · tool <b>${escapeHtml(item.mcp.tool)}</b>`));
      // what the server says the tool does (approval cards carry it): its claim, shown as such
      if (item.mcp.description) {
        el.appendChild(h('div', 'mcp-description', `The server says: ${escapeHtml(item.mcp.description)}`));
      }
    }
    el.appendChild(h('pre', 'arguments', escapeHtml(JSON.stringify(item.input, null, 2))));
  }
  if (path && item.status === 'completed' && item.toolKind !== 'delete') {
    el.appendChild(button(`Open ${path}`, 'link', () => post({ type: 'openFile', path })));
  }
  const p = item.permission;
  if (p?.readOnly) {
    el.appendChild(readOnlyApproval(p));
  } else if (p && (p.choice === undefined || p.withdrawn)) {
    // A withdrawn prompt keeps its buttons, disabled, and says why it closed.
    // Allow once and Reject answer at once; the standing options sit behind one "Always…"
    // control, so the card stays short enough to show what it approves beside its answer.
    const row = h('div', p.withdrawn ? 'approval withdrawn' : 'approval');
    const optionButton = (o: (typeof p.options)[number]): HTMLButtonElement => {
      const cls = o.kind.startsWith('allow') ? (o.kind === 'allow_once' ? 'primary' : 'secondary') : 'danger';
      const b = button(o.name, cls, () => post({ type: 'permissionReply', requestId: p.requestId, optionId: o.optionId }));
      b.dataset.optionKind = o.kind;
      b.disabled = p.withdrawn !== undefined;
      return b;
    };
    const { now, standing } = splitOptions(p.options);
    for (const o of now) row.appendChild(optionButton(o));
    // an edit opens in VS Code's diff editor, to accept or reject it hunk by hunk
    if (item.diff && !p.withdrawn && (item.toolKind === 'edit' || item.toolKind === 'delete')) {
      const review = button('Review in diff editor', 'secondary review-edit', () => post({ type: 'reviewEdit', requestId: p.requestId }),
        'Open the edit in the diff editor: accept or reject each hunk, then Apply');
      row.appendChild(review);
    }
    el.appendChild(row);
    if (standing.length > 0) {
      const more = h('div', 'approval approval-standing');
      more.id = `standing-${p.requestId}`;
      more.hidden = !standingOpen.has(p.requestId);
      for (const o of standing) more.appendChild(optionButton(o));
      const always = standing.every((o) => o.kind.endsWith('_always'));
      const toggle = button(always ? 'Always…' : 'More…', 'secondary standing-toggle', () => {
        more.hidden = !more.hidden;
        toggle.setAttribute('aria-expanded', String(!more.hidden));
        if (more.hidden) standingOpen.delete(p.requestId); else standingOpen.add(p.requestId);
      }, 'Standing answers: allow or reject such calls from now on');
      toggle.setAttribute('aria-expanded', String(!more.hidden));
      toggle.setAttribute('aria-controls', more.id);
      toggle.disabled = p.withdrawn !== undefined;
      row.appendChild(toggle);
      el.appendChild(more);
    }
    if (p.sandbox) {
      const text = p.sandbox.sandboxed ? 'Runs in the sandbox (workspace writable, no keys, no other processes).' : `Not sandboxed: ${p.sandbox.note ?? 'no sandbox here'}.`;
      el.appendChild(h('div', p.sandbox.sandboxed ? 'sandbox sandboxed' : 'sandbox unsandboxed', escapeHtml(text)));
    }
    if (p.withdrawn) {
      el.appendChild(h('div', 'approval-done approval-withdrawn', escapeHtml(`Approval withdrawn: ${withdrawnReason(p.withdrawn)}.`)));
    }
  } else if (p) {
    const chosen = p.options.find((o) => o.optionId === p.choice);
    // An "always" choice says what it covers; a child let run unattended says so.
    const said = !chosen
      ? 'No answer (cancelled)'
      : chosen.kind === 'allow_once' && chosen.optionId === 'allow_once'
        ? CHOICE_LABEL.allow_once
        : chosen.kind === 'reject_once'
          ? CHOICE_LABEL.reject_once
          : `${CHOICE_LABEL[chosen.kind] ?? ''}: ${chosen.name}`;
    const some = p.acceptedHunks && chosen?.kind.startsWith('allow') ? `: ${hunksLabel(p.acceptedHunks.accepted, p.acceptedHunks.total)}` : '';
    el.appendChild(h('div', 'approval-done', escapeHtml(said + some)));
  }
  if (!p && item.decided) {
    el.appendChild(h('div', 'approval-done', escapeHtml(item.decided)));
  }
  if (item.blockedReason) {
    el.appendChild(h('div', 'tool-blocked', escapeHtml(`Blocked: ${item.blockedReason}`)));
  }
  if (item.live && !item.output) {
    // shown while it runs, scrolled to its end
    const live = h('pre', 'live-output', escapeHtml(item.live));
    live.setAttribute('aria-live', 'polite');
    requestAnimationFrame(() => { live.scrollTop = live.scrollHeight; });
    el.appendChild(live);
  }
  if (item.output) {
    const det = h('details', 'tool-output');
    det.appendChild(h('summary', undefined, 'Output'));
    det.appendChild(h('pre', undefined, escapeHtml(item.output)));
    el.appendChild(det);
  }
  return el;
}

function renderInterjection(item: InterjectionItem): HTMLElement {
  const el = h('div', `msg role-user interjection mode-${item.mode}`);
  const label = item.mode === 'steer' ? 'You · steering' : 'Follow-up';
  el.appendChild(h('div', 'msg-head', `<span class="who">${escapeHtml(label)}</span>`));
  el.appendChild(h('div', 'msg-body', renderMarkdown(item.text)));
  return el;
}

function renderItem(item: ChatItem): HTMLElement {
  switch (item.kind) {
    case 'message':
      return renderMessage(item);
    case 'interjection':
      return renderInterjection(item);
    case 'tool':
      return renderTool(item);
    case 'question': {
      const el = h('div', item.readOnly ? 'question-card read-only' : 'question-card');
      el.appendChild(h('div', 'question-text', escapeHtml(item.question)));
      if (item.readOnly) {
        el.appendChild(item.answer === undefined
          ? h('div', 'approval-waiting', 'Asked in another editor; its answer will show here (read-only).')
          : h('div', 'approval-done', item.answer === null ? 'Not answered in the other editor' : `Answered in another editor: ${escapeHtml(item.answer)}`));
      } else if (item.answer === undefined) {
        const row = h('div', 'approval');
        const reply = (answer: string | null): void => post({ type: 'questionReply', requestId: item.requestId, answer });
        for (const o of item.options) row.appendChild(button(o, 'secondary', () => reply(o)));
        if (item.allowFreeText) {
          const input = document.createElement('input');
          input.type = 'text';
          input.placeholder = 'Your answer';
          input.addEventListener('keydown', (e) => {
            if (e.key === 'Enter' && input.value.trim()) reply(input.value.trim());
          });
          row.appendChild(input);
          row.appendChild(button('Answer', 'primary', () => input.value.trim() && reply(input.value.trim())));
        }
        row.appendChild(button('Skip', 'link', () => reply(null)));
        el.appendChild(row);
      } else {
        el.appendChild(h('div', 'approval-done', item.answer === null ? 'Not answered' : `Answered: ${escapeHtml(item.answer)}`));
      }
      return el;
    }
    case 'checkpoint': {
      if (!item.files || item.files.length === 0) {
        const none = h('div', 'checkpoint-pending');
        none.hidden = true;
        return none;
      }
      const el = h('div', 'checkpoint-card');
      el.dataset.checkpointId = item.checkpointId;
      const n = item.files.length;
      el.appendChild(h('span', 'cp-title', `Checkpoint · ${n} file${n === 1 ? '' : 's'} changed`));
      const list = h('div', 'cp-files');
      for (const f of item.files) {
        list.appendChild(button(`${f.status === 'added' ? 'A' : f.status === 'deleted' ? 'D' : 'M'} ${f.path}`, 'link', () => post({ type: 'openFile', path: f.path })));
      }
      el.appendChild(list);
      el.appendChild(button('View diff', 'secondary', () => post({ type: 'showCheckpoint', checkpointId: item.checkpointId })));
      return el;
    }
    case 'note':
      return h('div', `note level-${item.level}`, escapeHtml(item.text));
    case 'subagent': {
      // A subagent's live stream, collapsed like a thought; its branch opens from the Subagents view.
      const det = h('details', `subagent-live status-${item.status}`) as HTMLDetailsElement;
      det.dataset.key = item.key;
      det.open = openThoughts.has(item.key);
      det.addEventListener('toggle', () => { if (det.open) openThoughts.add(item.key); else openThoughts.delete(item.key); });
      const said = item.status === 'running' ? 'running…' : item.status;
      det.appendChild(h('summary', 'subagent-summary', `Subagent “${escapeHtml(item.label)}” · ${escapeHtml(said)}`));
      if (item.tools.length) {
        const ul = h('ul', 'subagent-tools');
        for (const t of item.tools) ul.appendChild(h('li', undefined, escapeHtml(t)));
        det.appendChild(ul);
      }
      det.appendChild(h('div', 'msg-body subagent-text', item.text ? renderMarkdown(item.text) : '<em>No text yet.</em>'));
      return det;
    }
    case 'thought': {
      // The model's reasoning: collapsed, the open state kept across redraws.
      const det = h('details', 'thought') as HTMLDetailsElement;
      det.dataset.key = item.key;
      det.open = openThoughts.has(item.key);
      det.addEventListener('toggle', () => { if (det.open) openThoughts.add(item.key); else openThoughts.delete(item.key); });
      det.appendChild(h('summary', 'thought-summary', item.streaming ? 'Thinking…' : 'Thought'));
      det.appendChild(h('div', 'thought-text', escapeHtml(item.text)));
      return det;
    }
  }
}

function renderChrome(): void {
  const busy = state.busy;
  (document.getElementById('cancel') as HTMLElement).hidden = !busy;
  (document.getElementById('busy') as HTMLElement).hidden = !busy;
  const send = document.getElementById('send') as HTMLButtonElement;
  send.textContent = busy ? 'Steer' : 'Send';
  const fork = document.getElementById('fork') as HTMLElement;
  fork.hidden = forkFrom === null;
  if (forkFrom) {
    fork.innerHTML = `New branch ${escapeHtml(forkFrom.label)} `;
    fork.appendChild(button('✕', 'link', () => { forkFrom = null; renderChrome(); }, 'Cancel fork'));
  }
  const sel = document.getElementById('branch') as HTMLSelectElement;
  sel.innerHTML = '';
  if (state.branches.length === 0) {
    sel.appendChild(new Option(state.sessionId ? 'main' : 'New session', ''));
    sel.disabled = true;
  } else {
    state.branches.forEach((b) => {
      const label = `${branchLabel(b, state.branches)} · ${b.length} msgs${b.preview ? ` · ${b.preview.slice(0, 30)}` : ''}`;
      sel.appendChild(new Option(label, b.headId, false, b.active));
    });
    sel.disabled = busy || state.branches.length < 2;
  }
  const model = document.getElementById('model') as HTMLButtonElement;
  model.textContent = `⚙ ${state.settings.model || 'server default model'}`;
  const mode = document.getElementById('mode') as HTMLSelectElement;
  if (mode.value !== state.settings.permissionMode) mode.value = state.settings.permissionMode;
  mode.dataset.mode = state.settings.permissionMode;
  const ctx = document.getElementById('context') as HTMLElement;
  ctx.hidden = state.context === null;
  if (state.context) {
    const { usedTokens, windowTokens, compactions } = state.context;
    const pct = Math.min(100, Math.round((usedTokens / windowTokens) * 100));
    (ctx.querySelector('.fill') as HTMLElement).style.width = `${pct}%`;
    ctx.dataset.level = pct >= 90 ? 'high' : pct >= 70 ? 'mid' : 'low';
    (ctx.querySelector('.ctx-text') as HTMLElement).textContent = meterText({ usedTokens, windowTokens, compactions, path: '' });
    ctx.title = `Context: about ${usedTokens} of ${windowTokens} tokens used at the last step`
      + `${compactions ? `; compacted ${compactions} time${compactions === 1 ? '' : 's'} on this branch` : ''} (compaction starts near the limit).`;
  }
  renderPlan();
  renderChips();
  const banner = document.getElementById('banner') as HTMLElement;
  banner.hidden = state.server === 'running';
  const bannerText = state.server === 'starting'
    ? 'Starting the OpenProgram server…'
    : `The OpenProgram server is not running${state.serverDetail ? `: ${state.serverDetail}` : ''}.`;
  if (banner.dataset.text !== bannerText) {
    banner.dataset.text = bannerText;
    banner.replaceChildren(h('span', 'banner-text', escapeHtml(bannerText)));
    if (state.server === 'stopped') {
      banner.appendChild(button('Restart Server', 'primary', () => post({ type: 'restartServer' })));
      banner.appendChild(button('Open Settings', 'secondary', () => post({ type: 'openSettings' })));
    }
  }
}

const PLAN_MARK: Record<string, string> = { pending: '☐', in_progress: '◐', completed: '☑' };

/** The agent's to-do list as a checklist above the input (hidden when there is none). */
function renderPlan(): void {
  const box = document.getElementById('plan') as HTMLDetailsElement;
  const plan = state.plan ?? [];
  box.hidden = plan.length === 0;
  const key = JSON.stringify(plan);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  const done = plan.filter((e) => e.status === 'completed').length;
  (box.querySelector('summary') as HTMLElement).textContent = `Plan · ${done}/${plan.length} done`;
  const list = box.querySelector('ul') as HTMLElement;
  list.replaceChildren(...plan.map((e) => {
    const li = h('li', `plan-item ${e.status}`);
    li.dataset.status = e.status;
    const text = e.status === 'in_progress' && e.activeForm ? e.activeForm : e.content;
    li.append(h('span', 'plan-mark', PLAN_MARK[e.status] ?? '☐'), h('span', 'plan-text', escapeHtml(text)));
    return li;
  }));
}

/** Set when the user sent something: the view follows to the end whatever the scroll was. */
let scrollToEnd = false;
/** Keys of the approval and question cards still waiting for an answer. */
let openPrompts = new Set<string>();

function nearBottom(log: HTMLElement): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
}

function isOpenPrompt(item: ChatItem): boolean {
  if (item.kind === 'tool') return item.permission !== null && item.permission.choice === undefined;
  return item.kind === 'question' && item.answer === undefined;
}

function render(): void {
  const log = document.getElementById('log')!;
  const seen = new Set<string>();
  let prev: HTMLElement | null = null;
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  const oldHeight = log.scrollHeight;
  const oldTop = log.scrollTop;
  const oldFirst = log.firstChild;
  const prompts = new Set<string>();
  let newPrompt: HTMLElement | null = null;
  for (const item of state.items) {
    seen.add(item.key);
    const old = rendered.get(item.key);
    let el: HTMLElement;
    if (old && old.item === item) {
      el = old.el;
    } else {
      el = renderItem(item);
      if (old) old.el.replaceWith(el);
      rendered.set(item.key, { item, el });
    }
    const want: ChildNode | null = prev ? prev.nextSibling : log.firstChild;
    if (want !== el) log.insertBefore(el, want);
    prev = el;
    if (isOpenPrompt(item)) {
      prompts.add(item.key);
      if (!openPrompts.has(item.key)) newPrompt = el;
    }
  }
  openPrompts = prompts;
  for (const [key, { el }] of rendered) {
    if (!seen.has(key)) {
      el.remove();
      rendered.delete(key);
    }
  }
  if (state.items.length === 0) {
    log.dataset.empty = 'true';
  } else {
    delete log.dataset.empty;
  }
  renderChrome();
  renderSessions();
  const jump = document.getElementById('jump') as HTMLElement;
  if (atBottom || scrollToEnd) {
    log.scrollTop = log.scrollHeight;
    jump.hidden = true;
  } else if (oldFirst && log.firstChild !== oldFirst && oldFirst.parentNode === log) {
    // an older page went in above: keep the reader on the message they were looking at
    log.scrollTop = oldTop + (log.scrollHeight - oldHeight);
  } else if (log.scrollHeight > oldHeight) {
    jump.hidden = false; // something arrived below while the user reads further up
  }
  scrollToEnd = false;
  // A card that waits for the user is brought into view, wherever the user had scrolled.
  // A card taller than the log shows its top (what it approves); its answer row stays pinned.
  newPrompt?.scrollIntoView({ block: newPrompt.offsetHeight > log.clientHeight ? 'start' : 'nearest' });
  if (newPrompt && nearBottom(log)) jump.hidden = true;
}

let olderAsked: string | null = null;

/** Near the top with older history on the server: ask the host for the page before. */
function maybeLoadOlder(): void {
  const log = document.getElementById('log');
  if (!log || !state.hasMore || !state.oldestNodeId || olderAsked === state.oldestNodeId) return;
  if (log.scrollTop < 40) {
    olderAsked = state.oldestNodeId;
    post({ type: 'loadOlder' });
  }
}

window.addEventListener('message', (e: MessageEvent<HostMessage>) => {
  const msg = e.data;
  if (msg.type === 'submit') {
    submit();
    return;
  }
  if (msg.type === 'focusInput') {
    (document.getElementById('input') as HTMLTextAreaElement).focus();
    return;
  }
  if (msg.type === 'completions') {
    if (asked && msg.requestId === asked.requestId) {
      popup = { requestId: asked.requestId, token: asked.token, items: msg.items, active: 0 };
      renderCompletion();
      const key = pendingPick;
      pendingPick = null;
      if (key && popup.items.length) pick(key);
      else if (key === 'Enter') submit(); // nothing matches: sent as typed (an unknown command says so)
    }
    return;
  }
  if (msg.type === 'imageData') {
    storedImages.set(msg.sha256, msg.url);
    for (const img of document.querySelectorAll<HTMLImageElement>('img.thumb[data-sha256]')) {
      if (img.dataset.sha256 !== msg.sha256) continue;
      if (msg.url) img.src = msg.url;
      img.hidden = !msg.url;
    }
    return;
  }
  if (msg.type === 'setInput') {
    const input = document.getElementById('input') as HTMLTextAreaElement;
    if (!input.value.trim()) input.value = msg.text;
    input.focus();
    return;
  }
  if (msg.type === 'startFork') {
    const item = state.items.find((it): it is MessageItem => it.kind === 'message' && it.nodeId === msg.nodeId);
    if (item) startFork(item, msg.name);
    return;
  }
  const before = state.busy;
  if (msg.type === 'userSent') scrollToEnd = true;
  state = reduce(state, msg);
  if (before !== state.busy) {
    // Fork buttons depend on busy; re-render messages.
    rendered.forEach((v) => { if (v.item.kind === 'message') v.item = { ...v.item }; });
  }
  scheduleRender();
});

let renderQueued = false;

/** Render at most once per frame: a fast stream of deltas costs one markdown pass per frame. */
function scheduleRender(): void {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    vscode.setState(state);
    render();
  });
}

layout();
render();
document.getElementById('log')?.addEventListener('scroll', maybeLoadOlder, { passive: true });
post({ type: 'ready' });
