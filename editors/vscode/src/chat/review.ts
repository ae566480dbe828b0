/**
 * "Review in diff editor" for a pending edit approval: the card's old text on the left, on the
 * right what will be written with the hunks accepted so far (every hunk at first). A CodeLens on
 * each hunk accepts or rejects it (the right side follows); *Apply* in the editor title answers
 * the approval with exactly the accepted hunks (`acceptedHunks`), *Reject* rejects the edit. Both
 * documents are read-only views; the file itself is written by the server, after the answer.
 */
import type { PreviewHunk, PermissionToolCall } from '../wire';
import { compose, reviewAnswer, slices, splitLines } from './hunkReview';
import * as api from '../vscodeapi';

export const REVIEW_SCHEME = 'openprogram-review';

interface Review {
  path: string;
  oldText: string;
  newText: string;
  hunks: PreviewHunk[];
  accepted: Set<number>;
}

/** How the review answers: the option kind and, for some hunks, their indices. */
export type ReviewAnswer = { kind: 'allow_once'; acceptedHunks?: number[] } | { kind: 'reject_once' };

/** The review documents, their lenses and the decisions, by approval request id. */
export class EditReviews implements api.TextDocumentContentProvider, api.CodeLensProvider {
  private readonly reviews = new Map<string, Review>();
  private readonly changed = new api.EventEmitter<api.Uri>();
  private readonly lensesChanged = new api.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  readonly onDidChangeCodeLenses = this.lensesChanged.event;

  constructor(private readonly answer: (requestId: string, answer: ReviewAnswer) => boolean) {}

  private uri(requestId: string, side: 'old' | 'new', path: string): api.Uri {
    return api.Uri.from({ scheme: REVIEW_SCHEME, path: `/${path.replace(/^\/+/, '')}`, query: `${side}&${requestId}` });
  }

  private ref(uri: api.Uri): { requestId: string; side: string; review: Review } | undefined {
    const [side, requestId] = uri.query.split('&');
    const review = this.reviews.get(requestId ?? '');
    return review && requestId ? { requestId, side, review } : undefined;
  }

  /** Open the pending edit of `toolCall` in the diff editor, every hunk accepted. */
  async open(requestId: string, toolCall: PermissionToolCall): Promise<boolean> {
    const diff = toolCall.diff;
    if (!diff) return false;
    const hunks = diff.hunks ?? [];
    const review = this.reviews.get(requestId)
      ?? { path: diff.path, oldText: diff.oldText, newText: diff.newText, hunks, accepted: new Set(hunks.map((h) => h.index)) };
    this.reviews.set(requestId, review);
    const whole = hunks.length === 0 ? ' (approved whole only)' : '';
    await api.openDiff(this.uri(requestId, 'old', diff.path), this.uri(requestId, 'new', diff.path),
      `Review ${diff.path}: pending approval${whole}`);
    return true;
  }

  provideTextDocumentContent(uri: api.Uri): string {
    const ref = this.ref(uri);
    if (!ref) return '';
    const { review } = ref;
    return ref.side === 'old' ? review.oldText : compose(review.oldText, review.newText, review.hunks, review.accepted).text;
  }

  provideCodeLenses(doc: api.TextDocument): api.CodeLens[] {
    const ref = this.ref(doc.uri);
    if (!ref || ref.side !== 'new') return [];
    const { review, requestId } = ref;
    const { placed } = compose(review.oldText, review.newText, review.hunks, review.accepted);
    const total = review.hunks.length;
    const lenses: api.CodeLens[] = [];
    const at = (line: number) => new api.Range(Math.min(line, Math.max(doc.lineCount - 1, 0)), 0, Math.min(line, Math.max(doc.lineCount - 1, 0)), 0);
    const n = review.accepted.size;
    lenses.push(new api.CodeLens(at(0), {
      title: total === 0 ? '$(check) Allow the edit' : n === 0 ? '$(close) Reject the edit (no hunk accepted)' : `$(check) Apply ${n} of ${total} hunk${total === 1 ? '' : 's'}`,
      tooltip: 'Answer the approval with the hunks accepted here',
      command: 'openprogram.reviewApply', arguments: [doc.uri],
    }));
    for (const p of placed) {
      const name = `hunk ${p.index + 1} of ${total}`;
      lenses.push(new api.CodeLens(at(p.line), p.accepted
        ? { title: `$(pass-filled) Accepted ${name} · Reject`, tooltip: 'Leave this hunk out of the write',
            command: 'openprogram.reviewToggleHunk', arguments: [requestId, p.index] }
        : { title: `$(circle-slash) Rejected ${name} · Accept`, tooltip: 'Write this hunk too',
            command: 'openprogram.reviewToggleHunk', arguments: [requestId, p.index] }));
    }
    return lenses;
  }

