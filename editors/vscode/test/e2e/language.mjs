// The language-features part of the end-to-end run, in run.mjs's workbench after the context
// part (its server of its own): VS Code's built-in TypeScript server answers, nothing mocked.
// A two-file TypeScript project; with the cursor on a call of `greet` the panel's Symbol… button
// offers its declaration in the other file first (the definition provider's range), then its
// references (one list), and a symbol of the file picked by name goes too (the editor's text);
// the message's turn asks
// `lsp_definition` and `lsp_references` (openprogram/navigate: the extension runs the
// vscode.execute*Provider commands) and edits a call so it no longer type-checks
// (openprogram/diagnostics: languages.getDiagnostics once they settle): the edit's result tells
// the model the TypeScript error it introduced, and not the one the file had before (#40).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chatFrame, mergeSettings, openFile, waitFor } from './harness.mjs';

const T = 60_000;
const LIB = 'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n';
// line 3's error is there before the agent's edit: it is not the edit's to report
const MAIN = "import { greet } from './lib';\n\nconst count: number = 'three';\nconsole.log(greet('world'), count);\n";

/** Every model call logged since `from` (the scripted model's log: one JSON object a call). */
function callsSince(log, from) {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).slice(from).map((l) => JSON.parse(l));
}

/** The text of a message's content (a string, or parts). */
const textOf = (c) => (typeof c === 'string' ? c : JSON.stringify(c));

/**
 * The part, in the workbench of `page` (its folder `ws`, the extension on a server of its own
 * that records model calls in `modelLog`). `begin` names each step, `shot` takes a screenshot.
 */
