/** Markdown for the chat, rendered by markdown-it: raw HTML is escaped, links are web links only. */
import MarkdownIt from 'markdown-it';

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

function createRenderer(): MarkdownIt {
  // `html: false` escapes every tag the model writes: the only markup is markdown-it's own.
  const md = new MarkdownIt('default', { html: false, linkify: true, typographer: false, breaks: true });
  md.validateLink = (url: string) => SAFE_LINK.test(url.trim());
  // Images would load remote content (the page's CSP blocks them anyway): show their text.
  md.disable('image');
  md.renderer.rules.fence = (tokens, idx) => {
    const t = tokens[idx];
    const lang = t.info.trim().split(/\s+/)[0] ?? '';
    const cls = lang ? ` class="language-${escapeHtml(lang)}"` : '';
    const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : '';
    const body = escapeHtml(t.content.replace(/\n$/, ''));
    return `<div class="code-block">${label}<pre><code${cls}>${body}</code></pre></div>\n`;
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
