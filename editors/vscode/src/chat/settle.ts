/** First-answer-wins settling of a prompt shown in several places at once. */

/** Something that can report cancellation (a VS Code or LSP cancellation token). */
export interface Cancellable {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => unknown): { dispose(): unknown };
}

/**
 * Resolve with the first of: an answer delivered through `pending.get(id)`, the optional native
 * prompt's answer, or null when the token is cancelled. Later answers are ignored.
 */
export function firstAnswer(
  pending: Map<string, (value: string | null) => void>,
  id: string,
  token: Cancellable,
  native?: () => Promise<string | null>,
): Promise<string | null> {
  return new Promise((resolve) => {
    let done = false;
    const sub = token.onCancellationRequested(() => finish(null));
    function finish(value: string | null): void {
      if (done) return;
      done = true;
      pending.delete(id);
      sub.dispose();
      resolve(value);
    }
    if (token.isCancellationRequested) {
      finish(null);
      return;
    }
    pending.set(id, finish);
    if (native) {
      native().then(
        (v) => {
          // Dismissing the notification is not an answer: the card may still be used.
          if (v !== null) finish(v);
        },
        () => undefined,
      );
    }
  });
}