  /** Accept or reject one hunk (toggle, or set with `accept`). */
  toggle(requestId: string, index: number, accept?: boolean): void {
    const review = this.reviews.get(requestId);
    if (!review || !review.hunks.some((h) => h.index === index)) return;
    const on = accept ?? !review.accepted.has(index);
    if (on) review.accepted.add(index); else review.accepted.delete(index);
    this.changed.fire(this.uri(requestId, 'new', review.path));
    this.lensesChanged.fire();
  }

  /** The hunk nearest to 0-based `line` of a review's right side (for the key binding). */
  hunkAt(uri: api.Uri, line: number): { requestId: string; index: number } | undefined {
    const ref = this.ref(uri);
    if (!ref || ref.side !== 'new') return undefined;
    const { placed } = compose(ref.review.oldText, ref.review.newText, ref.review.hunks, ref.review.accepted);
    let best: { requestId: string; index: number } | undefined;
    let dist = Number.POSITIVE_INFINITY;
    for (const p of placed) {
      const end = p.line + Math.max(p.lines, 1) - 1;
      const d = line < p.line ? p.line - line : line > end ? line - end : 0;
      if (d < dist) {
        dist = d;
        best = { requestId: ref.requestId, index: p.index };
      }
    }
    return best;
  }

  /** The hunks of a review, for a pick: each with a one-line summary and whether it is accepted. */
  hunkList(requestId: string): { index: number; label: string; detail: string; accepted: boolean }[] {
    const review = this.reviews.get(requestId);
    if (!review) return [];
    const old = splitLines(review.oldText);
    const neu = splitLines(review.newText);
    const total = review.hunks.length;
    return review.hunks.map((h) => {
      const { i1, i2, j1, j2 } = slices(h);
      const gone = old.slice(i1, i2).map((l) => `-${l.replace(/\r?\n$/, '')}`);
      const added = neu.slice(j1, j2).map((l) => `+${l.replace(/\r?\n$/, '')}`);
      const lines = [...gone, ...added];
      const shown = lines.slice(0, 3).join('  ');
      return { index: h.index, label: `Hunk ${h.index + 1} of ${total}: ${h.header ?? `line ${h.oldStart}`}`,
        detail: lines.length > 3 ? `${shown}  …` : shown, accepted: review.accepted.has(h.index) };
    });
  }

  /** Set which hunks are accepted (the others rejected). */
  choose(requestId: string, accepted: number[]): void {
    const review = this.reviews.get(requestId);
    if (!review) return;
    review.accepted = new Set(accepted.filter((i) => review.hunks.some((h) => h.index === i)));
    this.changed.fire(this.uri(requestId, 'new', review.path));
    this.lensesChanged.fire();
  }

  /** The review a document belongs to (the editor title's commands get the document's uri). */
  requestOf(uri: api.Uri | undefined): string | undefined {
    return uri?.scheme === REVIEW_SCHEME ? this.ref(uri)?.requestId : undefined;
  }

  /** Answer the approval from the review: the accepted hunks, or a rejection. */
  submit(requestId: string, reject = false): boolean {
    const review = this.reviews.get(requestId);
    if (!review) return false;
    const answer: ReviewAnswer = reject ? { kind: 'reject_once' } : reviewAnswer(review.hunks, review.accepted);
    return this.answer(requestId, answer);
  }

  /** The approval was answered (here, on the card or elsewhere) or withdrawn: close its review. */
  async settle(requestId: string): Promise<void> {
    if (!this.reviews.delete(requestId)) return;
    await api.closeDiffTabs((u) => u.scheme === REVIEW_SCHEME && u.query.endsWith(`&${requestId}`));
  }

  dispose(): void {
    this.changed.dispose();
    this.lensesChanged.dispose();
  }
}