export async function languageFeatures({ page, ws, work, modelLog, begin, shot }) {
  begin('a TypeScript project; the model of this part');
  mkdirSync(join(ws, 'src'), { recursive: true });
  writeFileSync(join(ws, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: 'es2020' }, include: ['src'] }, null, 2));
  writeFileSync(join(ws, 'src', 'lib.ts'), LIB);
  writeFileSync(join(ws, 'src', 'main.ts'), MAIN);
  const script = join(work, 'language-script.json');
  writeFileSync(script, JSON.stringify([
    { text: 'Looking it up.', tool_calls: [
      { name: 'lsp_definition', arguments: { path: 'src/main.ts', line: 4, symbol: 'greet' } },
      { name: 'lsp_references', arguments: { path: 'src/lib.ts', line: 1, symbol: 'greet' } }] },
    { text: 'Passing a number.', tool_calls: [{ name: 'edit_file', arguments: { path: 'src/main.ts', old_text: "greet('world')", new_text: 'greet(42)' } }] },
    { text: 'That call no longer type-checks.' },
  ]));
  const from = existsSync(modelLog) ? readFileSync(modelLog, 'utf8').trim().split('\n').filter(Boolean).length : 0;
  mergeSettings(join(ws, '.vscode', 'settings.json'), { 'openprogram.model': `scripted:${script}` });
  let frame = await chatFrame(page);
  await frame.locator('#model', { hasText: 'language-script.json' }).waitFor({ timeout: T });

  begin("open src/main.ts: the TypeScript server reports the error it has");
  await openFile(page, 'src/main.ts', 'main.ts', T);
  await page.locator('.squiggly-error').first().waitFor({ timeout: T });

  begin("the cursor on greet's call; Symbol… offers its definition in lib.ts first; picked, it is a chip");
  const editor = page.locator('.editor-instance .monaco-editor .view-lines').first();
  await editor.click();
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Home');
  for (let i = 0; i < 14; i++) await page.keyboard.press('ArrowRight'); // console.log(gr|eet(
  frame = await chatFrame(page);
  await frame.locator('#input').click();
  await page.keyboard.press('Control+Alt+N'); // a new session: this part's turns only
  await frame.locator('#log[data-empty]').waitFor({ state: 'attached', timeout: T });
  await frame.locator('#input').pressSequentially('/mode accept-edits');
  await frame.locator('#input').press('Enter');
  await frame.locator('#mode[data-mode="accept-edits"]').waitFor({ state: 'attached', timeout: T });
  await frame.locator('#attach-symbol').click();
  const first = page.locator('.quick-input-list .monaco-list-row').first();
  await first.waitFor({ timeout: T });
  const offered = (await first.getAttribute('aria-label')) ?? '';
  if (!/greet/.test(offered) || !/definition of the word at the cursor · src\/lib\.ts:1-3/.test(offered)) throw new Error(`the first symbol offered is not greet's definition: ${offered}`);
  await page.keyboard.press('Enter');
  await frame.locator('.chip-attachment.kind-symbol', { hasText: 'greet · src/lib.ts:1-3' }).waitFor({ timeout: T });

  begin("greet's references, picked from the same pick, are one chip listing them");
  await frame.locator('#attach-symbol').click();
  await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: T });
  await page.keyboard.type('its references');
  await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: 'greet' }).waitFor({ timeout: T });
  await page.keyboard.press('Enter');
  await frame.locator('.chip-attachment.kind-references', { hasText: 'greet · src/main.ts:4' }).waitFor({ timeout: T });

  begin("a symbol of the file picked by name: count's declaration is a chip too");
  await frame.locator('#attach-symbol').click();
  await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: T });
  await page.keyboard.type('count');
  await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: 'count' }).waitFor({ timeout: T });
  await page.keyboard.press('Enter');
  await frame.locator('.chip-attachment.kind-symbol', { hasText: 'count · src/main.ts:3' }).waitFor({ timeout: T });
  await shot('language-01-symbol');

  begin('send: the model gets the declarations; lsp_definition and lsp_references answer across the files');
  const input = frame.locator('#input');
  await input.click();
  await input.pressSequentially('Where is greet used? Then pass it a number.');
  await input.press('Enter');
  await frame.locator('.msg.role-assistant', { hasText: 'That call no longer type-checks.' }).waitFor({ timeout: T });
  await frame.locator('#busy[hidden]').waitFor({ state: 'attached', timeout: T });
  const calls = callsSince(modelLog, from);
  if (calls.length !== 3) throw new Error(`${calls.length} model calls, not 3`);
  const users = calls[0].messages.filter((m) => m.role === 'user');
  const asked = textOf(users[users.length - 1]?.content);
  if (!asked.includes('<symbol path="src/lib.ts" lines="1-3" name="greet">\nexport function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n</symbol>')) {
    throw new Error(`the model did not get the symbol:\n${asked}`);
  }
  if (!/<symbol path="src\/main\.ts" lines="3" name="count">\n[^<]*count: number = 'three'/.test(asked)) throw new Error(`the model did not get count:\n${asked}`);
  const refs = /<references path="src\/main\.ts" lines="4" name="greet">\n([^<]*)<\/references>/.exec(asked)?.[1] ?? '';
  for (const want of ['src/lib.ts:1: export function greet(name: string): string {', "src/main.ts:1: import { greet } from './lib';", "src/main.ts:4: console.log(greet('world'), count);"]) {
    if (!refs.split('\n').includes(want)) throw new Error(`the model did not get the reference ${want}:\n${asked}`);
  }
  const tools = calls[2].messages.filter((m) => m.role === 'tool').map((m) => textOf(m.content));
  const [definition, references, edit] = tools.slice(-3);
  if (!/^src\/lib\.ts:1:17: export function greet/m.test(definition ?? '')) throw new Error(`lsp_definition answered:\n${definition}`);
  for (const want of [/^src\/lib\.ts:1:17:/m, /^src\/main\.ts:1:10: import \{ greet \}/m, /^src\/main\.ts:4:13: console\.log\(greet/m]) {
    if (!want.test(references ?? '')) throw new Error(`lsp_references lacks ${want}:\n${references}`);
  }

  begin("the edit's result names the TypeScript error it introduced, not the one before");
  await waitFor(() => readFileSync(join(ws, 'src', 'main.ts'), 'utf8').includes('greet(42)'), 'the edit on disk');
  if (!/line 4: error: Argument of type 'number' is not assignable to parameter of type 'string'/.test(edit ?? '')) {
    throw new Error(`the edit's result lacks the error it introduced:\n${edit}`);
  }
  if (/line 3:/.test(edit)) throw new Error(`the error the file had before was reported as new:\n${edit}`);
  await shot('language-02-turn');
}
