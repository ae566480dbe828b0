// Notifications no e2e run may show: VS Code's "command not found" toasts, raised when a tree
// item, code lens, status item or button runs a command id nobody registered (or whose cached
// arguments were dropped). Watched on every page load, so a toast that closes again still counts.

/**
 * Watch `page` for such notifications from now on (also across reloads).
 * Returns `check()`, which throws naming every one seen so far.
 */
export async function watchCommandNotFound(page) {
  const seen = [];
  await page.exposeFunction('__openprogramBadToast', (text) => {
    if (!seen.includes(text)) seen.push(text);
  });
  const observe = () => {
    const report = globalThis.__openprogramBadToast;
    const bad = /command '[^']*' not found|Actual command not found|command .* not found/i;
    let queued = false;
    const scan = () => {
      queued = false;
      for (const el of document.querySelectorAll('.notification-list-item-message')) {
        const text = (el.textContent || '').trim();
        if (bad.test(text)) void report(text);
      }
    };
    const start = () => new MutationObserver(() => {
      if (!queued) {
        queued = true;
        setTimeout(scan, 50);
      }
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
    if (document.body) start();
    else addEventListener('DOMContentLoaded', start, { once: true });
  };
  await page.addInitScript(observe);
  await page.evaluate(observe).catch(() => undefined); // the page already loaded, if any
  return () => {
    if (seen.length) throw new Error(`a "command not found" notification was shown: ${seen.map((t) => JSON.stringify(t)).join('; ')}`);
  };
}
