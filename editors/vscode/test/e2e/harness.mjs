// Helpers shared by the code-server end-to-end scripts (run.mjs, context.mjs).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/** A free loopback TCP port. */
/**
 * Set keys of a settings file (JSON as VS Code writes it), keeping the others (what the
 * extension wrote meanwhile); `undefined` removes a key. The user-only settings
 * (server.command, home, mcpServers, ...) go here: a workspace's value for them is ignored.
 */
export function mergeSettings(file, entries) {
  writeFileSync(file, JSON.stringify(merged(file, entries), null, 2));
}

function merged(file, entries) {
  const current = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8') || '{}') : {};
  for (const [k, v] of Object.entries(entries)) {
    if (v === undefined) delete current[k];
    else current[k] = v;
  }
  return current;
}

/**
 * `mergeSettings` on the user's settings while VS Code runs. code-server does not notice the
 * file changed behind its back, so the new text is saved once more through its own editor (a
 * newline added at the end), as a user's edit would be; resolves once VS Code saved it.
 */
export async function setUserSettings(page, file, entries, timeout = 60_000) {
  mergeSettings(file, entries);
  const want = readFileSync(file, 'utf8');
  await palette(page, 'Preferences: Open User Settings (JSON)', timeout);
  await page.locator('.editor-group-container .tab', { hasText: 'settings.json' }).first().waitFor({ timeout });
  await page.locator('.editor-group-container .monaco-editor textarea').first().focus();
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Control+S');
  await waitFor(() => readFileSync(file, 'utf8').trim() === want.trim() && readFileSync(file, 'utf8') !== want, 'the user settings to be saved');
  // the palette, not the keybinding: the restart the change causes may take the focus. The
  // file on disk is right (checked above); an editor left dirty by a late keystroke is
  // reverted to it, or closing it would stop at a "save changes?" dialog
  await palette(page, 'View: Revert and Close Editor', timeout);
  await palette(page, 'View: Close All Editors', timeout);
  await page.locator('.editor-group-container .tab').first().waitFor({ state: 'detached', timeout });
}

export function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
    srv.on('error', rej);
  });
}

/** Poll `pred` every 250 ms for up to a minute. */
export async function waitFor(pred, what) {
  for (let i = 0; i < 240; i++) {
    if (await pred()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Wait until `url` answers 2xx, failing at once if `proc` (code-server) exits. */
export async function waitHttp(url, proc) {
  for (let i = 0; i < 120; i++) {
    if (proc.exitCode !== null) throw new Error(`code-server exited with ${proc.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not answer`);
}

/** The frame of the chat webview (the one with the input box), polled every 500 ms. */
export async function chatFrame(page, tries = 120) {
  for (let i = 0; i < tries; i++) {
    for (const f of page.frames()) {
      try {
        if (await f.locator('#input').isVisible()) return f;
      } catch { /* frame detached */ }
    }
    await page.waitForTimeout(500);
  }
  throw new Error('the chat webview did not appear');
}

/** The texts of the notifications shown (a failed step's report names them). */
export async function notices(page) {
  return page.locator('.notification-toast .notification-list-item-message, .notifications-center .notification-list-item-message').allTextContents();
}

/** Close every editor (VS Code's Ctrl+K Ctrl+W: a palette run costs ~0.4 s of CPU, the
 * keybinding ~0.05 s), and wait until no editor tab is left. */
export async function closeAllEditors(page, timeout = 60_000) {
  await page.keyboard.press('Control+K');
  await page.keyboard.press('Control+W');
  await page.locator('.editor-group-container .tab').first().waitFor({ state: 'detached', timeout });
}

/** Run a command from the command palette by its title. */
export async function palette(page, command, timeout = 60_000) {
  const input = page.locator('.quick-input-widget input');
  // The palette closes when it loses focus; a window VS Code brings up just then (the
  // extension restarting its server on a settings change) closed it between opening and
  // typing once. A user opens it again: so does this, a bounded number of times.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout });
    try {
      await input.fill(`>${command}`, { timeout: 5_000 });
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
  const row = page.locator(`.quick-input-list .monaco-list-row[aria-label^="${command}"]`).first();
  await row.waitFor({ timeout });
  // Enter on the focused row, as a user would: a click can land on a hover that VS Code left
  // open where the pointer rests (one covered the palette's row after the extension page).
  const focused = page.locator(`.quick-input-list .monaco-list-row.focused[aria-label^="${command}"]`);
  if (await focused.count()) await input.press('Enter');
  else await row.click();
}

/** Open a workspace file with Quick Open (`path` typed, the row naming `tab` picked); resolves
 * once its tab shows. */
export async function openFile(page, path, tab, timeout = 60_000) {
  await page.keyboard.press('F1');
  const quick = page.locator('.quick-input-widget input');
  await quick.waitFor({ state: 'visible', timeout });
  await quick.fill(path);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: tab }).first().waitFor({ timeout });
  await page.keyboard.press('Enter');
  await page.locator('.tab', { hasText: tab }).first().waitFor({ timeout });
}

/** The other editor: a minimal JSON-RPC peer over the loopback socket. */
export class Peer {
  constructor(port, timeout = 60_000) {
    this.timeout = timeout;
    this.sock = connect(port, '127.0.0.1');
    this.buf = Buffer.alloc(0);
    this.next = 0;
    this.waiting = new Map();
    this.onRequest = async () => null;
    this.sock.on('data', (d) => this.read(d));
  }
  send(msg) {
    const body = Buffer.from(JSON.stringify(msg));
    this.sock.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.sock.write(body);
  }
  read(d) {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = Number(/content-length: *(\d+)/i.exec(this.buf.subarray(0, end).toString())[1]);
      if (this.buf.length < end + 4 + len) return;
      const msg = JSON.parse(this.buf.subarray(end + 4, end + 4 + len).toString());
      this.buf = this.buf.subarray(end + 4 + len);
      if (msg.method && msg.id !== undefined) {
        void this.onRequest(msg.method, msg.params).then((result) => this.send({ jsonrpc: '2.0', id: msg.id, result }));
      } else if (msg.id !== undefined && this.waiting.has(msg.id)) {
        this.waiting.get(msg.id)(msg);
        this.waiting.delete(msg.id);
      }
    }
  }
  request(method, params) {
    const id = ++this.next;
    return new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`${method} timed out`)), this.timeout);
      this.waiting.set(id, (m) => {
        clearTimeout(timer);
        return m.error ? rej(new Error(`${method}: ${m.error.message}`)) : res(m.result);
      });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }
}
