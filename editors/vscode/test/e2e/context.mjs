// The shared-session and editor-context parts of the end-to-end run, in run.mjs's workbench
// after its own steps (one code-server boot and one workbench load for the whole run):
// 1. Attached to a shared `serve --tcp`, it watches a session another editor (a JSON-RPC client
//    here) drives: its turn streams in, its approval and question show read-only with their
//    outcome; the extension page shows the README image; Undo This Turn and Undo Restore.
// 2. The editor is the context, after the workspace setting switches the extension to a server
//    of its own: select lines with a diagnostic, open a file and edit it without saving, select
//    lines, Add Selection to Chat, @-mention a file, remove a chip, send: the transcript shows
//    the attachments, the scripted model's recorded input holds them, and the agent's read_file
//    gets the unsaved buffer. Then the / popup and a custom command (the server substitutes
//    $ARGUMENTS), an unknown command, /mode, the context meter (cleared by /new, back when the
//    session is opened again). Last, the agent edits the still unsaved file (accept-edits): the
//    edit goes into the buffer, and /undo takes it back out of the buffer (#31). Then an image
//    pasted into the input reaches the model (images.mjs, #39). Then an edit reviewed hunk by
//    hunk in the diff editor: one hunk unchecked in its checklist, Apply in the editor title, the
//    other hunk alone written and the card saying so (#36).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor, chatFrame, palette, Peer, setUserSettings, openFile } from './harness.mjs';
import { pasteImage } from './images.mjs';

const T = 60_000;
const APP = 'import os\n\n\ndef main():\n    return os.getcwd()\n';
const MARK = '# edited, not saved';
const TWO_OLD = 'alpha\nb\nc\nd\nomega\n';
const TWO_NEW = 'ALPHA\nb\nc\nd\nOMEGA\n';

/** The user messages the scripted model was sent (newest last), one per model call, from `log`. */
function modelInputs(log) {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => {
    const users = JSON.parse(line).messages.filter((m) => m.role === 'user');
    const c = users[users.length - 1]?.content;
    return typeof c === 'string' ? c : JSON.stringify(c);
  });
}

