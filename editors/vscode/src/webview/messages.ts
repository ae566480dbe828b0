/** Type-tagged messages between the extension host and the chat webview. */
import type {
  BranchInfo,
  Checkpoint,
  EventParams,
  Interjection,
  Node,
  PermissionOption,
  PermissionToolCall,
  SessionInfo,
  TurnResult,
} from '../protocol';
import type { Chip } from '../context/attachments';
import type { ChatState, NoteLevel, PanelSettings, SentAttachment } from './state';

/** What the input's `@` (files) or `/` (commands) popup offers. */
export type CompletionKind = 'files' | 'commands';

/** One row of the completion popup. */
export interface Completion {
  label: string;
  detail?: string;
  /** What replaces the typed `@query` or `/query`. */
  insert: string;
  /** A file's uri: picking it attaches the file. */
  uri?: string;
}

/** Host → page. */
export type HostMessage =
  | { type: 'snapshot'; state: ChatState }
  | { type: 'reset'; sessionId: string | null }
  | { type: 'history'; sessionId: string; headId: string | null; nodes: Node[]; hasMore?: boolean }
  /** The page of history before the oldest message shown, to draw above it. */
  | { type: 'olderHistory'; sessionId: string; headId: string | null; nodes: Node[]; hasMore: boolean }
  | { type: 'branches'; branches: BranchInfo[] }
  | { type: 'checkpoints'; checkpoints: Checkpoint[] }
  | { type: 'settings'; settings: PanelSettings }
  | { type: 'sessions'; sessions: SessionInfo[]; workspace: string | null }
  | { type: 'userSent'; text: string; predecessor: string | null; forkFrom?: string | null; clientTurnId?: string;
      /** The attachments sent with it, as the transcript shows them. */
      context?: SentAttachment[] }
  /** The chips above the input: what goes with the next message. */
  | { type: 'attachments'; chips: Chip[] }
  /** The answer to the page's `complete` (stale ones are dropped by requestId). */
  | { type: 'completions'; requestId: number; kind: CompletionKind; items: Completion[] }
  /** A stored image asked for by `loadImage` (a history thumbnail); null: not available. */
  | { type: 'imageData'; sha256: string; url: string | null }
  /** `/fork [name]`: edit this user message into a new branch (as its Fork button does). */
  | { type: 'startFork'; nodeId: string; name?: string }
  /** Put text back into the input (a command that could not run keeps what was typed). */
  | { type: 'setInput'; text: string }
  | { type: 'event'; event: EventParams }
  | { type: 'turnResult'; result: TurnResult; clientTurnId?: string }
  | { type: 'interjection'; mode: Interjection['kind']; text: string }
  | { type: 'turnFailed'; message: string }
  | {
      type: 'permission';
      requestId: string;
      /** With `toolCall.toolCallId`, the server-unique key of the card this prompt belongs to. */
      turnId: string;
      toolCall: PermissionToolCall;
      options: PermissionOption[];
      label?: string | null;
    }
  /** `acceptedHunks` and `hunks` (how many the card listed) when a review accepted only some. */
  | { type: 'permissionSettled'; requestId: string; choice: string | null; acceptedHunks?: number[]; hunks?: number }
  | {
      type: 'question';
      requestId: string;
      /** The server's id of the question (it names it in `question.*` events). */
      questionId?: string;
      question: string;
      options: string[];
      allowFreeText: boolean;
    }
  | { type: 'questionSettled'; requestId: string; answer: string | null }
  | { type: 'note'; level: NoteLevel; text: string }
  | { type: 'submit' }
  | { type: 'follow'; turnId: string }
  | { type: 'focusInput' }
  | { type: 'status'; server: 'starting' | 'running' | 'stopped'; detail?: string };

/** Page → host. */
export type PageMessage =
  | { type: 'ready' }
  | { type: 'send'; text: string; forkFrom?: string | null; forkName?: string }
  | { type: 'cancel' }
  | { type: 'newSession' }
  /** The user scrolled to the top and older messages remain on the server. */
  | { type: 'loadOlder' }
  | { type: 'permissionReply'; requestId: string; optionId: string | null }
  | { type: 'questionReply'; requestId: string; answer: string | null }
  | { type: 'checkout'; headId: string }
  /** A workspace path (relative, or absolute inside the workspace), at a 1-based line if given. */
  | { type: 'openFile'; path: string; line?: number }
  /** A web link clicked in a message (http, https or mailto). */
  | { type: 'openLink'; url: string }
  /** A code block's Copy: its text to the clipboard. */
  | { type: 'copyCode'; text: string }
  /** A code block's Insert: its text at the active editor's cursor (an undoable edit). */
  | { type: 'insertCode'; text: string }
  /** A code block's Apply: its text into the file the fence names (else the active editor's file
   *  or selection), after the user saw the diff and confirmed; one undoable edit. */
  | { type: 'applyCode'; text: string; path?: string }
  /** Fork was clicked: the host asks now whether the fork brings its code (used at Send). */
  | { type: 'forkStarted'; nodeId: string | null }
  /** An edit card's "Review in diff editor": open the pending edit there, hunk by hunk. */
  | { type: 'reviewEdit'; requestId: string }
  | { type: 'showCheckpoint'; checkpointId: string }
  | { type: 'focus'; focused: boolean }
  | { type: 'restartServer' }
  | { type: 'setMode'; mode: string }
  | { type: 'pickModel' }
  | { type: 'listSessions' }
  | { type: 'openSession'; sessionId: string }
  | { type: 'renameSession'; sessionId: string }
  | { type: 'deleteSession'; sessionId: string }
  | { type: 'openSettings' }
  /** Remove one chip (attachment) before sending. */
  | { type: 'removeAttachment'; id: string }
  /** The user typed `@query` or `/query`: what matches? */
  | { type: 'complete'; requestId: number; kind: CompletionKind; query: string }
  /** A file picked from the `@` popup: attach it. */
  | { type: 'attachFile'; uri: string; path: string }
  | { type: 'attachImage'; name: string; data: string; mediaType?: string }
  | { type: 'pickImages' }
  /** The Symbol… button: pick a symbol of the active editor's document to attach. */
  | { type: 'pickSymbol' }
  | { type: 'loadImage'; sha256: string };
