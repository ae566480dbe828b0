// Unit tests for the chat input's slash commands and its @/slash completion.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classify, commandCompletions, modeArgument, parseSlash, unknownMessage } from '../src/chat/slash';
import { applyCompletion, tokenAt } from '../src/webview/complete';
import type { CommandInfo } from '../src/protocol';

const list: CommandInfo[] = [
  { name: 'compact', description: 'Summarise', source: 'builtin', kind: 'builtin' },
  { name: 'fork', description: 'Ask again', source: 'builtin', kind: 'builtin', argumentHint: 'the new message' },
  { name: 'mode', description: 'Set the mode', source: 'builtin', kind: 'builtin', argumentHint: 'ask | plan' },
  { name: 'model', description: 'Set the model', source: 'builtin', kind: 'builtin' },
  { name: 'explain', description: 'Explain code', source: 'workspace', kind: 'custom', path: '.openprogram/commands/explain.md', argumentHint: 'PATH' },
  { name: 'git:review', description: 'Review', source: 'user', kind: 'custom', path: '~/.config/openprogram-lsp/commands/git/review.md' },
];

test('the input is parsed the way the server parses a command', () => {
  assert.deepEqual(parseSlash('/fork  try again\nplease'), { name: 'fork', rest: 'try again\nplease' });
  assert.deepEqual(parseSlash('  /git:review'), { name: 'git:review', rest: '' });
  assert.equal(parseSlash('/usr/bin/env is odd'), null, 'a path is not a command');
  assert.equal(parseSlash('/'), null);
  assert.equal(parseSlash('hello /fork'), null);
});

test('built-ins run in the editor; /compact and custom commands are sent; unknown ones are not', () => {
  assert.deepEqual(classify('/undo', list), { kind: 'builtin', name: 'undo', rest: '' });
  assert.deepEqual(classify('/model openai:gpt-4o-mini', null), { kind: 'builtin', name: 'model', rest: 'openai:gpt-4o-mini' });
  assert.deepEqual(classify('/compact', null), { kind: 'message', text: '/compact' });
  // the server puts the arguments into the command's body (one place for every editor)
  assert.deepEqual(classify('/explain src/a.py', list), { kind: 'message', text: '/explain src/a.py' });
  assert.deepEqual(classify('/nope x', list), { kind: 'unknown', name: 'nope' });
  assert.deepEqual(classify('/explain x', null), { kind: 'unknown', name: 'explain' }, 'unlisted (no server answer) is not guessed');
  assert.deepEqual(classify('//nope is text', list), { kind: 'message', text: '/nope is text' });
  assert.deepEqual(classify('plain text', null), { kind: 'message', text: 'plain text' });
  assert.match(unknownMessage('nope', list), /Unknown command \/nope: nothing was sent\. Commands here: \/compact, .*\/git:review\./);
  assert.deepEqual(modeArgument(' Plan '), { mode: 'plan' });
  assert.match((modeArgument('yolo') as { error: string }).error, /not a permission mode; use one of ask, accept-edits, plan, bypass/);
});

test('the / popup: prefix matches first, then subsequences; arguments get a space', () => {
  const rows = commandCompletions(list, 'mo');
  assert.deepEqual(rows.map((r) => r.insert), ['/mode ', '/model']);
  assert.deepEqual(commandCompletions(list, 'gr').map((r) => r.label), ['/git:review']);
  const custom = commandCompletions(list, 'exp')[0];
  assert.equal(custom.label, '/explain PATH');
  assert.match(custom.detail ?? '', /Explain code \(\.openprogram\/commands\/explain\.md\)/);
  assert.equal(commandCompletions(list, '').length, list.length);
});

test('the word at the cursor: @file anywhere after a space, /command only at the start', () => {
  assert.deepEqual(tokenAt('look at @src/ap', 15), { kind: 'files', query: 'src/ap', start: 8 });
  assert.deepEqual(tokenAt('@', 1), { kind: 'files', query: '', start: 0 });
  assert.equal(tokenAt('mail me@example.com', 19), null, 'an address is not a mention');
  assert.deepEqual(tokenAt('/mo', 3), { kind: 'commands', query: 'mo', start: 0 });
  assert.equal(tokenAt('/mode ', 6), null, 'after the name, no popup');
  assert.equal(tokenAt('say /mo', 7), null);
  const t = tokenAt('see @src/ap and more', 11)!;
  assert.deepEqual(applyCompletion('see @src/app and more', 11, t, '@src/app.py '), { text: 'see @src/app.py and more', cursor: 16 });
  const c = tokenAt('/mo', 3)!;
  assert.deepEqual(applyCompletion('/mo', 3, c, '/mode '), { text: '/mode ', cursor: 6 });
});