/** The files these parts work on, added to the run's workspace (`ws`). */
function prepare(ws, script) {
  for (const d of [join(ws, 'src'), join(ws, 'build'), join(ws, '.openprogram', 'commands')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(ws, 'src', 'app.py'), APP);
  writeFileSync(join(ws, 'README.md'), '# scratch\n');
  writeFileSync(join(ws, 'NOTES.md'), 'notes\n');
  writeFileSync(join(ws, 'two.txt'), TWO_OLD);
  writeFileSync(join(ws, 'conf.json'), '{\n  "name": "demo",\n  "port": ,\n  "debug": true\n}\n');
  writeFileSync(join(ws, '.gitignore'), 'build/\n');
  execFileSync('git', ['init', '-q', ws]); // .gitignore applies in a repository (ripgrep's rule)
  writeFileSync(join(ws, 'build', 'README.generated.md'), 'ignored\n');
  writeFileSync(join(ws, '.openprogram', 'commands', 'explain.md'), '---\ndescription: Explain a file\nargument-hint: PATH\n---\nExplain $ARGUMENTS in one line.\n');
  writeFileSync(script, JSON.stringify([
    { text: 'Reading it first.', tool_calls: [{ name: 'read_file', arguments: { path: 'src/app.py' } }] },
    { text: 'Lines 4-5 define `main`, which returns the working directory.' },
    { text: 'It prints the working directory.' },
    { text: 'Bumping.', tool_calls: [{ name: 'edit_file', arguments: { path: 'src/app.py', old_text: 'return os.getcwd()', new_text: 'return os.getcwd()  # by the agent' } }] },
    { text: 'Bumped.' },
    { text: 'A pasted picture.' }, // images.mjs
    { text: 'Two changes.', tool_calls: [{ name: 'write_file', arguments: { path: 'two.txt', content: TWO_NEW } }] },
    { text: 'Reviewed.' },
  ]));
}

/** `serve --tcp 0` with its state in `home`: the process and its port and token. */
async function serveTcp(command, home) {
  const lsp = spawn(command, ['serve', '--tcp', '0'], { env: { ...process.env, OPENPROGRAM_HOME: home, OPENPROGRAM_MODEL: 'offline' }, stdio: ['ignore', 'ignore', 'pipe'] });
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
  return { lsp, ...listening };
}

/**
 * Both parts, in the workbench of `page` (its folder `ws`, the OpenProgram panel shown).
 * `command`: the server command for the shared server and the extension's own; `work`: a
 * directory for their state; `modelLog`: the code-server environment's OPENPROGRAM_SCRIPTED_LOG;
 * `begin` names each step, `shot` takes a screenshot (and fails on a "command not found").
 */
export async function sharedAndContext({ page, ws, work, command, modelLog, begin, shot, userSettingsFile }) {
  const home = join(work, 'context-home');
  const sharedHome = join(work, 'shared-home'); // the shared `serve --tcp`'s state
  const script = join(work, 'context-script.json');
  mkdirSync(home, { recursive: true });
  mkdirSync(sharedHome, { recursive: true });
  const before = modelInputs(modelLog).length; // the run's own earlier calls
  const calls = () => modelInputs(modelLog).slice(before);
  /** The settings: attached to the shared server (part 1), or a server of its own; the
   * user-only ones (connect, command, home, MCP servers) in the user's settings. */
  const writeSettings = async (attachTo) => {
    writeFileSync(join(ws, '.vscode', 'settings.json'), JSON.stringify(attachTo ? {} : { 'openprogram.model': `scripted:${script}` }, null, 2));
    await setUserSettings(page, userSettingsFile, attachTo
      ? { 'openprogram.server.connect': String(attachTo), 'openprogram.home': sharedHome, 'openprogram.mcpServers': {} }
      : { 'openprogram.server.connect': undefined, 'openprogram.server.command': command, 'openprogram.home': home, 'openprogram.mcpServers': {} });
  };

  begin('start serve --tcp; the other editor starts a session');
  prepare(ws, script);
  const { lsp, port, token } = await serveTcp(command, sharedHome);
  const peer = new Peer(port, T);
  try {
    let release;
    const decided = new Promise((r) => { release = r; });
    let answer;
    const answered = new Promise((r) => { answer = r; });
    peer.onRequest = async (method) => (method === 'openprogram/requestPermission' ? decided : method === 'openprogram/askQuestion' ? answered : null);
    await peer.request('initialize', { processId: null, rootUri: `file://${ws}`, capabilities: { experimental: { openprogram: { permissions: true, questions: true } } }, initializationOptions: { token } });
    peer.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
    const watched = await peer.request('openprogram/chat', { text: 'hello from the other editor' });

    begin('the workspace setting attaches the extension to the shared server');
    await page.locator('.activitybar [aria-label^="OpenProgram"]').first().click({ timeout: T });
    let frame = await chatFrame(page);
    await writeSettings(port);
    // the header names no model once the extension has seen the change and begun the restart
    // (the run's last model was "offline"); from then on its requests wait for the new server
    await frame.locator('#model', { hasText: 'server default model' }).waitFor({ timeout: T });
    await frame.locator('#banner[hidden]').waitFor({ state: 'attached', timeout: T });

    begin('Watch Session picks the other editor\'s session');
    await palette(page, 'OpenProgram: Watch Session');
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'hello from the other editor' }).first();
    await row.waitFor({ timeout: T });
    await row.click();
    frame = await chatFrame(page);
    await frame.locator('.msg.role-user', { hasText: 'hello from the other editor' }).waitFor({ timeout: T });

    begin("the other editor's turn streams in with a read-only approval card");
    const turn = peer.request('openprogram/chat', { text: 'write afar.md\nfrom afar', sessionId: watched.sessionId });
    await frame.locator('.msg.role-user', { hasText: 'You · in another editor' }).waitFor({ timeout: T });
    const sharedCard = frame.locator('.tool-card', { hasText: 'afar.md' });
    await sharedCard.locator('.approval.read-only .approval-waiting').waitFor({ timeout: T });
    if (await sharedCard.locator('button[data-option-kind]').count()) throw new Error('a read-only card has answer buttons');
    await shot('shared-01-read-only');
    release({ outcome: 'selected', optionId: 'allow_once' });
    await sharedCard.locator('.approval-done', { hasText: 'Allowed once in another editor' }).waitFor({ timeout: T });
    const result = await turn;
    if (result.status !== 'done' || !existsSync(join(ws, 'afar.md'))) throw new Error(`the turn did not write afar.md: ${JSON.stringify(result)}`);
    await shot('shared-02-outcome');

    begin("the other editor's question shows read-only, then its answer");
    const asking = peer.request('openprogram/chat', { text: 'ask Deploy now?', sessionId: watched.sessionId });
    const question = frame.locator('.question-card.read-only', { hasText: 'Deploy now?' });
    await question.locator('.approval-waiting').waitFor({ timeout: T });
    if (await question.locator('button, input').count()) throw new Error('a read-only question can be answered');
    answer({ answer: 'yes, ship it' });
    await question.locator('.approval-done', { hasText: 'Answered in another editor: yes, ship it' }).waitFor({ timeout: T });
    await asking;
    await shot('shared-02b-question');

    begin('the extension page shows the README image from the .vsix');
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
    await shot('shared-03-extension-page');
    if (!shown) throw new Error('the README image on the extension page did not load');
    await page.keyboard.press('Control+W');

    begin('Undo This Turn, then Undo Restore');
    await palette(page, 'OpenProgram: Undo This Turn');
    await waitFor(() => !existsSync(join(ws, 'afar.md')), 'afar.md to be undone');
    await palette(page, 'OpenProgram: Undo Restore');
    await waitFor(() => existsSync(join(ws, 'afar.md')) && readFileSync(join(ws, 'afar.md'), 'utf8').startsWith('from afar'), 'the undo to be undone');

    begin('the workspace setting switches the extension to a server of its own');
    await page.locator('.activitybar [aria-label^="OpenProgram"]').first().click({ timeout: T });
    frame = await chatFrame(page);
    await writeSettings(null);
    // the header shows the new model once the extension has seen the change and begun the
    // restart; from then on its requests wait for the new server
    await frame.locator('#model', { hasText: 'scripted:' }).waitFor({ timeout: T });
    await frame.locator('#banner[hidden]').waitFor({ state: 'attached', timeout: T });
    frame = await chatFrame(page);
    await frame.locator('#input').click();
    await page.keyboard.press('Control+Alt+N'); // a session of the new server's, not the watched one
    await frame.locator('#log[data-empty]').waitFor({ state: 'attached', timeout: T });

    const quickOpen = (path, tab) => openFile(page, path, tab, T);
    const editor = page.locator('.editor-instance .monaco-editor .view-lines').first();

    begin("a selection's diagnostics go with it (VS Code's JSON language server reports them)");
    await quickOpen('conf.json', 'conf.json');
    await page.locator('.squiggly-error').first().waitFor({ timeout: T });
    await editor.click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('ArrowDown'); // line 2, column 0 (Home would go to the indent)
    await page.keyboard.press('Shift+ArrowDown');
    await page.keyboard.press('Shift+ArrowDown');
    await palette(page, 'OpenProgram: Add Selection to Chat');
    await frame.locator('.chip-attachment.kind-selection', { hasText: 'conf.json:2-3' }).waitFor({ timeout: T });
    await frame.locator('.chip-attachment.kind-diagnostics', { hasText: /conf\.json:2-3 \(\d+\)/ }).waitFor({ timeout: T });

    begin('open src/app.py: it is the active file chip');
    await quickOpen('src/app.py', 'app.py');
    await frame.locator('.chip-attachment.active-file', { hasText: 'src/app.py' }).waitFor({ timeout: T });
    if (await frame.locator('.chip-attachment.active-file', { hasText: 'conf.json' }).count()) throw new Error('the previous file is still the active chip');

    begin('edit the file without saving, select lines 4-5, Add Selection to Chat');
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(MARK);
    await page.locator('.tab.dirty', { hasText: 'app.py' }).first().waitFor({ timeout: T });
    await page.keyboard.press('Control+Home');
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Home');
    await page.keyboard.press('Shift+ArrowDown');
    await page.keyboard.press('Shift+ArrowDown');
    await palette(page, 'OpenProgram: Add Selection to Chat');
    await frame.locator('.chip-attachment.kind-selection', { hasText: 'src/app.py:4-5' }).waitFor({ timeout: T });

    begin('@ in the input completes workspace files (not .gitignored ones); the pick is a chip');
    const input = frame.locator('#input');
    await input.click();
    await input.pressSequentially('Explain this, see @READ');
    const rows = frame.locator('#complete:not([hidden]) .complete-item');
    await rows.first().waitFor({ timeout: T });
    const offered = await rows.locator('.complete-label').allTextContents();
    if (!offered.includes('README.md')) throw new Error(`README.md not offered: ${offered}`);
    if (offered.some((p) => p.startsWith('build/'))) throw new Error(`an ignored file was offered: ${offered}`);
    await frame.locator('.complete-item.active', { hasText: 'README.md' }).waitFor({ timeout: T });
    await input.press('Enter'); // picks, does not send
    await frame.locator('#complete[hidden]').waitFor({ state: 'attached', timeout: T });
    if ((await input.inputValue()) !== 'Explain this, see @README.md ') throw new Error(`input is ${JSON.stringify(await input.inputValue())}`);
    await frame.locator('.chip-attachment.kind-file:not(.active-file)', { hasText: 'README.md' }).waitFor({ timeout: T });
    // a second mention, chosen with the arrow keys, then removed with its ✕
    await input.pressSequentially('and @NOT');
    await frame.locator('.complete-item.active', { hasText: 'NOTES.md' }).waitFor({ timeout: T });
    await input.press('ArrowDown');
    await input.press('ArrowUp');
    await input.press('Tab');
    const notesChip = frame.locator('.chip-attachment', { hasText: 'NOTES.md' });
    await notesChip.waitFor({ timeout: T });
    await shot('context-01-chips');
    await notesChip.locator('.chip-remove').click();
    await notesChip.waitFor({ state: 'detached', timeout: T });

    begin('send: the transcript shows the attachments; the model got them; read_file got the buffer');
    await input.press('Enter');
    const sent = frame.locator('.msg.role-user', { hasText: 'Explain this' });
    await sent.waitFor({ timeout: T });
    const labels = await sent.locator('.sent-attachment .chip-label').allTextContents();
    for (const want of ['src/app.py', 'conf.json:2-3', 'src/app.py:4-5', 'README.md']) {
      if (!labels.includes(want)) throw new Error(`the sent message lacks ${want}: ${labels}`);
    }
    if (labels.includes('NOTES.md')) throw new Error('a removed chip was sent');
    await frame.locator('.msg.role-assistant', { hasText: 'Lines 4-5 define' }).waitFor({ timeout: T });
    await frame.locator('#busy[hidden]').waitFor({ state: 'attached', timeout: T });
    const appSel = sent.locator('.sent-attachment.kind-selection', { hasText: 'src/app.py:4-5' });
    await appSel.locator('summary').click();
    await appSel.locator('.sent-text', { hasText: 'def main():' }).waitFor({ timeout: T });
    const first = calls()[0] ?? '';
    if (!/<selection path="src\/app\.py" lines="4-5"[^>]*>\ndef main\(\):\n {4}return os\.getcwd\(\)\n<\/selection>/.test(first)) throw new Error(`the model did not get the selection:\n${first}`);
    if (!first.includes(`<file path="src/app.py" unsaved="true">`) || !first.includes(MARK)) throw new Error(`the model did not get the unsaved file:\n${first}`);
    if (!first.includes('<file path="README.md">\n# scratch\n</file>')) throw new Error(`the model did not get README.md:\n${first}`);
    if (!/<diagnostics path="conf\.json" lines="2-3">\nconf\.json:3:\d+: error: /.test(first)) throw new Error(`the model did not get the diagnostics:\n${first}`);
    if (first.includes('<file path="NOTES.md"')) throw new Error('the removed NOTES.md reached the model');
    const card = frame.locator('.tool-card[data-kind="read"]');
    await card.locator('summary', { hasText: 'Output' }).click();
    await card.locator('.tool-output pre', { hasText: MARK }).waitFor({ timeout: T });
    if (readFileSync(join(ws, 'src', 'app.py'), 'utf8') !== APP) throw new Error('the file on disk changed');
    // the queue went with the message, and the active file's text with it: not sent again unchanged
    if (await frame.locator('.chip-attachment').count()) throw new Error('chips stayed after sending');

    begin('the context meter shows the usage');
    await frame.locator('#context:not([hidden]) .ctx-text', { hasText: /^context \d+% · / }).waitFor({ timeout: T });
    await shot('context-02-sent');

    begin('/ completes commands; a custom command is sent and the server fills in $ARGUMENTS');
    // an edit brings the active file back; removed, it stays off
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(' again');
    await frame.locator('.chip-attachment.active-file', { hasText: 'src/app.py' }).waitFor({ timeout: T });
    await frame.locator('.chip-attachment.active-file .chip-remove').click();
    await frame.locator('.chip-attachment.active-file').waitFor({ state: 'detached', timeout: T });
    await input.click();
    await input.pressSequentially('/ex');
    await frame.locator('.complete-item.active', { hasText: '/explain PATH' }).waitFor({ timeout: T });
    await input.press('Enter'); // picks; the rows may still be the answer to "/e": then it waits for "/ex"'s
    await frame.locator('#complete[hidden]').waitFor({ state: 'attached', timeout: T });
    if ((await input.inputValue()) !== '/explain ') throw new Error(`input is ${JSON.stringify(await input.inputValue())}`);
    await input.pressSequentially('src/app.py');
    await input.press('Enter');
    await frame.locator('.msg.role-assistant', { hasText: 'It prints the working directory.' }).waitFor({ timeout: T });
    await frame.locator('.msg.role-user', { hasText: '/explain src/app.py' }).waitFor({ timeout: T });
    const last = calls().at(-1) ?? '';
    if (!last.endsWith('Explain src/app.py in one line.')) throw new Error(`the model got: ${last}`);
    if (last.includes('<file')) throw new Error('the removed active file was sent');

    begin('an unknown command is not sent; /mode sets the mode');
    await input.pressSequentially('/nosuch thing');
    await input.press('Enter');
    await frame.locator('.note', { hasText: 'Unknown command /nosuch' }).waitFor({ timeout: T });
    if ((await input.inputValue()) !== '/nosuch thing') throw new Error('the typed text was lost');
    await input.fill('');
    await input.pressSequentially('/mode plan');
    await input.press('Enter');
    await frame.locator('#mode[data-mode="plan"]').waitFor({ state: 'attached', timeout: T });
    await input.pressSequentially('/mode ask');
    await input.press('Enter');
    await frame.locator('#mode[data-mode="ask"]').waitFor({ state: 'attached', timeout: T });
    if (calls().length !== 3) throw new Error(`${calls().length} model calls; commands reached the model`);

    begin('/new clears the meter; opening the session again brings it back');
    await input.pressSequentially('/new');
    await input.press('Enter');
    await frame.locator('#log[data-empty]').waitFor({ state: 'attached', timeout: T });
    await frame.locator('#context[hidden]').waitFor({ state: 'attached', timeout: T });
    await frame.locator('#sessions-toggle').click();
    await frame.locator('.session-row .session-title').first().click();
    await frame.locator('.msg.role-user', { hasText: 'Explain this' }).waitFor({ timeout: T });
    await frame.locator('#context:not([hidden]) .ctx-text', { hasText: /^context \d+% · / }).waitFor({ timeout: T });
    // history shows what the model saw, unsaved text included
    const again = frame.locator('.msg.role-user', { hasText: 'Explain this' });
    await again.locator('.sent-attachment.kind-file', { hasText: 'unsaved' }).first().waitFor({ timeout: T });
    await shot('context-03-history');

    begin('an agent edit into the unsaved buffer is its turn: /undo takes it back out of the buffer');
    await input.pressSequentially('/mode accept-edits');
    await input.press('Enter');
    await frame.locator('#mode[data-mode="accept-edits"]').waitFor({ state: 'attached', timeout: T });
    await input.pressSequentially('bump it');
    await input.press('Enter');
    await frame.locator('.msg.role-assistant', { hasText: 'Bumped.' }).waitFor({ timeout: T });
    const text = async () => ((await editor.textContent()) ?? '').replace(/\u00a0/g, ' ');
    await waitFor(async () => (await text()).includes('# by the agent'), 'the agent edit in the buffer');
    if (!(await text()).includes(MARK)) throw new Error('the unsaved text left the buffer');
    if (readFileSync(join(ws, 'src', 'app.py'), 'utf8') !== APP) throw new Error('the edit reached the disk');
    await input.pressSequentially('/undo');
    await input.press('Enter');
    await frame.locator('.note', { hasText: '/undo: ' }).last().waitFor({ timeout: T });
    await waitFor(async () => !(await text()).includes('# by the agent'), 'the undo in the buffer');
    if (!(await text()).includes(MARK)) throw new Error('the undo lost the unsaved text');
    if (readFileSync(join(ws, 'src', 'app.py'), 'utf8') !== APP) throw new Error('the undo wrote the disk under the buffer');
    await shot('context-04-buffer-undo');

    await pasteImage({ page, frame, input, modelLog, begin, shot });

    begin('per-hunk review: the edit opens in the diff editor, one hunk unchecked, Apply writes the other');
    await input.pressSequentially('/mode ask');
    await input.press('Enter');
    await frame.locator('#mode[data-mode="ask"]').waitFor({ state: 'attached', timeout: T });
    await input.pressSequentially('change both ends of two.txt');
    await input.press('Enter');
    const twoCard = frame.locator('.tool-card.waiting', { hasText: 'two.txt' }).first();
    await twoCard.locator('button.review-edit').click({ timeout: T });
    await page.locator('.tab.active', { hasText: 'two.txt' }).waitFor({ timeout: T });
    // (a regular expression: a string would match "omega" too, case-insensitively)
    const modified = page.locator('.monaco-diff-editor .modified .view-line', { hasText: /OMEGA/ });
    await modified.first().waitFor({ timeout: T });
    // the hunks to write, from the editor title (VS Code shows no CodeLens in a diff editor
    // unless diffEditor.codeLens is on): the second one unchecked
    await page.locator('.editor-actions [aria-label*="Choose the Hunks to Write"]').first().click({ timeout: T });
    const second = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Hunk 2 of 2' }).first();
    await second.waitFor({ timeout: T });
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Hunk 1 of 2' }).first().waitFor({ timeout: T });
    await second.click(); // a click on a row of a multi-select pick toggles its check
    await page.locator('.quick-input-widget', { hasText: '1 Selected' }).waitFor({ timeout: T });
    await page.locator('.quick-input-widget .monaco-button', { hasText: 'OK' }).first().click();
    // the right side is what will be written: OMEGA left it
    await waitFor(async () => (await modified.count()) === 0, 'the rejected hunk to leave the right side');
    if (readFileSync(join(ws, 'two.txt'), 'utf8') !== TWO_OLD) throw new Error('the review wrote the file before the answer');
    await shot('context-05-hunk-review');
    await page.locator('.editor-actions [aria-label*="Apply the Reviewed Hunks"]').first().click({ timeout: T });
    await frame.locator('.msg.role-assistant', { hasText: 'Reviewed.' }).waitFor({ timeout: T });
    const twoText = readFileSync(join(ws, 'two.txt'), 'utf8');
    if (twoText !== 'ALPHA\nb\nc\nd\nomega\n') throw new Error(`not only the accepted hunk was written: ${JSON.stringify(twoText)}`);
    await frame.locator('.tool-card .approval-done', { hasText: 'Allowed once: 1 of 2 hunks (1)' }).waitFor({ timeout: T });
    await waitFor(async () => (await page.locator('.tab', { hasText: 'two.txt' }).count()) === 0, 'the review to close once answered');
  } finally {
    peer.sock.destroy();
    lsp.kill('SIGTERM');
  }
}
