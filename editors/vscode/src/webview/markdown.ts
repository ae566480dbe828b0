/**
 * Markdown for the chat, rendered by markdown-it: raw HTML is escaped, links are web links only,
 * and text is text: a bare URL with its scheme becomes a link, a file name (`main.py`) never
 * becomes a web address; workspace paths (`src/app.ts:12`) become file links the page opens in
 * the editor (`a.file-link` with `data-path` and `data-line`).
 */
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { highlightCode } from './highlight';
import { fencePath } from '../chat/apply';

/** Escape text for HTML element and attribute content. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The link targets a reply may carry: anything else (javascript:, file:, command:) stays text. */
const SAFE_LINK = /^(https?:|mailto:)/i;

/** File extensions a bare name (no directory, no line) must have to be taken for a file. */
const FILE_EXTENSIONS = new Set(('py pyi ipynb ts tsx js jsx mjs cjs json jsonc md mdx txt rst toml yaml yml ini cfg conf ' +
  'lock sh bash zsh fish ps1 bat c h cc cpp cxx hpp hh cs java kt kts scala go rs rb php pl lua vim swift m mm ' +
  'dart ex exs erl hs ml mli clj sql html htm css scss sass less vue svelte astro xml svg proto graphql gql tf ' +
  'nix cmake mk gradle env diff patch csv tsv log r jl zig nim el lisp').split(' '));

/**
 * A path as a reply writes it: `src/app.ts`, `./a/b.py`, `/abs/x.rs`, `main.py`, `Makefile`-less
 * names with an extension; optional `:line`, `:line:col`, `:line-line` or `#Lline`.
 */
const PATH_RE = /(?<![\w/.@~-])((?:\.{1,2}\/|\/)?(?:[\w@+-][\w@.+-]*\/)*[\w@+-][\w@+-]*(?:\.[\w+-]+)*\.([A-Za-z][\w+-]*))(?::(\d+)(?:[:-]\d+)?|#L(\d+)(?:-L?\d+)?)?(?![\w/@-]|\.[\w])/g;

/** A file reference found in text: the path and the 1-based line, if any. */
export interface FileRef { path: string; line?: number; start: number; end: number }

/** The file references in `text`: paths with a directory or a line, or names with a known extension. */
export function findFileRefs(text: string): FileRef[] {
  const refs: FileRef[] = [];
  for (const m of text.matchAll(PATH_RE)) {
    const [whole, path, ext, line, hashLine] = m;
    const lineNo = line ?? hashLine;
    if (!path.includes('/') && lineNo === undefined && !FILE_EXTENSIONS.has(ext.toLowerCase())) continue;
    const start = m.index;
    refs.push({ path, line: lineNo !== undefined ? Number(lineNo) : undefined, start, end: start + whole.length });
  }
  return refs;
}

function fileLinkTokens(state: { Token: typeof Token }, ref: FileRef, inner: Token[]): Token[] {
  const open = new state.Token('link_open', 'a', 1);
  open.attrs = [['href', '#'], ['class', 'file-link'], ['data-path', ref.path],
    ['title', ref.line !== undefined ? `Open ${ref.path} at line ${ref.line}` : `Open ${ref.path}`]];
  if (ref.line !== undefined) open.attrs.push(['data-line', String(ref.line)]);
  return [open, ...inner, new state.Token('link_close', 'a', -1)];
}

function textToken(state: { Token: typeof Token }, content: string): Token {
  const t = new state.Token('text', '', 0);
  t.content = content;
  return t;
}

/** A core rule after linkify: paths in text and whole-path inline code become file links. */
function fileLinks(md: MarkdownIt): void {
  md.core.ruler.after('linkify', 'file_links', (state) => {
    for (const block of state.tokens) {
      if (block.type !== 'inline' || !block.children) continue;
      const out: Token[] = [];
      let inLink = 0;
      for (const tok of block.children) {
        if (tok.type === 'link_open') inLink++;
        if (tok.type === 'link_close') inLink--;
        if (inLink > 0) {
          out.push(tok);
        } else if (tok.type === 'code_inline') {
          const [ref] = findFileRefs(tok.content);
          out.push(...(ref && ref.start === 0 && ref.end === tok.content.length ? fileLinkTokens(state, ref, [tok]) : [tok]));
        } else if (tok.type === 'text') {
          let at = 0;
          for (const ref of findFileRefs(tok.content)) {
            if (ref.start > at) out.push(textToken(state, tok.content.slice(at, ref.start)));
            out.push(...fileLinkTokens(state, ref, [textToken(state, tok.content.slice(ref.start, ref.end))]));
            at = ref.end;
          }
          out.push(at === 0 ? tok : textToken(state, tok.content.slice(at)));
        } else {
          out.push(tok);
        }
      }
      block.children = out.filter((t) => t.type !== 'text' || t.content !== '');
    }
  });
}

function createRenderer(): MarkdownIt {
  // `html: false` escapes every tag the model writes: the only markup is markdown-it's own.
  const md = new MarkdownIt('default', { html: false, linkify: true, typographer: false, breaks: true });
  // Only links written with their scheme (https://…, mailto:…): a file name is not a host name.
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });
  md.validateLink = (url: string) => SAFE_LINK.test(url.trim());
  fileLinks(md);
  // Images would load remote content (the page's CSP blocks them anyway): show their text.
  md.disable('image');
  md.renderer.rules.fence = (tokens, idx) => {
    const t = tokens[idx];
    const named = fencePath(t.info);
    // `ts:src/a.ts` names the language before the colon; a bare path's extension is its language
    let lang = (t.info.trim().split(/\s+/)[0] ?? '').split(':')[0];
    if (named !== undefined && lang === named) lang = /\.([\w+-]+)$/.exec(named)?.[1] ?? '';
    const label = lang || named ? `<span class="code-lang">${escapeHtml(named ?? lang)}</span>` : '';
    const code = t.content.replace(/\n$/, '');
    // coloured by the fence's language (highlight.js escapes the text), else escaped plain text
    const coloured = highlightCode(code, lang);
    const body = coloured ?? escapeHtml(code);
    const cls = lang ? ` class="language-${escapeHtml(lang)}${coloured !== undefined ? ' hljs' : ''}"` : '';
    // Copy, and insert at the editor's cursor (the page turns a click into a message; the host
    // acts: the clipboard, an undoable edit of the active editor).
    const actions = '<span class="code-actions">'
      + '<button class="link code-action" data-code-action="copy" title="Copy the code">Copy</button>'
      + '<button class="link code-action" data-code-action="insert" title="Insert the code at the cursor of the active editor">Insert</button>'
      + `<button class="link code-action" data-code-action="apply" title="${escapeHtml(named !== undefined
        ? `Apply the code to ${named} (shown in a diff first)` : 'Apply the code to the active editor\'s file or selection (shown in a diff first)')}">Apply</button>`
      + '</span>';
    const path = named !== undefined ? ` data-path="${escapeHtml(named)}"` : '';
    return `<div class="code-block"${path}>${label}${actions}<pre><code${cls}>${body}</code></pre></div>\n`;
  };
  // Tables scroll sideways in a narrow panel instead of widening it.
  md.renderer.rules.table_open = () => '<div class="table-wrap"><table>\n';
  md.renderer.rules.table_close = () => '</table></div>\n';
  return md;
}

let renderer: MarkdownIt | undefined;

/** Render markdown to HTML; an unterminated code fence (mid-stream) renders as a code block. */
export function renderMarkdown(src: string): string {
  renderer ??= createRenderer();
  return renderer.render(src);
}
