// Unit tests for the webview's markdown renderer and line diff.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compact, lineDiff } from '../src/webview/diff';
import { renderMarkdown } from '../src/webview/markdown';

test('html is escaped everywhere', () => {
  const html = renderMarkdown('<script>alert(1)</script> **<b>**\n\n```\n<img src=x onerror=y>\n```\n\n<div onclick="x">hi</div>');
  assert.ok(!html.includes('<script>'));
  assert.ok(!html.includes('<img'));
  assert.ok(!html.includes('<b>'));
  assert.ok(!html.includes('<div onclick'));
  assert.match(html, /&lt;script&gt;/);
});

test('code blocks keep their text and language; an open fence renders while streaming', () => {
  const html = renderMarkdown('Look:\n```python\nprint("a < b")\n```\nafter');
  assert.match(html, /<pre><code class="language-python">print\(&quot;a &lt; b&quot;\)<\/code><\/pre>/);
  assert.match(html, /<span class="code-lang">python<\/span>/);
  assert.match(html, /<p>after<\/p>/);
  assert.match(renderMarkdown('```ts\nconst x = 1'), /<code class="language-ts">const x = 1<\/code>/);
});

test('inline marks, lists, headings and links; only web links become links', () => {
  const html = renderMarkdown('# Title\n- one `two`\n- **three**\n\n1. first\n\nsee [docs](https://example.com) and [bad](javascript:alert(1)) and [f](file:///etc/passwd)');
  assert.match(html, /<h1>Title<\/h1>/);
  assert.match(html, /<ul>\s*<li>one <code>two<\/code><\/li>\s*<li><strong>three<\/strong><\/li>\s*<\/ul>/);
  assert.match(html, /<ol>\s*<li>first<\/li>\s*<\/ol>/);
  assert.match(html, /<a href="https:\/\/example.com">docs<\/a>/);
  assert.ok(!html.includes('href="javascript'), html);
  assert.ok(!html.includes('href="file'), html);
});

test('tables, strikethrough and nested lists', () => {
  const html = renderMarkdown('| a | b |\n|---|:-:|\n| 1 | ~~2~~ |\n\n- outer\n  - inner\n    1. deep');
  assert.match(html, /<div class="table-wrap"><table>/);
  assert.match(html, /<th>a<\/th>/);
  assert.match(html, /<td style="text-align:center"><s>2<\/s><\/td>/);
  assert.match(html, /<li>outer\s*<ul>\s*<li>inner\s*<ol>\s*<li>deep<\/li>/);
});

test('images are not loaded; bare URLs become links', () => {
  const html = renderMarkdown('![x](https://evil.example/a.png) see https://example.com/docs');
  assert.ok(!html.includes('<img'), html);
  assert.match(html, /<a href="https:\/\/example.com\/docs">/);
});

test('line diff finds the changed lines', () => {
  const d = lineDiff('a\nb\nc\n', 'a\nB\nc\nd\n');
  assert.deepEqual(d.map((l) => l.op + l.text), [' a', '-b', '+B', ' c', '+d']);
  assert.deepEqual(lineDiff('', 'x\n').map((l) => l.op + l.text), ['+x']);
});

test('compact keeps context around changes', () => {
  const old = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
  const d = compact(lineDiff(old, old.replace('l10', 'L10')), 1);
  assert.deepEqual(d.map((l) => l.op + l.text), [' …', ' l9', '-l10', '+L10', ' l11', ' …']);
});
