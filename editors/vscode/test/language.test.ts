// openprogram/diagnostics and openprogram/navigate answered from VS Code's language features:
// the settle wait (bounded), our own diagnostics left out, VS Code's 0-based severities and
// symbol kinds turned into LSP's, LocationLinks to their targets, nested symbols flattened.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerDiagnostics, answerNavigate, type HostDiagnostic, type LanguageHost } from '../src/language';

const A = 'file:///ws/a.py';
const r = (line: number, character = 0) => ({ start: { line, character }, end: { line, character: character + 1 } });

class Host implements LanguageHost {
  diags = new Map<string, HostDiagnostic[]>();
  listeners: ((uris: string[]) => void)[] = [];
  opened: string[] = [];
  open_ = new Set<string>([A]);
  isOpen(uri: string): boolean {
    return this.open_.has(uri);
  }
  calls: unknown[][] = [];
  answer: unknown = undefined;
  async open(uri: string): Promise<boolean> {
    this.opened.push(uri);
    return uri.startsWith('file:///ws/');
  }
  diagnostics(uri: string): readonly HostDiagnostic[] {
    return this.diags.get(uri) ?? [];
  }
  onDiagnostics(listener: (uris: string[]) => void) {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  }
  publish(uri: string, d: HostDiagnostic[]): void {
    this.diags.set(uri, d);
    for (const l of this.listeners) l([uri]);
  }
  async provider(...args: unknown[]): Promise<unknown> {
    this.calls.push(args);
    return this.answer;
  }
}

test('diagnostics wait for a change and then quiet, and leave ours out', async () => {
  const host = new Host();
  host.diags.set(A, [{ range: r(0), message: 'old', severity: 1 }]);
  setTimeout(() => host.publish(A, [
    { range: r(2, 4), message: "undefined name 'y'", severity: 0, source: 'Pylance', code: { value: 'reportUndefinedVariable' } },
    { range: r(0), message: 'agent note', severity: 2, source: 'openprogram' },
  ]), 100);
  const t0 = Date.now();
  const got = await answerDiagnostics(host, { uris: [A], settleMs: 150, timeoutMs: 3000 });
  const took = Date.now() - t0;
  assert.ok(took >= 240 && took < 1500, `took ${took} ms`);
  assert.deepEqual(got.files, [{ uri: A, diagnostics: [{ range: r(2, 4), message: "undefined name 'y'", severity: 1, source: 'Pylance', code: 'reportUndefinedVariable' }] }]);
  assert.equal(host.listeners.length, 0); // unsubscribed
});

test('a document opened just now waits for its servers even when not settling', async () => {
  const host = new Host();
  const B = 'file:///ws/b.py';
  setTimeout(() => host.publish(B, [{ range: r(0), message: 'e', severity: 0 }]), 100);
  const got = await answerDiagnostics(host, { uris: [B], settleMs: 0, timeoutMs: 3000 });
  assert.equal(got.files?.[0].diagnostics?.length, 1);
});

test('diagnostics answer by the timeout when the servers stay silent, and at once when not settling', async () => {
  const host = new Host();
  host.diags.set(A, [{ range: r(1), message: 'w', severity: 1 }]);
  let t0 = Date.now();
  await answerDiagnostics(host, { uris: [A], settleMs: 300, timeoutMs: 400 });
  assert.ok(Date.now() - t0 < 900);
  t0 = Date.now();
  const now = await answerDiagnostics(host, { uris: [A, 'untitled:x', 'file:///elsewhere/b.py'], settleMs: 0, timeoutMs: 5000 });
  assert.ok(Date.now() - t0 < 200);
  assert.deepEqual(now.files?.map((f) => f.uri), [A]);
  assert.equal(now.files?.[0].diagnostics?.[0].severity, 2);
});

test('navigation: definitions to their targets, symbols flattened with LSP kinds, hover text', async () => {
  const host = new Host();
  host.answer = [{ targetUri: { toString: () => 'file:///ws/lib.py' }, targetRange: r(0), targetSelectionRange: r(0, 4) }];
  const def = await answerNavigate(host, { kind: 'definition', uri: A, position: { line: 3, character: 6 }, timeoutMs: 1000 });
  assert.deepEqual(def.locations, [{ uri: 'file:///ws/lib.py', range: r(0, 4) }]);
  assert.deepEqual(host.calls[0], ['vscode.executeDefinitionProvider', A, { line: 3, character: 6 }, '']);
  host.answer = [{ name: 'C', kind: 4, range: r(0), selectionRange: r(0, 6), children: [{ name: 'm', kind: 5, range: r(1), selectionRange: r(1, 8) }] }];
  const syms = await answerNavigate(host, { kind: 'documentSymbols', uri: A, timeoutMs: 1000 });
  assert.deepEqual(syms.symbols, [
    { name: 'C', kind: 5, uri: A, range: r(0, 6), container: null },
    { name: 'm', kind: 6, uri: A, range: r(1, 8), container: 'C' },
  ]);
  host.answer = [{ contents: [{ value: '```python\ndef greet(name)\n```' }, 'Says hi.'] }];
  const hover = await answerNavigate(host, { kind: 'hover', uri: A, position: { line: 0, character: 4 }, timeoutMs: 1000 });
  assert.equal(hover.hover, '```python\ndef greet(name)\n```\n\nSays hi.');
  const outside = await answerNavigate(host, { kind: 'references', uri: 'file:///elsewhere/x.py', position: { line: 0, character: 0 }, timeoutMs: 1000 });
  assert.deepEqual(outside.locations, []);
});

test('navigation answers empty by its timeout when a provider hangs', async () => {
  const host = new Host();
  host.provider = () => new Promise(() => {});
  const t0 = Date.now();
  const got = await answerNavigate(host, { kind: 'references', uri: A, position: { line: 0, character: 0 }, timeoutMs: 200 });
  assert.ok(Date.now() - t0 < 1000);
  assert.deepEqual(got.locations, []);
});
