// End-to-end: VS Code (code-server + headless Chromium) attached to a shared `serve --tcp`,
// watching a session another editor (a JSON-RPC client here) drives: its turn streams in, its
// approval shows as a read-only card with the outcome; then Undo This Turn and Undo Restore.
// Usage: node test/e2e/shared.mjs [--vsix PATH] [--out DIR]; exits non-zero on failure.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { watchCommandNotFound } from './toasts.mjs';
import { freePort, waitFor, chatFrame, palette } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ext = resolve(here, '..', '..');
const repo = resolve(ext, '..', '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const vsix = resolve(arg('--vsix', join(ext, 'dist', 'openprogram.vsix')));
const out = resolve(arg('--out', join(repo, 'artifacts', 'vscode-e2e-shared')));
const codeServer = join(process.env.OPENPROGRAM_TOOLS_DIR ?? join(repo, '.tools'), 'code-server', 'node_modules', '.bin', 'code-server');
const serverCommand = process.env.OPENPROGRAM_LSP ?? join(repo, '.venv', 'bin', 'openprogram-lsp');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const T = 60_000;
const work = join(out, 'work');
const ws = join(work, 'workspace');
const home = join(work, 'home');
const userData = join(work, 'user-data');
const extDir = join(work, 'extensions');
let step = 'setup';
const log = (...a) => console.log(`[e2e-shared] ${a.join(' ')}`);

/** The other editor: a minimal JSON-RPC peer over the loopback socket. */
class Peer {
  constructor(port) {
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
      const timer = setTimeout(() => rej(new Error(`${method} timed out`)), T);
      this.waiting.set(id, (m) => {
        clearTimeout(timer);
        return m.error ? rej(new Error(`${method}: ${m.error.message}`)) : res(m.result);
      });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }
}

async function main() {
  for (const p of [codeServer, vsix, serverCommand, chromiumPath]) if (!existsSync(p)) throw new Error(`missing ${p}`);
  rmSync(work, { recursive: true, force: true });
  for (const d of [ws, home, userData, extDir, join(ws, '.vscode'), join(userData, 'User')]) mkdirSync(d, { recursive: true });
  step = 'start serve --tcp';
  const lsp = spawn(serverCommand, ['serve', '--tcp', '0'], { env: { ...process.env, OPENPROGRAM_HOME: home, OPENPROGRAM_MODEL: 'offline' }, stdio: ['ignore', 'ignore', 'pipe'] });
  const listening = await new Promise((res, rej) => {
    let text = '';
    const timer = setTimeout(() => rej(new Error(`serve --tcp did not listen: ${text}`)), T);
    lsp.stderr.on('data', (d) => {
      text += d;
      const m = /listening on 127\.0\.0\.1:(\d+); token ([^;\s]+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        res({ port: Number(m[1]), token: m[2] });
      }
    });
  });
  writeFileSync(join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'openprogram.server.connect': String(listening.port), 'openprogram.home': home }));
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none', 'security.workspace.trust.enabled': false, 'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false, 'extensions.autoUpdate': false, 'update.mode': 'none',
    'workbench.secondarySideBar.defaultVisibility': 'hidden', 'chat.commandCenter.enabled': false,
    'git.openRepositoryInParentFolders': 'never',
  }));
  step = 'the other editor starts a session';
  const peer = new Peer(listening.port);
  let release;
  const decided = new Promise((r) => { release = r; });
  let answer;
  const answered = new Promise((r) => { answer = r; });
  peer.onRequest = async (method) => (method === 'openprogram/requestPermission' ? decided : method === 'openprogram/askQuestion' ? answered : null);
  await peer.request('initialize', { processId: null, rootUri: `file://${ws}`, capabilities: { experimental: { openprogram: { permissions: true, questions: true } } }, initializationOptions: { token: listening.token } });
  peer.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
  const first = await peer.request('openprogram/chat', { text: 'hello from the other editor' });
  execFileSync(codeServer, ['--user-data-dir', userData, '--extensions-dir', extDir, '--install-extension', vsix], { encoding: 'utf8' });
  const port = await freePort();
  step = 'start code-server';
  const proc = spawn(codeServer, ['--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--user-data-dir', userData, '--extensions-dir', extDir, ws], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, OPENPROGRAM_HOME: home } });
  let browser;
  let page;
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, 'code-server');
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const checkToasts = await watchCommandNotFound(page, join(userData, 'logs'));
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: T });
    await page.locator('.activitybar [aria-label^="OpenProgram"]').first().click({ timeout: T });
    let frame = await chatFrame(page);

    step = 'Watch Session picks the other editor\'s session';
    await palette(page, 'OpenProgram: Watch Session');
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'hello from the other editor' }).first();
    await row.waitFor({ timeout: T });
    await row.click();
    frame = await chatFrame(page);
    await frame.locator('.msg.role-user', { hasText: 'hello from the other editor' }).waitFor({ timeout: T });

    step = "the other editor's turn streams in with a read-only approval card";
    const turn = peer.request('openprogram/chat', { text: 'write notes.md\nfrom afar', sessionId: first.sessionId });
    await frame.locator('.msg.role-user', { hasText: 'You · in another editor' }).waitFor({ timeout: T });
    const card = frame.locator('.tool-card', { hasText: 'notes.md' });
    await card.locator('.approval.read-only .approval-waiting').waitFor({ timeout: T });
    if (await card.locator('button[data-option-kind]').count()) throw new Error('a read-only card has answer buttons');
    await page.screenshot({ path: join(out, 'shared-01-read-only.png') });
    release({ outcome: 'selected', optionId: 'allow_once' });
    await card.locator('.approval-done', { hasText: 'Allowed once in another editor' }).waitFor({ timeout: T });
    const result = await turn;
    if (result.status !== 'done' || !existsSync(join(ws, 'notes.md'))) throw new Error(`the turn did not write notes.md: ${JSON.stringify(result)}`);
    await page.screenshot({ path: join(out, 'shared-02-outcome.png') });

    step = "the other editor's question shows read-only, then its answer";
    const asking = peer.request('openprogram/chat', { text: 'ask Deploy now?', sessionId: first.sessionId });
    const question = frame.locator('.question-card.read-only', { hasText: 'Deploy now?' });
    await question.locator('.approval-waiting').waitFor({ timeout: T });
    if (await question.locator('button, input').count()) throw new Error('a read-only question can be answered');
    answer({ answer: 'yes, ship it' });
    await question.locator('.approval-done', { hasText: 'Answered in another editor: yes, ship it' }).waitFor({ timeout: T });
    await asking;
    await page.screenshot({ path: join(out, 'shared-02b-question.png') });

    step = 'the extension page shows the README image from the .vsix';
    await palette(page, 'View: Show Extensions');
    const search = page.locator('.extensions-viewlet .suggest-input-container textarea, .extensions-viewlet .monaco-editor textarea').first();
    await search.waitFor({ timeout: T });
    await search.fill('@installed openprogram');
    const entry = page.locator('.extension-list-item', { hasText: 'OpenProgram' }).first();
    await entry.waitFor({ timeout: T });
    await entry.click();
    let shown = false;
    for (let i = 0; i < 120 && !shown; i++) {
      for (const f of page.frames()) {
        try {
          const img = f.locator('img[alt^="The OpenProgram chat panel"]');
          if ((await img.count()) && (await img.first().evaluate((el) => el.complete && el.naturalWidth > 0))) shown = true;
        } catch { /* detached */ }
      }
      if (!shown) await page.waitForTimeout(500);
    }
    await page.screenshot({ path: join(out, 'shared-03-extension-page.png') });
    if (!shown) throw new Error('the README image on the extension page did not load');
    await page.keyboard.press('Control+W');

    step = 'Undo This Turn, then Undo Restore';
    await palette(page, 'OpenProgram: Undo This Turn');
    await waitFor(() => !existsSync(join(ws, 'notes.md')), 'notes.md to be undone');
    await palette(page, 'OpenProgram: Undo Restore');
    await waitFor(() => existsSync(join(ws, 'notes.md')) && readFileSync(join(ws, 'notes.md'), 'utf8').startsWith('from afar'), 'the undo to be undone');
    checkToasts();
    log('PASS');
  } catch (err) {
    if (page) await page.screenshot({ path: join(out, 'shared-failure.png') }).catch(() => undefined);
    console.error(`[e2e-shared] FAILED at step "${step}": ${err instanceof Error ? err.stack : err}`);
    process.exitCode = 1;
  } finally {
    await browser?.close().catch(() => undefined);
    peer.sock.destroy();
    try { process.kill(-proc.pid, 'SIGTERM'); } catch { /* gone */ }
    await new Promise((r) => setTimeout(r, 500));
    try { process.kill(-proc.pid, 'SIGKILL'); } catch { /* gone */ }
    lsp.kill('SIGTERM');
  }
}

await main();
