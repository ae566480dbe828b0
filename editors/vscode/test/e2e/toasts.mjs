// "Command not found" is a failure of every e2e run: VS Code's toast "command '…' not found"
// (a tree item, code lens, status item or button runs an id nobody registered), and "Actual
// command not found, wanted to execute …" (a row command whose cached arguments the extension
// host already dropped), which the extension host logs as an error whether or not a toast shows.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const BAD = /command '[^']*' not found|Actual command not found[^\n]*/gi;

function hostLogs(dir) {
  let out = [];
  let names = [];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out = out.concat(hostLogs(path));
    else if (/exthost\.log$/.test(name)) out.push(path);
  }
  return out;
}

/**
 * Watch `page` from now on (also across reloads) and the extension host logs under
 * `logsDir`. Returns `check()`, which throws naming every such message seen so far.
 */
export async function watchCommandNotFound(page, logsDir) {
  const seen = [];
  const note = (text) => {
    if (!seen.includes(text)) seen.push(text);
  };
  await page.exposeFunction('__openprogramBadToast', note);
  const observe = () => {
    const report = globalThis.__openprogramBadToast;
    const bad = /command '[^']*' not found|Actual command not found/i;
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
    for (const log of hostLogs(logsDir)) {
      for (const m of readFileSync(log, 'utf8').matchAll(BAD)) note(m[0]);
    }
    if (seen.length) throw new Error(`a "command not found" was shown or logged: ${seen.map((t) => JSON.stringify(t)).join('; ')}`);
  };
}
