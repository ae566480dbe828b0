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
  assert.deepEqual(q.chips().map((c) => `${c.kind} ${c.label}`), ['selection src/app.py:3-5', 'diagnostics src/app.py:3-5 (1)', 'selection src/app.py:1']);
  q.remove(q.chips()[1].id);
  const sent = q.take();
  assert.deepEqual(sent.map((i) => i.kind), ['selection', 'selection']);
  assert.deepEqual(q.take(), []);
});

test('the context meter reads like the Neovim winbar', async () => {
  const { meterText } = await import('../src/context/meter');
  assert.equal(meterText({ usedTokens: 54321, windowTokens: 128000, compactions: 0, path: 'none' }), 'context 42% · 54.3k/128k');
  assert.equal(meterText({ usedTokens: 900, windowTokens: 0, compactions: 2, path: 'compact' }), 'context 999% · 900/0 · compacted 2×');
});

test('the active file is a chip until sent; it comes back when its text changes; removed, it stays off', () => {
  const q = new Attachments();
  const app = { uri: 'file:///ws/src/app.py', path: 'src/app.py', version: 1 };
  q.setActive(app);
  q.addSelection({ ...sel, diagnostics: [] });
  assert.deepEqual(q.chips().map((c) => [c.id, c.label, c.active === true]), [['active', 'src/app.py', true], ['a1', 'src/app.py:3-5', false]]);
  const first = q.takeShown();
  assert.deepEqual(first.items.map((i) => i.kind), ['file', 'selection']);
  assert.deepEqual(first.items[0], { kind: 'file', uri: 'file:///ws/src/app.py' });
  assert.deepEqual(first.shown.map((s) => s.label), ['src/app.py', 'src/app.py:3-5']);
  assert.equal(first.shown[1].text, sel.text, 'the transcript keeps the selection text');
  // the same text is not sent with every message; an edit (a new version) brings it back
  assert.deepEqual(q.chips(), []);
  q.setActive({ ...app, version: 2 });
  assert.deepEqual(q.chips().map((c) => c.id), ['active']);
  q.remove('active');
  assert.deepEqual(q.chips(), []);
  q.setActive({ ...app, version: 3 });
  assert.deepEqual(q.take(), [], 'removed, it stays off while it is the active file');
  q.setActive({ uri: 'file:///ws/README.md', path: 'README.md', version: 1 });
  assert.deepEqual(q.chips().map((c) => c.label), ['README.md']);
  q.take();
  q.newConversation();
  assert.deepEqual(q.chips().map((c) => c.label), ['README.md'], 'a new conversation gets it again');
  q.setActive(null);
  assert.deepEqual(q.chips(), []);
});

test('an @-mentioned file is queued once, and not twice with the active file', () => {
  const q = new Attachments();
  q.setActive({ uri: 'file:///ws/a.py', path: 'a.py' });
  assert.equal(q.addFile({ uri: 'file:///ws/a.py', path: 'a.py' }), '[file a.py]');
  q.addFile({ uri: 'file:///ws/a.py', path: 'a.py' });
  q.addFile({ uri: 'file:///ws/b/c.md', path: 'b/c.md' });
  assert.deepEqual(q.chips().map((c) => [c.kind, c.label, c.active === true]), [['file', 'a.py', false], ['file', 'b/c.md', false]]);
  const id = q.chips()[1].id;
  q.remove(id);
  assert.deepEqual(q.take().map((i) => i.uri), ['file:///ws/a.py']);
});

test('stored attachments show as the model got them (history: what the model saw)', async () => {
  const { storedView } = await import('../src/context/attachments');
  assert.deepEqual(storedView({ kind: 'selection', uri: 'file:///ws/a.py', path: 'a.py', range: sel.range, text: 'x = 1\n', unsaved: true }),
    { kind: 'selection', label: 'a.py:3-5', text: 'x = 1\n', unsaved: true });
  assert.deepEqual(storedView({ kind: 'diagnostics', uri: 'file:///ws/a.py', path: 'a.py', range: sel.range, diagnostics: sel.diagnostics.slice(0, 1) }),
    { kind: 'diagnostics', label: 'a.py:3-5 (1)', text: "a.py:4:11: undefined name 'x'" });
  assert.equal(storedView(null), null);
  assert.equal(storedView({ path: 'x' }), null);
});

test('an image is a chip with its thumbnail, sent as base64, and comes back from history as name, size and pixels', async () => {
  const { storedView, MAX_IMAGE_BYTES } = await import('../src/context/attachments');
  const a = new Attachments();
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
  assert.equal(a.addImage({ uri: 'clipboard:shot.png', name: 'shot.png', data: png, mediaType: 'image/png' }),
    '[image shot.png (16 B)]');
  const [chip] = a.chips();
  assert.equal(chip.kind, 'image');
  assert.equal(chip.label, 'shot.png (16 B)');
  assert.equal(chip.thumb, `data:image/png;base64,${png}`);
  const { items, shown } = a.takeShown();
  assert.deepEqual(items, [{ kind: 'image', uri: 'clipboard:shot.png', name: 'shot.png', data: png, mediaType: 'image/png' }]);
  assert.equal(shown[0].thumb, `data:image/png;base64,${png}`);
  assert.deepEqual(a.chips(), []);
  // too large: one line naming the limit, nothing queued
  const big = 'A'.repeat(Math.ceil((MAX_IMAGE_BYTES + 3) / 3) * 4);
  assert.throws(() => a.addImage({ uri: 'clipboard:big.png', name: 'big.png', data: big }), /big\.png is 20\.0 MB; images are limited to 20\.0 MB/);
  assert.deepEqual(a.chips(), []);
  // history keeps the record, never the bytes
  assert.deepEqual(storedView({ kind: 'image', uri: 'clipboard:shot.png', path: 'clipboard:shot.png', name: 'shot.png',
    sha256: 'ab'.repeat(32), mediaType: 'image/png', width: 640, height: 480, size: 12_345 }),
  { kind: 'image', label: 'shot.png 640x480 12 KB', sha256: 'ab'.repeat(32) });
  // a hash that is not one is not asked for
  assert.equal(storedView({ kind: 'image', name: 'x.png', sha256: '../etc' })?.sha256, undefined);
});
