// Unit tests for the context attachments "Add Selection to Chat" queues for the next message.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Attachments, label, selectionItems, type EditorSelection } from '../src/context/attachments';

const sel: EditorSelection = {
  uri: 'file:///ws/src/app.py',
  path: 'src/app.py',
  range: { start: { line: 2, character: 0 }, end: { line: 5, character: 0 } },
  text: 'def main():\n    print(x)\n    return 0\n',
  diagnostics: [
    { range: { start: { line: 3, character: 10 }, end: { line: 3, character: 11 } }, message: "undefined name 'x'", severity: 1, source: 'pyflakes' },
    { range: { start: { line: 9, character: 0 }, end: { line: 9, character: 4 } }, message: 'elsewhere', severity: 2 },
  ],
};

test('a selection brings the diagnostics that touch it, and only those', () => {
  const items = selectionItems(sel);
  assert.equal(items.length, 2);
  assert.deepEqual(items[0], { kind: 'selection', uri: sel.uri, range: sel.range, text: sel.text });
  assert.equal(items[1].kind, 'diagnostics');
  assert.deepEqual(items[1].diagnostics?.map((d) => d.message), ["undefined name 'x'"]);
  assert.equal(label(items[0], 'src/app.py'), '[selection src/app.py:3-5]');
  assert.equal(label(items[1], 'src/app.py'), '[diagnostics src/app.py:3-5 (1)]');
  assert.deepEqual(selectionItems({ ...sel, diagnostics: [] }).length, 1);
});

test('queued attachments go with one message, and can be removed before', () => {
  const q = new Attachments();
  q.addSelection(sel);
  q.addSelection({ ...sel, diagnostics: [], range: { start: { line: 0, character: 0 }, end: { line: 0, character: 9 } } });
  assert.deepEqual(q.labels(), ['[selection src/app.py:3-5]', '[diagnostics src/app.py:3-5 (1)]', '[selection src/app.py:1]']);
  q.remove(1);
  const sent = q.take();
  assert.deepEqual(sent.map((i) => i.kind), ['selection', 'selection']);
  assert.deepEqual(q.take(), []);
});

test('the context meter reads like the Neovim winbar', async () => {
  const { meterText } = await import('../src/context/meter');
  assert.equal(meterText({ usedTokens: 54321, windowTokens: 128000, compactions: 0, path: 'none' }), 'context 42% · 54.3k/128k');
  assert.equal(meterText({ usedTokens: 900, windowTokens: 0, compactions: 2, path: 'compact' }), 'context 999% · 900/0 · compacted 2×');
});
