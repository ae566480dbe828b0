// Unit tests for a code block's Apply: the file a fence names and the text Apply writes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appliedText, applySummary, fencePath } from '../src/chat/apply';
import { renderMarkdown } from '../src/webview/markdown';

test('a fence names its file by path, lang:path or key=value; anything else names none', () => {
  assert.equal(fencePath('python src/app.py'), 'src/app.py');
  assert.equal(fencePath('ts:src/a.ts'), 'src/a.ts');
  assert.equal(fencePath('src/lib.rs'), 'src/lib.rs');
  assert.equal(fencePath('python title="pkg/mod.py"'), 'pkg/mod.py');
  assert.equal(fencePath('json path=.vscode/settings.json'), '.vscode/settings.json');
  for (const info of ['', 'python', 'sh', 'python {linenos}', 'ts /etc/passwd', 'py ../outside.py', 'py a/../../b.py', 'js v1.2']) {
    assert.equal(fencePath(info), undefined, info);
  }
});

test('Apply replaces the selection, or the whole file keeping its last newline', () => {
  const doc = 'a\nold()\nc\n';
  assert.equal(appliedText(doc, 'new()', { start: 2, end: 7 }), 'a\nnew()\nc\n');
  assert.equal(appliedText(doc, 'x = 1'), 'x = 1\n');
  assert.equal(appliedText(doc, 'x = 1\n'), 'x = 1\n');
  assert.equal(appliedText('no newline', 'x = 1'), 'x = 1');
  assert.equal(appliedText(doc, 'x', { start: 3, end: 3 }), 'x\n', 'an empty selection is no selection');
  assert.equal(applySummary('a.py', undefined, false), 'Replace the whole of a.py with the code block?');
  assert.equal(applySummary('a.py', { startLine: 2, endLine: 4 }, false), 'Replace the selection in a.py (lines 2–4) with the code block?');
  assert.equal(applySummary('n.py', undefined, true), 'Create n.py with the code block?');
});

test('a code block carries Apply, and the file its fence names (escaped), coloured by that file\'s language', () => {
  const html = renderMarkdown('```py:src/"x".py\nprint(1)\n```\n\n```src/app.ts\nlet a = 1\n```');
  assert.match(html, /data-code-action="apply"[^>]*>Apply<\/button>/);
  assert.ok(!html.includes('data-path="src/"x".py"'), 'quotes in a fence never reach an attribute unescaped');
  assert.match(html, /<div class="code-block" data-path="src\/app.ts"><span class="code-lang">src\/app.ts<\/span>/);
  assert.match(html, /<code class="language-ts hljs"><span class="hljs-keyword">let<\/span>/);
  const plain = renderMarkdown('```python\nx\n```');
  assert.match(plain, /<div class="code-block"><span class="code-lang">python<\/span>/);
});
