// Helpers shared by the code-server end-to-end scripts (run.mjs, context.mjs).
import { connect, createServer } from 'node:net';

/** A free loopback TCP port. */
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
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout });
  await input.fill(`>${command}`);
  const row = page.locator(`.quick-input-list .monaco-list-row[aria-label^="${command}"]`).first();
  await row.waitFor({ timeout });
  // Enter on the focused row, as a user would: a click can land on a hover that VS Code left
  // open where the pointer rests (one covered the palette's row after the extension page).
  const focused = page.locator(`.quick-input-list .monaco-list-row.focused[aria-label^="${command}"]`);
  if (await focused.count()) await input.press('Enter');
  else await row.click();
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
