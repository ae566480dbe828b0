// Unit tests for the symbol attachment: the document's symbols flattened, the one under the
// cursor found and offered first, and the attachment it queues.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Attachments, storedView } from '../src/context/attachments';
import { MAX_REFERENCES, flattenSymbols, holds, kindName, referencesText, symbolAt, symbolChoices, symbolPicks } from '../src/context/symbols';

const r = (a: number, b: number, c: number, d: number) => ({ start: { line: a, character: b }, end: { line: c, character: d } });

// DocumentSymbols as vscode.executeDocumentSymbolProvider gives them (kinds 0-based)
const tree = [
  { name: 'Greeter', kind: 4, range: r(0, 0, 8, 1), selectionRange: r(0, 13, 0, 20), children: [
    { name: 'greet', kind: 5, range: r(1, 2, 3, 3), selectionRange: r(1, 2, 1, 7), children: [
      { name: 'text', kind: 13, range: r(2, 10, 2, 30), selectionRange: r(2, 10, 2, 14), children: [] }] },
    { name: 'name', kind: 6, range: r(5, 2, 5, 15), selectionRange: r(5, 2, 5, 6) }] },
  { name: 'main', kind: 11, range: r(10, 0, 12, 1), selectionRange: r(10, 9, 10, 13) },
  { name: 'broken' }, // no range: left out
  null,
];

test('document symbols are flattened in order with their containers and depth', () => {
  const flat = flattenSymbols(tree);
  assert.deepEqual(flat.map((s) => [s.name, s.container ?? '', s.depth]),
    [['Greeter', '', 0], ['greet', 'Greeter', 1], ['text', 'greet', 2], ['name', 'Greeter', 1], ['main', '', 0]]);
  assert.equal(kindName(flat[0].kind), 'class');
  assert.equal(kindName(flat[4].kind), 'function');
  assert.equal(kindName(99), 'symbol');
  // SymbolInformation (flat, with location and containerName)
  const info = flattenSymbols([{ name: 'x', kind: 12, containerName: 'mod', location: { uri: 'file:///a', range: r(3, 0, 3, 9) } }]);
  assert.deepEqual(info, [{ name: 'x', kind: 12, range: r(3, 0, 3, 9), selectionRange: r(3, 0, 3, 9), container: 'mod', depth: 0 }]);
  assert.deepEqual(flattenSymbols(undefined), []);
  assert.deepEqual(flattenSymbols('nonsense'), []);
});

test('the symbol under the cursor is the innermost one holding it, offered first', () => {
  const flat = flattenSymbols(tree);
  assert.equal(symbolAt(flat, { line: 2, character: 12 })?.name, 'text');
  assert.equal(symbolAt(flat, { line: 1, character: 4 })?.name, 'greet');
  assert.equal(symbolAt(flat, { line: 7, character: 0 })?.name, 'Greeter');
  assert.equal(symbolAt(flat, { line: 9, character: 0 }), undefined);
  assert.ok(holds(r(1, 2, 3, 3), { line: 3, character: 3 }) && !holds(r(1, 2, 3, 3), { line: 3, character: 4 }));
  const choices = symbolChoices(flat, { line: 1, character: 4 });
  assert.deepEqual(choices.map((c) => [c.symbol.name, c.atCursor]),
    [['greet', true], ['Greeter', false], ['text', false], ['name', false], ['main', false]]);
  assert.deepEqual(symbolChoices(flat, { line: 9, character: 0 }).map((c) => c.atCursor), [false, false, false, false, false]);
  assert.equal(symbolChoices(flat, undefined).length, 5);
});

test('a queued symbol goes as its declaration, named, with its range and text', () => {
  const q = new Attachments();
  const label = q.addSymbol({ uri: 'file:///ws/src/lib.ts', path: 'src/lib.ts', name: 'greet', range: r(0, 0, 2, 1), text: 'export function greet() {\n}' });
  assert.equal(label, '[symbol greet · src/lib.ts:1-3]');
  assert.deepEqual(q.chips().map((c) => [c.kind, c.label]), [['symbol', 'greet · src/lib.ts:1-3']]);
  const { items, shown } = q.takeShown();
  assert.deepEqual(items, [{ kind: 'symbol', uri: 'file:///ws/src/lib.ts', range: r(0, 0, 2, 1), name: 'greet', text: 'export function greet() {\n}' }]);
  assert.deepEqual(shown, [{ kind: 'symbol', label: 'greet · src/lib.ts:1-3', text: 'export function greet() {\n}' }]);
  // history shows it the same way (the server stores name and range)
  assert.equal(storedView({ kind: 'symbol', path: 'src/lib.ts', name: 'greet', range: r(0, 0, 2, 1), text: 'x' })?.label, 'greet · src/lib.ts:1-3');
});

