// Unit tests for the webview's markdown renderer and line diff.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compact, lineDiff } from '../src/webview/diff';
import { findFileRefs, renderMarkdown } from '../src/webview/markdown';

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
  assert.match(html, /<pre><code class="language-python hljs"><span class="hljs-built_in">print<\/span>\(<span class="hljs-string">&quot;a &lt; b&quot;<\/span>\)<\/code><\/pre>/);
  assert.match(html, /<span class="code-lang">python<\/span>/);
  assert.match(html, /<p>after<\/p>/);
  assert.match(renderMarkdown('```ts\nconst x = 1'), /<code class="language-ts hljs"><span class="hljs-keyword">const<\/span> x = <span class="hljs-number">1<\/span><\/code>/);
});

test('a code block offers Copy and Insert; the page reads the text from the block itself', () => {
  const html = renderMarkdown('```sh\nrm -rf "$x" && echo <ok>\n```');
  assert.match(html, /<button class="link code-action" data-code-action="copy"[^>]*>Copy<\/button>/);
  assert.match(html, /<button class="link code-action" data-code-action="insert"[^>]*>Insert<\/button>/);
  // the code stays escaped text; the buttons carry no copy of it
  const code = /<code class="language-sh hljs">(.*)<\/code>/s.exec(html)?.[1] ?? '';
  assert.equal(code.replace(/<\/?span[^>]*>/g, ''), 'rm -rf &quot;$x&quot; &amp;&amp; echo &lt;ok&gt;');
  assert.equal(html.replace(/<\/?span[^>]*>/g, '').split('rm -rf').length, 2);
});

test('code is coloured by its fence language only; the markup is highlight.js spans over escaped text', () => {
  const cases: [string, string, RegExp][] = [
    ['rust', 'fn main() { let s = "x"; }', /<span class="hljs-keyword">fn<\/span> <span class="hljs-title function_">main<\/span>/],
    ['toml', '[tool]\nname = "x"', /<span class="hljs-section">\[tool\]<\/span>/],
    ['jsonc', '{"a": 1}', /<span class="hljs-attr">&quot;a&quot;<\/span><span class="hljs-punctuation">:<\/span> <span class="hljs-number">1<\/span>/],
    ['diff', '-old\n+new', /<span class="hljs-deletion">-old<\/span>\n<span class="hljs-addition">\+new<\/span>/],
    ['vue', '<b>x</b>', /<span class="hljs-tag">&lt;<span class="hljs-name">b<\/span>&gt;<\/span>/],
  ];
  for (const [lang, src, want] of cases) assert.match(renderMarkdown(`\`\`\`${lang}\n${src}\n\`\`\``), want, lang);
  // no language, or one not bundled: escaped plain text, no guessing
  for (const fence of ['```', '```brainfuck', '```"><img']) {
    const html = renderMarkdown(`${fence}\nif x < 1: return "y"\n\`\`\``);
    assert.ok(!html.includes('hljs'), html);
    assert.match(html, /<code[^>]*>if x &lt; 1: return &quot;y&quot;<\/code>/);
    assert.ok(!html.includes('<img'), html);
  }
  // hostile text inside a coloured block stays text
  const html = renderMarkdown('```html\n<script>alert(1)</script><img src=x onerror=y>\n```');
  assert.ok(!/<script|<img/.test(html), html);
  assert.match(html, /&lt;<span class="hljs-name">script<\/span>&gt;/);
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

test('images are not loaded; bare URLs with their scheme become links', () => {
  const html = renderMarkdown('![x](https://evil.example/a.png) see https://example.com/docs');
  assert.ok(!html.includes('<img'), html);
  assert.match(html, /<a href="https:\/\/example.com\/docs">/);
});

test('file names are not web addresses, in replies and in the user\'s messages', () => {
  for (const name of ['main.py', 'README.md', 'build.sh', 'lib.rs', 'example.com', 'www.example.com', 'a@b.io']) {
    const html = renderMarkdown(`I changed ${name} and nothing else.`);
    assert.ok(!html.includes('http://'), html);
    assert.ok(!html.includes('mailto:'), html);
  }
  // scheme-written URLs stay links, and a path inside a URL is the URL's
  const url = renderMarkdown('docs at https://example.com/src/main.py:12 and <https://x.org>');
  assert.match(url, /<a href="https:\/\/example.com\/src\/main.py:12">https:\/\/example.com\/src\/main.py:12<\/a>/);
  assert.match(url, /<a href="https:\/\/x.org">/);
  assert.ok(!url.includes('file-link'), url);
});

test('workspace paths and path:line become file links', () => {
  const html = renderMarkdown('Fixed in src/app.ts:42 and `lib/util.py`; see main.py, then `README.md#L3`.');
  assert.match(html, /<a href="#" class="file-link" data-path="src\/app.ts" title="Open src\/app.ts at line 42" data-line="42">src\/app.ts:42<\/a>/);
  assert.match(html, /<a href="#" class="file-link" data-path="lib\/util.py" title="Open lib\/util.py"><code>lib\/util.py<\/code><\/a>/);
  assert.match(html, /<a href="#" class="file-link" data-path="main.py" title="Open main.py">main.py<\/a>, then/);
  assert.match(html, /data-path="README.md"[^>]*data-line="3"><code>README.md#L3<\/code>/);
  // not paths: versions, abbreviations, prose with dots, code that is more than a path, code blocks
  const plain = renderMarkdown('Use v1.2.3, e.g. this. Done. `x = main.py` and\n\n```\nopen main.py\n```');
  assert.ok(!plain.includes('file-link'), plain);
  // hostile names stay escaped inside the attributes
  const hostile = renderMarkdown('see `a"onmouseover=x.py`');
  assert.ok(!hostile.includes('"onmouseover'), hostile);
});

test('findFileRefs: lines, ranges, absolute and relative paths', () => {
  const refs = findFileRefs('at /ws/src/a.go:10:4, ./b/c.ts:3-9, ../d.rs and x.toml.');
  assert.deepEqual(refs.map((r) => [r.path, r.line]), [['/ws/src/a.go', 10], ['./b/c.ts', 3], ['../d.rs', undefined], ['x.toml', undefined]]);
  assert.deepEqual(findFileRefs('1.5x faster, i.e. better, Mr.Smith said'), []);
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