test('the pick offers the definition of the word at the cursor first, then the symbols', () => {
  const text = (range: { start: { line: number } }) => `text@${range.start.line}`;
  const doc = { uri: 'file:///ws/src/main.ts', path: 'src/main.ts', cursor: { line: 1, character: 4 }, symbols: tree,
    definition: { uri: 'file:///ws/src/lib.ts', path: 'src/lib.ts', name: 'greet', range: r(0, 0, 2, 1), text: 'export function greet() {}' } };
  const picks = symbolPicks(doc, text);
  assert.deepEqual(picks.map((p) => p.label), ['$(go-to-file) greet', '$(symbol-method) greet', '$(symbol-class) Greeter',
    '$(symbol-constant) text', '$(symbol-property) name', '$(symbol-function) main']);
  assert.equal(picks[0].description, 'definition of the word at the cursor · src/lib.ts:1-3');
  assert.deepEqual(picks[0].target, doc.definition);
  assert.equal(picks[1].description, 'at the cursor · method, lines 2-4 · in Greeter');
  assert.deepEqual(picks[1].target, { uri: doc.uri, path: 'src/main.ts', name: 'greet', range: r(1, 2, 3, 3), text: 'text@1' });
  // the definition is the symbol holding the cursor (on its own declaration): offered once
  const own = symbolPicks({ ...doc, definition: { ...doc.definition, uri: doc.uri, path: doc.path, range: r(1, 2, 3, 3) } }, text);
  assert.equal(own.length, 5);
  assert.equal(own[0].label, '$(symbol-method) greet');
  // no symbols in the document, but a definition elsewhere; neither: nothing to pick
  assert.deepEqual(symbolPicks({ ...doc, symbols: [] }, text).map((p) => p.label), ['$(go-to-file) greet']);
  assert.deepEqual(symbolPicks({ ...doc, symbols: null, definition: undefined }, text), []);
});

test('the references of the word at the cursor are one attachment listing them', () => {
  const text = () => '';
  const target = { uri: 'file:///ws/src/main.ts', path: 'src/main.ts', name: 'greet', range: r(3, 12, 3, 17),
    text: referencesText([{ path: 'src/lib.ts', line: 0, code: 'export function greet(name: string) {' },
      { path: 'src/main.ts', line: 3, code: "  console.log(greet('world'));  " }]) };
  assert.equal(target.text, "src/lib.ts:1: export function greet(name: string) {\nsrc/main.ts:4: console.log(greet('world'));");
  const picks = symbolPicks({ uri: target.uri, path: target.path, cursor: { line: 3, character: 14 }, symbols: [],
    references: { target, count: 2, files: 2 } }, text);
  assert.deepEqual(picks.map((p) => [p.label, p.attach, p.description]), [['$(references) greet', 'references', 'its references · 2 in 2 files']]);
  const q = new Attachments();
  assert.equal(q.addSymbol(picks[0].target, picks[0].attach), '[references greet · src/main.ts:4]');
  assert.deepEqual(q.take(), [{ kind: 'references', uri: target.uri, range: target.range, name: 'greet', text: target.text }]);
  // none found: no row
  assert.deepEqual(symbolPicks({ uri: target.uri, path: target.path, cursor: { line: 0, character: 0 }, symbols: [],
    references: { target, count: 0, files: 0 } }, text), []);
  // bounded: the rest counted
  const many = Array.from({ length: MAX_REFERENCES + 5 }, (_, i) => ({ path: 'a.ts', line: i, code: 'x' }));
  const listed = referencesText(many.slice(0, MAX_REFERENCES), many.length).split('\n');
  assert.equal(listed.length, MAX_REFERENCES + 1);
  assert.equal(listed.at(-1), '… and 5 more');
});
